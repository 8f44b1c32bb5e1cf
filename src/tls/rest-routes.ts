/**
 * The TLS bench's REST routes (docs/tls.md): the CA to trust, client
 * certificates for SASL EXTERNAL, verdicts, and attacks for the next
 * session. Conventions as every route: JSON, ServiceError codes.
 */
import { ServiceError } from '../errors.js';
import type { Route } from '../rest/route.js';
import { arrayOf, int, obj, str, type Schema } from '../rest/schema.js';
import { STARTTLS_ATTACKS } from './attacks/catalog.js';
import { VERDICTS } from './verdicts.js';

const VERDICT: Schema = obj({
  session: int(1),
  listener: { type: 'string', enum: ['imap', 'pop3', 'smtp'] },
  cases: arrayOf(str('An attack name, or profile:<name> for the certificate served')),
  verdict: { type: 'string', enum: VERDICTS },
  evidence: str('The client bytes that decided the verdict (latin1, at most 512 characters)'),
  text: str(),
  at: str('Server-clock time, ISO 8601'),
});

export const tlsRoutes: Route[] = [
  {
    method: 'GET', path: '/v1/tls/ca', operation: 'tlsCa',
    summary: 'The CA certificate that signs the TLS profiles\' certificates: JSON, or the PEM itself as text/plain (by Accept or ?format=text)',
    query: [{ name: 'format', description: '`json` or `text` (the PEM, to save as a file); wins over the Accept header', schema: { type: 'string', enum: ['json', 'text'] } }],
    status: 200,
    response: obj({ pem: str('PEM'), subject: str(), validFrom: str(), validTo: str(), fingerprint256: str() }),
    text: (result) => (result as { pem: string }).pem,
    handle: ({ server, query }) => {
      const format = query.get('format');
      if (format !== null && format !== 'json' && format !== 'text') throw new ServiceError('INVALID', `format: expected json or text, got ${JSON.stringify(format)}`);
      const ca = server.tls.authority.ca.cert;
      return { pem: server.tlsCa(), subject: ca.subject.replace(/\n/g, ', '), validFrom: new Date(ca.validFrom).toISOString(), validTo: new Date(ca.validTo).toISOString(), fingerprint256: ca.fingerprint256 };
    },
  },
  {
    method: 'POST', path: '/v1/tls/client-certificates', operation: 'tlsClientCertificate',
    summary: 'A client certificate for a user, signed by the CA: with tls.requestCert, AUTHENTICATE EXTERNAL logs that user in',
    body: obj({ user: str('The user the certificate names (its subject CN)'), days: { type: 'integer', minimum: 1, maximum: 36500, description: 'Validity in days', default: 365 } }, ['user']),
    status: 201,
    response: obj({ key: str('PEM (PKCS #8)'), cert: str('PEM'), ca: str('PEM of the CA') }),
    handle: ({ server, body }) => {
      const { user, days } = body as { user: string; days?: number };
      return server.tls.clientCertificate(user, days);
    },
  },
  {
    method: 'GET', path: '/v1/tls/verdicts', operation: 'tlsVerdicts',
    summary: 'The verdict of each session the TLS bench watched (an attack or a broken certificate profile), oldest first',
    query: [{ name: 'session', description: 'Only the verdict of this session', schema: int(1) }],
    status: 200,
    response: arrayOf(VERDICT),
    handle: ({ server, query }) => {
      const raw = query.get('session');
      if (raw === null) return server.tls.verdicts.list();
      const session = Number(raw);
      if (!/^[1-9][0-9]*$/.test(raw) || !Number.isSafeInteger(session)) throw new ServiceError('INVALID', `session: expected a session number, got ${JSON.stringify(raw)}`);
      return server.tls.verdicts.list(session);
    },
  },
  {
    method: 'POST', path: '/v1/tls/attacks', operation: 'tlsAttackNext',
    summary: 'The next IMAP (or, with listener: pop3 or smtp, POP3 or SMTP) session to open meets these STARTTLS attacks instead of the attacks option\'s (one entry per call, first in first out)',
    body: obj({ attacks: arrayOf({ type: 'string', enum: STARTTLS_ATTACKS }), listener: { type: 'string', enum: ['imap', 'pop3', 'smtp'] } }, ['attacks']),
    status: 200,
    response: obj({ attacks: arrayOf(str()) }),
    handle: ({ server, body }) => {
      const { attacks, listener } = body as { attacks: string[]; listener?: 'imap' | 'pop3' | 'smtp' };
      server.tls.attackNext(attacks, listener);
      return { attacks };
    },
  },
];

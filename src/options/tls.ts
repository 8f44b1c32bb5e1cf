/**
 * The `tls` option (used by `secure`, `starttls` and the SMTP listener).
 * Certificates are PEM text, a Buffer of it, or a path to a PEM file (read
 * when the server is built, so a wrong path is an option error and not a
 * failed handshake later). Profiles, SNI, client certificates, versions and
 * ALPN (docs/tls.md) may be set for all listeners or per listener
 * (`tls.imap`, `tls.pop3`, `tls.smtp`).
 */
import { readFileSync } from 'node:fs';
import { combinationProblem, isAttack, STARTTLS_ATTACKS, type AttackName } from '../tls/attacks/catalog.js';
import { isProfile, PROFILES, type ProfileName } from '../tls/profile-names.js';
import { ALPN_MODES, TLS_LISTENERS, TLS_VERSIONS, type AlpnMode, type ResolvedListenerTls, type TlsListener, type TlsVersion } from '../tls/settings.js';
import { TEST_CERTIFICATE, TEST_PRIVATE_KEY } from '../tls/test-certificate.js';
import { checkTypos, childPath, indexPath, isPlainObject, Problems } from './problems.js';
import type { ResolvedOptions } from './types.js';

const LISTENER_KEYS = ['profile', 'certificates', 'hosts', 'requestCert', 'minVersion', 'maxVersion', 'alpn', 'ciphers'] as const;
export const TLS_KEYS = ['key', 'cert', 'freshCa', ...LISTENER_KEYS, ...TLS_LISTENERS] as const;
const TLS_SET = new Set<string>(TLS_KEYS);
const LISTENER_SET = new Set<string>(LISTENER_KEYS);

export function resolveTls(problems: Problems, value: unknown): ResolvedOptions['tls'] {
  const builtin = { key: TEST_PRIVATE_KEY, cert: TEST_CERTIFICATE, builtin: true };
  const shared = isPlainObject(value) ? value : {};
  const listeners = new Map<TlsListener, ResolvedListenerTls>();
  let freshCa = false;
  if (typeof shared.freshCa === 'boolean') freshCa = shared.freshCa;
  else if (shared.freshCa !== undefined) problems.expected('tls.freshCa', 'true or false', shared.freshCa);
  const done = (keyCert: { key: string | Buffer; cert: string | Buffer; builtin: boolean }): ResolvedOptions['tls'] => {
    const common = resolveListener(problems, pick(shared), 'tls');
    for (const listener of TLS_LISTENERS) {
      const own = shared[listener];
      if (own !== undefined && !isPlainObject(own)) problems.expected(`tls.${listener}`, 'an object (the tls keys for this listener)', own);
      if (!isPlainObject(own)) {
        listeners.set(listener, common);
        continue;
      }
      checkTypos(own, LISTENER_SET, LISTENER_KEYS, `tls.${listener}`, problems);
      // Its own keys are reported under tls.<listener>; the merge, whose shared keys were reported above, quietly.
      resolveListener(problems, pick(own), `tls.${listener}`);
      listeners.set(listener, resolveListener(new Problems(), { ...pick(shared), ...pick(own) }, `tls.${listener}`));
    }
    return { ...keyCert, freshCa, listeners };
  };
  if (value === undefined) return done(builtin);
  if (!isPlainObject(value)) {
    problems.expected('tls', 'an object ({key, cert, profile, certificates, ...})', value);
    return done(builtin);
  }
  checkTypos(value, TLS_SET, TLS_KEYS, 'tls', problems);
  if ((value.key === undefined) !== (value.cert === undefined)) {
    problems.add('tls', 'give both key and cert, or neither (the built-in test certificate)');
    return done(builtin);
  }
  if (value.key === undefined) return done(builtin);
  const key = pem(problems, value.key, 'tls.key');
  const cert = pem(problems, value.cert, 'tls.cert');
  return done(key === undefined || cert === undefined ? builtin : { key, cert, builtin: false });
}

function pick(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of LISTENER_KEYS) if (object[key] !== undefined) out[key] = object[key];
  return out;
}

function resolveListener(problems: Problems, value: Record<string, unknown>, path: string): ResolvedListenerTls {
  const profile = value.profile === undefined ? null : profileName(problems, value.profile, childPath(path, 'profile'));
  const certificates = new Map<string, ProfileName>();
  if (value.certificates !== undefined) {
    if (!isPlainObject(value.certificates)) problems.expected(childPath(path, 'certificates'), 'an object of server name -> profile', value.certificates);
    else {
      for (const [name, p] of Object.entries(value.certificates)) {
        const at = childPath(childPath(path, 'certificates'), name);
        if (!/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(name)) problems.add(at, 'expected a DNS host name (SNI carries no addresses, RFC 6066 section 3)');
        const resolved = profileName(problems, p, at);
        if (resolved !== null) certificates.set(name.toLowerCase(), resolved);
      }
    }
  }
  const hosts: string[] = [];
  if (value.hosts !== undefined) {
    if (!Array.isArray(value.hosts)) problems.expected(childPath(path, 'hosts'), 'an array of host names or addresses', value.hosts);
    else
      value.hosts.forEach((h: unknown, i) => {
        if (typeof h === 'string' && /^[A-Za-z0-9.:*-]+$/.test(h)) hosts.push(h.toLowerCase());
        else problems.expected(indexPath(childPath(path, 'hosts'), i), 'a host name or an IP address', h);
      });
  }
  let requestCert = false;
  if (typeof value.requestCert === 'boolean') requestCert = value.requestCert;
  else if (value.requestCert !== undefined) problems.expected(childPath(path, 'requestCert'), 'true or false', value.requestCert);
  const version = (key: 'minVersion' | 'maxVersion'): TlsVersion | null => {
    const v = value[key];
    if (v === undefined) return null;
    if (typeof v === 'string' && (TLS_VERSIONS as readonly string[]).includes(v)) return v as TlsVersion;
    return problems.expected(childPath(path, key), `one of ${TLS_VERSIONS.join(', ')}`, v) ?? null;
  };
  const minVersion = version('minVersion');
  const maxVersion = version('maxVersion');
  if (minVersion && maxVersion && TLS_VERSIONS.indexOf(minVersion) > TLS_VERSIONS.indexOf(maxVersion)) {
    problems.add(childPath(path, 'minVersion'), `is above maxVersion ${maxVersion}`);
  }
  let alpn: AlpnMode = 'ignore';
  if (value.alpn !== undefined) {
    if (typeof value.alpn === 'string' && (ALPN_MODES as readonly string[]).includes(value.alpn)) alpn = value.alpn as AlpnMode;
    else problems.expected(childPath(path, 'alpn'), `one of ${ALPN_MODES.join(', ')}`, value.alpn);
  }
  let ciphers: string | null = null;
  if (value.ciphers !== undefined) {
    if (typeof value.ciphers === 'string' && value.ciphers !== '') ciphers = value.ciphers;
    else problems.expected(childPath(path, 'ciphers'), 'an OpenSSL cipher list', value.ciphers);
  }
  return { profile, certificates, hosts, requestCert, minVersion, maxVersion, alpn, ciphers };
}

function profileName(problems: Problems, value: unknown, path: string): ProfileName | null {
  if (typeof value === 'string' && isProfile(value)) return value;
  problems.expected(path, `a certificate profile (${PROFILES.join(', ')})`, value);
  return null;
}

/** The `attacks` option: STARTTLS attacks every plain-text session of the IMAP, POP3 and SMTP listeners meets (docs/tls.md). */
export function resolveAttacks(problems: Problems, value: unknown): AttackName[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.expected('attacks', `an array of attack names (${STARTTLS_ATTACKS.join(', ')})`, value);
    return [];
  }
  const out: AttackName[] = [];
  value.forEach((name: unknown, i) => {
    if (typeof name === 'string' && isAttack(name)) out.push(name);
    else problems.expected(indexPath('attacks', i), `an attack name (${STARTTLS_ATTACKS.join(', ')})`, name);
  });
  const problem = combinationProblem(out);
  if (problem) problems.add('attacks', problem);
  return out;
}

function pem(problems: Problems, value: unknown, path: string): string | Buffer | undefined {
  if (Buffer.isBuffer(value)) return Buffer.from(value);
  if (typeof value !== 'string' || value === '') {
    problems.expected(path, 'PEM text, a Buffer or a path to a PEM file', value);
    return undefined;
  }
  if (value.includes('-----BEGIN ')) return value;
  try {
    return readFileSync(value);
  } catch (err) {
    problems.add(path, `cannot read ${JSON.stringify(value)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    return undefined;
  }
}

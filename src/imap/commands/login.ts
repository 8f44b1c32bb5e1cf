/**
 * LOGIN and AUTHENTICATE. The SASL mechanisms come from extensions' `sasl`
 * points (the checkers for PLAIN, XOAUTH2 and OAUTHBEARER live here, for the
 * AUTH=* extensions to offer), initial responses from `saslInitialResponse`.
 */
import { NOT_AUTHENTICATED, bad, no, ok, type CommandResult, type CommandSpec } from '../command.js';
import type { ImapSession } from '../session.js';
import { imapProtocol } from '../protocol.js';
import type { TokenRefusal } from '../../oauth/service.js';
import { refusalFor, type Mechanism } from '../../oauth/styles.js';

function succeed(session: ImapSession, user: string): CommandResult {
  session.login(user);
  return ok('Logged in', `CAPABILITY ${session.announceCapabilities().join(' ')}`);
}

const failed = (): CommandResult => no('Invalid credentials (Failure)', 'AUTHENTICATIONFAILED');

/** Checks a password against the users of the store. */
function verifyPassword(session: ImapSession, user: string, password: string): boolean {
  const record = session.server.store.users.get(user);
  return record !== undefined && record.password !== null && record.password === password;
}

/** The `loginDisabled` option on a connection without TLS: no login of any kind until STARTTLS. */
export function loginDisabled(session: ImapSession): boolean {
  return session.server.options.loginDisabled && !session.secure;
}

/** With the loginDisabled option, credentials travel only over TLS (implicit or STARTTLS). */
function plaintextRefused(session: ImapSession): CommandResult | null {
  if (!loginDisabled(session)) return null;
  return no('Login is disabled on connections without TLS; use STARTTLS', 'PRIVACYREQUIRED');
}

export const login: CommandSpec = {
  name: 'LOGIN',
  states: NOT_AUTHENTICATED,
  run({ session, args }) {
    const user = args.astring().toString('utf8');
    args.sp();
    const password = args.astring().toString('utf8');
    args.end();
    const refused = plaintextRefused(session);
    if (refused) return refused;
    return verifyPassword(session, user, password) ? succeed(session, user) : failed();
  },
};

/** Decodes `authzid NUL authcid NUL password` (RFC 4616). */
export function checkPlain(session: ImapSession, response: Buffer): CommandResult {
  const parts = response.toString('utf8').split('\0');
  // Malformed PLAIN data is an authentication failure, as Dovecot answers it (RFC 3501 §6.2.2 NO).
  if (parts.length !== 3) return failed();
  const [authz, user, password] = parts as [string, string, string];
  if (authz !== '' && authz !== user) return failed();
  return verifyPassword(session, user, password) ? succeed(session, user) : failed();
}

/**
 * Logs in with an access token: a user's static `xoauth2.accessToken` as
 * ever, else whatever the token service says (`server.oauth.check`: live,
 * for this user, with the mail scope). A refused token is answered as the
 * `oauth.style` provider answers it (src/oauth/styles.ts): most send a JSON
 * error challenge and wait for the client's abort, then NO.
 */
async function tokenLogin(session: ImapSession, user: string | undefined, token: string | undefined, mechanism: Mechanism): Promise<CommandResult> {
  const server = session.server;
  const record = user === undefined ? undefined : server.store.users.get(user);
  const expected = record?.xoauth2;
  if (user !== undefined && token !== undefined && expected && expected.accessToken === token) {
    session.login(user, { sessionTimeout: expected.sessionTimeout });
    return ok('Logged in', `CAPABILITY ${session.announceCapabilities().join(' ')}`);
  }
  const oauth = server.oauth;
  let refusal: TokenRefusal = 'unknown';
  if (user !== undefined && token !== undefined) {
    const verdict = oauth.check(user, token, mechanism, session.id);
    if (verdict.ok && record) {
      session.login(user);
      oauth.lease(session, token, verdict);
      return ok('Logged in', `CAPABILITY ${session.announceCapabilities().join(' ')}`);
    }
    if (!verdict.ok) refusal = verdict.reason;
  }
  const { style, mailScope } = oauth.settings;
  const answer = refusalFor(style, mechanism, refusal, mailScope, oauth.knownIssuer());
  if (answer.challenge) {
    session.continueRequest(Buffer.from(JSON.stringify(answer.challenge)).toString('base64'));
    const line = await session.readLine();
    if (line === null) return no('Connection closed');
  }
  return no(answer.text, answer.code ?? undefined);
}

/** Google's XOAUTH2: `user=<name>^Aauth=Bearer <token>^A^A`. */
export function checkXOAuth2(session: ImapSession, response: Buffer): Promise<CommandResult> {
  const m = /^user=([^\x01]*)\x01auth=Bearer ([^\x01]+)\x01\x01$/.exec(response.toString('utf8'));
  return tokenLogin(session, m?.[1], m?.[2], 'XOAUTH2');
}

/** RFC 7628 OAUTHBEARER: `n,a=<name>,^Ahost=...^Aport=...^Aauth=Bearer <token>^A^A`. */
export function checkOAuthBearer(session: ImapSession, response: Buffer): Promise<CommandResult> {
  const text = response.toString('utf8');
  const [gs2, ...pairs] = text.split('\x01');
  const user = /^[ny],a=([^,]*),$/.exec(gs2 ?? '')?.[1]?.replace(/=2C/g, ',').replace(/=3D/g, '=');
  const auth = text.endsWith('\x01\x01') ? pairs.find((p) => p.startsWith('auth=Bearer ')) : undefined;
  return tokenLogin(session, user, auth?.slice('auth=Bearer '.length), 'OAUTHBEARER');
}

export const authenticate: CommandSpec = {
  name: 'AUTHENTICATE',
  states: NOT_AUTHENTICATED,
  async run({ session, args }) {
    const name = args.atom().toUpperCase();
    let initial: string | null = null;
    if (!args.atEnd()) {
      args.sp();
      initial = args.atom();
    }
    args.end();
    const protocol = imapProtocol(session.server);
    // A hidden AUTH= mechanism or SASL-IR (capabilities.hide) answers as on a server without it.
    const hidden = session.hiddenCapabilities;
    const mechanism = hidden.has(`AUTH=${name}`) ? undefined : protocol.sasl.get(name);
    if (!mechanism) return no(`Unsupported authentication mechanism ${name}`);
    if (initial !== null && (!protocol.saslInitialResponse || hidden.has('SASL-IR'))) return bad('Initial response needs SASL-IR');
    const refused = plaintextRefused(session);
    if (refused) return refused;
    let text: string;
    if (initial !== null) text = initial === '=' ? '' : initial;
    else {
      session.continueRequest('');
      const line = await session.readLine();
      if (line === null) return no('Connection closed');
      text = line.toString('latin1');
      if (text === '*') return bad('Authentication aborted');
    }
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return bad('Invalid base64 data');
    return mechanism.check(session, Buffer.from(text, 'base64'));
  },
};

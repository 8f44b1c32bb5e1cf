/**
 * LOGIN and AUTHENTICATE. The SASL mechanisms come from extensions' `sasl`
 * points (the checkers for PLAIN, XOAUTH2 and OAUTHBEARER live here, for the
 * AUTH=* extensions to offer), initial responses from `saslInitialResponse`.
 */
import { NOT_AUTHENTICATED, bad, no, ok, type CommandResult, type CommandSpec } from '../command.js';
import type { ImapSession } from '../session.js';
import { imapProtocol } from '../protocol.js';
import { passwordMatches } from '../../auth/credentials.js';
import { decodeOAuthBearer, decodePlain, decodeXOAuth2, isBase64 } from '../../auth/sasl.js';
import { checkToken, type Mechanism } from '../../auth/tokens.js';

function succeed(session: ImapSession, user: string): CommandResult {
  session.login(user);
  return ok('Logged in', `CAPABILITY ${session.announceCapabilities().join(' ')}`);
}

const failed = (): CommandResult => no('Invalid credentials (Failure)', 'AUTHENTICATIONFAILED');

/** Checks a password against the users of the store. */
function verifyPassword(session: ImapSession, user: string, password: string): boolean {
  return passwordMatches(session.server.store.users, user, password);
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
  const plain = decodePlain(response);
  // Malformed PLAIN data is an authentication failure, as Dovecot answers it (RFC 3501 §6.2.2 NO).
  if (plain === null) return failed();
  return verifyPassword(session, plain.user, plain.password) ? succeed(session, plain.user) : failed();
}

/**
 * Logs in with an access token (src/auth/tokens.ts: a static token, or the
 * token service's verdict). A refused token is answered as the `oauth.style`
 * provider answers it: most send a JSON error challenge and wait for the
 * client's abort, then NO.
 */
async function tokenLogin(session: ImapSession, user: string | undefined, token: string | undefined, mechanism: Mechanism): Promise<CommandResult> {
  const verdict = checkToken(session.server, user, token, mechanism, session.id);
  if (verdict.ok) {
    session.login(user!, { sessionTimeout: verdict.sessionTimeout });
    verdict.lease?.(session);
    return ok('Logged in', `CAPABILITY ${session.announceCapabilities().join(' ')}`);
  }
  const { challenge, text, code } = verdict.refusal;
  if (challenge) {
    session.continueRequest(Buffer.from(JSON.stringify(challenge)).toString('base64'));
    const line = await session.readLine();
    if (line === null) return no('Connection closed');
  }
  return no(text, code ?? undefined);
}

/** Google's XOAUTH2: `user=<name>^Aauth=Bearer <token>^A^A`. */
export function checkXOAuth2(session: ImapSession, response: Buffer): Promise<CommandResult> {
  const { user, token } = decodeXOAuth2(response);
  return tokenLogin(session, user, token, 'XOAUTH2');
}

/** RFC 7628 OAUTHBEARER: `n,a=<name>,^Ahost=...^Aport=...^Aauth=Bearer <token>^A^A`. */
export function checkOAuthBearer(session: ImapSession, response: Buffer): Promise<CommandResult> {
  const { user, token } = decodeOAuthBearer(response);
  return tokenLogin(session, user, token, 'OAUTHBEARER');
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
    if (!isBase64(text)) return bad('Invalid base64 data');
    return mechanism.check(session, Buffer.from(text, 'base64'));
  },
};

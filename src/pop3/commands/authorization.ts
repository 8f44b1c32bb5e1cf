/**
 * The AUTHORIZATION state's logins: USER/PASS (RFC 1939 §7), APOP (§7),
 * AUTH (RFC 5034) with PLAIN, LOGIN, XOAUTH2 and OAUTHBEARER. Failures
 * carry `[AUTH]` (RFC 3206 §4: the credentials are wrong, not the system).
 */
import { apopMatches, passwordMatches } from '../../auth/credentials.js';
import { decodeOAuthBearer, decodePlain, decodeXOAuth2, isBase64 } from '../../auth/sasl.js';
import { checkToken, type Mechanism } from '../../auth/tokens.js';
import { splitUser } from '../behaviour.js';
import { saslFor } from '../capabilities.js';
import type { Pop3Session } from '../session.js';
import { bad, err, linesBody, ok, type Pop3CommandSpec, type Pop3Reply } from './types.js';

const AUTHORIZATION = ['authorization'] as const;

const authFailed = (): Pop3Reply => err('Authentication failed', 'AUTH');

/** Checks a name (with any configured prefix) and password, and logs in. */
function passwordLogin(session: Pop3Session, name: string, password: string): Pop3Reply {
  const { user, prefix } = splitUser(session.config.behaviour, name);
  if (!passwordMatches(session.server.store.users, user, password)) return authFailed();
  return session.login(user, prefix);
}

export const user: Pop3CommandSpec = {
  name: 'USER',
  states: AUTHORIZATION,
  run({ session, rest }) {
    if (rest === '') return bad('USER needs a name');
    session.pendingUser = rest;
    // Whether the name exists is not told (RFC 1939 §7 allows either; telling helps attackers).
    return ok('Send PASS');
  },
};

export const pass: Pop3CommandSpec = {
  name: 'PASS',
  states: AUTHORIZATION,
  run({ session, rest }) {
    const name = session.pendingUser;
    session.pendingUser = null;
    if (name === null) return bad('USER first');
    return passwordLogin(session, name, rest);
  },
};

export const apop: Pop3CommandSpec = {
  name: 'APOP',
  states: AUTHORIZATION,
  run({ session, args }) {
    const timestamp = session.timestamp;
    if (timestamp === null) return bad('APOP is not offered (no timestamp in the greeting)');
    if (args.length !== 2) return bad('APOP needs a name and a digest');
    const { user, prefix } = splitUser(session.config.behaviour, args[0]!);
    if (!apopMatches(session.server.store.users, user, timestamp, args[1]!)) return authFailed();
    return session.login(user, prefix);
  },
};

/** Reads the client's next SASL line; null when the client aborted (`*`) or left. */
async function response(session: Pop3Session, challenge: string): Promise<Buffer | Pop3Reply> {
  session.challenge(challenge);
  const line = await session.readLine();
  if (line === null) return err('Connection closed');
  const text = line.toString('latin1');
  // RFC 5034 §4: "*" cancels the exchange, answered with -ERR.
  if (text === '*') return err('Authentication aborted');
  if (!isBase64(text)) return bad('Invalid base64 data');
  return Buffer.from(text, 'base64');
}

/**
 * A login with a token: the shared check (src/auth/tokens.ts: a static
 * token or the token service's verdict). A refused one is answered as the
 * `oauth.style` provider does: the JSON error as a challenge (what real
 * servers do), the client's answer read, then -ERR [AUTH].
 */
async function tokenLogin(session: Pop3Session, name: string | undefined, token: string | undefined, mechanism: Mechanism): Promise<Pop3Reply> {
  const split = name === undefined ? undefined : splitUser(session.config.behaviour, name);
  const verdict = checkToken(session.server, split?.user, token, mechanism, session.id);
  if (verdict.ok && split) {
    const reply = session.login(split.user, split.prefix);
    // A token of the token service: the session ends when it expires or is revoked.
    if (reply.ok) verdict.lease?.(session);
    return reply;
  }
  if (verdict.ok) return authFailed();
  const { challenge } = verdict.refusal;
  if (challenge) {
    session.challenge(Buffer.from(JSON.stringify(challenge)).toString('base64'));
    const line = await session.readLine();
    if (line === null) return err('Connection closed');
  }
  return authFailed();
}

/**
 * SASL EXTERNAL (RFC 4422 Appendix A): the certificate's user logs in; the
 * client's message is the authorization identity, empty meaning "the
 * authenticated one" (A.1). Acting as another user is not supported.
 */
function externalLogin(session: Pop3Session, message: Buffer): Pop3Reply {
  const user = session.certificateUser;
  if (user === null) return err('No client certificate signed by the test CA on this connection', 'AUTH');
  const authz = message.toString('utf8');
  if (authz !== '' && authz !== user) return err(`The certificate names ${user}; acting as another user is not supported`, 'AUTH');
  return session.login(user, null);
}

export const auth: Pop3CommandSpec = {
  name: 'AUTH',
  states: AUTHORIZATION,
  async run({ session, args }) {
    // Without a mechanism: the list, as several servers answer (RFC 5034 leaves it open; CAPA is the standard way).
    const offered = saslFor(session.certificateUser);
    if (args.length === 0) return ok('Mechanisms follow', linesBody([...offered]));
    if (args.length > 2) return bad('AUTH takes a mechanism and an optional initial response');
    const mechanism = args[0]!.toUpperCase();
    // EXTERNAL without a certificate is known but cannot succeed: [AUTH], as a wrong password.
    if (mechanism === 'EXTERNAL' && !offered.includes(mechanism)) return err('No client certificate signed by the test CA on this connection', 'AUTH');
    if (!offered.includes(mechanism)) return err(`Unsupported authentication mechanism ${mechanism}`);
    const initial = args[1];
    let first: Buffer | Pop3Reply;
    // LOGIN's first challenge asks for the name (below); the others start with an empty one.
    if (initial === undefined && mechanism === 'LOGIN') first = Buffer.alloc(0);
    else if (initial === undefined) first = await response(session, '');
    else if (initial === '=') first = Buffer.alloc(0); // RFC 5034 §4: "=" is an empty initial response
    else if (!isBase64(initial)) return bad('Invalid base64 data');
    else first = Buffer.from(initial, 'base64');
    if (!Buffer.isBuffer(first)) return first;
    switch (mechanism) {
      case 'PLAIN': {
        const plain = decodePlain(first);
        if (plain === null) return authFailed();
        return passwordLogin(session, plain.user, plain.password);
      }
      case 'LOGIN': {
        // draft-murchison-sasl-login: "Username:" and "Password:" challenges; an initial response is the name.
        let name = first;
        if (initial === undefined) {
          const asked = await response(session, Buffer.from('Username:').toString('base64'));
          if (!Buffer.isBuffer(asked)) return asked;
          name = asked;
        }
        const password = await response(session, Buffer.from('Password:').toString('base64'));
        if (!Buffer.isBuffer(password)) return password;
        return passwordLogin(session, name.toString('utf8'), password.toString('utf8'));
      }
      case 'EXTERNAL':
        return externalLogin(session, first);
      case 'XOAUTH2': {
        const { user, token } = decodeXOAuth2(first);
        return tokenLogin(session, user, token, 'XOAUTH2');
      }
      default: {
        const { user, token } = decodeOAuthBearer(first);
        return tokenLogin(session, user, token, 'OAUTHBEARER');
      }
    }
  },
};

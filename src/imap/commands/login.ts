/** LOGIN and AUTHENTICATE (PLAIN with the AUTH=PLAIN plugin; SASL-IR initial responses). */
import { NOT_AUTHENTICATED, bad, no, ok, type CommandResult, type CommandSpec } from '../command.js';
import type { ImapSession } from '../session.js';
import { imapProtocol } from '../protocol.js';

function succeed(session: ImapSession, user: string): CommandResult {
  session.login(user);
  return ok('Logged in', `CAPABILITY ${session.capabilities().join(' ')}`);
}

const failed = (): CommandResult => no('Invalid credentials (Failure)', 'AUTHENTICATIONFAILED');

/** Checks a password against the users of the store. */
function verifyPassword(session: ImapSession, user: string, password: string): boolean {
  const record = session.server.store.users.get(user);
  return record !== undefined && record.password !== null && record.password === password;
}

export const login: CommandSpec = {
  name: 'LOGIN',
  states: NOT_AUTHENTICATED,
  run({ session, args }) {
    const user = args.astring().toString('utf8');
    args.sp();
    const password = args.astring().toString('utf8');
    args.end();
    return verifyPassword(session, user, password) ? succeed(session, user) : failed();
  },
};

/** Decodes `authzid NUL authcid NUL password` (RFC 4616). */
function checkPlain(session: ImapSession, response: Buffer): CommandResult {
  const parts = response.toString('utf8').split('\0');
  // Malformed PLAIN data is an authentication failure, as Dovecot answers it (RFC 3501 §6.2.2 NO).
  if (parts.length !== 3) return failed();
  const [authz, user, password] = parts as [string, string, string];
  if (authz !== '' && authz !== user) return failed();
  return verifyPassword(session, user, password) ? succeed(session, user) : failed();
}

export const authenticate: CommandSpec = {
  name: 'AUTHENTICATE',
  states: NOT_AUTHENTICATED,
  async run({ session, args }) {
    const mechanism = args.atom().toUpperCase();
    let initial: string | null = null;
    if (!args.atEnd()) {
      args.sp();
      initial = args.atom();
    }
    args.end();
    const protocol = imapProtocol(session.server);
    if (mechanism !== 'PLAIN' || !protocol.has('AUTH=PLAIN')) return no(`Unsupported authentication mechanism ${mechanism}`);
    if (initial !== null && !protocol.has('SASL-IR')) return bad('Initial response needs SASL-IR');
    let text: string;
    if (initial !== null) text = initial === '=' ? '' : initial;
    else {
      session.write(Buffer.from('+ \r\n'));
      const line = await session.readLine();
      if (line === null) return no('Connection closed');
      text = line.toString('latin1');
      if (text === '*') return bad('Authentication aborted');
    }
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return bad('Invalid base64 data');
    return checkPlain(session, Buffer.from(text, 'base64'));
  },
};

/** STARTTLS (RFC 3501 §6.2.1) and LOGINDISABLED: plain-text connections that turn into TLS. */
import { NOT_AUTHENTICATED, bad, ok, type CommandSpec } from '../command.js';

export const starttls: CommandSpec = {
  name: 'STARTTLS',
  states: NOT_AUTHENTICATED,
  run({ session, args }) {
    args.end();
    // A `stripStartTls` fault (issue 14): the man in the middle turned the command into one the server does not know.
    if (session.faults.stripStartTls) return bad('Unknown command STARTTLS');
    if (session.secure) return bad('TLS is already active');
    session.startTls(session.server.tlsContext());
    return ok('Begin TLS negotiation now');
  },
};

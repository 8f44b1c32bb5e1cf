/** STARTTLS (RFC 3501 §6.2.1) and LOGINDISABLED: plain-text connections that turn into TLS. */
import type { Duplex } from 'node:stream';
import { attackStartTls } from '../../tls/attacks/imap-attack.js';
import { NOT_AUTHENTICATED, bad, ok, type CommandResult, type CommandSpec } from '../command.js';

export const starttls: CommandSpec = {
  name: 'STARTTLS',
  states: NOT_AUTHENTICATED,
  run({ session, args, tag }) {
    args.end();
    // A `stripStartTls` fault (issue 14): the man in the middle turned the command into one the server does not know.
    if (session.faults.stripStartTls) return bad('Unknown command STARTTLS');
    if (session.secure) return bad('TLS is already active');
    const server = session.server;
    const listener = server.tlsFor('imap');
    const watch = session.tlsWatch;
    // The STARTTLS attacks of the TLS bench (src/tls/attacks/) change the answer and what follows it.
    const plan = watch ? attackStartTls(watch, tag) : null;
    if (plan && !plan.handshake) {
      if (plan.after) session.startTls(null, plan.after);
      return { status: plan.status, ...(plan.code ? { code: plan.code } : {}), text: plan.text } as CommandResult;
    }
    session.startTls((plain: Duplex) => {
      const socket = listener.wrap(plain);
      if (watch) server.tls.follow(watch, 'imap', socket);
      const garbage = plan?.afterHandshake;
      // Under the TLS layer: these bytes reach the client outside any record.
      if (garbage && watch) socket.once('secure', () => watch.armGarbage(() => plain.write(garbage)));
      return socket;
    }, plan?.after ?? null);
    return plan ? { status: 'OK', ...(plan.code ? { code: plan.code } : {}), text: plan.text } : ok('Begin TLS negotiation now');
  },
};

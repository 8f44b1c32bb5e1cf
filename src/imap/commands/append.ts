/** APPEND (RFC 3501 §6.3.11), with APPENDUID when UIDPLUS is loaded. */
import { isServiceError } from '../../errors.js';
import { internalDateFromMs } from '../../store/internal-date.js';
import { AUTHENTICATED, no, ok, type CommandSpec } from '../command.js';
import { imapProtocol } from '../protocol.js';
import { InvalidName, mailboxArg } from './mailboxes.js';

export const append: CommandSpec = {
  name: 'APPEND',
  states: AUTHENTICATED,
  run({ session, args }) {
    const path = mailboxArg(args);
    args.sp();
    let flags: string[] = [];
    if (args.peekChar() === '(') {
      flags = args.flagList({ allowRecent: false });
      args.sp();
    }
    let date = null;
    if (args.peekChar() === '"') {
      date = args.dateTime();
      args.sp();
    }
    const raw = args.literal();
    args.end();
    // A name that cannot be created gets no TRYCREATE (RFC 3501 §6.3.11).
    if (path instanceof InvalidName) return path.no('NONEXISTENT');
    const server = session.server;
    const mailbox = server.store.get(path);
    if (!mailbox) return no(`Mailbox doesn't exist: ${path}`, 'TRYCREATE');
    if (!mailbox.selectable) return no(`Mailbox isn't selectable: ${path}`, 'CANNOT');
    try {
      for (const check of server.appendChecks) check(mailbox, raw.length);
    } catch (err) {
      if (isServiceError(err)) return no(err.message, err.code);
      throw err;
    }
    const internaldate = date ?? internalDateFromMs(server.now());
    const [message] = server.store.append(mailbox, [{ raw, flags, internaldate }], session.id);
    if (imapProtocol(server).has('UIDPLUS')) return ok('Append completed', `APPENDUID ${mailbox.uidvalidity} ${message!.uid}`);
    return ok('Append completed');
  },
};

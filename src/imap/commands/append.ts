/**
 * APPEND (RFC 3501 §6.3.11). Extension points: access (`i` on the target;
 * `s`/`t`/`w` for the flags it sets),
 * checks before the append (quota, size limits), the result code (APPENDUID).
 */
import { internalDateFromMs } from '../../store/internal-date.js';
import { AUTHENTICATED, no, ok, type CommandSpec } from '../command.js';
import { accessRefusal, checkResult, flagFilter, imapProtocol } from '../protocol.js';
import { InvalidName, mailboxArg } from './mailboxes.js';

export const append: CommandSpec = {
  name: 'APPEND',
  states: AUTHENTICATED,
  run({ session, args, name }) {
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
    const protocol = imapProtocol(session.server);
    // A literal, or an extension's form of message data (`UTF8 (literal8)`, RFC 6855), then
    // the extensions' rewriting of the data (BINARY).
    const raw = protocol.appendData(protocol.readAppendData(args), session);
    args.end();
    // A name that cannot be created gets no TRYCREATE (RFC 3501 §6.3.11).
    if (path instanceof InvalidName) return path.no('NONEXISTENT');
    const server = session.server;
    const mailbox = server.store.get(path);
    if (!mailbox) return no(`Mailbox doesn't exist: ${path}`, 'TRYCREATE');
    const refused = accessRefusal(session, 'i', mailbox, mailbox.path, name);
    // A hidden mailbox answers as a missing one does.
    if (refused) return refused.code === 'NONEXISTENT' ? no(refused.text, 'TRYCREATE') : refused;
    if (!mailbox.selectable) return no(`Mailbox isn't selectable: ${path}`, 'CANNOT');
    const failed = checkResult(() => {
      for (const check of server.appendChecks) check(mailbox, raw.length);
      protocol.checkAppend({ mailbox, size: raw.length, session, raw });
    });
    if (failed) return failed;
    const internaldate = date ?? internalDateFromMs(server.now());
    // Flags the user has no right to set are dropped, the APPEND still succeeds (RFC 4314 §4).
    // Without flags there is nothing to filter: no access questions on that (common) path.
    const keep = flags.length > 0 ? flagFilter(session, mailbox, name) : null;
    const kept = keep ? flags.filter(keep) : flags;
    const [message] = server.store.append(mailbox, [{ raw, flags: kept, internaldate }], session.id);
    const code = protocol.appendCode(mailbox, [message!.uid]);
    return ok('Append completed', code);
  },
};

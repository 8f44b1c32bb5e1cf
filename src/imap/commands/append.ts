/**
 * APPEND (RFC 3501 §6.3.11, RFC 4466 §2.3 grammar). Extension points:
 * access (`i` on the target; `s`/`t`/`w` for the flags it sets), several
 * messages per APPEND and message-data forms besides a literal (`append`),
 * checks before the append (quota, size limits), the result code
 * (APPENDUID).
 *
 * The whole command is read before anything runs, so an APPEND of several
 * messages is atomic by construction: every message is built and checked
 * first, then all are stored in one change (one EXISTS for the sessions)
 * or none is.
 */
import type { AppendSource } from '../../extensions/extension.js';
import type { InternalDate } from '../../store/internal-date.js';
import { internalDateFromMs } from '../../store/internal-date.js';
import type { AppendInput } from '../../store/store.js';
import { AUTHENTICATED, no, ok, type CommandSpec } from '../command.js';
import type { ArgParser } from '../parser.js';
import { accessRefusal, checkResult, flagFilter, imapProtocol, type ImapProtocol } from '../protocol.js';
import type { ImapSession } from '../session.js';
import { InvalidName, mailboxArg } from './mailboxes.js';

/** One `append-message` as read: the bytes (a literal) or the form that will make them. */
interface AppendMessage {
  flags: string[];
  date: InternalDate | null;
  data: Buffer | AppendSource;
}


/** `append-opts SP append-data`, after the SP that precedes it. */
function readMessage(args: ArgParser, protocol: ImapProtocol, session: ImapSession): AppendMessage {
  let flags: string[] = [];
  if (args.peekChar() === '(') {
    flags = args.flagList({ allowRecent: false });
    args.sp();
  }
  let date: InternalDate | null = null;
  if (args.peekChar() === '"') {
    date = args.dateTime();
    args.sp();
  }
  // `append-data`: a literal (literal8 with BINARY), or an extension's form: `UTF8 (literal8)`, `CATENATE (...)`.
  return { flags, date, data: protocol.readAppendData(args, session) };
}

export const append: CommandSpec = {
  name: 'APPEND',
  states: AUTHENTICATED,
  run({ session, args, name }) {
    const server = session.server;
    const protocol = imapProtocol(server);
    const path = mailboxArg(args);
    const messages: AppendMessage[] = [];
    do {
      args.sp();
      messages.push(readMessage(args, protocol, session));
    } while (protocol.appendMultiple && !args.atEnd());
    args.end();
    // RFC 3502: a zero-length message literal is how a client cancels a MULTIAPPEND.
    if (protocol.appendMultiple && messages.some((m) => Buffer.isBuffer(m.data) && m.data.length === 0)) {
      return no('Zero-length message literal: APPEND cancelled, nothing was appended');
    }
    // A name that cannot be created gets no TRYCREATE (RFC 3501 §6.3.11).
    if (path instanceof InvalidName) return path.no('NONEXISTENT');
    const mailbox = session.mailboxes.get(path);
    if (!mailbox) return no(`Mailbox doesn't exist: ${path}`, 'TRYCREATE');
    const refused = accessRefusal(session, 'i', mailbox, mailbox.path, name);
    // A hidden mailbox answers as a missing one does.
    if (refused) return refused.code === 'NONEXISTENT' ? no(refused.text, 'TRYCREATE') : refused;
    if (!mailbox.selectable) return no(`Mailbox isn't selectable: ${path}`, 'CANNOT');
    const raws: Buffer[] = [];
    const unbuilt = checkResult(() => {
      // After the `appendData` rewrites (BINARY's lossless form of a literal8 message), as the checks and the store see it.
      for (const m of messages) raws.push(protocol.appendData(Buffer.isBuffer(m.data) ? m.data : m.data.build(mailbox), session));
    });
    if (unbuilt) return unbuilt;
    // Every message is checked before any is stored; each check sees the ones before it.
    const failed = checkResult(() => {
      const before = { messages: 0, size: 0 };
      for (const raw of raws) {
        for (const check of server.appendChecks) check(mailbox, raw.length);
        protocol.checkAppend({ mailbox, size: raw.length, session, raw, before: { ...before } });
        before.messages++;
        before.size += raw.length;
      }
    });
    if (failed) return failed;
    // Flags the user has no right to set are dropped, the APPEND still succeeds (RFC 4314 §4).
    // Without flags there is nothing to filter: no access questions on that (common) path.
    const keep = messages.some((m) => m.flags.length > 0) ? flagFilter(session, mailbox, name) : null;
    const now = internalDateFromMs(server.now());
    const inputs: AppendInput[] = messages.map((m, i) => ({
      raw: raws[i]!,
      flags: keep ? m.flags.filter(keep) : m.flags,
      internaldate: m.date ?? now,
    }));
    const added = server.store.append(mailbox, inputs, session.id);
    const code = protocol.appendCode(mailbox, added.map((m) => m.uid));
    return ok('Append completed', code);
  },
};

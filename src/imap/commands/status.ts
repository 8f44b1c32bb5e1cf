/** STATUS (RFC 3501 §6.3.10). Extension points: access (`r`), STATUS items. */
import { AUTHENTICATED, no, ok, type CommandSpec } from '../command.js';
import { accessRefusal, imapProtocol } from '../protocol.js';
import { atom, type ImapValue } from '../wire/values.js';
import { InvalidName, mailboxArg } from './mailboxes.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { ImapSession } from '../session.js';

/**
 * The values of STATUS items for a mailbox, as `name value` pairs (items an
 * extension leaves out are skipped). Also used by LIST's STATUS return option.
 */
export function statusValues(session: ImapSession, mailbox: Mailbox, items: readonly string[], asked = true): ImapValue[] {
  const protocol = imapProtocol(session.server);
  const out: ImapValue[] = [];
  for (const item of items) {
    let value: ImapValue | undefined;
    // An extension's item wins over the core's own count (STATUS=SIZE keeps SIZE in O(1)).
    if (protocol.statusItems.has(item)) value = protocol.statusValue(item, mailbox, session, asked);
    else switch (item) {
      case 'MESSAGES':
        value = mailbox.messages.length;
        break;
      case 'RECENT':
        value = mailbox.messages.length - mailbox.lowerBound(mailbox.recentFloor);
        break;
      case 'UIDNEXT':
        value = mailbox.uidnext;
        break;
      case 'UIDVALIDITY':
        value = mailbox.uidvalidity;
        break;
      case 'UNSEEN':
        value = mailbox.unseen;
        break;
      case 'HIGHESTMODSEQ':
        value = mailbox.highestModseq;
        break;
      case 'SIZE':
        value = mailbox.messages.reduce((sum, m) => sum + m.size, 0);
        break;
      case 'DELETED':
        value = mailbox.messages.reduce((n, m) => n + (m.flags.has('\\Deleted') ? 1 : 0), 0);
        break;
      default:
        value = protocol.statusValue(item, mailbox, session, asked);
    }
    if (value !== undefined) out.push(atom(item), value);
  }
  return out;
}

export const status: CommandSpec = {
  name: 'STATUS',
  states: AUTHENTICATED,
  run({ session, args, name }) {
    const protocol = imapProtocol(session.server);
    const path = mailboxArg(args);
    args.sp();
    const items = args.statusAttributes(protocol.statusItems);
    args.end();
    if (path instanceof InvalidName) return path.no('NONEXISTENT');
    const mailbox = session.mailboxes.get(path);
    if (!mailbox) return no(`Mailbox doesn't exist: ${path}`, 'NONEXISTENT');
    const refused = accessRefusal(session, 'r', mailbox, mailbox.path, name);
    if (refused) return refused;
    if (!mailbox.selectable) return no(`Mailbox isn't selectable: ${path}`, 'CANNOT');
    const out = statusValues(session, mailbox, items);
    session.untagged(atom('STATUS'), session.nameOf(mailbox), out);
    return ok('Status completed');
  },
};

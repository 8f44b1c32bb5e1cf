/**
 * The responses NOTIFY sends about other mailboxes (RFC 5465 §5): STATUS
 * for message events, LIST for MailboxName and SubscriptionChange, and the
 * access question (`l`, `r`) every notification asks first.
 */
import { childAttributes } from '../../imap/commands/list.js';
import { statusValues } from '../../imap/commands/status.js';
import { imapProtocol } from '../../imap/protocol.js';
import type { ImapSession } from '../../imap/session.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { ListContext } from '../extension.js';

const NO_OPTIONS: ReadonlySet<string> = new Set();

/** True when the session's user has the right on the mailbox (the core's access point). */
export function allowed(session: ImapSession, right: 'l' | 'r', mailbox: Mailbox | null, path: string): boolean {
  return imapProtocol(session.server).access(session, right, mailbox, path, 'NOTIFY').allow;
}

/**
 * The STATUS items of a notification (§3.1, §5.1-5.3): HIGHESTMODSEQ once
 * the client enabled CONDSTORE/QRESYNC, or when `modseq` (the initial
 * STATUS of a mailbox watched for FlagChange, §3.1: "supports") and the
 * server has CONDSTORE.
 */
function statusItems(session: ImapSession, modseq: boolean): string[] {
  const items = ['MESSAGES', 'UIDNEXT', 'UIDVALIDITY', 'UNSEEN'];
  const protocol = imapProtocol(session.server);
  if (protocol.has('CONDSTORE') && (modseq || session.hasEnabled('CONDSTORE') || session.hasEnabled('QRESYNC'))) items.push('HIGHESTMODSEQ');
  return items;
}

/** `STATUS box (items)` with the values the mailbox has now. */
export function statusLine(session: ImapSession, mailbox: Mailbox, modseq = false): ImapValue[] {
  return [atom('STATUS'), session.nameOf(mailbox), statusValues(session, mailbox, statusItems(session, modseq), false)];
}

/**
 * `LIST (attributes) delimiter name` as a notification sees the mailbox
 * now: its attributes as a plain LIST shows them (extensions' too, e.g.
 * special-use), children (§5.4 SHOULD) and `\\Subscribed` (§5.5).
 */
export function listLine(session: ImapSession, path: string, mailbox: Mailbox | null, oldName: string | null): ImapValue[] {
  const store = session.mailboxes;
  const attrs = mailbox ? [...mailbox.attributes, ...childAttributes(store, { path, mailbox })] : ['\\NonExistent'];
  if (mailbox) {
    const ctx: ListContext = { session, lsub: false, selection: NO_OPTIONS, returns: NO_OPTIONS };
    attrs.push(...imapProtocol(session.server).listAttributes({ path, mailbox }, ctx));
  }
  if (store.isSubscribed(path)) attrs.push('\\Subscribed');
  const seen = new Set<string>();
  const unique = attrs.filter((a) => !seen.has(a.toLowerCase()) && seen.add(a.toLowerCase()));
  // A UTF-8 session (UTF8=ACCEPT, IMAP4rev2) gets both names in UTF-8, as LIST gives them.
  const line: ImapValue[] = [atom('LIST'), unique.map(atom), store.delimiterFor(path), session.mailboxName(path)];
  if (oldName !== null) line.push(['OLDNAME', [session.mailboxName(oldName)]]);
  return line;
}

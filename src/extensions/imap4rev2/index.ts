/**
 * IMAP4rev2 (RFC 9051) beside IMAP4rev1: the capability is advertised and
 * `ENABLE IMAP4rev2` switches that session to the rev2 rules; a session
 * that does not enable it is answered as IMAP4rev1, byte for byte.
 *
 * Once enabled (see docs/plugins.md's table for every item of RFC 9051 Appendix E):
 * - no `\Recent`: FETCH FLAGS and `* n RECENT` leave it out; STATUS RECENT
 *   and SEARCH RECENT/NEW/OLD are not in the rev2 grammar and are BAD;
 * - SELECT/EXAMINE send no `OK [UNSEEN n]`, and send `* LIST (attrs) "/" name`
 *   for the selected mailbox (§6.3.2); a SELECT that ends a selection sends
 *   `OK [CLOSED]` first (§7.1);
 * - SEARCH without RETURN is answered by ESEARCH (`* ESEARCH (TAG "a") ALL 1:3`);
 * - every FETCH of flag changes carries UID (Appendix E: all unsolicited
 *   FETCH updates include UID);
 * - mailbox names are UTF-8 both ways (§5.1, not normalized); quoted strings may hold UTF-8;
 * - CHECK, removed from rev2, is BAD (use NOOP).
 * The extensions rev2 folds into the base protocol are loaded with it.
 */
import { bad } from '../../imap/command.js';
import { withoutRedundantChildFlag } from '../../imap/commands/list.js';
import { accessRefusal, imapProtocol } from '../../imap/protocol.js';
import type { ImapSession } from '../../imap/session.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import { defineExtension, type ListContext, type SessionRules } from '../extension.js';
import { always } from '../shared.js';

/** True once the session sent ENABLE IMAP4rev2. */
export const rev2 = (session: ImapSession): boolean => session.hasEnabled('IMAP4REV2');

const RULES: SessionRules = Object.freeze({ noRecent: true, noUnseenCode: true, searchReturnsByDefault: true, searchCharsetWithUtf8: true });

/** The attributes of the selected mailbox as LIST would show them (RFC 9051 §6.3.2: they MUST be accurate). */
function selectedListLine(session: ImapSession, path: string): ImapValue[] {
  const store = session.mailboxes;
  const mailbox = store.get(path) ?? null;
  // \HasChildren counts only children the user may list (RFC 4314), as LIST does.
  const hasChildren = (parent: string): boolean => {
    const prefix = parent + store.delimiterFor(parent);
    return store.list().some((m) => store.nameOf(m).startsWith(prefix) && accessRefusal(session, 'l', m, store.nameOf(m), 'SELECT') === null);
  };
  const ctx: ListContext = { session, lsub: false, selection: new Set(), returns: new Set(), returnArguments: new Map(), hasChildren };
  const attrs: string[] = [];
  const seen = new Set<string>();
  for (const a of [...(mailbox?.attributes ?? []), ...imapProtocol(session.server).listAttributes({ path, mailbox }, ctx)]) {
    if (seen.has(a.toLowerCase())) continue;
    seen.add(a.toLowerCase());
    attrs.push(a);
  }
  return [atom('LIST'), withoutRedundantChildFlag(attrs).map(atom), store.delimiterFor(path), session.mailboxName(path)];
}

export const extension = defineExtension<undefined>({
  name: 'IMAP4REV2',
  // RFC 9051 Appendix E folds these into the base protocol (BINARY: its FETCH side).
  requires: [
    'ENABLE',
    'NAMESPACE',
    'UNSELECT',
    'UIDPLUS',
    'ESEARCH',
    'SEARCHRES',
    'IDLE',
    'SASL-IR',
    'AUTH=PLAIN',
    'LIST-EXTENDED',
    'LIST-STATUS',
    'MOVE',
    'LITERAL-',
    'SPECIAL-USE',
    'STATUS=SIZE',
    'CHILDREN',
    'BINARY',
  ],
  capabilities: always('IMAP4rev2'),
  enable: ['IMAP4REV2'],
  rules: (session) => (rev2(session) ? RULES : undefined),
  // UTF-8 names and quoted strings (RFC 9051 §5.1): the same switch as UTF8=ACCEPT.
  utf8: (session) => rev2(session),
  select: {
    closing: (session) => (rev2(session) ? [[atom('OK'), atom('[CLOSED]'), atom('Previous mailbox closed.')]] : []),
    responses: (session, selected) => (rev2(session) ? [selectedListLine(session, selected.mailbox.path)] : []),
  },
  updates: {
    flagFetch: (session) => (rev2(session) ? { uid: true, items: [] } : undefined),
  },
  wrap: [
    {
      command: 'CHECK',
      run: (ctx, next) => (rev2(ctx.session) ? bad('CHECK is not in IMAP4rev2 (RFC 9051 Appendix E): use NOOP') : next()),
    },
  ],
});

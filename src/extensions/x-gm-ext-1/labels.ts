/**
 * Gmail's labels as mailboxes: which label a mailbox stands for, and which
 * mailbox a label names. System labels are the special-use mailboxes (and
 * INBOX), written as Gmail writes them (`\Inbox`, `\Sent`, `\Draft`,
 * `\Important`, `\Starred`, `\Trash`, `\Spam`); every other mailbox is a
 * user label named by its path. `\All` ("All Mail") is no label: every
 * message is in it. `\Starred` is the `\Flagged` flag (the `\Flagged`
 * special-use mailbox follows that flag).
 */
import type { Mailbox } from '../../store/mailbox.js';
import type { Store } from '../../store/store.js';

/** The special-use mailboxes that matter to the label model, found in one pass over the store. */
export interface Roles {
  all: Mailbox | undefined;
  trash: Mailbox | undefined;
  junk: Mailbox | undefined;
  starred: Mailbox | undefined;
  /** Mailboxes of system labels by lower-case label (`\sent`). */
  system: Map<string, Mailbox>;
}

/** Special-use attribute → the system label Gmail shows for it. */
const SYSTEM_LABEL = new Map<string, string>([
  ['\\sent', '\\Sent'],
  ['\\drafts', '\\Draft'],
  ['\\important', '\\Important'],
  ['\\trash', '\\Trash'],
  ['\\junk', '\\Spam'],
]);

/** Order of system labels in X-GM-LABELS (user labels follow, by name). */
const SYSTEM_ORDER = ['\\Inbox', '\\Important', '\\Sent', '\\Draft', '\\Starred', '\\Trash', '\\Spam'];

/** Spellings a client may use for a system label (lower case) → the canonical label. */
const SYSTEM_INPUT = new Map<string, string>([
  ['\\inbox', '\\Inbox'],
  ['\\sent', '\\Sent'],
  ['\\draft', '\\Draft'],
  ['\\drafts', '\\Draft'],
  ['\\important', '\\Important'],
  ['\\starred', '\\Starred'],
  ['\\trash', '\\Trash'],
  ['\\spam', '\\Spam'],
  ['\\junk', '\\Spam'],
  ['\\all', '\\All'],
  ['\\allmail', '\\All'],
]);

const has = (mailbox: Mailbox, attribute: string): boolean => mailbox.specialUse.some((a) => a.toLowerCase() === attribute);

export function findRoles(store: Store): Roles {
  const roles: Roles = { all: undefined, trash: undefined, junk: undefined, starred: undefined, system: new Map() };
  for (const mailbox of store.list()) {
    if (!roles.all && has(mailbox, '\\all')) roles.all = mailbox;
    if (!roles.trash && has(mailbox, '\\trash')) roles.trash = mailbox;
    if (!roles.junk && has(mailbox, '\\junk')) roles.junk = mailbox;
    if (!roles.starred && has(mailbox, '\\flagged')) roles.starred = mailbox;
    for (const a of mailbox.specialUse) {
      const label = SYSTEM_LABEL.get(a.toLowerCase());
      if (label && !roles.system.has(label.toLowerCase())) roles.system.set(label.toLowerCase(), mailbox);
    }
  }
  const inbox = store.get('INBOX');
  if (inbox) roles.system.set('\\inbox', inbox);
  return roles;
}

/** The label a mailbox stands for; null for All Mail and the Starred mailbox (the `\Flagged` flag is the label). */
export function labelOf(mailbox: Mailbox): string | null {
  if (mailbox.path === 'INBOX') return '\\Inbox';
  if (has(mailbox, '\\all') || has(mailbox, '\\flagged')) return null;
  for (const a of mailbox.specialUse) {
    const label = SYSTEM_LABEL.get(a.toLowerCase());
    if (label) return label;
  }
  return mailbox.path;
}

/** The canonical spelling of a label a client gave (`\inbox` → `\Inbox`); user labels as given. */
export function canonicalLabel(label: string): string {
  return label.startsWith('\\') ? (SYSTEM_INPUT.get(label.toLowerCase()) ?? label) : label;
}

/** Sorts labels as X-GM-LABELS lists them: system labels in Gmail's order, then user labels by name. */
export function sortLabels(labels: Iterable<string>): string[] {
  const rank = (l: string): number => {
    const i = SYSTEM_ORDER.indexOf(l);
    return i < 0 ? SYSTEM_ORDER.length : i;
  };
  return [...new Set(labels)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** Loose form of a label for `label:` in X-GM-RAW: Gmail lets `-` and spaces stand for `/` and each other. */
export function looseLabel(label: string): string {
  return label.toLowerCase().replace(/^\\/, '').replace(/[\s/-]+/g, '-');
}

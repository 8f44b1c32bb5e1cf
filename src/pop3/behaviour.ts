/**
 * Provider behaviour of the POP3 session, in one place so presets can set
 * it (`pop3.behaviour`): which user-name prefixes a server strips (Gmail's
 * `recent:`), which messages the maildrop holds for a prefix, and what
 * QUIT does with the messages DELE marked. Without `pop3.behaviour` it is
 * RFC 1939's: the name is the user, the maildrop is all of INBOX, marked
 * messages are deleted.
 */
import type { ResolvedPop3 } from '../options/types.js';
import type { Mailbox } from '../store/mailbox.js';
import type { Message } from '../store/message.js';
import type { Origin } from '../store/changes.js';
import type { Store } from '../store/store.js';
import type { MailboxView } from '../store/view.js';
import { uidlOf } from './maildrop.js';

export type Pop3BehaviourSettings = ResolvedPop3['behaviour'];

/** A user name as the client sent it: the user, and the prefix it started with (null: none). */
export interface SplitUser {
  user: string;
  prefix: string | null;
}

/** Strips the first configured prefix the name starts with (case-insensitive, as Gmail takes `Recent:`). */
export function splitUser(behaviour: Pop3BehaviourSettings, name: string): SplitUser {
  const lower = name.toLowerCase();
  for (const prefix of behaviour.userPrefixes) {
    if (lower.startsWith(prefix.toLowerCase()) && name.length > prefix.length) return { user: name.slice(prefix.length), prefix };
  }
  return { user: name, prefix: null };
}

/**
 * Messages an earlier session acted on at its QUIT and left in INBOX, per
 * INBOX (`hideRetrieved`, Gmail's "popped"). Keyed by the objects
 * themselves, so a server's reset (a new store) or an expunge forgets them
 * with nothing to clean up.
 */
const popped = new WeakMap<Mailbox, WeakSet<Message>>();

const DAY_MS = 86_400_000;

const lowerUidl = (uid: number, uidvalidity: number): string => uidlOf(uid, uidvalidity).toLowerCase();

/** How the maildrop spells a message's unique-id (`uidlHex`; Dovecot's `%X` writes lower-case hex). */
export function uidlFormat(behaviour: Pop3BehaviourSettings): (uid: number, uidvalidity: number) => string {
  return behaviour.uidlHex === 'lower' ? lowerUidl : uidlOf;
}

/**
 * The messages of the maildrop for a login, in UID order: all of INBOX by
 * default. With a user prefix and `recentDays`, those of the last
 * `recentDays` days by internal date (`now` is the server clock), popped
 * or not (Gmail's recent mode); without a prefix and with `hideRetrieved`,
 * those no earlier session popped (Gmail's normal mode).
 */
export function maildropMessages(behaviour: Pop3BehaviourSettings, prefix: string | null, inbox: Mailbox, now: number): Message[] {
  if (prefix !== null && behaviour.recentDays > 0) {
    const since = now - behaviour.recentDays * DAY_MS;
    return inbox.messages.filter((m) => m.internaldate.ms >= since);
  }
  const seen = behaviour.hideRetrieved ? popped.get(inbox) : undefined;
  return seen === undefined ? inbox.messages.slice() : inbox.messages.filter((m) => !seen.has(m));
}

/** What the UPDATE state did with the messages. */
export interface UpdateOutcome {
  /** UIDs removed from INBOX (deleted or moved). */
  removed: number[];
}

/**
 * The UPDATE state (RFC 1939 §6) for the messages to act on: one store
 * change, so IMAP sessions see one EXPUNGE burst and `expunge` fires once.
 * `keep` leaves them, `read` adds \Seen, `archive` moves them to
 * `archiveMailbox` (made when missing).
 */
export function applyUpdate(behaviour: Pop3BehaviourSettings, store: Store, view: MailboxView, inbox: Mailbox, doomed: readonly Message[], origin: Origin): UpdateOutcome {
  if (doomed.length === 0) return { removed: [] };
  if (behaviour.hideRetrieved) {
    let set = popped.get(inbox);
    if (set === undefined) popped.set(inbox, (set = new WeakSet()));
    // Recorded before the action: `read` gives the message new flags, not a new object, and a moved one is gone anyway.
    for (const m of doomed) set.add(m);
  }
  switch (behaviour.deleteAction) {
    case 'keep':
      return { removed: [] };
    case 'read':
      store.setFlags(inbox, doomed, ['\\Seen'], 'add', origin);
      return { removed: [] };
    case 'archive': {
      const target = view.get(behaviour.archiveMailbox) ?? view.createMailbox(behaviour.archiveMailbox, origin);
      store.move(inbox, doomed, target, origin);
      return { removed: doomed.map((m) => m.uid) };
    }
    default:
      return { removed: store.expunge(inbox, doomed.map((m) => m.uid), origin) };
  }
}

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
 * The messages of the maildrop for a login: every message of INBOX in UID
 * order. The point where a preset narrows it (by `prefix`, or by what
 * earlier sessions retrieved).
 */
export function maildropMessages(_behaviour: Pop3BehaviourSettings, _prefix: string | null, inbox: Mailbox): Message[] {
  return inbox.messages.slice();
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

import type { Mailbox } from './mailbox.js';
import type { Message } from './message.js';

/**
 * Change records: the one feed every consumer (IMAP sessions, the event bus)
 * reads. `origin` is the session number that caused the change, or null for
 * the control API and REST.
 */
export type Origin = number | null;

export type MailboxChangeType = 'create' | 'delete' | 'rename' | 'subscribe' | 'unsubscribe';

export type StoreChange = (
  /** `messages` is the change's own list, never changed once emitted: an idling session keeps it as its pending new messages. */
  | { kind: 'append'; mailbox: Mailbox; messages: Message[]; origin: Origin }
  | {
      kind: 'expunge';
      mailbox: Mailbox;
      uids: number[];
      /** The removed messages, in UID order (sizes for quota accounting). */
      messages: Message[];
      origin: Origin;
    }
  | {
      kind: 'flags';
      mailbox: Mailbox;
      messages: Message[];
      origin: Origin;
      /** The originating session asked for no FETCH response (`.SILENT`). */
      silent: boolean;
    }
  | { kind: 'mailbox'; type: MailboxChangeType; path: string; oldPath: string | null; mailbox: Mailbox | null; origin: Origin }
  | { kind: 'uidvalidity'; mailbox: Mailbox; origin: Origin }
  | { kind: 'user'; type: 'add' | 'update' | 'delete'; name: string; disconnect: boolean; origin: Origin }
  | { kind: 'reset'; origin: null }
) & {
  /**
   * With `userMailboxes`: the user whose own tree made the change (set on
   * changes relayed from a user's tree; absent for the shared tree). Message
   * changes name their mailbox, whose owner `server.ownerOf` gives.
   */
  user?: string;
};

export type ChangeListener = (change: StoreChange) => void;

/**
 * A listener given as an object with a method: what a session gives, so a
 * change that reaches 10,000 idling sessions calls each session itself
 * rather than a closure and its context per session (two more objects to
 * fetch from memory each, in a loop that is all memory fetches: issue 37's
 * fan-out).
 */
export interface ChangeObserver {
  storeChanged(change: StoreChange): void;
}

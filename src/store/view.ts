import type { SeedNamespace } from '../options/types.js';
import type { Origin } from './changes.js';
import type { Mailbox } from './mailbox.js';

/**
 * The mailboxes one user sees, by name: the one resolver through which the
 * IMAP core and the extensions reach the store by mailbox name. With one
 * shared tree (the default) it is the Store itself; with `userMailboxes`
 * it is the session user's own tree plus the Other Users and Shared
 * namespaces (src/store/user-view.ts).
 *
 * Message operations (append, flags, expunge, ...) take a Mailbox and stay
 * on the Store: a Mailbox, once found, is the same object whoever names it.
 */
export interface MailboxView {
  /** Every namespace this user has (RFC 2342), personal first. */
  readonly namespaces: readonly SeedNamespace[];
  /** INBOX is case-insensitive, also as the first level of a path (and of another user's tree). */
  normalizePath(path: string): string;
  namespaceOf(path: string): SeedNamespace;
  delimiterFor(path: string): string;
  /** The parent's name, or null at the top of a namespace. */
  parentOf(path: string): string | null;
  has(path: string): boolean;
  get(path: string): Mailbox | undefined;
  /** The mailbox, or a NONEXISTENT error. */
  require(path: string): Mailbox;
  /** Every mailbox this user may name, ordered by name. */
  list(): Mailbox[];
  hasChildren(mailbox: Mailbox): boolean;
  /** The name this user knows the mailbox by (its path, or `Other Users/<owner>/<path>`). */
  nameOf(mailbox: Mailbox): string;
  /**
   * The name this user knows `path` of `owner`'s tree by (owner null: the
   * shared tree, and the one tree without `userMailboxes`); null when this
   * user cannot see that tree at all. For change records, which carry paths.
   */
  nameAt(owner: string | null, path: string): string | null;
  /** Whose tree a name is in (null: the shared tree, and the one tree without `userMailboxes`). */
  ownerAt(path: string): string | null;
  isSubscribed(path: string): boolean;
  subscribedNames(): string[];
  subscribe(path: string, origin: Origin, options?: { mustExist?: boolean }): boolean;
  unsubscribe(path: string, origin: Origin): boolean;
  createMailbox(path: string, origin: Origin, options?: { subscribed?: boolean; specialUse?: string[] }): Mailbox;
  deleteMailbox(path: string, origin: Origin): void;
  renameMailbox(path: string, newPath: string, origin: Origin): Mailbox;
}

import { ServiceError } from '../errors.js';

/**
 * A tree holding seed messages whose octets it has not counted yet (their
 * sources are text not yet encoded): asked to count them when the budget's
 * byte total is read.
 */
export interface UncountedBytes {
  countBytes(): void;
}

/**
 * The store's memory budget (`maxMessages`, `maxStoreBytes`): what every
 * tree of a server holds together, kept as two running totals that each
 * change moves by what it adds or removes, so no operation ever walks the
 * store to find out. A message counts `raw.length` octets even where a copy
 * shares its bytes with the original: the figure is what a disk-backed
 * server would hold, and it does not depend on how copies were made. The
 * one exception to "never walks": the octets of seed mailboxes nobody has
 * read are summed when the byte total is first asked for, once per seed.
 *
 * Adding past a limit fails the way a full server does: OVERQUOTA (RFC 5530
 * "the user would be over quota after the operation"; a quota the client
 * cannot look up when the QUOTA extension is not loaded, which the RFC
 * allows), so IMAP says `NO [OVERQUOTA]`, SMTP 452 and REST 409 OVERQUOTA.
 * Loading the seed (start, reset, a user's tree made on first use) is never
 * refused: a store seeded above its budget takes no new mail until enough
 * is removed.
 */
export class StoreBudget {
  messages = 0;
  /** The octets counted so far; `bytes` adds what trees still owe first. */
  private counted = 0;
  /**
   * Trees that owe a count. A server built, started and stopped without
   * its seed mailboxes read never measures their sources (issue 37's
   * create+start+stop row): only a byte limit, or a look at the total,
   * needs them.
   */
  private uncounted: Set<UncountedBytes> | null = null;

  constructor(
    /** Most messages; null: no limit. */
    readonly maxMessages: number | null,
    /** Most octets of message sources; null: no limit. */
    readonly maxBytes: number | null,
  ) {}

  /** True when either limit is set (the server has a budget to enforce). */
  get limited(): boolean {
    return this.maxMessages !== null || this.maxBytes !== null;
  }

  /** True when no message of any size fits any more. */
  get full(): boolean {
    return (this.maxMessages !== null && this.messages >= this.maxMessages) || (this.maxBytes !== null && this.bytes >= this.maxBytes);
  }

  /** Throws OVERQUOTA unless `messages` more messages of `bytes` octets in all fit. */
  admit(messages: number, bytes: number): void {
    if (this.maxMessages !== null && this.messages + messages > this.maxMessages) {
      throw new ServiceError(
        'OVERQUOTA',
        `The server's store is full: it holds ${this.messages} of at most ${this.maxMessages} messages (maxMessages); ${messages} more do not fit`,
      );
    }
    if (this.maxBytes !== null && this.bytes + bytes > this.maxBytes) {
      throw new ServiceError(
        'OVERQUOTA',
        `The server's store is full: it holds ${this.bytes} of at most ${this.maxBytes} octets (maxStoreBytes); ${bytes} more do not fit`,
      );
    }
  }

  /** Octets of message sources held by every tree together. */
  get bytes(): number {
    const owing = this.uncounted;
    if (owing !== null) {
      this.uncounted = null;
      for (const tree of owing) tree.countBytes();
    }
    return this.counted;
  }

  add(messages: number, bytes: number): void {
    this.messages += messages;
    this.counted += bytes;
  }

  remove(messages: number, bytes: number): void {
    this.messages -= messages;
    this.counted -= bytes;
  }

  /** `tree` holds messages it has not counted the octets of: it is asked before the total is read. */
  owe(tree: UncountedBytes): void {
    (this.uncounted ??= new Set()).add(tree);
  }

  /** `tree` owes nothing any more (it counted, or it gave back what it held). */
  forget(tree: UncountedBytes): void {
    this.uncounted?.delete(tree);
  }
}

import type { Message } from './message.js';

/**
 * A mailbox: its messages in UID order plus the counters IMAP needs.
 * Sequence number n is `messages[n - 1]`; a UID is found by binary search.
 * After a reset the list is rebuilt from the seed on first read.
 */
export class Mailbox {
  path: string;
  readonly delimiter: string;
  // ---------------------------------------------------------------- the message list, built on first read
  /** The messages, or null while a reset's seed copy has not been built yet. */
  private list: Message[] | null = [];
  /** Builds the list from the seed (set by `deferMessages`, dropped once run). */
  private build: (() => Message[]) | null = null;
  private unseenCount = 0;
  private readonly keywordSet = new Set<string>();

  /** Messages in UID order; sequence number n is `messages[n - 1]`. */
  get messages(): Message[] {
    return this.list ?? this.materialize();
  }

  set messages(list: Message[]) {
    this.list = list;
    this.build = null;
  }

  /**
   * Leaves the list to be built from the seed when something first reads
   * it: a reset swaps every mailbox back in O(mailboxes), and a mailbox no
   * test touches after it never pays for its messages.
   */
  deferMessages(build: () => Message[]): void {
    this.list = null;
    this.build = build;
    this.unseenCount = 0;
    this.keywordSet.clear();
  }

  /** False while the messages wait to be copied from the seed (`deferMessages`). */
  get loaded(): boolean {
    return this.list !== null;
  }

  private materialize(): Message[] {
    const build = this.build!;
    this.build = null;
    const list = build();
    this.list = list;
    this.recount();
    for (const m of list) this.noteKeywords(m.flags);
    return list;
  }

  /** Messages without `\Seen`, kept up to date by the store. */
  get unseen(): number {
    if (this.list === null) this.materialize();
    return this.unseenCount;
  }

  set unseen(n: number) {
    if (this.list === null) this.materialize();
    this.unseenCount = n;
  }

  /**
   * Every keyword a message of this mailbox has carried, in the order they
   * came. It only grows (as Dovecot's keyword list does), so a session can
   * tell by its size alone whether FLAGS must be sent again.
   */
  get keywords(): Set<string> {
    if (this.list === null) this.materialize();
    return this.keywordSet;
  }
  // ---------------------------------------------------------------- end of the message list

  uidvalidity: number;
  uidnext: number;
  highestModseq: number;
  /** Mailbox attributes from storage, e.g. `\Noselect`. */
  attributes: string[];
  specialUse: string[];
  /** Explicit permanent flags from storage; null means the default set. */
  permanentFlags: string[] | null;
  /** Extension-owned keys (`acl`, `metadata`, ...). */
  extra: Record<string, unknown>;
  /** UIDs at or above this have not yet been seen as \Recent by any session. */
  recentFloor: number;
  /**
   * Messages and octets of source this mailbox holds, for the store's
   * budget: kept by the store on every change (known from the seed without
   * building a deferred list), so deleting the mailbox costs no walk.
   */
  heldMessages = 0;
  heldBytes = 0;

  constructor(init: {
    path: string;
    delimiter: string;
    uidvalidity: number;
    uidnext: number;
    highestModseq: number;
    attributes?: string[];
    specialUse?: string[];
    permanentFlags?: string[] | null;
    extra?: Record<string, unknown>;
  }) {
    this.path = init.path;
    this.delimiter = init.delimiter;
    this.uidvalidity = init.uidvalidity;
    this.uidnext = init.uidnext;
    this.highestModseq = init.highestModseq;
    this.attributes = init.attributes ?? [];
    this.specialUse = init.specialUse ?? [];
    this.permanentFlags = init.permanentFlags ?? null;
    this.extra = init.extra ?? {};
    this.recentFloor = init.uidnext;
  }

  get selectable(): boolean {
    return !this.attributes.some((a) => a.toLowerCase() === '\\noselect');
  }

  /** Index of the message with this UID, or -1. O(log n). */
  indexOfUid(uid: number): number {
    const list = this.messages;
    let lo = 0;
    let hi = list.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = list[mid]!.uid;
      if (v === uid) return mid;
      if (v < uid) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Index of the first message whose UID is >= uid (messages.length if none). O(log n). */
  lowerBound(uid: number): number {
    const list = this.messages;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]!.uid < uid) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  byUid(uid: number): Message | undefined {
    const i = this.indexOfUid(uid);
    return i < 0 ? undefined : this.messages[i];
  }

  /** Adds the keywords among `flags` to the mailbox's keyword list. */
  noteKeywords(flags: Iterable<string>): void {
    for (const f of flags) if (!f.startsWith('\\')) this.keywords.add(f);
  }

  /** Recomputes the unseen counter (after bulk changes). */
  recount(): void {
    let n = 0;
    for (const m of this.messages) if (!m.flags.has('\\Seen')) n++;
    this.unseenCount = n;
  }
}

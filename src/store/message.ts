import { servedSize } from '../mime/crlf.js';
import type { InternalDate } from './internal-date.js';
import { sourceOctets, utf8Bytes } from './raw-bytes.js';

/**
 * The flag set of every message without flags. Flag sets are never changed
 * in place (a change gives the message a new set), so one empty set serves
 * them all: a delivery or seed message with no flags costs no Set of its own.
 */
export const NO_FLAGS: ReadonlySet<string> = new (class NoFlags extends Set<string> {
  // Shared by many messages: a change in place would change them all, so it fails loudly instead.
  override add(): this {
    throw new TypeError('A message flag set is never changed in place; give the message a new set');
  }
  override delete(): boolean {
    throw new TypeError('A message flag set is never changed in place; give the message a new set');
  }
  override clear(): void {
    throw new TypeError('A message flag set is never changed in place; give the message a new set');
  }
})();

/**
 * One message in one mailbox. The raw source is shared, never copied: a
 * reset or a COPY reuses the same Buffer (and so the same cached MIME tree).
 */
export class Message {
  uid: number;
  modseq: number;
  /** Never changed in place: a flag change gives the message a new set (it may be shared). */
  flags: ReadonlySet<string>;
  /**
   * The source: its bytes, or the text a test added it as
   * (`control.addMessage`), encoded when first read. Encoding 2 KiB into
   * fresh memory was half the cost of an add; a suite that adds thousands
   * of messages and reads a few pays for the few (bench/README.md, issue
   * 37 sixth part).
   */
  private source: Buffer | string;
  readonly internaldate: InternalDate;
  /** Keys of the storage message object the core does not know; kept for snapshots. */
  extra: Record<string, unknown> | null;
  /** Values derived from `raw` alone, by slot (see ./memo.ts); shared with the message's copies. */
  memo: unknown[] | null;

  constructor(init: {
    uid: number;
    modseq: number;
    flags: Iterable<string>;
    /** `flags` is a set made for this message (or NO_FLAGS), never changed after: kept as it is instead of copied. */
    ownFlags?: boolean;
    /** Bytes, or UTF-8 text to encode when first read. */
    raw: Buffer | string;
    internaldate: InternalDate;
    extra?: Record<string, unknown> | null;
    memo?: unknown[] | null;
  }) {
    this.uid = init.uid;
    this.modseq = init.modseq;
    this.flags = init.ownFlags ? (init.flags as ReadonlySet<string>) : copyFlags(init.flags);
    this.source = init.raw;
    this.internaldate = init.internaldate;
    this.extra = init.extra ?? null;
    this.memo = init.memo ?? null;
  }

  /** The source's octets (made from the text it was added as, on the first read). */
  get raw(): Buffer {
    const source = this.source;
    if (typeof source !== 'string') return source;
    const bytes = utf8Bytes(source);
    this.source = bytes;
    return bytes;
  }

  /** The source's length in octets, without encoding a source that is still text. */
  get rawLength(): number {
    return sourceOctets(this.source);
  }

  /**
   * Size as clients see it (RFC822.SIZE): bare LF line ends are served as
   * CRLF, so they count two octets. The stored bytes stay as they came.
   */
  get size(): number {
    return servedSize(this.raw);
  }

  get seen(): boolean {
    return this.flags.has('\\Seen');
  }
}

/** A message's own copy of `flags`; NO_FLAGS when there are none. */
function copyFlags(flags: Iterable<string>): ReadonlySet<string> {
  if (flags === NO_FLAGS) return NO_FLAGS;
  const set = new Set(flags);
  return set.size === 0 ? NO_FLAGS : set;
}

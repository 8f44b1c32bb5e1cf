import { servedSize } from '../mime/crlf.js';
import type { InternalDate } from './internal-date.js';

/**
 * One message in one mailbox. The raw source is shared, never copied: a
 * reset or a COPY reuses the same Buffer (and so the same cached MIME tree).
 */
export class Message {
  uid: number;
  modseq: number;
  flags: Set<string>;
  readonly raw: Buffer;
  readonly internaldate: InternalDate;
  /** Keys of the storage message object the core does not know; kept for snapshots. */
  extra: Record<string, unknown> | null;
  /** Values derived from `raw` alone, by slot (see ./memo.ts); shared with the message's copies. */
  memo: unknown[] | null;

  constructor(init: {
    uid: number;
    modseq: number;
    flags: Iterable<string>;
    raw: Buffer;
    internaldate: InternalDate;
    extra?: Record<string, unknown> | null;
    memo?: unknown[] | null;
  }) {
    this.uid = init.uid;
    this.modseq = init.modseq;
    this.flags = new Set(init.flags);
    this.raw = init.raw;
    this.internaldate = init.internaldate;
    this.extra = init.extra ?? null;
    this.memo = init.memo ?? null;
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

/**
 * A bounded record of one session's traffic: chunks in arrival order, each
 * with its direction and server-clock time. Past `maxBytes` the oldest
 * bytes go first (a chunk is cut, not only dropped whole), so what a session
 * costs stays bounded however long it runs: at most about twice maxBytes
 * (the kept bytes, and the rest of the buffer the oldest kept chunk is cut from).
 */

/** Who sent a chunk. */
export type TranscriptSide = 'client' | 'server';

/** One chunk of traffic as it crossed the session's socket boundary. */
export interface TranscriptChunk {
  /** Server-clock time (epoch milliseconds, the `now` option) when the chunk crossed. */
  readonly at: number;
  readonly from: TranscriptSide;
  readonly data: Buffer;
}

/** Chunks below this size that are views into a larger buffer are copied (see `own`). */
const SMALL = 4096;
/** Size of the ring's own blocks for small chunks. */
const BLOCK = 16 * 1024;

export class TranscriptRing {
  private chunks: TranscriptChunk[] = [];
  /** Index of the oldest kept chunk: dropping advances it, and the array is compacted now and then. */
  private head = 0;
  private bytes = 0;
  /** Bytes dropped from the front to stay under maxBytes. */
  dropped = 0;
  /** The block small chunks are copied into, and how much of it is used. */
  private block: Buffer | null = null;
  private blockUsed = 0;

  constructor(private readonly maxBytes: number) {}

  add(at: number, from: TranscriptSide, data: Buffer): void {
    if (data.length === 0) return;
    if (data.length > this.maxBytes) {
      // Only its end can be kept: copied, so that the big buffer it came in is not held.
      this.dropped += data.length - this.maxBytes;
      data = Buffer.from(data.subarray(data.length - this.maxBytes));
    }
    else if (data.byteLength < SMALL && data.buffer.byteLength > 2 * data.byteLength) data = this.own(data);
    this.chunks.push({ at, from, data });
    this.bytes += data.length;
    if (this.bytes > this.maxBytes) this.trim();
  }

  private trim(): void {
    while (this.bytes > this.maxBytes && this.head < this.chunks.length) {
      const oldest = this.chunks[this.head]!;
      const over = this.bytes - this.maxBytes;
      if (oldest.data.length <= over) {
        this.head++;
        this.bytes -= oldest.data.length;
        this.dropped += oldest.data.length;
      } else {
        // A view, not a copy: cutting the same big chunk a little at a time must not copy it each
        // time, and the buffer it holds on to is at most maxBytes (larger chunks were cut on add).
        this.chunks[this.head] = { at: oldest.at, from: oldest.from, data: oldest.data.subarray(over) };
        this.bytes -= over;
        this.dropped += over;
      }
    }
    if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * A copy of a small chunk in a block of the ring's own: a small Buffer is
   * often a view into Node's shared 8 KiB pool, and keeping the view would
   * keep the whole slab (and everything else allocated from it) alive.
   */
  private own(data: Buffer): Buffer {
    if (!this.block || this.blockUsed + data.length > BLOCK) {
      this.block = Buffer.allocUnsafeSlow(BLOCK);
      this.blockUsed = 0;
    }
    const copy = this.block.subarray(this.blockUsed, this.blockUsed + data.length);
    data.copy(copy);
    this.blockUsed += data.length;
    return copy;
  }

  /** The kept chunks, oldest first (a copy of the list; the buffers are shared and never changed). */
  list(): TranscriptChunk[] {
    return this.chunks.slice(this.head);
  }

  get size(): number {
    return this.bytes;
  }
}

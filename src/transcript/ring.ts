/**
 * A bounded record of one session's traffic: chunks in arrival order, each
 * with its direction and server-clock time. Past `maxBytes` the oldest
 * bytes go first (a chunk is cut, not only dropped whole), so what a session
 * costs stays bounded however long it runs.
 *
 * Small chunks (most of them: command lines, status responses) are copied
 * into one circular buffer of the ring's own (grown by doubling up to
 * maxBytes) and each chunk's time, side and length go into typed arrays:
 * they make no object per chunk and keep no buffer of the session's alive,
 * so they add next to nothing to garbage collection (keeping every chunk as
 * a Buffer doubled the GC time of `bench imap`). Large chunks (FETCH
 * output) are kept by reference instead: copying them cost more than the
 * commands that made them, and they are few. Chunk objects are made only
 * when a transcript is read.
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

// Small first allocations: an idle session's transcript is a greeting, a login and a SELECT (issue 20's
// per-session RSS budget), and the ring doubles as traffic grows.
const FIRST_BYTES = 2048;
/** Chunks from this size on are kept by reference, not copied. */
const BIG = 8192;
const FIRST_CHUNKS = 16;

export class TranscriptRing {
  private bytes: Buffer;
  /** Offset of the oldest byte in `bytes`, and how many bytes it holds (those of the copied chunks). */
  private start = 0;
  private used = 0;
  /** Bytes kept in all: copied and referenced. */
  private total = 0;
  /** The large chunks by slot (null: the chunk's bytes are in `bytes`). */
  private refs: (Buffer | null)[] = [];
  private ats: Float64Array;
  private lens: Uint32Array;
  /** 1: from the client, 0: from the server. */
  private sides: Uint8Array;
  private first = 0;
  private count = 0;
  /** Bytes dropped from the front to stay under maxBytes. */
  dropped = 0;

  constructor(private readonly maxBytes: number) {
    this.bytes = Buffer.allocUnsafeSlow(Math.min(FIRST_BYTES, maxBytes));
    this.ats = new Float64Array(FIRST_CHUNKS);
    this.lens = new Uint32Array(FIRST_CHUNKS);
    this.sides = new Uint8Array(FIRST_CHUNKS);
  }

  add(at: number, from: TranscriptSide, data: Buffer): void {
    if (data.length === 0) return;
    if (data.length > this.maxBytes) {
      this.dropped += data.length - this.maxBytes;
      data = data.subarray(data.length - this.maxBytes);
    }
    if (this.total + data.length > this.maxBytes) this.dropOldest(this.total + data.length - this.maxBytes);
    const side = from === 'client' ? 1 : 0;
    this.total += data.length;
    if (data.length >= BIG) {
      this.push(at, side, data.length, data);
      return;
    }
    const needed = this.used + data.length;
    if (needed > this.bytes.length) {
      // Copied bytes never exceed maxBytes, so growing (up to it) always makes room.
      let size = this.bytes.length;
      while (size < needed) size *= 2;
      this.resize(Math.min(size, this.maxBytes));
    }
    // Append at the end of the circle, in two pieces when it wraps.
    const cap = this.bytes.length;
    const end = (this.start + this.used) % cap;
    const firstPart = Math.min(data.length, cap - end);
    data.copy(this.bytes, end, 0, firstPart);
    if (firstPart < data.length) data.copy(this.bytes, 0, firstPart);
    this.used += data.length;
    // Consecutive copied bytes from one side at the same millisecond are one chunk: fewer entries, same text.
    if (this.count > 0) {
      const last = (this.first + this.count - 1) % this.lens.length;
      if (this.sides[last] === side && this.ats[last] === at && this.refs[last] == null) {
        this.lens[last]! += data.length;
        return;
      }
    }
    this.push(at, side, data.length, null);
  }

  private push(at: number, side: number, len: number, ref: Buffer | null): void {
    if (this.count === this.lens.length) this.growChunks();
    const slot = (this.first + this.count) % this.lens.length;
    this.ats[slot] = at;
    this.lens[slot] = len;
    this.sides[slot] = side;
    this.refs[slot] = ref;
    this.count++;
  }

  /** Drops the oldest `bytes` kept bytes: whole chunks, then the start of one. */
  private dropOldest(bytes: number): void {
    this.dropped += bytes;
    this.total -= bytes;
    while (bytes > 0) {
      const slot = this.first;
      const len = this.lens[slot]!;
      const ref = this.refs[slot];
      const cut = Math.min(len, bytes);
      if (ref == null) {
        this.start = (this.start + cut) % this.bytes.length;
        this.used -= cut;
      }
      bytes -= cut;
      if (cut === len) {
        this.refs[slot] = null;
        this.first = (this.first + 1) % this.lens.length;
        this.count--;
      } else {
        this.lens[slot] = len - cut;
        if (ref != null) this.refs[slot] = ref.subarray(cut);
      }
    }
  }

  /** The kept bytes in order, in a buffer of `size` bytes of which they fill the start. */
  private linear(size: number): Buffer {
    const out = Buffer.allocUnsafeSlow(size);
    const cap = this.bytes.length;
    const firstPart = Math.min(this.used, cap - this.start);
    this.bytes.copy(out, 0, this.start, this.start + firstPart);
    if (firstPart < this.used) this.bytes.copy(out, firstPart, 0, this.used - firstPart);
    return out;
  }

  private resize(size: number): void {
    this.bytes = this.linear(size);
    this.start = 0;
  }

  private growChunks(): void {
    const n = this.lens.length;
    const ats = new Float64Array(n * 2);
    const lens = new Uint32Array(n * 2);
    const sides = new Uint8Array(n * 2);
    const refs: (Buffer | null)[] = new Array<Buffer | null>(n * 2).fill(null);
    for (let i = 0; i < this.count; i++) {
      const from = (this.first + i) % n;
      ats[i] = this.ats[from]!;
      lens[i] = this.lens[from]!;
      sides[i] = this.sides[from]!;
      refs[i] = this.refs[from] ?? null;
    }
    this.ats = ats;
    this.lens = lens;
    this.sides = sides;
    this.refs = refs;
    this.first = 0;
  }

  /** Gives back what a closed session no longer needs: the bytes in a buffer of their exact size. */
  compact(): void {
    if (this.bytes.length > this.used) this.resize(Math.max(1, this.used));
  }

  /** The kept chunks, oldest first: views into one copy of the copied bytes, and the referenced ones. */
  list(): TranscriptChunk[] {
    const copied = this.linear(this.used);
    const out: TranscriptChunk[] = [];
    let at = 0;
    for (let i = 0; i < this.count; i++) {
      const slot = (this.first + i) % this.lens.length;
      const len = this.lens[slot]!;
      const ref = this.refs[slot];
      let data: Buffer;
      if (ref != null) data = ref;
      else {
        data = copied.subarray(at, at + len);
        at += len;
      }
      out.push({ at: this.ats[slot]!, from: this.sides[slot] === 1 ? 'client' : 'server', data });
    }
    return out;
  }

  get size(): number {
    return this.total;
  }

  /** Drops the oldest `bytes` (at most all that is kept): the server-wide budget's share of this ring. */
  trim(bytes: number): void {
    const cut = Math.min(bytes, this.total);
    if (cut > 0) this.dropOldest(cut);
  }
}

/**
 * A bounded record of one session's traffic: chunks in arrival order, each
 * with its direction and server-clock time. Past `maxBytes` the oldest
 * bytes go first (a chunk is cut, not only dropped whole), so what a session
 * costs stays bounded however long it runs.
 *
 * Small chunks (most of them: command lines, status responses) are copied
 * into one circular buffer of the ring's own (made at the first copy, grown
 * by doubling up to maxBytes) and each chunk's time, side and length go
 * into one array of numbers: they make no object per chunk and keep no
 * buffer of the session's alive, so they add next to nothing to garbage
 * collection (keeping every chunk as a Buffer doubled the GC time of
 * `bench imap`). Large chunks (FETCH output) are kept by reference instead:
 * copying them cost more than the commands that made them, and they are
 * few. The small chunks of a session's first few KiB that other sessions
 * sent or were sent too (greeting, login, SELECT) are kept by reference to
 * one shared copy (./shared-chunks.ts), so an idle session holds references,
 * not bytes. Chunk objects are made only when a transcript is read.
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

// Small first allocations: most sessions are short or idle (issue 20's per-session RSS budget), and both
// the bytes and the chunk slots double as traffic grows.
const FIRST_BYTES = 512;
const FIRST_CHUNKS = 8;
/** Chunks from this size on are kept by reference, not copied. */
const BIG = 8192;
/** A session's chunks are looked up among the shared ones while fewer than this many bytes were recorded. */
const SHARE_WINDOW = 8192;
/** Largest chunk looked up among the shared ones. */
const SHARE_MAX = 4096;

/** Per slot, four entries in `slotData`: time (after `base`), length, flags, the chunk kept by reference. */
const STRIDE = 4;
const AT = 0;
const LEN = 1;
const FLAGS = 2;
const REF = 3;
/** Flag: the chunk came from the client. */
const CLIENT = 1;
/** Flag: the slot's reference is a shared chunk (SharedChunks), small like a copied one. */
const SHARED = 2;

/** What the ring needs of SharedChunks: a shared Buffer holding the same bytes, or null. */
export interface ChunkSharer {
  share(data: Buffer): Buffer | null;
}

/** Slots for `n` chunks: no chunk, no reference. */
function emptySlots(n: number): (number | Buffer | null)[] {
  // Pushed, not made with a length: an array made with holes stays one V8 checks for holes on every read.
  const d: (number | Buffer | null)[] = [];
  for (let i = 0; i < n; i++) d.push(0, 0, 0, null);
  return d;
}

export class TranscriptRing {
  private bytes: Buffer | null = null;
  /** Offset of the oldest byte in `bytes`, and how many bytes it holds (those of the copied chunks). */
  private start = 0;
  private used = 0;
  /** Bytes kept in all: copied and referenced. */
  private total = 0;
  /** Bytes ever added: the shared lookup stops past SHARE_WINDOW. */
  private recorded = 0;
  /**
   * Each slot's time, length, flags and the chunk kept by reference (null:
   * its bytes are in `bytes`), STRIDE entries a slot in one array: no
   * object per chunk, and a write to an idling session's transcript reads
   * one array, not one of numbers and one of references (two objects fewer
   * fetched from memory per session in issue 37's fan-out). Times are kept
   * after `base`, small integers V8 stores unboxed beside the references.
   */
  private slotData: (number | Buffer | null)[];
  private slots = FIRST_CHUNKS;
  /** The first chunk's time; NaN before it. */
  private base = Number.NaN;
  private first = 0;
  private count = 0;
  /** Bytes dropped from the front to stay under maxBytes. */
  dropped = 0;

  constructor(
    private readonly maxBytes: number,
    /** Shared copies of small chunks seen in other sessions; null: always copy. */
    private readonly sharer: ChunkSharer | null = null,
  ) {
    this.slotData = emptySlots(FIRST_CHUNKS);
  }

  add(at: number, from: TranscriptSide, data: Buffer): void {
    if (data.length === 0) return;
    if (data.length > this.maxBytes) {
      this.dropped += data.length - this.maxBytes;
      data = data.subarray(data.length - this.maxBytes);
    }
    if (this.total + data.length > this.maxBytes) this.dropOldest(this.total + data.length - this.maxBytes);
    const side = from === 'client' ? CLIENT : 0;
    if (Number.isNaN(this.base)) this.base = at;
    const time = at - this.base;
    const young = this.sharer !== null && this.recorded < SHARE_WINDOW && data.length <= SHARE_MAX;
    this.total += data.length;
    this.recorded += data.length;
    if (data.length >= BIG) {
      this.push(time, side, data.length, data);
      return;
    }
    // Consecutive small chunks from one side at the same millisecond are one chunk: fewer entries, same text.
    if (this.count > 0) {
      const last = (this.first + this.count - 1) % this.slots;
      const m = last * STRIDE;
      const d = this.slotData;
      const ref = d[m + REF] as Buffer | null;
      const flags = d[m + FLAGS] as number;
      if ((flags & CLIENT) === side && d[m + AT] === time && (ref === null || (flags & SHARED) !== 0)) {
        if (ref !== null) {
          const shared = young ? this.sharer!.share(Buffer.concat([ref, data])) : null;
          if (shared !== null) {
            d[m + REF] = shared;
            d[m + LEN] = (d[m + LEN] as number) + data.length;
            return;
          }
          // The slot is the newest, so its bytes go at the end of the copied ones, in order.
          d[m + REF] = null;
          d[m + FLAGS] = side;
          this.copy(ref);
        }
        this.copy(data);
        d[m + LEN] = (d[m + LEN] as number) + data.length;
        return;
      }
    }
    if (young) {
      const shared = this.sharer!.share(data);
      if (shared !== null) {
        this.push(time, side | SHARED, data.length, shared);
        return;
      }
    }
    this.copy(data);
    this.push(time, side, data.length, null);
  }

  /** Appends bytes at the end of the circle (in two pieces when it wraps), growing it as needed. */
  private copy(data: Buffer): void {
    const needed = this.used + data.length;
    if (this.bytes === null || needed > this.bytes.length) {
      // Copied bytes never exceed maxBytes, so growing (up to it) always makes room.
      let size = this.bytes === null ? FIRST_BYTES : this.bytes.length;
      while (size < needed) size *= 2;
      this.resize(Math.min(size, this.maxBytes));
    }
    const bytes = this.bytes!;
    const cap = bytes.length;
    const end = (this.start + this.used) % cap;
    const firstPart = Math.min(data.length, cap - end);
    data.copy(bytes, end, 0, firstPart);
    if (firstPart < data.length) data.copy(bytes, 0, firstPart);
    this.used += data.length;
  }

  private push(time: number, flags: number, len: number, ref: Buffer | null): void {
    if (this.count === this.slots) this.growChunks();
    const m = ((this.first + this.count) % this.slots) * STRIDE;
    const d = this.slotData;
    d[m + AT] = time;
    d[m + LEN] = len;
    d[m + FLAGS] = flags;
    d[m + REF] = ref;
    this.count++;
  }

  /** Drops the oldest `bytes` kept bytes: whole chunks, then the start of one. */
  private dropOldest(bytes: number): void {
    this.dropped += bytes;
    this.total -= bytes;
    while (bytes > 0) {
      const m = this.first * STRIDE;
      const d = this.slotData;
      const len = d[m + LEN] as number;
      const ref = d[m + REF] as Buffer | null;
      const cut = Math.min(len, bytes);
      if (ref == null) {
        this.start = (this.start + cut) % this.bytes!.length;
        this.used -= cut;
      }
      bytes -= cut;
      if (cut === len) {
        d[m + REF] = null;
        this.first = (this.first + 1) % this.slots;
        this.count--;
      } else {
        d[m + LEN] = len - cut;
        if (ref !== null) d[m + REF] = ref.subarray(cut);
      }
    }
  }

  /** The copied bytes in order, in a buffer of `size` bytes of which they fill the start. */
  private linear(size: number): Buffer {
    const out = Buffer.allocUnsafeSlow(size);
    const bytes = this.bytes;
    if (bytes === null) return out;
    const cap = bytes.length;
    const firstPart = Math.min(this.used, cap - this.start);
    bytes.copy(out, 0, this.start, this.start + firstPart);
    if (firstPart < this.used) bytes.copy(out, firstPart, 0, this.used - firstPart);
    return out;
  }

  private resize(size: number): void {
    this.bytes = this.linear(size);
    this.start = 0;
  }

  private growChunks(): void {
    const n = this.slots;
    const d = emptySlots(n * 2);
    for (let i = 0; i < this.count; i++) {
      const from = ((this.first + i) % n) * STRIDE;
      for (let k = 0; k < STRIDE; k++) d[i * STRIDE + k] = this.slotData[from + k]!;
    }
    this.slotData = d;
    this.slots = n * 2;
    this.first = 0;
  }

  /** Gives back what a closed session no longer needs: the bytes in a buffer of their exact size. */
  compact(): void {
    if (this.bytes !== null && this.bytes.length > this.used) this.resize(Math.max(1, this.used));
  }

  /**
   * The kept chunks, oldest first: views into one copy of the copied and
   * shared bytes (a reader may change them without touching another
   * session's), and the large chunks kept by reference.
   */
  list(): TranscriptChunk[] {
    const d = this.slotData;
    let sharedBytes = 0;
    for (let i = 0; i < this.count; i++) {
      const m = ((this.first + i) % this.slots) * STRIDE;
      if (((d[m + FLAGS] as number) & SHARED) !== 0) sharedBytes += d[m + LEN] as number;
    }
    const copied = this.linear(this.used + sharedBytes);
    const out: TranscriptChunk[] = [];
    let at = 0;
    let sharedAt = this.used;
    for (let i = 0; i < this.count; i++) {
      const m = ((this.first + i) % this.slots) * STRIDE;
      const len = d[m + LEN] as number;
      const flags = d[m + FLAGS] as number;
      const ref = d[m + REF] as Buffer | null;
      let data: Buffer;
      if (ref === null) {
        data = copied.subarray(at, at + len);
        at += len;
      } else if ((flags & SHARED) !== 0) {
        ref.copy(copied, sharedAt);
        data = copied.subarray(sharedAt, sharedAt + len);
        sharedAt += len;
      } else {
        data = ref;
      }
      out.push({ at: this.base + (d[m + AT] as number), from: (flags & CLIENT) !== 0 ? 'client' : 'server', data });
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

/**
 * Shared copies of the chunks sessions record first. The start of a
 * session's traffic is the same bytes in session after session (the
 * greeting, `a LOGIN user ***`, the answer to SELECT of the same mailbox),
 * so ten thousand idle sessions would otherwise keep ten thousand copies of
 * each. A chunk seen a second time gets one shared Buffer, which every ring
 * that records the same bytes keeps by reference (issue 20's budget per idle
 * session). A chunk seen once is only noted, by a hash of its bytes: content
 * that never repeats (tags, ids, times) costs the rings nothing more than a
 * copy.
 *
 * A lookup costs a hash of at most ~160 of the chunk's bytes and, on a hit,
 * one comparison of the bytes: it runs for the first chunks of every
 * session and for the notices an idle session is sent (the IDLE fan-out).
 * Two contents with one hash are never mixed up (a shared copy is used only
 * when its bytes are equal); they only share less.
 *
 * Bounded: at most MAX_ENTRIES hashes and MAX_BYTES of shared copies; the
 * oldest go first, except that one used since eviction last passed it goes
 * to the back once more (second chance). A dropped copy stays alive only in
 * the rings that still reference it, which keep it within their own maxBytes.
 */

const MAX_ENTRIES = 512;
const MAX_BYTES = 1024 * 1024;
/** Chunks up to this size are hashed whole; longer ones by a sample spread over them, and their end. */
const WHOLE = 128;
const TAIL = 32;

interface Entry {
  /** The shared copy; null while the bytes were seen only once. */
  shared: Buffer | null;
  /** Looked up since eviction last passed it. */
  used: boolean;
}

function hashOf(data: Buffer): number {
  const n = data.length;
  let h = 0x811c9dc5 ^ n;
  if (n <= WHOLE) {
    for (let i = 0; i < n; i++) h = Math.imul(h ^ data[i]!, 0x01000193);
  } else {
    const step = Math.ceil((n - TAIL) / WHOLE);
    for (let i = 0; i < n - TAIL; i += step) h = Math.imul(h ^ data[i]!, 0x01000193);
    for (let i = n - TAIL; i < n; i++) h = Math.imul(h ^ data[i]!, 0x01000193);
  }
  // A small integer: Map keys that V8 keeps unboxed.
  return h & 0x3fffffff;
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  const n = a.length;
  if (n !== b.length) return false;
  // Short ones in place: a call into the runtime costs more than the loop.
  if (n > 64) return a.equals(b);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class SharedChunks {
  private readonly entries = new Map<number, Entry>();
  /** The hashes of `entries`, oldest first: a circular queue. */
  private readonly order = new Int32Array(MAX_ENTRIES);
  private head = 0;
  private bytes = 0;

  /**
   * The shared Buffer holding exactly the bytes of `data`, or null when
   * these bytes were not seen before (they are noted, and shared the next
   * time). `data` itself is never kept.
   */
  share(data: Buffer): Buffer | null {
    const hash = hashOf(data);
    const entry = this.entries.get(hash);
    if (entry === undefined) {
      if (this.entries.size === MAX_ENTRIES) this.evictOne();
      this.order[(this.head + this.entries.size) % MAX_ENTRIES] = hash;
      this.entries.set(hash, { shared: null, used: false });
      return null;
    }
    entry.used = true;
    const shared = entry.shared;
    if (shared !== null && sameBytes(shared, data)) return shared;
    // Seen once (or another content with the same hash): from now on these bytes are the shared ones.
    if (shared !== null) this.bytes -= shared.length;
    // Not from Buffer's pool: a pooled slice would keep its whole 8 KiB pool alive.
    const copy = Buffer.allocUnsafeSlow(data.length);
    data.copy(copy);
    entry.shared = copy;
    this.bytes += copy.length;
    while (this.bytes > MAX_BYTES) this.evictOne();
    return copy;
  }

  /** Drops the oldest entry not used since eviction last passed it (each gets one second chance). */
  private evictOne(): void {
    for (let chances = this.entries.size; ; chances--) {
      const hash = this.order[this.head]!;
      this.head = (this.head + 1) % MAX_ENTRIES;
      const entry = this.entries.get(hash)!;
      if (entry.used && chances > 0) {
        // To the back of the queue: the slot just freed at the front is the one after the last.
        entry.used = false;
        this.order[(this.head + this.entries.size - 1) % MAX_ENTRIES] = hash;
        continue;
      }
      this.entries.delete(hash);
      if (entry.shared !== null) this.bytes -= entry.shared.length;
      return;
    }
  }
}

/**
 * Shared copies of the chunks sessions record first. The start of a
 * session's traffic is the same bytes in session after session (the
 * greeting, `a LOGIN user ***`, the answer to SELECT of the same mailbox),
 * so ten thousand idle sessions would otherwise keep ten thousand copies of
 * each. A chunk seen a second time gets one shared Buffer, which every ring
 * that records the same bytes keeps by reference (issue 20's budget per idle
 * session). A chunk seen once is only noted: content that never repeats
 * (tags, ids, times) costs the rings nothing more than a copy.
 *
 * Bounded: at most MAX_ENTRIES contents and MAX_BYTES of them, least
 * recently seen dropped first. A dropped content stays alive only in the
 * rings that still reference it, which keep it within their own maxBytes.
 */

const MAX_ENTRIES = 512;
const MAX_BYTES = 1024 * 1024;

export class SharedChunks {
  /** Content (latin1: one char per byte) -> its shared Buffer, or null when seen only once. Oldest first. */
  private readonly seen = new Map<string, Buffer | null>();
  private bytes = 0;

  /**
   * The shared Buffer holding exactly the bytes `key` spells (latin1), or
   * null when these bytes were not seen before (they are noted, and shared
   * the next time).
   */
  share(key: string): Buffer | null {
    const known = this.seen.get(key);
    if (known === undefined) {
      this.seen.set(key, null);
      this.bytes += key.length;
      this.evict();
      return null;
    }
    // Most recently seen goes last: what every session sends outlives a run of one-off contents.
    this.seen.delete(key);
    let shared = known;
    if (shared === null) {
      // Not from Buffer's pool: a pooled slice would keep its whole 8 KiB pool alive.
      shared = Buffer.allocUnsafeSlow(key.length);
      shared.write(key, 'latin1');
      this.bytes += key.length;
    }
    this.seen.set(key, shared);
    this.evict();
    return shared;
  }

  private evict(): void {
    while (this.seen.size > MAX_ENTRIES || this.bytes > MAX_BYTES) {
      const [key, shared] = this.seen.entries().next().value!;
      this.seen.delete(key);
      this.bytes -= shared === null ? key.length : 2 * key.length;
    }
  }
}

/**
 * Message sources as bytes, cut from shared slabs: `Buffer.from(text)`
 * takes a fresh 8 KiB pool every few messages of 2 KiB, and each pool is
 * one more ArrayBuffer for the collector to track. A slab holds many
 * messages; it lives while any of them does, so slabs stay small enough
 * that one message kept alive pins little.
 */
const SLAB = 64 * 1024;
/** Sources larger than this get a buffer of their own (a slab would pin too much for them). */
const OWN = 16 * 1024;

let slab: Buffer = Buffer.allocUnsafe(0);
let used = 0;

/**
 * The octets of a message source that may still be text (encoded on its
 * first read): counted without encoding it.
 */
export function sourceOctets(source: Buffer | string): number {
  return typeof source === 'string' ? Buffer.byteLength(source, 'utf8') : source.length;
}

/** The UTF-8 bytes of `text` (a message source given as a string). */
export function utf8Bytes(text: string): Buffer {
  // Every UTF-16 unit takes at most 3 bytes: a cheap bound that avoids measuring most strings twice.
  const bound = text.length * 3;
  if (bound > OWN) {
    const exact = Buffer.byteLength(text, 'utf8');
    if (exact > OWN) return Buffer.from(text, 'utf8');
  }
  // Near the end of a slab the bound is too rough (a 2 KiB message would leave 4 KiB unused): measure then.
  if (used + bound > slab.length && used + Buffer.byteLength(text, 'utf8') > slab.length) {
    slab = Buffer.allocUnsafe(SLAB);
    used = 0;
  }
  const written = slab.write(text, used, 'utf8');
  const out = slab.subarray(used, used + written);
  // Eight-byte steps keep each source aligned, as Buffer.from's pool does.
  used += (written + 7) & ~7;
  return out;
}

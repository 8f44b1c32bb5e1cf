/**
 * Response octets written straight into a buffer, for answers with
 * thousands of short lines (a metadata FETCH of a whole mailbox). A string
 * built by `+=` costs a concatenation per piece, a flattening and then an
 * encoding; here each octet is written once. Only for text that is ASCII
 * by grammar (atoms, numbers, fixed-form dates): each character is one
 * octet.
 *
 * Functions of (buffer, position) that return the next position, so that
 * a caller makes room once per line (`roomFor`) and the writes between
 * check nothing: a method call with a bounds check per piece cost as much
 * as the string it replaced.
 */

/** `buf` when `n` more octets fit after `pos`, else a larger copy holding its first `pos` octets. */
export function roomFor(buf: Buffer, pos: number, n: number): Buffer {
  if (pos + n <= buf.length) return buf;
  const grown = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
  buf.copy(grown, 0, 0, pos);
  return grown;
}

/** Text that is ASCII by grammar (an atom, a date): one octet per character. */
export function putAscii(buf: Buffer, pos: number, text: string): number {
  for (let i = 0; i < text.length; i++) buf[pos++] = text.charCodeAt(i);
  return pos;
}

/** Octets made once and written many times (a flag list). */
export function putBytes(buf: Buffer, pos: number, data: Buffer): number {
  const n = data.length;
  // Short runs: a loop beats the native copy's call.
  if (n > 32) return pos + data.copy(buf, pos);
  for (let i = 0; i < n; i++) buf[pos++] = data[i]!;
  return pos;
}

/** A non-negative integer in decimal (UIDs, sequence numbers, sizes, mod-sequences up to 2^53): at most 16 octets. */
export function putNumber(buf: Buffer, pos: number, value: number): number {
  if (value < 10) {
    buf[pos] = 48 + value;
    return pos + 1;
  }
  if (value > 0x7fffffff) return putAscii(buf, pos, String(value));
  // Small integers: integer division, no floating point.
  let end = pos + 1;
  for (let v = value; v >= 10; v = (v / 10) | 0) end++;
  let at = end;
  for (let v = value; at > pos; v = (v / 10) | 0) buf[--at] = 48 + (v % 10);
  return end;
}

/**
 * The few DER encodings (ITU-T X.690) an X.509 certificate needs
 * (RFC 5280 §4.1): enough to write certificates, not to read them
 * (node:crypto's X509Certificate reads them).
 */

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A TLV with an identifier octet `tag`. */
export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(content.length), content]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
export const nullValue = (): Buffer => Buffer.from([0x05, 0x00]);
export const boolean = (value: boolean): Buffer => Buffer.from([0x01, 0x01, value ? 0xff : 0x00]);
export const octetString = (content: Buffer): Buffer => tlv(0x04, content);
export const utf8String = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
/** A BIT STRING of whole octets (no unused bits). */
export const bitString = (content: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), content]));
/** `[n]` EXPLICIT: a constructed context-specific wrapper. */
export const explicit = (n: number, content: Buffer): Buffer => tlv(0xa0 | n, content);
/** `[n]` IMPLICIT over a primitive value (SAN entries, key identifiers). */
export const implicitPrimitive = (n: number, content: Buffer): Buffer => tlv(0x80 | n, content);

/** A non-negative INTEGER from its big-endian magnitude (a leading zero octet keeps it positive). */
export function integer(magnitude: Buffer | number): Buffer {
  let bytes = magnitude;
  if (typeof bytes === 'number') {
    const hex = bytes.toString(16);
    bytes = Buffer.from(hex.length % 2 === 1 ? `0${hex}` : hex, 'hex');
  }
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && bytes[start + 1]! < 0x80) start++;
  bytes = bytes.subarray(start);
  if (bytes[0]! >= 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(0x02, bytes);
}

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [40 * parts[0]! + parts[1]!];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [part & 0x7f];
    for (let v = Math.floor(part / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050, always in seconds with Z. */
export function time(date: Date): Buffer {
  const iso = date.toISOString();
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${digits}Z`));
}

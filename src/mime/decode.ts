/**
 * Decoding for SEARCH and BINARY: transfer encodings, RFC 2047 encoded
 * words, and the text of a message's text parts.
 */
import { decodeCharset, utf8OrLatin1 } from './charset.js';
import type { MimeNode } from './types.js';

let hexTable: Int8Array | null = null;

/** Hex digit values by byte (-1 for non-digits), built on first use. */
function hex(): Int8Array {
  if (hexTable === null) {
    const t = new Int8Array(256).fill(-1);
    for (let i = 0; i < 10; i++) t[48 + i] = i;
    for (let i = 0; i < 6; i++) {
      t[65 + i] = 10 + i;
      t[97 + i] = 10 + i;
    }
    hexTable = t;
  }
  return hexTable;
}

/**
 * Decodes quoted-printable (RFC 2045 §6.7): `=XX` escapes, soft line breaks
 * (`=` then optional blanks then CRLF or LF), trailing blanks of lines
 * removed; a malformed `=` is kept as it is. Line breaks are kept as written.
 * @returns the decoded bytes
 */
export function decodeQuotedPrintable(bytes: Buffer): Buffer {
  const HEX = hex();
  const n = bytes.length;
  const out = Buffer.allocUnsafe(n);
  let o = 0;
  /** Output length after the last byte that is not a literal blank. */
  let keep = 0;
  let i = 0;
  while (i < n) {
    const c = bytes[i]!;
    if (c === 61 /* = */) {
      const h1 = i + 1 < n ? HEX[bytes[i + 1]!]! : -1;
      const h2 = i + 2 < n ? HEX[bytes[i + 2]!]! : -1;
      if (h1 >= 0 && h2 >= 0) {
        out[o++] = (h1 << 4) | h2;
        keep = o;
        i += 3;
        continue;
      }
      // soft line break?
      let j = i + 1;
      while (j < n && (bytes[j] === 32 || bytes[j] === 9)) j++;
      if (j >= n) {
        i = n;
        continue;
      }
      if (bytes[j] === 10) {
        i = j + 1;
        keep = o;
        continue;
      }
      if (bytes[j] === 13 && j + 1 < n && bytes[j + 1] === 10) {
        i = j + 2;
        keep = o;
        continue;
      }
      out[o++] = c;
      keep = o;
      i++;
    } else if (c === 32 || c === 9) {
      out[o++] = c;
      i++;
    } else if (c === 10 || (c === 13 && i + 1 < n && bytes[i + 1] === 10)) {
      o = keep; // drop blanks the transport may have added
      if (c === 13) {
        out[o++] = 13;
        i++;
      }
      out[o++] = 10;
      i++;
      keep = o;
    } else {
      out[o++] = c;
      keep = o;
      i++;
    }
  }
  return out.subarray(0, keep);
}

let base64Table: Int8Array | null = null;

/** A character besides the alphabet, "=" and line breaks: the careful decoder is needed. */
const NOT_PLAIN_BASE64 = /[^A-Za-z0-9+/=\r\n]/;
/** What may follow the first "=" for Node's decoder to agree: more padding and line breaks. */
const PADDING_TAIL = /^[=\r\n]*$/;

/** Values of the RFC 2045 §6.8 base64 alphabet by byte (-1 outside it), built on first use. */
function base64Values(): Int8Array {
  if (base64Table === null) {
    const t = new Int8Array(256).fill(-1);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    for (let i = 0; i < 64; i++) t[alphabet.charCodeAt(i)] = i;
    base64Table = t;
  }
  return base64Table;
}

/**
 * Decodes base64 as RFC 2045 §6.8 reads it: every character outside the
 * alphabet (line breaks, blanks, junk, and the `-` and `_` of base64url,
 * which Node's own decoder would take as digits) is ignored, and the first
 * `=` ends the data ("may be taken as evidence that the end of the data has
 * been reached"). A last quantum of two or three characters gives the one
 * or two whole octets it holds; a single leftover character holds none.
 * @returns the decoded bytes
 */
export function decodeBase64(bytes: Buffer): Buffer {
  // Plain base64 in lines (nearly all of it): Node's decoder gives the same octets, faster.
  const text = bytes.toString('latin1');
  if (!NOT_PLAIN_BASE64.test(text)) {
    const eq = text.indexOf('=');
    if (eq < 0 || PADDING_TAIL.test(text.slice(eq))) return Buffer.from(text, 'base64');
  }
  const V = base64Values();
  const out = Buffer.allocUnsafe(Math.floor((bytes.length * 3) / 4) + 1);
  let o = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === 61 /* = */) break;
    const v = V[c]!;
    if (v < 0) continue;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out.subarray(0, o);
}

/**
 * Undoes a Content-Transfer-Encoding: `base64` (./decodeBase64) and
 * `quoted-printable` are decoded; `7bit`, `8bit`,
 * `binary` and unknown encodings pass through unchanged (same Buffer).
 * @returns the decoded bytes
 */
export function decodeTransfer(bytes: Buffer, encoding: string): Buffer {
  const enc = encoding.trim().toLowerCase();
  if (enc === 'base64') return decodeBase64(bytes);
  if (enc === 'quoted-printable') return decodeQuotedPrintable(bytes);
  return bytes;
}

/** Q encoding of RFC 2047 §4.2: `_` is a space, `=XX` a byte. */
function decodeQ(text: string): Buffer {
  const HEX = hex();
  const out = Buffer.allocUnsafe(text.length);
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 95 /* _ */) {
      out[o++] = 32;
    } else if (c === 61 && i + 2 < text.length && HEX[text.charCodeAt(i + 1)]! >= 0 && HEX[text.charCodeAt(i + 2)]! >= 0) {
      out[o++] = (HEX[text.charCodeAt(i + 1)]! << 4) | HEX[text.charCodeAt(i + 2)]!;
      i += 2;
    } else {
      out[o++] = c & 0xff;
    }
  }
  return out.subarray(0, o);
}

const ENCODED_WORD = /=\?([^?\s]+)\?([bBqQ])\?([^?]*)\?=/g;

/**
 * Decodes a raw header value for searching: line breaks removed
 * (unfolding), RFC 2047 encoded words (B and Q, any charset) decoded, the
 * blanks between adjacent encoded words dropped and adjacent words in the
 * same charset joined before charset decoding (so a character split over
 * two words survives); other bytes are read as UTF-8, or ISO-8859-1 when
 * not valid UTF-8. Leading and trailing blanks are trimmed.
 * @returns the decoded text
 */
export function decodeHeaderValue(raw: Buffer): string {
  if (raw.indexOf('=?') < 0) {
    const plain = raw.indexOf(10) < 0 && raw.indexOf(13) < 0 ? raw : Buffer.from(raw.toString('latin1').replace(/\r?\n|\r/g, ''), 'latin1');
    return utf8OrLatin1(plain).trim();
  }
  // latin1 maps bytes 1:1 onto code units, so offsets stay byte offsets
  const s = raw.toString('latin1').replace(/\r?\n|\r/g, '');
  let out = '';
  let last = 0;
  let pending: Buffer[] = [];
  let pendingCharset = '';
  const flush = (): void => {
    if (pending.length > 0) {
      out += decodeCharset(pending.length === 1 ? pending[0]! : Buffer.concat(pending), pendingCharset);
      pending = [];
    }
  };
  ENCODED_WORD.lastIndex = 0;
  for (let m = ENCODED_WORD.exec(s); m !== null; m = ENCODED_WORD.exec(s)) {
    const between = s.slice(last, m.index);
    const adjacent = pending.length > 0 && /^[ \t]*$/.test(between);
    if (!adjacent) {
      flush();
      out += utf8OrLatin1(Buffer.from(between, 'latin1'));
    }
    const charset = m[1]!.toLowerCase();
    const text = m[3]!;
    const bytes = m[2] === 'b' || m[2] === 'B' ? Buffer.from(text, 'base64') : decodeQ(text);
    if (pending.length > 0 && charset !== pendingCharset) flush();
    pendingCharset = charset;
    pending.push(bytes);
    last = m.index + m[0].length;
  }
  flush();
  out += utf8OrLatin1(Buffer.from(s.slice(last), 'latin1'));
  return out.trim();
}

/**
 * Decoded values of every header field called `name` (case-insensitive) in
 * the header of `node` (normally the message root), in message order.
 * @returns one decoded string per field
 */
export function headerValues(node: MimeNode, _raw: Buffer, name: string): string[] {
  const key = name.toLowerCase();
  const out: string[] = [];
  for (const f of node.fields) if (f.key === key) out.push(decodeHeaderValue(f.value));
  return out;
}

/** The charset parameter of a part, `us-ascii` when there is none. */
export function charsetOf(node: MimeNode): string {
  for (const p of node.contentType.params) if (p.key === 'charset') return p.decoded;
  return 'us-ascii';
}

/**
 * The text of all text/* parts under `root`, encapsulated messages
 * included, each transfer-decoded and converted from its charset, joined
 * with newlines.
 * @returns the decoded text (empty when there are no text parts)
 */
export function bodyText(root: MimeNode, raw: Buffer): string {
  const texts: string[] = [];
  const stack: MimeNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.kind === 'multipart') {
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
    } else if (node.kind === 'message') {
      if (node.message !== null) stack.push(node.message);
    } else if (node.contentType.type === 'text') {
      const bytes = decodeTransfer(raw.subarray(node.bodyStart, node.bodyEnd), node.encodingKey);
      texts.push(decodeCharset(bytes, charsetOf(node)));
    }
  }
  return texts.join('\n');
}

/**
 * The content of a BINARY section (RFC 3516 §4.2, RFC 9051 §6.4.5): a part
 * with its Content-Transfer-Encoding removed.
 *
 * - `[n...]` of a leaf part is its body decoded by the part's encoding; an
 *   encoding the server does not know fails (`UNKNOWN-CTE`).
 * - `[]` (RFC 3516: the entire message, header included), a multipart part
 *   and a message/rfc822 part (which RFC 9051 says clients should not ask
 *   for) are the binary form of everything in them, as Dovecot makes it:
 *   the bytes as stored, except that each base64 or quoted-printable leaf
 *   has its body decoded and its Content-Transfer-Encoding field replaced
 *   by `Content-Transfer-Encoding: binary` at the end of its header, so
 *   every header describes the bytes that follow it. One leaf
 *   in an encoding the server does not know fails the whole section with
 *   `UNKNOWN-CTE`, as in Dovecot: RFC 3516 says a section whose encoding
 *   the server cannot decode fails, and such a section cannot be given with
 *   its encodings removed.
 * - A part that does not exist is empty, as BODY[n] is.
 * - The decoded octets are given exactly, whatever the media type: a
 *   base64 text part that decodes to a bare CR or a bare LF keeps it, and
 *   BINARY.SIZE counts those octets. RFC 3516 §4.3 (RFC 9051 §7.5.2) asks
 *   for CRLF line ends "regardless of the underlying storage
 *   representation of the data on the server": that is the stored line
 *   ends, which every section is served with already (a bare LF as
 *   stored goes out as CRLF, mime/crlf.ts), so the 7bit/8bit body and the
 *   hard line breaks of quoted-printable text are CRLF; octets an encoding
 *   carries (`=0A`, base64) are the content itself, not its storage.
 *   Dovecot 2.3 gives the same bytes (test/dovecot/binary.test.ts).
 */
import { decodeTransfer, findPart, getMime, type MimeNode } from '../../mime/index.js';
import { fullValue } from '../../mime/header.js';

/** Encodings RFC 2045 defines that change nothing. */
export const IDENTITY: ReadonlySet<string> = new Set(['7bit', '8bit', 'binary']);
/** Encodings RFC 2045 defines that BINARY decodes. */
export const DECODED: ReadonlySet<string> = new Set(['base64', 'quoted-printable']);

/** A part whose Content-Transfer-Encoding the server does not know. */
export class UnknownEncoding extends Error {
  constructor(readonly encoding: string) {
    super(`Unknown Content-Transfer-Encoding ${encoding.slice(0, 40)}`);
  }
}

/** A token of RFC 2045 §5.1 followed by ";": Dovecot reads the token and ignores the rest. */
const TOKEN_THEN_SEMICOLON = /^[ \t]*([!#$%&'*+\-.^_`{|}~0-9A-Za-z]+)[ \t]*;/;

/**
 * The encoding (lower case) BINARY decodes a leaf by. A Content-Transfer-
 * Encoding value that is not one token is `7bit` in BODYSTRUCTURE (as in
 * Dovecot), but BINARY cannot take its body as it is: RFC 2045 §6.4 makes
 * an entity with an unrecognized encoding opaque. As in Dovecot, one token
 * followed by ";" counts as that token; any other malformed value (empty,
 * two words, a quoted string) is an encoding the server does not know,
 * named by the value as written.
 */
export function binaryEncoding(node: MimeNode): string {
  if (node.encoding !== null || !node.isMime) return node.encodingKey;
  const field = node.fields.find((f) => f.key === 'content-transfer-encoding');
  if (field === undefined) return node.encodingKey;
  const text = fullValue(field).toString('latin1').replace(/\r?\n/g, '');
  const m = TOKEN_THEN_SEMICOLON.exec(text);
  return m ? m[1]!.toLowerCase() : text.trim() === '' ? '""' : text.trim();
}

/** The decoded body of a base64 or quoted-printable leaf. */
export function decoded(raw: Buffer, node: MimeNode): Buffer {
  return decodeTransfer(raw.subarray(node.bodyStart, node.bodyEnd), binaryEncoding(node));
}

/** Leaves of the tree under `node` (encapsulated messages included), in message order. */
export function leaves(node: MimeNode, out: MimeNode[] = []): MimeNode[] {
  if (node.kind === 'leaf') out.push(node);
  else if (node.kind === 'message') {
    if (node.message !== null) leaves(node.message, out);
  } else for (const child of node.children) leaves(child, out);
  return out;
}

/** A replacement of `raw[start, end)`. */
interface Splice {
  start: number;
  end: number;
  data: Buffer;
}

/**
 * Bytes `raw[from, to)` with `splices` (ascending, not overlapping, inside
 * the range) applied.
 */
export function splice(raw: Buffer, from: number, to: number, splices: readonly Splice[]): Buffer {
  if (splices.length === 0) return raw.subarray(from, to);
  const pieces: Buffer[] = [];
  let at = from;
  for (const s of splices) {
    pieces.push(raw.subarray(at, s.start), s.data);
    at = s.end;
  }
  pieces.push(raw.subarray(at, to));
  return Buffer.concat(pieces);
}

/** Replacements of the Content-Transfer-Encoding field(s) of `node` by one naming `encoding`. */
export function encodingFields(raw: Buffer, node: MimeNode, encoding: string): Splice[] {
  const out: Splice[] = [];
  for (const f of node.fields) {
    if (f.key !== 'content-transfer-encoding') continue;
    const lineEnd = raw[f.end - 1] === 10 ? (raw[f.end - 2] === 13 ? '\r\n' : '\n') : '';
    out.push({ start: f.start, end: f.end, data: Buffer.from(`${f.name}: ${encoding}${lineEnd}`, 'latin1') });
  }
  return out;
}

/**
 * The header of a decoded leaf made to say `binary`: its
 * Content-Transfer-Encoding field(s) dropped and one
 * `Content-Transfer-Encoding: binary` put after the last field, where
 * Dovecot puts it (same bytes as a rewrite in place, another order).
 */
function saysBinary(raw: Buffer, leaf: MimeNode): Splice[] {
  const out: Splice[] = [];
  for (const f of leaf.fields) if (f.key === 'content-transfer-encoding') out.push({ start: f.start, end: f.end, data: Buffer.alloc(0) });
  const last = leaf.fields[leaf.fields.length - 1];
  const at = last ? last.end : leaf.headerStart;
  const lineBreak = last && raw[at - 1] !== 10 ? '\r\n' : '';
  out.push({ start: at, end: at, data: Buffer.from(`${lineBreak}Content-Transfer-Encoding: binary\r\n`, 'latin1') });
  return out;
}

/**
 * Fails unless the server knows the encoding of `leaf` (of any part: a
 * multipart's encoding, which RFC 2045 §6.4 limits to identity ones, is
 * never decoded, but an unknown one still fails).
 * @throws UnknownEncoding
 */
export function checkKnown(leaf: MimeNode): void {
  const encoding = binaryEncoding(leaf);
  if (!IDENTITY.has(encoding) && !DECODED.has(encoding)) {
    throw new UnknownEncoding(leaf.encoding?.toString('latin1') ?? encoding);
  }
}

/**
 * Fails unless the server knows the encoding of every part in `node`,
 * itself included: a message/rfc822 part in an unknown encoding fails as a
 * leaf does (Dovecot).
 * @throws UnknownEncoding
 */
function checkTree(node: MimeNode): void {
  checkKnown(node);
  if (node.kind === 'message') {
    if (node.message !== null) checkTree(node.message);
  } else if (node.kind === 'multipart') for (const child of node.children) checkTree(child);
}

/**
 * The binary form of `raw[from, to)`: each decodable leaf of `under` decoded, its header saying so.
 * @throws UnknownEncoding when a leaf of `under` has an encoding the server does not know
 */
export function binaryForm(raw: Buffer, from: number, to: number, under: MimeNode): Buffer {
  const splices: Splice[] = [];
  checkTree(under);
  for (const leaf of leaves(under)) {
    // An empty body decodes to nothing: Dovecot leaves such a part as it is, header included.
    if (!DECODED.has(binaryEncoding(leaf)) || leaf.bodyStart === leaf.bodyEnd) continue;
    splices.push(...saysBinary(raw, leaf), { start: leaf.bodyStart, end: leaf.bodyEnd, data: decoded(raw, leaf) });
  }
  return splice(raw, from, to, splices);
}

/**
 * The bytes of BINARY[part] of the served message `raw`.
 * @throws UnknownEncoding when the encoding of the section, or of a leaf in it, is not one of RFC 2045's
 */
export function binaryContent(raw: Buffer, part: readonly number[]): Buffer {
  const root = getMime(raw);
  const node = part.length === 0 ? root : findPart(root, part);
  if (node === null) return Buffer.alloc(0);
  if (node.kind === 'leaf') checkKnown(node);
  if (part.length === 0) return binaryForm(raw, 0, raw.length, root);
  if (node.kind === 'leaf') return DECODED.has(binaryEncoding(node)) ? decoded(raw, node) : raw.subarray(node.bodyStart, node.bodyEnd);
  return binaryForm(raw, node.bodyStart, node.bodyEnd, node);
}

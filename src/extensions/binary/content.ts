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
 *   has its body decoded and its Content-Transfer-Encoding field saying
 *   `binary`, so every header describes the bytes that follow it. A leaf in
 *   an unknown encoding stays as it is there (its header says what it is);
 *   only the message's own (a single-part message's) fails.
 * - A part that does not exist is empty, as BODY[n] is.
 * - Decoded text parts go out with CRLF line ends even where the decoded
 *   bytes have bare LFs (RFC 3516 §6: "textual line-oriented sections are
 *   always transmitted using the IMAP4 CRLF line termination").
 */
import { decodeTransfer, findPart, getMime, type MimeNode } from '../../mime/index.js';
import { bareLfCount } from '../../mime/crlf.js';

/** Encodings RFC 2045 defines that change nothing. */
export const IDENTITY: ReadonlySet<string> = new Set(['7bit', '8bit', 'binary']);
const DECODED = new Set(['base64', 'quoted-printable']);

/** A part whose Content-Transfer-Encoding the server does not know. */
export class UnknownEncoding extends Error {
  constructor(readonly encoding: string) {
    super(`Unknown Content-Transfer-Encoding ${encoding.slice(0, 40)}`);
  }
}

/** Every LF without a CR before it gets one. */
function crlf(data: Buffer): Buffer {
  const extra = bareLfCount(data);
  if (extra === 0) return data;
  const out = Buffer.allocUnsafe(data.length + extra);
  let o = 0;
  let from = 0;
  for (let i = data.indexOf(10); i >= 0; i = data.indexOf(10, i + 1)) {
    if (i > 0 && data[i - 1] === 13) continue;
    o += data.copy(out, o, from, i);
    out[o++] = 13;
    from = i;
  }
  data.copy(out, o, from);
  return out;
}

/** The decoded body of a base64 or quoted-printable leaf. */
function decoded(raw: Buffer, node: MimeNode): Buffer {
  const data = decodeTransfer(raw.subarray(node.bodyStart, node.bodyEnd), node.encodingKey);
  return node.contentType.type === 'text' ? crlf(data) : data;
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

/** The binary form of `raw[from, to)`: each decodable leaf of `under` decoded, its header saying so. */
function binaryForm(raw: Buffer, from: number, to: number, under: MimeNode): Buffer {
  const splices: Splice[] = [];
  for (const leaf of leaves(under)) {
    if (!DECODED.has(leaf.encodingKey)) continue;
    splices.push(...encodingFields(raw, leaf, 'binary'), { start: leaf.bodyStart, end: leaf.bodyEnd, data: decoded(raw, leaf) });
  }
  return splice(raw, from, to, splices);
}

/**
 * The bytes of BINARY[part] of the served message `raw`.
 * @throws UnknownEncoding when the section's own encoding is not one of RFC 2045's
 */
export function binaryContent(raw: Buffer, part: readonly number[]): Buffer {
  const root = getMime(raw);
  const node = part.length === 0 ? root : findPart(root, part);
  if (node === null) return Buffer.alloc(0);
  if (node.kind === 'leaf' && !IDENTITY.has(node.encodingKey) && !DECODED.has(node.encodingKey)) {
    throw new UnknownEncoding(node.encoding?.toString('latin1') ?? node.encodingKey);
  }
  if (part.length === 0) return binaryForm(raw, 0, raw.length, root);
  if (node.kind === 'leaf') return DECODED.has(node.encodingKey) ? decoded(raw, node) : raw.subarray(node.bodyStart, node.bodyEnd);
  return binaryForm(raw, node.bodyStart, node.bodyEnd, node.kind === 'message' && node.message !== null ? node.message : node);
}

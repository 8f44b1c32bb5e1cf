/**
 * The content of a BINARY section (RFC 3516 §4.2, RFC 9051 §6.4.5): a part
 * with its Content-Transfer-Encoding removed.
 *
 * - `[n...]` is the part's body decoded by the part's own encoding; a
 *   message/rfc822 or multipart part (which RFC 9051 says clients should not
 *   ask for) has an identity encoding, so it comes back as BODY[n] would.
 * - `[]` is the whole message, header included (RFC 3516: an empty section
 *   is the entire message). The body is decoded as a part is; when that
 *   changes it, the header's Content-Transfer-Encoding field says `binary`,
 *   so the header describes the bytes that follow it.
 * - A part that does not exist is empty, as BODY[n] is.
 * - Text parts go out with CRLF line ends even where the decoded bytes have
 *   bare LFs (RFC 3516 §4.3: "textual line-oriented sections are always
 *   transmitted using the IMAP4 CRLF line termination").
 */
import { bodyBlock, decodeTransfer, findPart, getMime, type MimeNode } from '../../mime/index.js';
import { bareLfCount } from '../../mime/crlf.js';

/** Encodings RFC 2045 defines; anything else cannot be decoded (`UNKNOWN-CTE`). */
const IDENTITY = new Set(['7bit', '8bit', 'binary']);
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

/** The body of `node` without its transfer encoding; throws UnknownEncoding. */
function decodedBody(raw: Buffer, node: MimeNode): { data: Buffer; changed: boolean } {
  const body = bodyBlock(raw, node);
  const encoding = node.encodingKey;
  if (IDENTITY.has(encoding)) return { data: body, changed: false };
  if (!DECODED.has(encoding)) throw new UnknownEncoding(node.encoding?.toString('latin1') ?? encoding);
  const decoded = decodeTransfer(body, encoding);
  return { data: node.contentType.type === 'text' ? crlf(decoded) : decoded, changed: true };
}

/** The header of the root with its Content-Transfer-Encoding field(s) replaced by `binary`. */
function binaryHeader(raw: Buffer, root: MimeNode): Buffer {
  const pieces: Buffer[] = [];
  let at = root.headerStart;
  for (const f of root.fields) {
    if (f.key !== 'content-transfer-encoding') continue;
    pieces.push(raw.subarray(at, f.start), Buffer.from(`${f.name}: binary\r\n`, 'latin1'));
    at = f.end;
  }
  pieces.push(raw.subarray(at, root.headerEnd));
  return Buffer.concat(pieces);
}

/**
 * The bytes of BINARY[part] of the served message `raw`.
 * @throws UnknownEncoding when the part's encoding is not one of RFC 2045's
 */
export function binaryContent(raw: Buffer, part: readonly number[]): Buffer {
  const root = getMime(raw);
  if (part.length === 0) {
    const { data, changed } = decodedBody(raw, root);
    if (!changed) return raw;
    return Buffer.concat([binaryHeader(raw, root), data]);
  }
  const node = findPart(root, part);
  if (node === null) return Buffer.alloc(0);
  return decodedBody(raw, node).data;
}

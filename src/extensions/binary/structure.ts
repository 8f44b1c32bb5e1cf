/**
 * The body structure of what BINARY gives (RFC 5524 §3.2: with BINARY, a
 * BODYPARTSTRUCTURE "will reflect any conversions or decoding that have
 * taken place. In particular, this will show an identity encoding"). Each
 * base64 or quoted-printable leaf is described as its decoded octets: the
 * encoding `binary` (the identity encoding that holds any octets, the one
 * RFC 5524's own example shows), the decoded size, and for a text part the
 * lines of the decoded octets (LFs, as every line count here). A multipart
 * or message/rfc822 part is described from its binary form, so its sizes
 * and line counts add up the decoded parts in it. Identity leaves are
 * described as they are.
 */
import { bodyStructure, findPart, getMime, type MimeNode } from '../../mime/index.js';
import type { ImapValue } from '../../imap/wire/values.js';
import { DECODED, binaryEncoding, binaryForm, checkKnown, decoded } from './content.js';

/** Index of the encoding in a non-multipart body structure (type, subtype, params, id, description, encoding, size, lines). */
const ENCODING = 5;

function lfCount(data: Buffer): number {
  let n = 0;
  for (let i = data.indexOf(10); i >= 0; i = data.indexOf(10, i + 1)) n++;
  return n;
}

function leafStructure(raw: Buffer, node: MimeNode): ImapValue {
  const out = bodyStructure(node, raw, true) as ImapValue[];
  if (!DECODED.has(binaryEncoding(node))) return out;
  const data = decoded(raw, node);
  out[ENCODING] = 'binary';
  out[ENCODING + 1] = data.length;
  if (node.contentType.type === 'text') out[ENCODING + 2] = lfCount(data);
  return out;
}

/**
 * The BODYPARTSTRUCTURE of BINARY[part] of the served message `raw`, or
 * null when the part does not exist.
 * @throws UnknownEncoding when the part, or a leaf in it, has an encoding the server does not know
 */
export function binaryStructure(raw: Buffer, part: readonly number[]): ImapValue | null {
  const root = getMime(raw);
  const node = part.length === 0 ? root : findPart(root, part);
  if (node === null) return null;
  if (node.kind === 'leaf') {
    checkKnown(node);
    return leafStructure(raw, node);
  }
  const converted = binaryForm(raw, 0, raw.length, node);
  const again = getMime(converted);
  const same = part.length === 0 ? again : findPart(again, part);
  return same === null ? null : bodyStructure(same, converted, true);
}

/**
 * APPEND with literal8 (RFC 3516 §4.4): the message is stored as sent,
 * except that a leaf part whose body holds NUL while its encoding claims to
 * carry it as is (7bit, 8bit, binary) gets base64. §4.4 allows a change of
 * encoding that loses no data, and §6 wants BODYSTRUCTURE and BODY[] to show
 * the message in an encoding the base protocol can carry: a plain literal
 * cannot hold NUL. Nothing else changes ("gratuitous encoding changes" are
 * what §6 warns against), and BINARY gives the bytes back as they were sent.
 * Dovecot converts binary parts on APPEND too.
 */
import { getMime, type MimeNode } from '../../mime/index.js';
import { IDENTITY, encodingFields, leaves, splice } from './content.js';

/** base64 in lines of 76 characters (RFC 2045 §6.8), CRLF between them. */
function base64Lines(data: Buffer): Buffer {
  const text = data.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += 76) lines.push(text.slice(i, i + 76));
  return Buffer.from(lines.join('\r\n'), 'latin1');
}

/** Where a new header field goes: after the last field (a line break first when it has none). */
function newField(raw: Buffer, node: MimeNode, text: string): { start: number; end: number; data: Buffer } {
  const last = node.fields[node.fields.length - 1];
  const at = last ? last.end : node.headerStart;
  const lineBreak = last && raw[at - 1] !== 10 ? '\r\n' : '';
  return { start: at, end: at, data: Buffer.from(lineBreak + text, 'latin1') };
}

/** The message with its NUL-holding identity-encoded leaves in base64; `raw` itself when it has no NUL. */
export function encodeNulParts(raw: Buffer): Buffer {
  if (raw.indexOf(0) < 0) return raw;
  const splices: { start: number; end: number; data: Buffer }[] = [];
  for (const leaf of leaves(getMime(raw))) {
    if (!IDENTITY.has(leaf.encodingKey) || raw.subarray(leaf.bodyStart, leaf.bodyEnd).indexOf(0) < 0) continue;
    const fields = encodingFields(raw, leaf, 'base64');
    splices.push(...fields);
    // A header that says nothing of MIME would have its Content-Transfer-Encoding ignored.
    const added = `${leaf.isMime ? '' : 'MIME-Version: 1.0\r\n'}${fields.length === 0 ? 'Content-Transfer-Encoding: base64\r\n' : ''}`;
    if (added) splices.push(newField(raw, leaf, added));
    splices.push({ start: leaf.bodyStart, end: leaf.bodyEnd, data: base64Lines(raw.subarray(leaf.bodyStart, leaf.bodyEnd)) });
  }
  return splice(raw, 0, raw.length, splices);
}

/**
 * BODY[section] contents (RFC 3501 §6.4.5), resolved as Dovecot resolves them
 * (imap-msgpart.c):
 * - `[]` is the whole message, `[HEADER]` / `[TEXT]` / `[HEADER.FIELDS ...]`
 *   its header (blank line included) / body / selected fields;
 * - part numbers index the parts of a multipart; a non-multipart entity only
 *   has part 1 (itself), and a path may only continue below it when it is a
 *   message/rfc822, whose encapsulated message then takes the next number;
 * - `[n]` is the part's body; `[n.MIME]` its own header (for a
 *   message/rfc822 part too);
 * - `[n.HEADER]`, `[n.TEXT]`, `[n.HEADER.FIELDS ...]` need a message/rfc822
 *   part and refer to the encapsulated message; for any other part they are
 *   empty;
 * - a part that does not exist gives an empty string (Dovecot does not
 *   fail the FETCH), so `section` returns an empty Buffer;
 * - `null` is only returned for a specification that is not valid at all
 *   (`MIME` without a part, a part number below 1, a field list that is
 *   missing): the caller should answer BAD.
 *
 * Returned Buffers are views of `raw` where possible: do not modify them.
 * A partial `<origin.count>` is the caller's business.
 */
import type { MimeNode } from './types.js';

export interface SectionSpec {
  /** Part path, 1-based; empty for the message itself. */
  part: number[];
  /** Section text; absent for the part's body (or the whole message). */
  text?: 'HEADER' | 'HEADER.FIELDS' | 'HEADER.FIELDS.NOT' | 'TEXT' | 'MIME';
  /** Field names for HEADER.FIELDS / HEADER.FIELDS.NOT (any case). */
  fields?: string[];
}

const CRLF = Buffer.from('\r\n', 'latin1');
const EMPTY = Buffer.alloc(0);

/**
 * Finds the node a part path designates (Dovecot's rules, see above).
 * @returns the node, the root for an empty path, or null when there is no such part
 */
export function findPart(root: MimeNode, part: readonly number[]): MimeNode | null {
  let node: MimeNode | null = root;
  for (let i = 0; i < part.length && node !== null; i++) {
    const num = part[i]!;
    const more = i + 1 < part.length;
    if (node.kind === 'multipart') {
      node = node.children[num - 1] ?? null;
    } else if (num !== 1 || (more && node.kind !== 'message')) {
      node = null;
    }
    if (node !== null && more && node.kind === 'message') node = node.message;
  }
  return node;
}

/**
 * Whether HEADER.FIELDS / HEADER.FIELDS.NOT end with a blank line: when the
 * header has one — its own, or the one that a delimiter right after it took
 * as its line break. RFC 3501 §6.4.5: no blank line for a message with no
 * body and no blank line. HEADER.FIELDS of the message itself always ends
 * with one (as Dovecot writes it; Dovecot also adds one to such nested
 * messages in some cases, reading on past the end of the message — see
 * docs/mime.md).
 */
function endsWithBlank(raw: Buffer, node: MimeNode, exclude: boolean): boolean {
  if (!exclude && node.depth === 0) return true;
  const end = node.headerEnd;
  const lastEnd = node.fields.length > 0 ? node.fields[node.fields.length - 1]!.end : node.headerStart;
  if (end > lastEnd) return true; // a blank line inside the header block
  // the blank line the next delimiter took: a bare line break right after the header
  return end > 0 && raw[end - 1] === 10 && (raw[end] === 10 || (raw[end] === 13 && raw[end + 1] === 10));
}

/**
 * The header fields of `node` named (or, with `exclude`, not named) in
 * `names`, in message order, then the blank line (see endsWithBlank).
 * HEADER.FIELDS ends each field with a line break; HEADER.FIELDS.NOT keeps
 * the header's bytes as they are (Dovecot).
 * @returns the selected header bytes
 */
export function headerFields(raw: Buffer, node: MimeNode, names: readonly string[], exclude: boolean): Buffer {
  const wanted = new Set(names.map((n) => n.toLowerCase()));
  const pieces: Buffer[] = [];
  for (const f of node.fields) {
    if (wanted.has(f.key) === exclude) continue;
    pieces.push(raw.subarray(f.start, f.end));
    if (!exclude && (f.end === f.start || raw[f.end - 1] !== 10)) pieces.push(CRLF);
  }
  if (endsWithBlank(raw, node, exclude)) pieces.push(CRLF);
  return Buffer.concat(pieces);
}

/**
 * The header block of `node`, blank line included.
 * @returns a view of `raw`
 */
export function headerBlock(raw: Buffer, node: MimeNode): Buffer {
  return raw.subarray(node.headerStart, node.headerEnd);
}

/**
 * The body of `node` (for a message/rfc822 part: the whole encapsulated message).
 * @returns a view of `raw`
 */
export function bodyBlock(raw: Buffer, node: MimeNode): Buffer {
  return raw.subarray(node.bodyStart, node.bodyEnd);
}

/**
 * The size of a message in bytes as stored. FETCH's RFC822.SIZE is
 * `servedSize()` (crlf.ts): the size with every bare LF counted as CRLF.
 * @returns the byte count
 */
export function messageSize(raw: Buffer): number {
  return raw.length;
}

/**
 * The bytes of BODY[section].
 * @returns the section's bytes (empty when the part does not exist), or null when `spec` is invalid
 */
export function section(raw: Buffer, root: MimeNode, spec: SectionSpec): Buffer | null {
  const { part, text } = spec;
  for (const n of part) if (!Number.isInteger(n) || n < 1) return null;
  if (text === 'MIME' && part.length === 0) return null;
  if ((text === 'HEADER.FIELDS' || text === 'HEADER.FIELDS.NOT') && (spec.fields === undefined || spec.fields.length === 0)) return null;

  let target: MimeNode | null;
  if (part.length === 0) {
    if (text === undefined) return raw;
    target = root;
  } else {
    const node = findPart(root, part);
    if (node === null) return EMPTY;
    if (text === undefined) return bodyBlock(raw, node);
    if (text === 'MIME') return headerBlock(raw, node);
    if (node.kind !== 'message' || node.message === null) return EMPTY;
    target = node.message;
  }
  switch (text) {
    case 'HEADER':
      return headerBlock(raw, target);
    case 'TEXT':
      return bodyBlock(raw, target);
    case 'HEADER.FIELDS':
      return headerFields(raw, target, spec.fields!, false);
    case 'HEADER.FIELDS.NOT':
      return headerFields(raw, target, spec.fields!, true);
    default:
      return null;
  }
}

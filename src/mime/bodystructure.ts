/**
 * RFC 3501 BODY / BODYSTRUCTURE, written as Dovecot writes them
 * (imap-bodystructure.c):
 * - type, subtype, parameter names and values, encoding and disposition
 *   are sent as written in the header (case kept), e.g. `"TEXT" "PLAIN"`
 *   stays upper case and `"text" "html"` lower case;
 * - defaults are lower case: `"text" "plain"`, `("charset" "us-ascii")`,
 *   `"7bit"`; a text part without a charset parameter gets
 *   `"charset" "us-ascii"` appended to its parameters;
 * - message/rfc822 is always written `"message" "rfc822"`; message/global
 *   is `"message" "global"` with the envelope, body and line count of the
 *   message it holds (RFC 9051 §7.5.2 `media-message`; RFC 6532 §3.7),
 *   like its BODY[n.HEADER] and BODY[n.TEXT] sections;
 * - the parts of a multipart are written back to back, `(...)(...)`
 *   (`body-type-mpart = 1*body SP media-subtype`);
 * - a part without parameters gets NIL (text parts always get a list);
 * - Content-Language is always a list; id, description, md5 and location
 *   have their line breaks removed;
 * - a multipart without parts gets one empty text/plain part;
 * - sizes and line counts are of the bytes parsed (FETCH parses the CRLF
 *   form of a message, so a bare-LF message counts CRLF, as in Dovecot).
 */
import { adjoined } from '../imap/wire/serializer.js';
import type { ImapValue } from '../imap/wire/values.js';
import { envelope } from './envelope.js';
import { noLineBreaks } from './header.js';
import type { Disposition, MimeNode, MimeParam } from './types.js';

function params(list: readonly MimeParam[], defaultCharset: boolean): ImapValue {
  if (list.length === 0 && !defaultCharset) return null;
  const out: ImapValue[] = [];
  let seenCharset = false;
  for (const p of list) {
    if (defaultCharset && p.name.length === 7 && p.name.toString('latin1').toLowerCase() === 'charset') seenCharset = true;
    out.push(p.name, p.value);
  }
  if (defaultCharset && !seenCharset) out.push('charset', 'us-ascii');
  return out;
}

function nolf(value: Buffer | null): Buffer | null {
  return value === null ? null : noLineBreaks(value);
}

function disposition(d: Disposition | null): ImapValue {
  return d === null ? null : [d.rawType, params(d.params, false)];
}

/** disposition, language, location (common extension data). */
function common(node: MimeNode): ImapValue[] {
  return [disposition(node.disposition), node.language === null ? null : [...node.language], nolf(node.location)];
}

function emptyPart(extensible: boolean): ImapValue[] {
  const base: ImapValue[] = ['text', 'plain', ['charset', 'us-ascii'], null, null, '7bit', 0, 0];
  return extensible ? [...base, null, null, null, null] : base;
}

/**
 * The BODY (extensible = false) or BODYSTRUCTURE (extensible = true) of
 * `node` (the message root, or any part).
 * @returns the parenthesized structure as an ImapValue list
 */
export function bodyStructure(node: MimeNode, raw: Buffer, extensible: boolean): ImapValue {
  const ct = node.contentType;
  if (node.kind === 'multipart') {
    const out: ImapValue[] = adjoined(
      node.children.length > 0 ? node.children.map((c) => bodyStructure(c, raw, extensible)) : [emptyPart(extensible)],
    );
    out.push(ct.rawSubtype ?? ct.subtype);
    if (extensible) out.push(params(ct.params, false), ...common(node));
    return out;
  }

  const rfc822 = node.kind === 'message' && node.message !== null;
  const text = !rfc822 && ct.type === 'text';
  const out: ImapValue[] = [];
  if (rfc822) out.push('message', ct.subtype === 'global' ? 'global' : 'rfc822');
  else if (ct.rawType === null) out.push(ct.type, ct.subtype);
  else out.push(ct.rawType, ct.rawSubtype ?? Buffer.alloc(0));
  out.push(params(ct.params, text), nolf(node.id), nolf(node.description), node.encoding ?? '7bit', node.size);
  if (text) {
    out.push(node.lines);
  } else if (rfc822) {
    const msg = node.message!;
    out.push(envelope(msg, raw), bodyStructure(msg, raw, extensible), node.lines);
  }
  if (extensible) out.push(nolf(node.md5), ...common(node));
  return out;
}

/**
 * The preview text of a message (RFC 8970 §3): at most 256 characters of
 * its first displayable text, made plain.
 *
 * - The part: the first text/* part that is no attachment, depth first;
 *   in a multipart/alternative the text/plain alternative wins over the
 *   others (HTML). Attached messages (message/rfc822 parts) are not looked
 *   into: their text is not this message's.
 * - Its transfer encoding and charset are decoded; HTML loses its markup
 *   (head, style, script and comments entirely), character references are
 *   resolved; every run of whitespace becomes one space, leading and
 *   trailing ones go; other control characters are dropped.
 * - The limit counts characters (code points), so no UTF-8 sequence is cut.
 * - No text part, or an empty one: "".
 */
import { charsetOf, decodeCharset, decodeTransfer, getMime, servedSource, type MimeNode } from '../../mime/index.js';

/** RFC 8970 §3.1: the preview is at most 256 characters. */
export const PREVIEW_LENGTH = 256;
/** Only the start of a huge body is read: 256 characters of text never need more than this, bar pathological markup. */
const READ_LIMIT = 256 * 1024;

const isAttachment = (node: MimeNode): boolean => node.disposition?.type === 'attachment';

/** The part the preview is made from, or null. */
function textPart(node: MimeNode): MimeNode | null {
  if (node.kind === 'leaf') return node.contentType.type === 'text' && !isAttachment(node) ? node : null;
  if (node.kind !== 'multipart') return null;
  if (node.contentType.subtype === 'alternative') {
    let first: MimeNode | null = null;
    for (const child of node.children) {
      const found = textPart(child);
      if (found === null) continue;
      if (found.contentType.subtype === 'plain') return found;
      first ??= found;
    }
    return first;
  }
  for (const child of node.children) {
    const found = textPart(child);
    if (found !== null) return found;
  }
  return null;
}

/** HTML's Latin-1 entity names, U+00A0 to U+00FF in order. */
const LATIN1_NAMES =
  'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml';

const OTHER_NAMED: readonly (readonly [string, string])[] = [
  ['amp', '&'],
  ['lt', '<'],
  ['gt', '>'],
  ['quot', '"'],
  ['apos', "'"],
  ['hellip', '\u2026'],
  ['mdash', '\u2014'],
  ['ndash', '\u2013'],
  ['lsquo', '\u2018'],
  ['rsquo', '\u2019'],
  ['ldquo', '\u201c'],
  ['rdquo', '\u201d'],
  ['bull', '\u2022'],
  ['euro', '\u20ac'],
  ['trade', '\u2122'],
  ['zwnj', ''],
  ['zwj', ''],
];

let named: Map<string, string> | null = null;

/** Named character references (case-sensitive, as HTML has them), built on first use. */
function namedReferences(): Map<string, string> {
  if (named === null) {
    named = new Map(OTHER_NAMED);
    LATIN1_NAMES.split(' ').forEach((name, i) => named!.set(name, String.fromCharCode(0xa0 + i)));
    named.set('nbsp', ' ');
    named.set('shy', '');
  }
  return named;
}

function characterReference(whole: string, body: string): string {
  if (body.startsWith('#')) {
    const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
    return Number.isInteger(code) && code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole;
  }
  return namedReferences().get(body) ?? whole;
}

/** Elements whose end separates words (a tag like `<b>` inside a word does not). */
const BLOCK = /^\/?(?:br|p|div|li|ul|ol|tr|td|th|table|h[1-6]|blockquote|pre|hr|section|article|header|footer|title|body|html)\b/i;

/** HTML to its text. */
export function htmlToText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?(?:-->|$)/g, ' ')
    .replace(/<(head|style|script)\b[\s\S]*?(?:<\/\1\s*>|$)/gi, ' ')
    .replace(/<([^>]*)>?/g, (_m, tag: string) => (BLOCK.test(tag) ? ' ' : ''))
    .replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});?/g, characterReference);
}

/** Whitespace runs to one space, other controls dropped, ends trimmed, at most `max` code points. */
export function plainPreview(text: string, max = PREVIEW_LENGTH): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\s\u00a0]+/g, ' ').replace(/[\u0000-\u001f\u007f\ufeff]/g, '').trim();
  let out = '';
  let count = 0;
  for (const ch of flat) {
    if (count === max) break;
    out += ch;
    count++;
  }
  return out.trimEnd();
}

/** The preview of a stored message. */
export function previewOf(raw: Buffer): string {
  const source = servedSource(raw);
  const part = textPart(getMime(source));
  if (part === null) return '';
  let body = source.subarray(part.bodyStart, part.bodyEnd);
  if (body.length > READ_LIMIT) body = body.subarray(0, READ_LIMIT);
  const text = decodeCharset(decodeTransfer(body, part.encodingKey), charsetOf(part));
  return plainPreview(part.contentType.subtype === 'html' ? htmlToText(text) : text);
}

/**
 * Header values the way Dovecot reads them: Content-* fields, RFC 2231
 * parameters, and the cleanups applied before values go into ENVELOPE and
 * BODYSTRUCTURE.
 */
import { decodeCharset } from './charset.js';
import { decodeHeaderValue } from './decode.js';
import { Bytes, Reader } from './reader.js';
import type { ContentType, Disposition, HeaderField, MimeParam } from './types.js';

const isBlank = (c: number): boolean => c === 32 || c === 9;

/**
 * The value Dovecot works with ("full value"): blanks after the colon
 * skipped (only one when the first line holds nothing but blanks),
 * folding line breaks kept.
 * @returns a view of the field's value bytes
 */
export function fullValue(field: HeaderField): Buffer {
  const v = field.value;
  let firstLine = v.indexOf(10);
  if (firstLine < 0) firstLine = v.length;
  else if (firstLine > 0 && v[firstLine - 1] === 13) firstLine--;
  let i = 0;
  while (i < firstLine && isBlank(v[i]!)) i++;
  if (i === firstLine) i = firstLine > 0 && isBlank(v[0]!) ? 1 : 0;
  return v.subarray(i);
}

/**
 * Dovecot's "nolf" cleanup for nstrings: CR and LF removed, and a space put
 * where a line break was followed by something other than a blank.
 * @returns the same Buffer when there is nothing to remove, else a copy
 */
export function noLineBreaks(value: Buffer): Buffer {
  if (value.indexOf(10) < 0 && value.indexOf(13) < 0) return value;
  const out: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c !== 13 && c !== 10) {
      out.push(c);
      continue;
    }
    const next = i + 1 < value.length ? value[i + 1]! : -1;
    if (next !== -1 && next !== 32 && next !== 9 && next !== 13 && next !== 10) out.push(32);
  }
  return Buffer.from(out);
}

/**
 * Dovecot's cleanup for human-readable strings (ENVELOPE subject and
 * address names): each run of CR, LF, TAB and SP becomes one space,
 * leading and trailing blanks are removed, NUL becomes 0x80.
 * @returns the cleaned bytes
 */
export function forHumans(value: Buffer): Buffer {
  const out: number[] = [];
  let lastBlank = true;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === 13 || c === 10 || c === 9 || c === 32) {
      if (!lastBlank) out.push(32);
      lastBlank = true;
    } else {
      out.push(c === 0 ? 0x80 : c);
      lastBlank = false;
    }
  }
  if (out.length > 0 && out[out.length - 1] === 32) out.pop();
  return Buffer.from(out);
}

interface RawParam {
  name: Buffer;
  value: Buffer;
}

/** Moves to just past the next ';' (or to the end); used to resynchronise after garbage. */
function skipToSemicolon(r: Reader): void {
  while (r.more() && r.cur() !== 59) r.pos++;
}

const EMPTY = Buffer.alloc(0);

/**
 * `;`-separated parameters (RFC 2045 §5.1) from the reader's position, read
 * as Dovecot reads them: an empty name (`; =x`) or an empty value (`a=`,
 * `a=;`) is kept; anything else that breaks the syntax is skipped up to the
 * next `;`.
 */
function parseRawParams(r: Reader): RawParam[] {
  const out: RawParam[] = [];
  while (r.more()) {
    if (r.cur() !== 59 /* ; */) {
      r.pos++;
      skipToSemicolon(r);
      continue;
    }
    r.pos++;
    if (r.skipCfws() <= 0) break;
    const name = r.tokenView() ?? EMPTY;
    if (r.cur() !== 61 /* = */) {
      skipToSemicolon(r);
      continue;
    }
    r.pos++;
    const more = r.skipCfws();
    if (more <= 0) {
      if (more === 0) out.push({ name, value: EMPTY });
      break;
    }
    let value: Buffer | null;
    if (r.cur() === 34 /* " */) {
      const q = new Bytes();
      const step = r.parseQuotedString(q);
      value = step < 0 && q.length === 0 ? null : q.toBuffer();
    } else if (r.cur() === 61) {
      // broken but common: name==?utf-8?b?...?= (an unquoted encoded word)
      const start = r.pos;
      while (r.more() && r.cur() !== 59 && r.cur() !== 32 && r.cur() !== 9 && r.cur() !== 13 && r.cur() !== 10) r.pos++;
      value = r.buf.subarray(start, r.pos);
      r.skipCfws();
    } else {
      value = r.tokenView() ?? EMPTY;
    }
    if (value === null) {
      skipToSemicolon(r);
      continue;
    }
    out.push({ name, value });
  }
  return out;
}

interface Section2231 {
  base: Buffer;
  baseText: string;
  index: number;
  extended: boolean;
  value: Buffer;
}

/** `name*N`, `name*N*` or `name*` → its RFC 2231 section; null for a plain name. */
function section2231(p: RawParam): Section2231 | null {
  const star = p.name.indexOf(42 /* * */);
  if (star < 0) return null;
  let i = star + 1;
  let index = 0;
  while (i < p.name.length && p.name[i]! >= 48 && p.name[i]! <= 57) {
    index = index * 10 + p.name[i]! - 48;
    i++;
  }
  let extended = false;
  if (i === star + 1) {
    // `name*`: the star itself marks an extended value (section 0)
    extended = true;
  } else if (i < p.name.length && p.name[i] === 42) {
    extended = true;
    i++;
  }
  if (i !== p.name.length) return null;
  const base = p.name.subarray(0, star);
  return { base, baseText: base.toString('latin1'), index, extended, value: p.value };
}

function percentDecode(value: Buffer): Buffer {
  const s = value.toString('latin1').replace(/%([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(s, 'latin1');
}

/** Decodes a merged RFC 2231 extended value `charset'language'%XX...`. */
function decodeExtended(value: Buffer): string {
  const q1 = value.indexOf(39 /* ' */);
  const q2 = q1 < 0 ? -1 : value.indexOf(39, q1 + 1);
  if (q2 < 0) return decodeCharset(percentDecode(value), '');
  const charset = value.toString('latin1', 0, q1);
  return decodeCharset(percentDecode(value.subarray(q2 + 1)), charset);
}

function escapePercent(value: Buffer): Buffer {
  if (value.indexOf(37) < 0) return value;
  return Buffer.from(value.toString('latin1').replace(/%/g, '%25'), 'latin1');
}

/**
 * Parameters with RFC 2231 handling as Dovecot does it: plain parameters
 * first, in order; then RFC 2231 sections sorted by name and index and
 * merged, named `name*` (value still encoded, `''` prefix added when only
 * later sections are extended) when any section is extended, else `name`;
 * groups with missing sections are reported section by section.
 */
function mergeParams(raw: RawParam[]): MimeParam[] {
  const out: MimeParam[] = [];
  const sections: Section2231[] = [];
  for (const p of raw) {
    const s = section2231(p);
    if (s === null) {
      out.push({
        name: p.name,
        value: p.value,
        key: p.name.toString('latin1').toLowerCase(),
        decoded: decodeHeaderValue(p.value),
      });
    } else {
      sections.push(s);
    }
  }
  if (sections.length === 0) return out;
  sections.sort((a, b) => Buffer.compare(a.base, b.base) || a.index - b.index);
  for (let i = 0; i < sections.length; ) {
    const lower = sections[i]!.baseText.toLowerCase();
    let j = i;
    let complete = true;
    let extended = false;
    while (j < sections.length && sections[j]!.baseText.toLowerCase() === lower) {
      if (sections[j]!.index !== j - i) complete = false;
      if (sections[j]!.extended) extended = true;
      j++;
    }
    const group = sections.slice(i, j);
    i = j;
    if (!complete) {
      for (const s of group) {
        const name = Buffer.from(`${s.baseText}*${s.index}${s.extended ? '*' : ''}`, 'latin1');
        out.push({
          name,
          value: s.value,
          key: lower,
          decoded: s.extended ? decodeExtended(s.value) : decodeHeaderValue(s.value),
        });
      }
      continue;
    }
    const pieces: Buffer[] = [];
    if (extended && !group[0]!.extended) pieces.push(Buffer.from("''", 'latin1'));
    for (const s of group) pieces.push(extended && !s.extended ? escapePercent(s.value) : s.value);
    const value = Buffer.concat(pieces);
    const first = group[0]!;
    out.push({
      name: extended ? Buffer.concat([first.base, Buffer.from('*')]) : first.base,
      value,
      key: lower,
      decoded: extended ? decodeExtended(value) : decodeHeaderValue(value),
    });
  }
  return out;
}

/** The default type: text/plain, or message/rfc822 inside multipart/digest. */
export function defaultContentType(inDigest: boolean): ContentType {
  return inDigest
    ? { type: 'message', subtype: 'rfc822', rawType: null, rawSubtype: null, params: [] }
    : { type: 'text', subtype: 'plain', rawType: null, rawSubtype: null, params: [] };
}

/**
 * Parses a Content-Type value as Dovecot does: `type/subtype` tokens
 * (comments and blanks around them allowed) followed by the end or `;`.
 * A type without `/` keeps the type with an empty subtype (`text` →
 * `"text" ""`); anything else broken (`foo/bar/baz`, `text/`, `/plain`,
 * `text/plain garbage`) gives an empty type and subtype. Broken values have
 * no parameters.
 * @returns the content type (rawType / rawSubtype never null)
 */
export function parseContentType(value: Buffer): ContentType {
  const r = new Reader(value);
  r.skipCfws();
  const broken: ContentType = { type: '', subtype: '', rawType: EMPTY, rawSubtype: EMPTY, params: [] };
  const rawType = r.tokenView();
  if (rawType === null) return broken;
  const type = rawType.toString('latin1').toLowerCase();
  if (r.cur() !== 47 /* / */) return { type, subtype: '', rawType, rawSubtype: EMPTY, params: [] };
  r.pos++;
  if (r.skipCfws() <= 0) return broken;
  const rawSubtype = r.tokenView();
  if (rawSubtype === null || (r.more() && r.cur() !== 59)) return broken;
  return {
    type,
    subtype: rawSubtype.toString('latin1').toLowerCase(),
    rawType,
    rawSubtype,
    params: mergeParams(parseRawParams(r)),
  };
}

/**
 * Parses a Content-Disposition value. The type is the token at the start,
 * possibly empty (`;filename=d.txt` → `("" ("filename" "d.txt"))`, an empty
 * header → `("" NIL)`), as Dovecot reads it.
 * @returns the disposition
 */
export function parseDisposition(value: Buffer): Disposition {
  const r = new Reader(value);
  r.skipCfws();
  const rawType = r.tokenView() ?? EMPTY;
  return { type: rawType.toString('latin1').toLowerCase(), rawType, params: mergeParams(parseRawParams(r)) };
}

/**
 * Parses a Content-Transfer-Encoding value: one token and nothing else.
 * @returns the token as written, or null when invalid
 */
export function parseEncoding(value: Buffer): Buffer | null {
  const r = new Reader(value);
  r.skipCfws();
  const tok = r.tokenView();
  return tok !== null && !r.more() ? tok : null;
}

/**
 * Parses a Content-Language value: comma-separated atoms.
 * @returns the tags, or null when there are none
 */
export function parseLanguage(value: Buffer): Buffer[] | null {
  const r = new Reader(value);
  r.skipCfws();
  const out: Buffer[] = [];
  const tag = new Bytes();
  for (;;) {
    tag.clear();
    if (r.parseAtom(tag) < 0) break;
    out.push(tag.toBuffer());
    if (r.cur() !== 44 /* , */) break;
    r.pos++;
    r.skipCfws();
  }
  return out.length > 0 ? out : null;
}

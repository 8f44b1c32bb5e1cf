/**
 * The per-message values SORT and THREAD compare, computed once per
 * message and cached.
 *
 * Everything kept is a function of the message's raw bytes alone, which
 * never change for a Message object (readonly; a flag change mutates
 * `flags` only; a copy shares the Buffer), so an entry never goes stale and
 * is kept on the message (a memo, ../../store/memo.ts). INTERNALDATE, the
 * sent date's fallback, is read when asked. Each value is computed on first
 * use.
 */
import { dateFields, MONTHS } from '../../mime/date.js';
import { decodeHeaderValue, parseAddressList, servedSize, type Address } from '../../mime/index.js';
import type { StoreChange } from '../../store/changes.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { Message } from '../../store/message.js';
import { messageMemo } from '../../store/memo.js';
import { baseSubject } from './base-subject.js';
import { collationKey } from '../../util/casemap.js';

/** Address headers SORT reads. */
export type AddressHeader = 'from' | 'to' | 'cc';

/**
 * What THREAD=REFERENCES reads of every message, made in one pass over its
 * header: an object of its own, three fields, not the twelve of a message's
 * sort values, as THREAD reads it for every message of the mailbox and each
 * one outlives a few collections of the young generation (whose cost is the
 * bytes that survive).
 */
export class ThreadInfo {
  constructor(
    /** Date: header in ms, or null (then INTERNALDATE is the sent date). */
    readonly date: number | null,
    readonly messageId: string | null,
    readonly references: readonly string[],
  ) {}
}

const THREAD_FIELDS = ['date', 'message-id', 'references', 'in-reply-to'];
const SUBJECT_FIELD = ['subject'];

/**
 * One message's values, each undefined until first asked for. A class with
 * every field set up front keeps all entries one shape (fast access, little
 * memory for 100,000 of them).
 */
class Entry {
  subject: string | undefined = undefined;
  replyOrForward: boolean | undefined = undefined;
  /** Date: header as ms since the epoch, or null when missing or unparsable. */
  date: number | null | undefined = undefined;
  size: number | undefined = undefined;
  /** Collation keys of the first address's local part (`mailbox`) and display form, per header. */
  from: string | undefined = undefined;
  to: string | undefined = undefined;
  cc: string | undefined = undefined;
  displayFrom: string | undefined = undefined;
  displayTo: string | undefined = undefined;
  messageId: string | null | undefined = undefined;
  references: readonly string[] | undefined = undefined;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** An address part as text: a Buffer read as UTF-8 (else latin1), the parser's fill-ins (`MISSING_MAILBOX`) as they are. */
function text(value: Buffer | string | null): string {
  if (typeof value === 'string') return value;
  if (value === null) return '';
  try {
    return strictUtf8.decode(value);
  } catch {
    return value.toString('latin1');
  }
}

/**
 * The values of the first header field of each of `names` (lower case): the
 * bytes after the colon up to the end of the field's last line, folding
 * kept, or null. One scan of the header lines alone: sorting a large
 * mailbox must not parse every message's MIME structure (the fields found
 * are those `getMime` finds: names compared case-insensitively, blanks
 * allowed before the colon).
 */
export function headerFields(raw: Buffer, names: readonly string[]): (Buffer | null)[] {
  const ranges = new Int32Array(names.length * 2);
  headerRanges(raw, names, ranges);
  return names.map((_, k) => (ranges[2 * k]! < 0 ? null : raw.subarray(ranges[2 * k]!, ranges[2 * k + 1]!)));
}

/**
 * `headerFields` as offsets into `raw`, without a Buffer per field: the
 * value of `names[k]` is `raw[ranges[2k] .. ranges[2k+1])`, or -1 for none.
 */
export function headerRanges(raw: Buffer, names: readonly string[], ranges: Int32Array): void {
  // A loop, not ranges.fill: a native call per message was a sixth of this scan.
  for (let k = 0; k < ranges.length; k++) ranges[k] = -1;
  let missing = names.length;
  const len = raw.length;
  let pos = 0;
  while (pos < len && missing > 0) {
    const first = raw[pos]!;
    // A blank line ends the header.
    if (first === 13 || first === 10) break;
    // Line ends found by plain loops, not Buffer#indexOf: header lines are short, and a native call per
    // line cost more than the scan itself over a whole mailbox.
    let end = lineEnd(raw, pos, len);
    while (end + 1 < len && (raw[end + 1] === 32 || raw[end + 1] === 9)) end = lineEnd(raw, end + 1, len);
    const lower = first | 0x20;
    for (let k = 0; k < names.length; k++) {
      const name = names[k]!;
      const n = name.length;
      if (ranges[2 * k]! >= 0 || lower !== name.charCodeAt(0) || pos + n >= end) continue;
      let i = 1;
      while (i < n && (raw[pos + i]! | 0x20) === name.charCodeAt(i)) i++;
      if (i < n) continue;
      let colon = pos + n;
      while (colon < end && (raw[colon] === 32 || raw[colon] === 9)) colon++;
      if (raw[colon] !== 58) continue;
      let stop = end;
      if (stop > colon && raw[stop - 1] === 13) stop--;
      ranges[2 * k] = colon + 1;
      ranges[2 * k + 1] = Math.max(colon + 1, stop);
      missing--;
      break;
    }
    pos = end + 1;
  }
}

/** The offset of the first LF at or after `from`, or `len`. */
function lineEnd(raw: Buffer, from: number, len: number): number {
  let i = from;
  while (i < len && raw[i] !== 10) i++;
  return i;
}

/** The first header field `name` (lower case), or null. */
export function headerField(raw: Buffer, name: string): Buffer | null {
  return headerFields(raw, [name])[0]!;
}

// The common shapes `Name <local@host>`, `"Name" <local@host>` and `local@host`, whose local part is
// plain atext: read without the full RFC 5322 parser, with the same result.
const ATEXT = "[A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~.]+";
const SIMPLE_ADDRESS = new RegExp(`^\\s*(?:(?:"[^"\\\\\\r\\n]*"|[A-Za-z0-9 !#$%&'*+\\-/=?^_\`{|}~.]*?)\\s*<(${ATEXT})@[A-Za-z0-9.-]+>|(${ATEXT})@[A-Za-z0-9.-]+)\\s*$`);

/**
 * The addr-mailbox of the first address of a header value, for SORT
 * FROM/TO/CC (RFC 5256 §3). "First address" is the first of the ENVELOPE's
 * address list, so for a list that starts with a group it is the group's
 * start marker, whose addr-mailbox holds the group name (RFC 3501 §7.4.2):
 * `To: a: x@y;` sorts as "a", `To: empty:;` as "empty" (Dovecot does so).
 */
function firstLocalPart(value: Buffer): string {
  const simple = SIMPLE_ADDRESS.exec(value.toString('latin1'));
  if (simple) return simple[1] ?? simple[2]!;
  return text(parseAddressList(value)?.[0]?.mailbox ?? null);
}

/** The first ENVELOPE address of the header (a group's start marker included), or null. */
function firstAddress(m: Message, header: AddressHeader): Address | null {
  const value = headerField(m.raw, header);
  if (value === null) return null;
  return parseAddressList(value)?.[0] ?? null;
}

function firstField(m: Message, name: string): Buffer | null {
  return headerField(m.raw, name);
}

/**
 * The header value `raw[start .. stop)` as text, RFC 2047 words decoded;
 * plain ASCII without encoded words skips the decoder (and a Buffer).
 */
function headerTextRange(raw: Buffer, start: number, stop: number): string {
  for (let i = start; i < stop; i++) {
    const b = raw[i]!;
    // `=?` split by the field's end is no encoded word: the check stays inside the value.
    if (b >= 0x80 || (b === 0x3d && i + 1 < stop && raw[i + 1] === 0x3f)) return decodeHeaderValue(raw.subarray(start, stop));
  }
  const text = raw.toString('latin1', start, stop);
  return (text.includes('\n') || text.includes('\r') ? text.replace(/\r?\n|\r/g, '') : text).trim();
}

const digit = (s: string, i: number): number => {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : NaN;
};

/**
 * What nearly every mailer writes, `Mon, 2 Nov 2026 10:00:00 +0000` (the
 * day name optional), read character by character; null for anything else,
 * which the general pattern then reads.
 */
function commonDate(s: string): number | null {
  let i = 0;
  const end = s.trimEnd().length;
  while (s.charCodeAt(i) === 32) i++;
  if (s.charCodeAt(i + 3) === 44 && s.charCodeAt(i + 4) === 32) i += 5;
  let day = digit(s, i++);
  if (s.charCodeAt(i) !== 32) day = day * 10 + digit(s, i++);
  if (s.charCodeAt(i) !== 32) return null;
  const month = MONTHS.get(s.slice(i + 1, i + 4).toLowerCase());
  i += 4;
  if (month === undefined || s.charCodeAt(i) !== 32) return null;
  const year = digit(s, i + 1) * 1000 + digit(s, i + 2) * 100 + digit(s, i + 3) * 10 + digit(s, i + 4);
  i += 5;
  if (s.charCodeAt(i) !== 32 || s.charCodeAt(i + 3) !== 58 || s.charCodeAt(i + 6) !== 58 || s.charCodeAt(i + 9) !== 32) return null;
  const hour = digit(s, i + 1) * 10 + digit(s, i + 2);
  const minute = digit(s, i + 4) * 10 + digit(s, i + 5);
  const second = digit(s, i + 7) * 10 + digit(s, i + 8);
  i += 10;
  const sign = s.charCodeAt(i) === 45 ? -1 : s.charCodeAt(i) === 43 ? 1 : 0;
  const zone = sign * ((digit(s, i + 1) * 10 + digit(s, i + 2)) * 60 + digit(s, i + 3) * 10 + digit(s, i + 4));
  if (i + 5 !== end || sign === 0) return null;
  const t = Date.UTC(year, month, day, hour, minute, second) - zone * 60_000;
  // NaN (a non-digit) or out of range: not this form.
  if (Number.isNaN(t) || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  return t;
}

/** The byte at `k`, or -1 from `stop` on, as a string's charCodeAt past its end reads NaN: neither matches anything. */
const byteAt = (raw: Buffer, k: number, stop: number): number => (k < stop ? raw[k]! : -1);
const digitAt = (raw: Buffer, k: number, stop: number): number => {
  const c = byteAt(raw, k, stop) - 48;
  return c >= 0 && c <= 9 ? c : NaN;
};
// Only ASCII letters fold, as String#toLowerCase does for all that can match a month name.
const lowerAscii = (c: number): number => (c >= 65 && c <= 90 ? c + 32 : c);
const MONTH_NAMES = 'janfebmaraprmayjunjulaugsepoctnovdec';

/** The month (0-11) whose name, any case, is the three bytes at `k`, or undefined (as `MONTHS`). */
function monthAt(raw: Buffer, k: number, stop: number): number | undefined {
  const a = lowerAscii(byteAt(raw, k, stop));
  const b = lowerAscii(byteAt(raw, k + 1, stop));
  const c = lowerAscii(byteAt(raw, k + 2, stop));
  for (let m = 0; m < 12; m++) {
    if (MONTH_NAMES.charCodeAt(3 * m) === a && MONTH_NAMES.charCodeAt(3 * m + 1) === b && MONTH_NAMES.charCodeAt(3 * m + 2) === c) return m;
  }
  return undefined;
}

/**
 * `commonDate` of `raw[start .. stop)` read as latin1, straight from the
 * bytes: no string per Date header when threading a whole mailbox. Null
 * whenever `commonDate` would be, and also for whatever it cannot tell
 * apart from the string form (then the caller reads the string), so an
 * answer it gives is always `commonDate`'s.
 */
function commonDateBytes(raw: Buffer, start: number, stop: number): number | null {
  let end = stop;
  // ASCII whitespace only: latin1 NBSP, which String#trimEnd also drops, leaves a non-digit last, so null.
  while (end > start && (raw[end - 1] === 32 || (raw[end - 1]! >= 9 && raw[end - 1]! <= 13))) end--;
  let i = start;
  while (byteAt(raw, i, stop) === 32) i++;
  if (byteAt(raw, i + 3, stop) === 44 && byteAt(raw, i + 4, stop) === 32) i += 5;
  let day = digitAt(raw, i++, stop);
  if (byteAt(raw, i, stop) !== 32) day = day * 10 + digitAt(raw, i++, stop);
  if (byteAt(raw, i, stop) !== 32) return null;
  const month = monthAt(raw, i + 1, stop);
  i += 4;
  if (month === undefined || byteAt(raw, i, stop) !== 32) return null;
  const year = digitAt(raw, i + 1, stop) * 1000 + digitAt(raw, i + 2, stop) * 100 + digitAt(raw, i + 3, stop) * 10 + digitAt(raw, i + 4, stop);
  i += 5;
  if (byteAt(raw, i, stop) !== 32 || byteAt(raw, i + 3, stop) !== 58 || byteAt(raw, i + 6, stop) !== 58 || byteAt(raw, i + 9, stop) !== 32) return null;
  const hour = digitAt(raw, i + 1, stop) * 10 + digitAt(raw, i + 2, stop);
  const minute = digitAt(raw, i + 4, stop) * 10 + digitAt(raw, i + 5, stop);
  const second = digitAt(raw, i + 7, stop) * 10 + digitAt(raw, i + 8, stop);
  i += 10;
  const sign = byteAt(raw, i, stop) === 45 ? -1 : byteAt(raw, i, stop) === 43 ? 1 : 0;
  const zone = sign * ((digitAt(raw, i + 1, stop) * 10 + digitAt(raw, i + 2, stop)) * 60 + digitAt(raw, i + 3, stop) * 10 + digitAt(raw, i + 4, stop));
  if (i + 5 !== end || sign === 0) return null;
  const t = Date.UTC(year, month, day, hour, minute, second) - zone * 60_000;
  if (Number.isNaN(t) || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  return t;
}

/** `parseDateHeader` of `raw[start .. stop)` read as latin1; the common form without making a string. */
export function parseDateBytes(raw: Buffer, start: number, stop: number): number | null {
  return commonDateBytes(raw, start, stop) ?? parseDateHeader(raw.toString('latin1', start, stop));
}
/**
 * An RFC 5322 date-time (obsolete forms included: two- and three-digit
 * years, named zones) as ms since the epoch, or null when it cannot be
 * parsed (RFC 5256 §2.2: then INTERNALDATE is used). A missing zone is
 * taken as +0000.
 */
export function parseDateHeader(value: string): number | null {
  const fast = commonDate(value);
  if (fast !== null) return fast;
  const f = dateFields(value);
  if (!f || f.day < 1 || f.day > 31 || f.hour > 23 || f.minute > 59 || f.second > 60) return null;
  return Date.UTC(f.year, f.month, f.day, f.hour, f.minute, f.second) - f.zone * 60_000;
}

/**
 * The message IDs of a header value: the contents of each `<...>`, with
 * whitespace (folding) removed; empty ones skipped, comments ignored. A
 * byte scan: References headers of a large mailbox are read in bulk.
 */
export function messageIds(value: Buffer, first = false, start = 0, stop = value.length): string[] {
  if (first) {
    const id = scanIds(value, start, stop, null);
    return id === null ? [] : [id];
  }
  const out: string[] = [];
  scanIds(value, start, stop, out);
  return out;
}

/** The first message ID of `value[start .. stop)` (as `messageIds`), or null; no array for it. */
export function firstMessageId(value: Buffer, start: number, stop: number): string | null {
  return scanIds(value, start, stop, null);
}

/** Pushes the IDs onto `out`; without `out`, returns the first instead (else null). */
function scanIds(value: Buffer, start: number, stop: number, out: string[] | null): string | null {
  let from = start;
  for (;;) {
    const id = nextId(value, from, stop);
    if (id === null || out === null) return id;
    out.push(id);
    from = nextIdEnd;
  }
}

/**
 * The IDs into `out` from index 0 on, returning the count: `out` is
 * scratch kept between calls (setting its length to 0 would let V8 drop its
 * room, and every message would grow it again).
 */
function scanIdsInto(value: Buffer, start: number, stop: number, out: string[]): number {
  let count = 0;
  let from = start;
  for (;;) {
    const id = nextId(value, from, stop);
    if (id === null) return count;
    out[count++] = id;
    from = nextIdEnd;
  }
}

/** Where the last ID `nextId` found ended: a number beside its result, not an object per ID. */
let nextIdEnd = 0;

/** The first ID in `value[start .. stop)`, or null (as `scanIds`); `nextIdEnd` is then the offset after it. */
function nextId(value: Buffer, start: number, stop: number): string | null {
  let depth = 0;
  for (let i = start; i < stop; i++) {
    const b = value[i]!;
    if (b === 40) depth++;
    else if (b === 41 && depth > 0) depth--;
    else if (b === 60 && depth === 0) {
      // One loop up to the `>` instead of native searches, which (given the whole raw message) could run
      // on into the body; it also notes what the regex \s matches in latin1, so most IDs skip it.
      let end = i + 1;
      let blank = false;
      for (; end < stop; end++) {
        const c = value[end]!;
        if (c === 62 || c === 60) break;
        if (c === 32 || (c >= 9 && c <= 13) || c === 0xa0) blank = true;
      }
      // `<a <b>`: the id starts at the last `<` before the `>`, which the loop reaches next (each byte is
      // scanned at most twice). With no `>` left no `<` can make an ID: the scan ends all the same.
      if (end < stop && value[end] === 60) continue;
      if (end >= stop) return null;
      let id = value.toString('latin1', i + 1, end);
      if (blank) id = id.replace(/\s+/g, '');
      if (id.length > 0) {
        nextIdEnd = end + 1;
        return id;
      }
      i = end;
    }
  }
  return null;
}

/** References, else the first ID of In-Reply-To, else none (RFC 5256 §3 step 1). */
function referencesOf(references: Buffer | null, inReplyTo: Buffer | null): readonly string[] {
  const ids = references === null ? NONE : messageIds(references);
  if (ids.length > 0) return ids;
  const first = inReplyTo === null ? undefined : messageIds(inReplyTo, true)[0];
  return first === undefined ? NONE : [first];
}

/** Shared by every message without references (most of a mailbox), never written to. */
const NONE: readonly string[] = Object.freeze([]);

/**
 * Per mailbox, the values of its messages. The values themselves live on
 * the messages (a memo: they depend on the raw bytes alone, so they never go
 * stale, leave with the message and carry over to its copies); what is kept
 * per server is only the scratch space of the header scans.
 */
export class SortKeys {
  private readonly keys = new MessageKeys();

  /** The values of the messages of one mailbox. */
  of(_mailbox: Mailbox): MessageKeys {
    return this.keys;
  }

  /** Nothing to drop: a memo goes with its message. */
  onChange(_change: StoreChange): void {}
}

/** Each message's values, made on first use: one array slot on the message, no lookup table. */
const VALUES = messageMemo<Entry>();
/** Each message's THREAD=REFERENCES links. */
const THREAD_VALUES = messageMemo<ThreadInfo>();

/** The values of messages. */
export class MessageKeys {
  /** Scratch for `headerRanges` of THREAD_FIELDS. */
  private readonly ranges = new Int32Array(THREAD_FIELDS.length * 2);
  /** Scratch for `headerRanges` of one field. */
  private readonly one = new Int32Array(2);
  /** Scratch for the IDs of a References field, copied out at their exact count. */
  private readonly ids: string[] = [];

  private entry(m: Message): Entry {
    let e = VALUES.get(m);
    if (e === undefined) {
      e = new Entry();
      VALUES.set(m, e);
    }
    return e;
  }

  private subjectOf(m: Message, e: Entry): void {
    // Offsets into a scratch array, not headerField: THREAD asks this of every root, SORT of every message.
    const r = this.one;
    const raw = m.raw;
    headerRanges(raw, SUBJECT_FIELD, r);
    const base = baseSubject(r[0]! < 0 ? null : headerTextRange(raw, r[0]!, r[1]!));
    e.subject = collationKey(base.text);
    e.replyOrForward = base.replyOrForward;
  }

  /** The base subject's collation key (RFC 5256 §2.1, i;unicode-casemap); "" without a Subject. */
  subject(m: Message): string {
    const e = this.entry(m);
    if (e.subject === undefined) this.subjectOf(m, e);
    return e.subject!;
  }

  /** True when the subject marks a reply or forward (RFC 5256 §3 REFERENCES step 5). */
  replyOrForward(m: Message): boolean {
    const e = this.entry(m);
    if (e.replyOrForward === undefined) this.subjectOf(m, e);
    return e.replyOrForward!;
  }

  /** The sent date (RFC 5256 §2.2): the Date: header in UTC, else INTERNALDATE. */
  sentDate(m: Message): number {
    const e = this.entry(m);
    if (e.date === undefined) {
      const raw = firstField(m, 'date');
      e.date = raw === null ? null : parseDateBytes(raw, 0, raw.length);
    }
    return e.date ?? m.internaldate.ms;
  }

  /** RFC822.SIZE. */
  size(m: Message): number {
    const e = this.entry(m);
    e.size ??= servedSize(m.raw);
    return e.size;
  }

  /** Collation key of the addr-mailbox (local part) of the header's first address; "" without one. */
  mailbox(m: Message, header: AddressHeader): string {
    const e = this.entry(m);
    let key = e[header];
    if (key === undefined) {
      const value = headerField(m.raw, header);
      key = collationKey(value === null ? '' : firstLocalPart(value));
      e[header] = key;
    }
    return key;
  }

  /**
   * Collation key of the first address's display sort value (RFC 5957 §3):
   * its display name RFC 2047 decoded when that is not empty, else
   * `mailbox@host` when both are non-NIL, else the mailbox alone (a group
   * start, `(NIL NIL "group" NIL)`, sorts by its undecoded group name);
   * "" without an address.
   */
  display(m: Message, header: 'from' | 'to'): string {
    const e = this.entry(m);
    const field = header === 'from' ? 'displayFrom' : 'displayTo';
    let key = e[field];
    if (key === undefined) {
      const a = firstAddress(m, header);
      let shown = '';
      if (a !== null) {
        shown = a.name === null ? '' : decodeHeaderValue(a.name);
        if (shown === '') {
          const local = text(a.mailbox);
          const host = text(a.domain);
          shown = a.domain === null ? local : `${local}@${host}`;
        }
      }
      key = collationKey(shown);
      e[field] = key;
    }
    return key;
  }

  /**
   * The date and links THREAD=REFERENCES needs of every message, with one
   * lookup and one header scan (subjects are needed only for the roots).
   */
  threadInfo(m: Message): ThreadInfo {
    let info = THREAD_VALUES.get(m);
    if (info === undefined) {
      const r = this.ranges;
      const raw = m.raw;
      headerRanges(raw, THREAD_FIELDS, r);
      const date = r[0]! < 0 ? null : parseDateBytes(raw, r[0]!, r[1]!);
      const messageId = r[2]! < 0 ? null : firstMessageId(raw, r[2]!, r[3]!);
      let references: readonly string[] = NONE;
      if (r[4]! >= 0) {
        // Gathered in scratch and copied at their count: an array grown by push keeps room for 17.
        const ids = this.ids;
        const count = scanIdsInto(raw, r[4]!, r[5]!, ids);
        if (count > 0) references = ids.slice(0, count);
      }
      if (references.length === 0 && r[6]! >= 0) {
        const reply = firstMessageId(raw, r[6]!, r[7]!);
        if (reply !== null) references = [reply];
      }
      info = new ThreadInfo(date, messageId, references);
      THREAD_VALUES.set(m, info);
    }
    return info;
  }

  /** The Message-ID (RFC 5256 §3 REFERENCES step 1), or null without a valid one. */
  messageId(m: Message): string | null {
    const e = this.entry(m);
    if (e.messageId === undefined) {
      const raw = firstField(m, 'message-id');
      e.messageId = raw === null ? null : firstMessageId(raw, 0, raw.length);
    }
    return e.messageId;
  }

  /**
   * The message's references (RFC 5256 §3 step 1): the IDs of References in
   * order, or, when it has none, the first ID of In-Reply-To; else none.
   */
  references(m: Message): readonly string[] {
    const e = this.entry(m);
    if (e.references === undefined) {
      const [refs, reply] = headerFields(m.raw, ['references', 'in-reply-to']);
      e.references = referencesOf(refs!, reply!);
    }
    return e.references;
  }
}

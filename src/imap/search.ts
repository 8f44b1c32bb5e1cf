/**
 * SEARCH evaluation (RFC 3501 §6.4.4): every key over a session's view.
 * Text keys match case-insensitively over decoded text (RFC 2047 headers,
 * transfer- and charset-decoded bodies), as Dovecot does.
 */
import { bodyText, decodeHeaderValue, getMime, headerBlock, headerValues, parseAddressList } from '../mime/index.js';
import type { Message } from '../store/message.js';
import { failBad } from './command.js';
import type { SelectedMailbox } from './selected.js';
import { resolveSet, searchSequenceRanges } from './sequence.js';
import type { SearchDate, SearchKey } from './syntax.js';
import { casemap } from '../util/casemap.js';

/** Charsets SEARCH accepts; others get NO [BADCHARSET]. */
export const SEARCH_CHARSETS = ['US-ASCII', 'UTF-8'];

/** Decodes a search string of the command's charset. */
export function decodeSearchString(value: Buffer, charset: string | null): string {
  const name = (charset ?? 'US-ASCII').toUpperCase();
  if (name === 'US-ASCII' || name === 'UTF-8') return value.toString('utf8');
  return new TextDecoder(name).decode(value);
}

/** Substring keys match under i;unicode-casemap (RFC 5051; RFC 5255 §4.2 for I18NLEVEL=1). */
const fold = casemap;

function dayNumber(d: SearchDate): number {
  return Date.UTC(d.year, d.month - 1, d.day) / 86_400_000;
}

/** The calendar day of an instant in the zone it was given in. */
function localDay(ms: number, tzMinutes: number): number {
  return Math.floor((ms + tzMinutes * 60_000) / 86_400_000);
}

const DATE_HEADER = /(\d{1,2})\s+([A-Za-z]{3})[a-z]*\s+(\d{2,4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([+-]\d{4}|[A-Za-z]+)?)?/;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** The day of the Date: header, in the header's own zone (RFC 3501 ignores time and zone), or null. */
function sentDay(m: Message): number | null {
  const value = headerValues(getMime(m.raw), m.raw, 'date')[0];
  if (!value) return null;
  const match = DATE_HEADER.exec(value);
  if (!match) return null;
  const month = MONTHS.indexOf(match[2]!.toLowerCase());
  if (month < 0) return null;
  let year = Number(match[3]);
  if (year < 50) year += 2000;
  else if (year < 1000) year += 1900;
  return Date.UTC(year, month, Number(match[1])) / 86_400_000;
}

function compareDay(day: number | null, op: 'before' | 'on' | 'since', target: number): boolean {
  if (day === null) return false;
  return op === 'before' ? day < target : op === 'on' ? day === target : day >= target;
}

/** Evaluates a search program; returns matching messages with sequence numbers, ascending. */
export class SearchEvaluator {
  /** Sequence number of the message being matched (set by `run`). */
  private seq = 0;
  private readonly textCache = new Map<Message, string>();
  private readonly setCache = new Map<SearchKey, Set<number>>();

  constructor(
    private readonly selected: SelectedMailbox,
    private readonly charset: string | null,
    /** Matcher of extension SEARCH keys (`type: 'extension'`). */
    private readonly extension: (name: string, message: Message, data: unknown) => boolean = () => false,
    /** The `$` variable (RFC 5182) may be used; without it `$` is BAD. */
    private readonly resultVariable = false,
  ) {}

  run(key: SearchKey): { seq: number; message: Message }[] {
    const out: { seq: number; message: Message }[] = [];
    const selected = this.selected;
    const view = selected.view;
    // SORT and THREAD of a whole large mailbox search ALL: a plain loop, and no lookups when nothing is pending.
    const pending = selected.hasExpungesPending;
    for (let i = 0; i < view.length; i++) {
      const message = view[i]!;
      if (pending && selected.isExpungedPending(message.uid)) continue;
      this.seq = i + 1;
      if (this.matches(key, message)) out.push({ seq: i + 1, message });
    }
    return out;
  }

  private text(value: Buffer): string {
    return fold(decodeSearchString(value, this.charset));
  }

  private bodyOf(m: Message): string {
    let text = this.textCache.get(m);
    if (text === undefined) {
      text = fold(bodyText(getMime(m.raw), m.raw));
      this.textCache.set(m, text);
    }
    return text;
  }

  private header(m: Message, name: string): string[] {
    return headerValues(getMime(m.raw), m.raw, name).map(fold);
  }

  private inSet(key: SearchKey & { type: 'seq' | 'uid' }, m: Message): boolean {
    let set = this.setCache.get(key);
    if (!set) {
      if (key.set.searchResult && !this.resultVariable) failBad('$ needs SEARCHRES');
      set = new Set(resolveSetLenient(key, this.selected));
      this.setCache.set(key, set);
    }
    return set.has(key.type === 'uid' ? m.uid : this.seq);
  }

  matches(key: SearchKey, m: Message): boolean {
    switch (key.type) {
      case 'all':
        return true;
      case 'flag':
        if (key.flag === '\\Recent') return this.selected.recent.has(m.uid) === key.set;
        return m.flags.has(key.flag) === key.set;
      case 'text': {
        const needle = this.text(key.value);
        switch (key.field) {
          case 'BODY':
            return this.bodyOf(m).includes(needle);
          case 'TEXT':
            return this.bodyOf(m).includes(needle) || headerText(m).includes(needle);
          case 'SUBJECT':
            return this.header(m, 'subject').some((v) => v.includes(needle));
          default:
            // FROM, TO, CC, BCC: the header text, or any parsed address.
            return (
              this.header(m, key.field.toLowerCase()).some((v) => v.includes(needle)) ||
              addressTexts(m, key.field.toLowerCase()).some((v) => v.includes(needle))
            );
        }
      }
      case 'header': {
        const needle = this.text(key.value);
        const values = this.header(m, key.field.toLowerCase());
        return needle === '' ? values.length > 0 : values.some((v) => v.includes(needle));
      }
      case 'date': {
        const target = dayNumber(key.date);
        const day = key.field === 'internal' ? localDay(m.internaldate.ms, m.internaldate.tz) : sentDay(m);
        return compareDay(day, key.op, target);
      }
      case 'size':
        return key.op === 'larger' ? m.size > key.size : m.size < key.size;
      case 'seq':
      case 'uid':
        return this.inSet(key, m);
      case 'not':
        return !this.matches(key.key, m);
      case 'or':
        return this.matches(key.left, m) || this.matches(key.right, m);
      case 'and':
        return key.keys.every((k) => this.matches(k, m));
      case 'modseq':
        return m.modseq >= key.modseq;
      case 'extension':
        return this.extension(key.name, m, key.data);
      default:
        return false;
    }
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Address bytes as text: UTF-8 (Latin-1 when not valid UTF-8), line breaks removed. */
function addressPart(value: Buffer): string {
  let text: string;
  try {
    text = strictUtf8.decode(value);
  } catch {
    text = value.toString('latin1');
  }
  return text.replace(/[\r\n]/g, '');
}

/**
 * What FROM/TO/CC/BCC match besides the header text, as Dovecot does:
 * every address of every such field parsed (RFC 5322, comments and
 * routes dropped) as `mailbox@host`, and its display name decoded, so
 * `<user (comment)@ (comment) example.org>` matches `user@example.org`.
 */
function addressTexts(m: Message, name: string): string[] {
  const out: string[] = [];
  for (const field of getMime(m.raw).fields) {
    if (field.key !== name) continue;
    for (const a of parseAddressList(field.value) ?? []) {
      // Group markers and the parser's MISSING_* stand-ins (strings) are no address.
      if (Buffer.isBuffer(a.mailbox) && Buffer.isBuffer(a.domain)) out.push(fold(`${addressPart(a.mailbox)}@${addressPart(a.domain)}`));
      if (a.name !== null) out.push(fold(decodeHeaderValue(a.name)));
    }
  }
  return out;
}

/** The whole header, RFC 2047 words decoded, for the TEXT key. */
function headerText(m: Message): string {
  return fold(decodeHeaderValue(headerBlock(m.raw, getMime(m.raw))));
}

/** Sequence sets inside SEARCH never fail: numbers beyond the mailbox match nothing (searchSequenceRanges). */
function resolveSetLenient(key: SearchKey & { type: 'seq' | 'uid' }, selected: SelectedMailbox): number[] {
  if (key.type === 'uid') return resolveSet(key.set, selected, true).map((n) => n.message.uid);
  if (key.set.searchResult) return resolveSet(key.set, selected, false).map((x) => x.seq);
  const ranges = searchSequenceRanges(key.set, selected.exists);
  return resolveSet({ ranges, searchResult: false }, selected, false).map((x) => x.seq);
}

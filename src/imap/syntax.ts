/**
 * The typed shapes of IMAP command arguments (what `ArgParser` in
 * `./parser.ts` produces) plus a few pure helpers that turn them back into
 * protocol text (response labels, sequence sets).
 *
 * Conventions:
 * - Keywords of the protocol (fetch items, section texts, status items,
 *   header field names) are uppercased; flags are in canonical case for
 *   system flags, as sent for keywords.
 * - String arguments whose charset is only known later (SEARCH strings,
 *   header values) are kept as the raw `Buffer` the client sent; the caller
 *   decodes them with the CHARSET of the command.
 */

// ---------------------------------------------------------------------------
// Sequence sets

/** A message sequence number or UID; `'*'` is the largest one in the mailbox. */
export type SeqNumber = number | '*';

/**
 * One element of a sequence set. A single number `n` is `{start: n, end: n}`.
 * `start` may be larger than `end` (`5:2` means the same as `2:5`): the
 * order is kept as the client sent it.
 */
export interface SeqRange {
  start: SeqNumber;
  end: SeqNumber;
}

export interface SequenceSet {
  ranges: SeqRange[];
  /** True for `$` (RFC 5182: the result of the last `SEARCH ... RETURN (SAVE)`); `ranges` is then empty. */
  searchResult: boolean;
}

// ---------------------------------------------------------------------------
// FETCH

/** Section text keywords (RFC 3501 section-msgtext / section-text). */
export type SectionText = 'HEADER' | 'HEADER.FIELDS' | 'HEADER.FIELDS.NOT' | 'TEXT' | 'MIME';

/**
 * A body section: `BODY[1.2.HEADER.FIELDS (SUBJECT)]` is
 * `{ part: [1, 2], text: 'HEADER.FIELDS', fields: ['SUBJECT'] }`; `BODY[]`
 * is `{ part: [] }`. `MIME` only occurs with a non-empty `part`; `fields`
 * only with the two `HEADER.FIELDS` texts (uppercased, at least one).
 */
export interface Section {
  part: number[];
  text?: SectionText;
  fields?: string[];
}

/** `<offset.length>` of a FETCH item; `length` is at least 1. */
export interface Partial {
  offset: number;
  length: number;
}

/** FETCH items without arguments. */
export type SimpleFetchName =
  | 'FLAGS'
  | 'INTERNALDATE'
  | 'RFC822.SIZE'
  | 'ENVELOPE'
  | 'UID'
  | 'BODYSTRUCTURE'
  | 'BODY'
  | 'RFC822'
  | 'RFC822.HEADER'
  | 'RFC822.TEXT'
  | 'MODSEQ';

/**
 * Every variant carries `label`, the item name the FETCH response must use
 * for it: `BODY.PEEK[HEADER.FIELDS (subject)]<0.100>` has the label
 * `BODY[HEADER.FIELDS (SUBJECT)]<0>`.
 */
export type FetchAttribute =
  | { type: SimpleFetchName; label: string }
  /** `BODY[section]<partial>` or `BODY.PEEK[...]` (`peek`). */
  | { type: 'BODY[]'; peek: boolean; section: Section; partial: Partial | null; label: string }
  /**
   * An extension item the caller allowed (e.g. `X-GM-LABELS`); `name`
   * uppercased. `data` is what the item's argument parser read, `seen` true
   * when reading it sets \Seen (see `FetchItemArguments`).
   */
  | { type: 'OTHER'; name: string; label: string; data?: unknown; seen?: boolean };

// ---------------------------------------------------------------------------
// SEARCH

/** A calendar date of SEARCH (`1-Feb-2024`), month 1-12. */
export interface SearchDate {
  year: number;
  month: number;
  day: number;
}

/** Header-based string keys of RFC 3501 that have a key name of their own. */
export type SearchStringField = 'BCC' | 'CC' | 'FROM' | 'TO' | 'SUBJECT' | 'BODY' | 'TEXT';

/**
 * A SEARCH criterion. Mapping of the RFC 3501 keys:
 * - ALL → `all`
 * - ANSWERED/DELETED/DRAFT/FLAGGED/SEEN/RECENT, KEYWORD k → `flag` (set: true);
 *   UN… forms, UNKEYWORD and OLD (= not \Recent) → `flag` (set: false);
 *   NEW → `and` of \Recent set and \Seen unset
 * - BCC/CC/FROM/TO/SUBJECT/BODY/TEXT → `text`; HEADER f v → `header`
 * - BEFORE/ON/SINCE → `date` on the internal date; SENT… on the Date: header
 * - LARGER/SMALLER → `size`; UID → `uid`; a bare set → `seq`
 * - NOT/OR/parentheses → `not`/`or`/`and`
 * - MODSEQ (RFC 7162)
 * - keys registered through `ArgParserOptions.searchKeys` → whatever their
 *   parser returns, usually `extension`.
 *
 * String values are raw bytes (`Buffer`) to be decoded with the charset.
 */
export type SearchKey =
  | { type: 'all' }
  | { type: 'flag'; flag: string; set: boolean }
  | { type: 'text'; field: SearchStringField; value: Buffer }
  | { type: 'header'; field: string; value: Buffer }
  | { type: 'date'; field: 'internal' | 'sent'; op: 'before' | 'on' | 'since'; date: SearchDate }
  | { type: 'size'; op: 'larger' | 'smaller'; size: number }
  | { type: 'seq'; set: SequenceSet }
  | { type: 'uid'; set: SequenceSet }
  | { type: 'not'; key: SearchKey }
  | { type: 'or'; left: SearchKey; right: SearchKey }
  | { type: 'and'; keys: SearchKey[] }
  | { type: 'modseq'; modseq: number; entry: { name: string; kind: 'priv' | 'shared' | 'all' } | null }
  | { type: 'extension'; name: string; data: unknown };

export interface SearchProgram {
  /** The CHARSET argument as sent, or null when absent. */
  charset: string | null;
  /** All keys of the program; several top-level keys are wrapped in an `and`. */
  keys: SearchKey;
}

// ---------------------------------------------------------------------------
// STATUS

export const STATUS_ATTRIBUTES = [
  'MESSAGES',
  'RECENT',
  'UIDNEXT',
  'UIDVALIDITY',
  'UNSEEN',
  'HIGHESTMODSEQ',
  'SIZE',
  'APPENDLIMIT',
  'DELETED',
] as const;

export type StatusAttribute = (typeof STATUS_ATTRIBUTES)[number];

// ---------------------------------------------------------------------------
// Flags

/** System flags in canonical case (RFC 3501 §2.3.2). */
export const SYSTEM_FLAGS = ['\\Answered', '\\Flagged', '\\Deleted', '\\Seen', '\\Draft', '\\Recent'] as const;

export type SystemFlag = (typeof SYSTEM_FLAGS)[number];

// ---------------------------------------------------------------------------
// Helpers turning syntax back into protocol text

const ATOM_SAFE = /^[!#$&'+-[^-z|}~]+$/;

function headerFieldText(name: string): string {
  // Field names are atoms in practice; anything else goes out quoted.
  if (ATOM_SAFE.test(name)) return name;
  return `"${name.replace(/["\\]/g, '\\$&')}"`;
}

/** The text between the brackets of a section: `1.2.HEADER.FIELDS (SUBJECT FROM)`, `` for `[]`. */
export function formatSection(section: Section): string {
  let out = section.part.join('.');
  if (section.text !== undefined) {
    if (out.length > 0) out += '.';
    out += section.text;
    if (section.fields !== undefined) out += ` (${section.fields.map(headerFieldText).join(' ')})`;
  }
  return out;
}

/** `1:3,5,7:*`; `$` for a search-result reference. */
export function formatSequenceSet(set: SequenceSet): string {
  if (set.searchResult) return '$';
  return set.ranges.map((r) => (r.start === r.end ? String(r.start) : `${r.start}:${r.end}`)).join(',');
}

/**
 * Compresses numbers into sequence-set text, keeping their order
 * (`[1,2,3,7,6,5]` → `1:3,7:5`), as COPYUID and ESEARCH responses want it.
 * Returns `''` for no numbers.
 */
export function compressNumbers(numbers: readonly number[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < numbers.length) {
    const start = numbers[i]!;
    let end = start;
    let j = i + 1;
    if (j < numbers.length && Math.abs(numbers[j]! - end) === 1) {
      const step = numbers[j]! - end;
      while (j < numbers.length && numbers[j]! - end === step) {
        end = numbers[j]!;
        j++;
      }
    }
    out.push(start === end ? String(start) : `${start}:${end}`);
    i = j;
  }
  return out.join(',');
}

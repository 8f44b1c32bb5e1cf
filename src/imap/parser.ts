/**
 * The IMAP argument grammar (RFC 3501 / 9051 and the extensions the server
 * speaks), in one place: commands read their arguments through an
 * `ArgParser` and never slice strings themselves.
 *
 * The parser walks the `Segment[]` of one command as the reader framed it:
 * text pieces with literals in between. Every method either consumes what
 * it parsed or throws a `ParseError` whose message is fit for the text of a
 * tagged BAD.
 */
import { parseInternalDate, type InternalDate } from '../store/internal-date.js';
import { encodeMutf7, isValidMutf7 } from '../store/mutf7.js';
import {
  STATUS_ATTRIBUTES,
  formatSection,
  type FetchAttribute,
  type Partial,
  type SearchDate,
  type SearchKey,
  type SearchProgram,
  type SearchStringField,
  type Section,
  type SectionText,
  type SeqNumber,
  type SeqRange,
  type SequenceSet,
  type SimpleFetchName,
  type StatusAttribute,
} from './syntax.js';
import { LiteralSegment, type Segment } from './wire/reader.js';

/** A syntax error in a command; `message` is the text for the BAD response. */
export class ParseError extends Error {
  constructor(message: string) {
    // Malformed input becomes a BAD, never a report with a stack: capturing one made each throw about
    // 4x dearer (200,000 throws: 433 -> 100 ms), and a flood of bad commands is what the fuzzer and abusers send.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'ParseError';
  }
}

/** Parses the arguments of an extension search key; the cursor is right after the key's name. */
export type SearchKeyParser = (parser: ArgParser, name: string) => SearchKey;

export interface ArgParserOptions {
  /** Deepest nesting of lists and search keys. Default 100. */
  maxNesting?: number;
  /**
   * UTF8=ACCEPT (RFC 6855) is in effect: 8-bit UTF-8 is allowed in quoted
   * strings and mailbox names are UTF-8, not modified UTF-7.
   */
  utf8?: boolean;
  /**
   * False when the session has no \Recent (IMAP4rev2, RFC 9051): the
   * STATUS item RECENT and the SEARCH keys RECENT, NEW and OLD are not in
   * its grammar and make the command BAD. Default true.
   */
  recent?: boolean;
  /** Delimiter after INBOX for `inbox/x` → `INBOX/x`. Default `/`. */
  inboxDelimiter?: string;
  /** Extra SEARCH keys by uppercase name (e.g. `X-GM-RAW`), tried after the built-in ones. */
  searchKeys?: ReadonlyMap<string, SearchKeyParser>;
  /** `literal()` also takes a literal8 (`~{n}`): a loaded extension's grammar allows one there. Default false. */
  literal8?: boolean;
  /**
   * Leniency a real server shows (ServerOptions.leniency, set by a preset):
   * 8-bit octets in quoted strings without UTF8=ACCEPT, taken as they are
   * (well-formed UTF-8, as RFC 6855 asks; mailbox names must still be
   * modified UTF-7). Default false.
   */
  eightBitQuoted?: boolean;
  /** A backslash in a quoted string escapes any character, not only `"` and `\`. Default false. */
  anyEscape?: boolean;
  /** Runs of spaces where one is due, spaces just inside list parentheses, and spaces at the end. Default false. */
  extraSpaces?: boolean;
  /** A sequence set may end in a comma (`1,2,`). Default false. */
  trailingComma?: boolean;
}

export interface FlagOptions {
  /** Accept `\*` (only PERMANENTFLAGS-like contexts). Default false. */
  allowWildcard?: boolean;
  /** Accept `\Recent` (not in STORE or APPEND). Default false. */
  allowRecent?: boolean;
  /** Accept unknown `\Name` flags (flag-extension). Default false. */
  allowExtension?: boolean;
}

export interface MailboxOptions {
  /** Check the name is canonical modified UTF-7. Default true. */
  validate?: boolean;
  /** The name is a LIST reference or pattern: same as `validate: false`. */
  pattern?: boolean;
}

/** What the argument parser of an extension FETCH item read (`BINARY[1]<0.10>`, `PREVIEW (LAZY)`). */
export interface FetchItemArguments {
  /** Kept in the item as `data`. */
  data?: unknown;
  /** Name in the response; default: the item name. */
  label?: string;
  /** Reading the item sets \Seen. */
  setsSeen?: boolean;
}

/** Reads an extension FETCH item's arguments; the cursor is right after `name` (upper case). */
export type FetchItemParser = (parser: ArgParser, name: string) => FetchItemArguments;

export interface FetchOptions {
  /** Extension items to accept as `OTHER` (e.g. `X-GM-LABELS`), compared case-insensitively. */
  extensions?: Iterable<string>;
  /** Extension items by upper-case name, with the parser of their arguments (null: they take none). */
  items?: ReadonlyMap<string, FetchItemParser | null>;
}

export interface ListOptions {
  /** Accept `()`. Default true. */
  allowEmpty?: boolean;
}

// ---------------------------------------------------------------------------
// Character classes (RFC 3501 §9)

const SP = 0x20;
const DQUOTE = 0x22;
const BACKSLASH = 0x5c;
const LPAREN = 0x28;
const RPAREN = 0x29;
const MAX_UINT32 = 4294967295;

/**
 * Character classes of the grammar, one bit each in a table of the 256
 * octets: scanning tests `CLASS[c] & mask` in one loop, instead of calling
 * a predicate per character through a call site every class shares (which
 * V8 cannot inline: a tag and a command name cost a call per octet).
 */
const ATOM = 1;
const ASTRING = 2;
const TAG = 4;
const LIST = 8;
const DIGIT = 16;
const FETCH_NAME = 32;
const FIELD_NAME = 64;
/** Letters and `.`: the words of a section text (`HEADER.FIELDS.NOT`). */
const SECTION_WORD = 128;
const CLASS = /* @__PURE__ */ (() => {
  const table = new Uint8Array(256);
  for (let c = 0; c < 256; c++) {
    // ATOM-CHAR: any CHAR except atom-specials `( ) { SP CTL % * " \ ]`.
    const atom = c > 0x20 && c < 0x7f && c !== LPAREN && c !== RPAREN && c !== 0x7b && c !== 0x25 && c !== 0x2a && c !== DQUOTE && c !== BACKSLASH && c !== 0x5d;
    const astring = atom || c === 0x5d;
    let bits = 0;
    if (atom) bits |= ATOM;
    if (astring) bits |= ASTRING;
    if (astring && c !== 0x2b) bits |= TAG;
    if (astring || c === 0x25 || c === 0x2a) bits |= LIST;
    if (c >= 0x30 && c <= 0x39) bits |= DIGIT;
    // Fetch item names stop before `[` and `<`, which are atom chars.
    if (atom && c !== 0x5b && c !== 0x3c) bits |= FETCH_NAME;
    // RFC 5322 ftext: printable ASCII except `:`.
    if (c > 0x20 && c < 0x7f && c !== 0x3a) bits |= FIELD_NAME;
    if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2e) bits |= SECTION_WORD;
    table[c] = bits;
  }
  return table;
})();

const isDigit = (c: number): boolean => (CLASS[c]! & DIGIT) !== 0;
const isFieldNameChar = (c: number): boolean => (CLASS[c]! & FIELD_NAME) !== 0;

/** Upper-cases ASCII letters only (not `ß` or `ı`, as toUpperCase would); the string itself when it has none. */
function asciiUpper(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x61 && c <= 0x7a) return s.slice(0, i) + s.slice(i).replace(/[a-z]+/g, (m) => m.toUpperCase());
  }
  return s;
}

/** Shortens client text quoted in an error message. */
const clip = (s: string): string => (s.length > 40 ? `${s.slice(0, 40)}...` : s);

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

function canonicalSystemFlag(upper: string): string | null {
  switch (upper) {
    case 'ANSWERED':
      return '\\Answered';
    case 'FLAGGED':
      return '\\Flagged';
    case 'DELETED':
      return '\\Deleted';
    case 'SEEN':
      return '\\Seen';
    case 'DRAFT':
      return '\\Draft';
    case 'RECENT':
      return '\\Recent';
    default:
      return null;
  }
}

/** `INBOX` in any case becomes `INBOX`, also as the first level of a name (`inbox/x` → `INBOX/x`). */
export function normalizeMailboxName(name: string, delimiter = '/'): string {
  if (name.length < 5) return name;
  const head = name.slice(0, 5);
  if (head === 'INBOX' && (name.length === 5 || name.startsWith(delimiter, 5))) return name;
  if (head.toUpperCase() !== 'INBOX') return name;
  if (name.length === 5) return 'INBOX';
  if (delimiter.length > 0 && name.startsWith(delimiter, 5)) return 'INBOX' + name.slice(5);
  return name;
}

const SIMPLE_FETCH: ReadonlySet<string> = new Set<SimpleFetchName>([
  'FLAGS',
  'INTERNALDATE',
  'RFC822.SIZE',
  'ENVELOPE',
  'UID',
  'BODYSTRUCTURE',
  'BODY',
  'RFC822',
  'RFC822.HEADER',
  'RFC822.TEXT',
  'MODSEQ',
]);

const simple = (type: SimpleFetchName): FetchAttribute => ({ type, label: type });

const FLAG_KEYS: Readonly<Record<string, [flag: string, set: boolean]>> = {
  ANSWERED: ['\\Answered', true],
  DELETED: ['\\Deleted', true],
  DRAFT: ['\\Draft', true],
  FLAGGED: ['\\Flagged', true],
  SEEN: ['\\Seen', true],
  RECENT: ['\\Recent', true],
  OLD: ['\\Recent', false],
  UNANSWERED: ['\\Answered', false],
  UNDELETED: ['\\Deleted', false],
  UNDRAFT: ['\\Draft', false],
  UNFLAGGED: ['\\Flagged', false],
  UNSEEN: ['\\Seen', false],
};

const TEXT_KEYS: ReadonlySet<string> = new Set<SearchStringField>(['BCC', 'CC', 'FROM', 'TO', 'SUBJECT', 'BODY', 'TEXT']);

const DATE_KEYS: Readonly<Record<string, [field: 'internal' | 'sent', op: 'before' | 'on' | 'since']>> = {
  BEFORE: ['internal', 'before'],
  ON: ['internal', 'on'],
  SINCE: ['internal', 'since'],
  SENTBEFORE: ['sent', 'before'],
  SENTON: ['sent', 'on'],
  SENTSINCE: ['sent', 'since'],
};

const EMPTY: Buffer = Buffer.alloc(0);

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isUtf8(bytes: Buffer): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Characters RFC 6855 §3 forbids in a UTF-8 mailbox name: C0/C1 controls, DEL, U+2028, U+2029. */
const FORBIDDEN_IN_NAME = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** A mailbox name sent as UTF-8 (RFC 6855 §3); malformed UTF-8 and forbidden characters are BAD. */
function utf8MailboxName(raw: Buffer): string {
  let name: string;
  try {
    name = strictUtf8.decode(raw);
  } catch {
    throw new ParseError('Invalid UTF-8 in mailbox name');
  }
  if (FORBIDDEN_IN_NAME.test(name)) throw new ParseError('Mailbox name contains a control character');
  return name;
}

export class ArgParser {
  /** Text pieces; `literals[i]` sits between `texts[i]` and `texts[i + 1]`. */
  private readonly texts: Buffer[];
  private readonly literals: LiteralSegment[];
  private seg = 0;
  private text: Buffer;
  private pos = 0;
  private depth = 0;
  private readonly maxNesting: number;
  private readonly utf8: boolean;
  private readonly recent: boolean;
  private readonly inboxDelimiter: string;
  private readonly searchKeys: ReadonlyMap<string, SearchKeyParser> | undefined;
  private readonly literal8: boolean;
  private readonly eightBitQuoted: boolean;
  private readonly anyEscape: boolean;
  private readonly extraSpaces: boolean;
  private readonly trailingComma: boolean;

  constructor(segments: readonly Segment[], options: ArgParserOptions = {}) {
    // Normalize to text, literal, text, ..., text.
    const texts: Buffer[] = [];
    const literals: LiteralSegment[] = [];
    let pending: Buffer | null = null;
    for (const seg of segments) {
      if (seg instanceof LiteralSegment) {
        texts.push(pending ?? EMPTY);
        literals.push(seg);
        pending = null;
      } else {
        pending = pending === null ? seg : Buffer.concat([pending, seg]);
      }
    }
    texts.push(pending ?? EMPTY);
    this.extraSpaces = options.extraSpaces ?? false;
    if (this.extraSpaces) {
      // Trailing spaces end nothing: dropped, so every rule that looks for the end finds it.
      const last = texts[texts.length - 1]!;
      let e = last.length;
      while (e > 0 && last[e - 1] === SP) e--;
      if (e < last.length) texts[texts.length - 1] = last.subarray(0, e);
    }
    this.texts = texts;
    this.literals = literals;
    this.text = texts[0]!;
    this.maxNesting = options.maxNesting ?? 100;
    this.utf8 = options.utf8 ?? false;
    this.recent = options.recent ?? true;
    this.inboxDelimiter = options.inboxDelimiter ?? '/';
    this.searchKeys = options.searchKeys;
    this.literal8 = options.literal8 ?? false;
    this.eightBitQuoted = options.eightBitQuoted ?? false;
    this.anyEscape = options.anyEscape ?? false;
    this.trailingComma = options.trailingComma ?? false;
  }

  /** A parser over one line without literals (handy for tests and internal use). */
  static from(line: string | Buffer, options?: ArgParserOptions): ArgParser {
    return new ArgParser([typeof line === 'string' ? Buffer.from(line, 'utf8') : line], options);
  }

  // -------------------------------------------------------------------------
  // Cursor

  /** Byte at the cursor; -1 at the end of a text piece (a literal or the end follows). */
  private cur(): number {
    return this.pos < this.text.length ? this.text[this.pos]! : -1;
  }

  /** The end of the run of octets of the class `mask` (CLASS bits) from `pos`. */
  private scan(mask: number): number {
    const t = this.text;
    let i = this.pos;
    while (i < t.length && (CLASS[t[i]!]! & mask) !== 0) i++;
    return i;
  }

  private fail(message: string): never {
    throw new ParseError(this.atEnd() ? 'Missing argument' : message);
  }

  /** True when the whole command has been consumed. */
  atEnd(): boolean {
    return this.pos >= this.text.length && this.seg >= this.literals.length;
  }

  /** Throws unless the whole command has been consumed. */
  end(): void {
    if (!this.atEnd()) throw new ParseError('Too many arguments');
  }

  /** True when a literal is next. */
  isAtLiteral(): boolean {
    return this.pos >= this.text.length && this.seg < this.literals.length;
  }

  /** The next character, or null before a literal or at the end. */
  peekChar(): string | null {
    const c = this.cur();
    return c < 0 ? null : String.fromCharCode(c);
  }

  /** The atom at the cursor uppercased, without consuming it; null when no atom is next. */
  peekAtom(): string | null {
    const e = this.scan(ATOM);
    return e === this.pos ? null : asciiUpper(this.text.toString('latin1', this.pos, e));
  }

  /** True when `text` (ASCII, compared case-insensitively) comes next in the current text piece; consumes nothing. */
  lookingAt(text: string): boolean {
    if (this.pos + text.length > this.text.length) return false;
    return asciiUpper(this.text.toString('latin1', this.pos, this.pos + text.length)) === asciiUpper(text);
  }

  /** Consumes `ch` when it is next. */
  tryChar(ch: string): boolean {
    if (this.cur() !== ch.charCodeAt(0)) return false;
    this.pos++;
    return true;
  }

  /** Expects the character `ch`. */
  char(ch: string, message = `Expected ${ch}`): void {
    if (!this.tryChar(ch)) this.fail(message);
  }

  /** Expects exactly one space (one or more with `extraSpaces`). */
  sp(): void {
    if (!this.spaces()) this.fail('Expected space');
  }

  /** Exactly one space, whatever the leniency: the separators of tag and command name (Dovecot is strict there too). */
  singleSp(): void {
    if (this.cur() !== SP) this.fail('Expected space');
    this.pos++;
  }

  /** Consumes a space when one is next (a run of them with `extraSpaces`). */
  trySp(): boolean {
    return this.spaces();
  }

  /** The separator between two items: one space, or with `extraSpaces` every space in a row. */
  private spaces(): boolean {
    if (this.cur() !== SP) return false;
    this.pos++;
    if (this.extraSpaces) while (this.cur() === SP) this.pos++;
    return true;
  }

  /** With `extraSpaces`, steps over spaces right after `(` or right before `)`. */
  private padding(): void {
    if (this.extraSpaces) while (this.cur() === SP) this.pos++;
  }

  /** Consumes the atom `word` (case-insensitive) when it is next as a whole atom. */
  tryKeyword(word: string): boolean {
    const e = this.scan(ATOM);
    if (e - this.pos !== word.length) return false;
    if (asciiUpper(this.text.toString('latin1', this.pos, e)) !== asciiUpper(word)) return false;
    this.pos = e;
    return true;
  }

  /** Expects the atom `word` (case-insensitive). */
  keyword(word: string): void {
    if (!this.tryKeyword(word)) this.fail(`Expected ${word}`);
  }

  /** Runs `fn` one nesting level deeper; throws beyond `maxNesting`. */
  nested<T>(fn: () => T): T {
    if (this.depth >= this.maxNesting) throw new ParseError('Too deep nesting');
    this.depth++;
    try {
      return fn();
    } finally {
      this.depth--;
    }
  }

  /** `"(" [item *(SP item)] ")"`. */
  list<T>(item: (parser: ArgParser) => T, options: ListOptions = {}): T[] {
    return this.nested(() => {
      if (this.cur() !== LPAREN) this.fail('Expected list');
      this.pos++;
      this.padding();
      const out: T[] = [];
      if (this.cur() === RPAREN) {
        if (options.allowEmpty === false) throw new ParseError('Empty list');
        this.pos++;
        return out;
      }
      for (;;) {
        out.push(item(this));
        if (this.cur() === RPAREN) {
          this.pos++;
          return out;
        }
        if (!this.spaces()) throw new ParseError(this.atEnd() ? 'Unterminated list' : 'Expected space or )');
        if (this.extraSpaces && this.cur() === RPAREN) {
          this.pos++;
          return out;
        }
      }
    });
  }

  // -------------------------------------------------------------------------
  // Basic tokens

  /** A command tag (ASTRING-CHARs except `+`). */
  tag(): string {
    const e = this.scan(TAG);
    if (e === this.pos) throw new ParseError(this.atEnd() ? 'Missing tag' : 'Invalid tag');
    const tag = this.text.toString('latin1', this.pos, e);
    this.pos = e;
    return tag;
  }

  /** An atom as sent. */
  atom(): string {
    const e = this.scan(ATOM);
    if (e === this.pos) this.fail('Expected atom');
    const value = this.text.toString('latin1', this.pos, e);
    this.pos = e;
    return value;
  }

  /** The command name: an atom, uppercased. */
  commandName(): string {
    const e = this.scan(ATOM);
    if (e === this.pos) throw new ParseError(this.atEnd() ? 'Missing command' : 'Invalid command name');
    const value = asciiUpper(this.text.toString('latin1', this.pos, e));
    this.pos = e;
    return value;
  }

  /** A quoted string or a literal (not literal8). */
  string(): Buffer {
    const c = this.cur();
    if (c === DQUOTE) return this.quoted();
    if (this.isAtLiteral()) return this.takeLiteral(false).data;
    return this.fail('Expected string');
  }

  /**
   * A literal (APPEND message data). A literal8 (`~{n}`) only when the
   * `literal8` option is on (a loaded extension's grammar allows one here,
   * RFC 3516 APPEND, RFC 4469 `TEXT`), else BAD.
   */
  literal(): Buffer {
    if (!this.isAtLiteral()) this.fail('Expected literal');
    return this.takeLiteral(this.literal8).data;
  }

  /** A literal or a literal8 (`binary`), where a grammar always allows literal8 (METADATA values, RFC 5464; APPEND's `UTF8 (...)`, RFC 6855). */
  anyLiteral(): LiteralSegment {
    if (!this.isAtLiteral()) this.fail('Expected literal');
    return this.takeLiteral(true);
  }

  /** An atom of ASTRING-CHARs, a quoted string or a literal. */
  astring(): Buffer {
    const c = this.cur();
    if (c === DQUOTE || this.isAtLiteral()) return this.string();
    const e = this.scan(ASTRING);
    if (e === this.pos) this.fail('Expected string');
    const value = this.text.subarray(this.pos, e);
    this.pos = e;
    return value;
  }

  /** NIL or a string. */
  nstring(): Buffer | null {
    if (this.tryKeyword('NIL')) return null;
    return this.string();
  }

  /** A 32-bit unsigned number. */
  number(): number {
    return this.digits(MAX_UINT32);
  }

  /** A non-zero 32-bit unsigned number. */
  nzNumber(): number {
    const n = this.digits(MAX_UINT32);
    if (n === 0) throw new ParseError('Expected non-zero number');
    return n;
  }

  /**
   * An RFC 9051 number64 / RFC 7162 mod-sequence value. Values above
   * `Number.MAX_SAFE_INTEGER` are refused (a JS number could not hold them).
   */
  number64(): number {
    return this.digits(Number.MAX_SAFE_INTEGER);
  }

  private digits(max: number): number {
    const e = this.scan(DIGIT);
    if (e === this.pos) this.fail('Expected number');
    if (e - this.pos > 20) throw new ParseError('Number out of range');
    let value = 0;
    for (let i = this.pos; i < e; i++) value = value * 10 + (this.text[i]! - 0x30);
    if (value > max) throw new ParseError('Number out of range');
    this.pos = e;
    return value;
  }

  private quoted(): Buffer {
    const t = this.text;
    const start = this.pos + 1;
    let i = start;
    let escapes = 0;
    let high = false;
    for (;;) {
      if (i >= t.length) throw new ParseError('Unterminated quoted string');
      const c = t[i]!;
      if (c === DQUOTE) break;
      if (c === BACKSLASH) {
        if (i + 1 >= t.length) throw new ParseError('Unterminated quoted string');
        const n = t[i + 1]!;
        if (n !== DQUOTE && n !== BACKSLASH) {
          if (!this.anyEscape || n === 0 || n === 0x0d || n === 0x0a) throw new ParseError('Invalid escape in quoted string');
          if (n >= 0x80) {
            if (!this.utf8 && !this.eightBitQuoted) throw new ParseError('8-bit data in quoted string');
            high = true;
          }
        }
        escapes++;
        i += 2;
        continue;
      }
      if (c === 0 || c === 0x0d || c === 0x0a) throw new ParseError('Invalid character in quoted string');
      if (c >= 0x80) {
        if (!this.utf8 && !this.eightBitQuoted) throw new ParseError('8-bit data in quoted string');
        high = true;
      }
      i++;
    }
    // RFC 6855 §3: octets with the high bit set must be well-formed UTF-8 (Dovecot 2.3 refuses other
    // 8-bit octets in its lenient mode too: `SEARCH SUBJECT "Gr<FF>"` is BAD there).
    if (high && !isUtf8(t.subarray(start, i))) throw new ParseError('Invalid UTF-8 in quoted string');
    this.pos = i + 1;
    if (escapes === 0) return t.subarray(start, i);
    const out = Buffer.allocUnsafe(i - start - escapes);
    let o = 0;
    for (let k = start; k < i; k++) {
      let c = t[k]!;
      if (c === BACKSLASH) c = t[++k]!;
      out[o++] = c;
    }
    return out;
  }

  private takeLiteral(allowBinary: boolean): LiteralSegment {
    const lit = this.literals[this.seg]!;
    if (lit.binary && !allowBinary) throw new ParseError('Binary literal not allowed here');
    // literal = "{" number "}" CRLF *CHAR8, and CHAR8 excludes NUL (RFC 3501 §9): NUL needs literal8.
    if (!lit.binary && lit.data.includes(0)) throw new ParseError('NUL in a literal (use literal8)');
    this.seg++;
    this.text = this.texts[this.seg]!;
    this.pos = 0;
    return lit;
  }

  // -------------------------------------------------------------------------
  // Mailboxes and flags

  /**
   * A mailbox name (astring). INBOX is case-insensitive and comes back as
   * `INBOX`, also as the first level (`inbox/x` → `INBOX/x`). Without the
   * `utf8` option the name must be canonical modified UTF-7 (unless
   * `validate: false`, for LIST references).
   */
  mailbox(options: MailboxOptions = {}): string {
    const raw = this.astring();
    let name: string;
    if (this.utf8) {
      // RFC 6855 §3: a UTF-8 name, stored (and matched) as modified UTF-7; a pattern stays UTF-8.
      name = utf8MailboxName(raw);
      if (options.pattern !== true) name = encodeMutf7(name);
    } else if (options.validate === false || options.pattern === true) {
      name = raw.toString('utf8');
    } else {
      name = raw.toString('latin1');
      if (!isValidMutf7(name)) throw new ParseError('Invalid mailbox name');
    }
    return normalizeMailboxName(name, this.inboxDelimiter);
  }

  /** A LIST/LSUB pattern: list-chars (atom chars, `%`, `*`, `]`) or a string. Not validated. */
  listMailbox(): string {
    const c = this.cur();
    if (c === DQUOTE || this.isAtLiteral()) return this.string().toString('utf8');
    const e = this.scan(LIST);
    if (e === this.pos) this.fail('Expected mailbox pattern');
    const value = this.text.toString('latin1', this.pos, e);
    this.pos = e;
    return value;
  }

  /** A flag: system flags in canonical case (`\seen` → `\Seen`), keywords as sent. */
  flag(options: FlagOptions = {}): string {
    const t = this.text;
    if (this.cur() === BACKSLASH) {
      if (t[this.pos + 1] === 0x2a) {
        if (!options.allowWildcard) throw new ParseError('Invalid flag \\*');
        this.pos += 2;
        return '\\*';
      }
      const e = this.scanFrom(this.pos + 1, ATOM);
      if (e === this.pos + 1) throw new ParseError('Invalid flag');
      const name = t.toString('latin1', this.pos + 1, e);
      const canonical = canonicalSystemFlag(asciiUpper(name));
      if (canonical === '\\Recent' && !options.allowRecent) throw new ParseError('Cannot set \\Recent flag');
      if (canonical === null && !options.allowExtension) {
        throw new ParseError(`Invalid system flag \\${clip(name)}`);
      }
      this.pos = e;
      return canonical ?? `\\${name}`;
    }
    const e = this.scan(ATOM);
    if (e === this.pos) this.fail('Invalid flag');
    const value = t.toString('latin1', this.pos, e);
    this.pos = e;
    return value;
  }

  private scanFrom(from: number, mask: number): number {
    const t = this.text;
    let i = from;
    while (i < t.length && (CLASS[t[i]!]! & mask) !== 0) i++;
    return i;
  }

  /** `"(" [flag *(SP flag)] ")"`. */
  flagList(options: FlagOptions = {}): string[] {
    return this.list(() => this.flag(options));
  }

  /** STORE's flags: a flag list or flags separated by spaces up to the end. */
  flags(options: FlagOptions = {}): string[] {
    if (this.cur() === LPAREN) return this.flagList(options);
    const out = [this.flag(options)];
    while (this.spaces()) out.push(this.flag(options));
    return out;
  }

  // -------------------------------------------------------------------------
  // Sequence sets and dates

  /** `1`, `2:4`, `*`, `7:*`, `5:2`, comma lists, or `$` (RFC 5182). */
  sequenceSet(): SequenceSet {
    let set: SequenceSet;
    if (this.cur() === 0x24) {
      this.pos++;
      set = { ranges: [], searchResult: true };
    } else {
      const ranges: SeqRange[] = [];
      for (;;) {
        const start = this.seqNumber(ranges.length === 0);
        let end = start;
        if (this.cur() === 0x3a) {
          this.pos++;
          end = this.seqNumber(false);
        }
        ranges.push({ start, end });
        if (this.cur() !== 0x2c) break;
        this.pos++;
        if (this.trailingComma) {
          const next = this.cur();
          if (next === -1 || next === SP || next === RPAREN) break;
        }
      }
      set = { ranges, searchResult: false };
    }
    const c = this.cur();
    if (c !== -1 && c !== SP && c !== RPAREN) throw new ParseError('Invalid sequence set');
    return set;
  }

  private seqNumber(first: boolean): SeqNumber {
    const c = this.cur();
    if (c === 0x2a) {
      this.pos++;
      return '*';
    }
    const e = this.scan(DIGIT);
    if (e === this.pos) {
      if (first) this.fail('Invalid sequence set');
      throw new ParseError('Invalid sequence set');
    }
    let value = 0;
    for (let i = this.pos; i < e && value <= MAX_UINT32; i++) value = value * 10 + (this.text[i]! - 0x30);
    if (value === 0 || value > MAX_UINT32) throw new ParseError('Invalid sequence set');
    this.pos = e;
    return value;
  }

  /** A SEARCH date, `d-Mon-yyyy`, optionally quoted. */
  date(): SearchDate {
    if (this.atEnd() || this.isAtLiteral()) this.fail('Invalid date');
    const quoted = this.cur() === DQUOTE;
    const from = quoted ? this.pos + 1 : this.pos;
    const window = this.text.toString('latin1', from, Math.min(this.text.length, from + 12));
    const m = /^(\d{1,2})-([A-Za-z]{3})-(\d{4})/.exec(window);
    if (!m) throw new ParseError('Invalid date');
    let end = from + m[0].length;
    if (quoted) {
      if (this.text[end] !== DQUOTE) throw new ParseError('Invalid date');
      end++;
    }
    const day = Number(m[1]);
    const month = MONTHS.indexOf(m[2]!.toUpperCase()) + 1;
    const year = Number(m[3]);
    if (month === 0 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) {
      throw new ParseError('Invalid date');
    }
    const next = end < this.text.length ? this.text[end]! : -1;
    if (next !== -1 && next !== SP && next !== RPAREN) throw new ParseError('Invalid date');
    this.pos = end;
    return { year, month, day };
  }

  /** A quoted date-time, `"dd-Mon-yyyy hh:mm:ss +zzzz"` (day may be space padded). */
  dateTime(): InternalDate {
    if (this.cur() !== DQUOTE) this.fail('Invalid date-time');
    const close = this.text.indexOf(DQUOTE, this.pos + 1);
    if (close < 0 || close - this.pos > 40) throw new ParseError('Invalid date-time');
    const parsed = parseInternalDate(this.text.toString('latin1', this.pos + 1, close));
    if (parsed === null) throw new ParseError('Invalid date-time');
    this.pos = close + 1;
    return parsed;
  }

  // -------------------------------------------------------------------------
  // FETCH

  /** FETCH items: a macro (ALL, FAST, FULL), one item or a parenthesized list. */
  fetchAttributes(options: FetchOptions = {}): FetchAttribute[] {
    if (this.cur() === LPAREN) return this.list(() => this.fetchAttribute(options), { allowEmpty: false });
    const name = this.peekAtom();
    const base = ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE'] as const;
    if (name === 'FAST' || name === 'ALL' || name === 'FULL') {
      this.pos += name.length;
      const out = base.map(simple);
      if (name !== 'FAST') out.push(simple('ENVELOPE'));
      if (name === 'FULL') out.push(simple('BODY'));
      return out;
    }
    return [this.fetchAttribute(options)];
  }

  /** One FETCH item. */
  fetchAttribute(options: FetchOptions = {}): FetchAttribute {
    const e = this.scan(FETCH_NAME);
    if (e === this.pos) this.fail('Invalid fetch attribute');
    const name = asciiUpper(this.text.toString('latin1', this.pos, e));
    this.pos = e;
    const c = this.cur();
    const bracket = c === 0x5b;
    switch (name) {
      case 'BODY':
      case 'BODY.PEEK': {
        if (!bracket) {
          if (name === 'BODY.PEEK' || c === 0x3c) throw new ParseError('Invalid fetch attribute');
          return simple('BODY');
        }
        const section = this.section();
        const partial = this.partial();
        let label = `BODY[${formatSection(section)}]`;
        if (partial !== null) label += `<${partial.offset}>`;
        return { type: 'BODY[]', peek: name === 'BODY.PEEK', section, partial, label };
      }
    }
    // Core items keep their meaning whatever an extension registers.
    const item = SIMPLE_FETCH.has(name) ? undefined : options.items?.get(name);
    if (item !== undefined && item !== null) {
      const read = item(this, name);
      const att: FetchAttribute = { type: 'OTHER', name, label: read.label ?? name };
      if (read.data !== undefined) att.data = read.data;
      if (read.setsSeen) att.seen = true;
      return att;
    }
    let other = item === null;
    if (!other && options.extensions !== undefined) {
      for (const ext of options.extensions) if (asciiUpper(ext) === name) other = true;
    }
    if (!other && !SIMPLE_FETCH.has(name)) throw new ParseError(`Unknown fetch attribute ${clip(name)}`);
    if (bracket || c === 0x3c) throw new ParseError('Invalid fetch attribute');
    return other ? { type: 'OTHER', name, label: name } : simple(name as SimpleFetchName);
  }

  /** `"[" section-spec "]"` of BODY[...]. */
  section(): Section {
    if (this.cur() !== 0x5b) this.fail('Invalid section');
    this.pos++;
    const part: number[] = [];
    let text: SectionText | undefined;
    if (this.cur() !== 0x5d) {
      if (isDigit(this.cur())) {
        for (;;) {
          part.push(this.sectionNumber());
          if (this.cur() !== 0x2e) break;
          this.pos++;
          if (!isDigit(this.cur())) {
            text = this.sectionText(true);
            break;
          }
        }
      } else {
        text = this.sectionText(false);
      }
    }
    const section: Section = { part };
    if (text !== undefined) section.text = text;
    if (text === 'HEADER.FIELDS' || text === 'HEADER.FIELDS.NOT') {
      if (!this.spaces()) throw new ParseError('Invalid section');
      section.fields = this.list(() => this.headerFieldName(), { allowEmpty: false });
    }
    if (this.cur() !== 0x5d) throw new ParseError('Invalid section');
    this.pos++;
    return section;
  }

  private sectionNumber(): number {
    const e = this.scan(DIGIT);
    let value = 0;
    for (let i = this.pos; i < e && value <= MAX_UINT32; i++) value = value * 10 + (this.text[i]! - 0x30);
    if (e === this.pos || value === 0 || value > MAX_UINT32) throw new ParseError('Invalid section');
    this.pos = e;
    return value;
  }

  private sectionText(afterPart: boolean): SectionText {
    const e = this.scan(SECTION_WORD);
    const word = asciiUpper(this.text.toString('latin1', this.pos, e));
    switch (word) {
      case 'MIME':
        if (!afterPart) throw new ParseError('Invalid section');
        this.pos = e;
        return word;
      case 'HEADER':
      case 'HEADER.FIELDS':
      case 'HEADER.FIELDS.NOT':
      case 'TEXT':
        this.pos = e;
        return word;
    }
    throw new ParseError('Invalid section');
  }

  /** A header field name (astring), uppercased. */
  private headerFieldName(): string {
    const raw = this.astring();
    if (raw.length === 0) throw new ParseError('Invalid header field name');
    for (let i = 0; i < raw.length; i++) {
      if (!isFieldNameChar(raw[i]!)) throw new ParseError('Invalid header field name');
    }
    return asciiUpper(raw.toString('latin1'));
  }

  /** `"[" [nz-number *("." nz-number)] "]"`: a part path in brackets (RFC 3516 section-binary). */
  bracketedPart(): number[] {
    if (this.cur() !== 0x5b) throw new ParseError('Invalid section');
    this.pos++;
    const part: number[] = [];
    if (this.cur() !== 0x5d) {
      for (;;) {
        part.push(this.sectionNumber());
        if (this.cur() !== 0x2e) break;
        this.pos++;
      }
    }
    if (this.cur() !== 0x5d) throw new ParseError('Invalid section');
    this.pos++;
    return part;
  }

  /** `"<" number "." nz-number ">"`, or null when no `<` is next. */
  partial(): Partial | null {
    if (this.cur() !== 0x3c) return null;
    this.pos++;
    try {
      const offset = this.number();
      this.char('.');
      const length = this.nzNumber();
      this.char('>');
      return { offset, length };
    } catch (err) {
      if (err instanceof ParseError) throw new ParseError('Invalid partial');
      throw err;
    }
  }

  // -------------------------------------------------------------------------
  // STATUS

  /**
   * `"(" status-att *(SP status-att) ")"`, uppercased. `extensions` adds
   * item names (STATUS items of loaded extensions).
   */
  statusAttributes(extensions?: { has(name: string): boolean }): string[] {
    return this.list(
      () => {
        const name = this.peekAtom();
        if (name === null) this.fail('Invalid STATUS attribute');
        const upper = asciiUpper(name);
        if (upper === 'RECENT' && !this.recent) throw new ParseError('STATUS RECENT is not in IMAP4rev2 (RFC 9051 has no \\Recent)');
        const found = STATUS_ATTRIBUTES.find((a) => a === upper) ?? (extensions?.has(upper) ? upper : undefined);
        if (found === undefined) throw new ParseError(`Unknown STATUS attribute ${clip(name)}`);
        this.pos += name.length;
        return found;
      },
      { allowEmpty: false },
    );
  }

  // -------------------------------------------------------------------------
  // SEARCH

  /** `[CHARSET SP astring SP] search-key *(SP search-key)` up to the end or a `)`. */
  searchProgram(): SearchProgram {
    let charset: string | null = null;
    if (this.tryKeyword('CHARSET')) {
      this.sp();
      charset = this.astring().toString('latin1');
      this.sp();
    }
    const keys = [this.searchKey()];
    while (this.spaces()) keys.push(this.searchKey());
    return { charset, keys: keys.length === 1 ? keys[0]! : { type: 'and', keys } };
  }

  /** One search key (a parenthesized group counts as one). */
  searchKey(): SearchKey {
    const c = this.cur();
    if (c === LPAREN) {
      return this.nested(() => {
        this.pos++;
        this.padding();
        const keys = [this.searchKey()];
        for (;;) {
          if (this.cur() === RPAREN) break;
          if (!this.spaces()) throw new ParseError(this.atEnd() ? 'Unterminated list' : 'Expected space or )');
          if (this.extraSpaces && this.cur() === RPAREN) break;
          keys.push(this.searchKey());
        }
        this.pos++;
        return keys.length === 1 ? keys[0]! : { type: 'and', keys };
      });
    }
    if (isDigit(c) || c === 0x2a || c === 0x24) return { type: 'seq', set: this.sequenceSet() };
    const e = this.scan(ATOM);
    if (e === this.pos) this.fail('Invalid search key');
    const name = asciiUpper(this.text.toString('latin1', this.pos, e));
    if (!this.recent && (name === 'RECENT' || name === 'NEW' || name === 'OLD')) {
      throw new ParseError(`SEARCH ${name} is not in IMAP4rev2 (RFC 9051 has no \\Recent)`);
    }
    this.pos = e;

    const flag = FLAG_KEYS[name];
    if (flag !== undefined) return { type: 'flag', flag: flag[0], set: flag[1] };
    const date = DATE_KEYS[name];
    if (date !== undefined) {
      this.sp();
      return { type: 'date', field: date[0], op: date[1], date: this.date() };
    }
    if (TEXT_KEYS.has(name)) {
      this.sp();
      return { type: 'text', field: name as SearchStringField, value: this.astring() };
    }
    switch (name) {
      case 'ALL':
        return { type: 'all' };
      case 'NEW':
        return {
          type: 'and',
          keys: [
            { type: 'flag', flag: '\\Recent', set: true },
            { type: 'flag', flag: '\\Seen', set: false },
          ],
        };
      case 'KEYWORD':
      case 'UNKEYWORD': {
        this.sp();
        if (this.cur() === BACKSLASH) throw new ParseError('Invalid keyword');
        return { type: 'flag', flag: this.atom(), set: name === 'KEYWORD' };
      }
      case 'HEADER': {
        this.sp();
        const field = this.headerFieldName();
        this.sp();
        return { type: 'header', field, value: this.astring() };
      }
      case 'LARGER':
      case 'SMALLER':
        this.sp();
        return { type: 'size', op: name === 'LARGER' ? 'larger' : 'smaller', size: this.number64() };
      case 'UID':
        this.sp();
        return { type: 'uid', set: this.sequenceSet() };
      case 'NOT':
        this.sp();
        return this.nested(() => ({ type: 'not', key: this.searchKey() }));
      case 'OR':
        return this.nested(() => {
          this.sp();
          const left = this.searchKey();
          this.sp();
          return { type: 'or', left, right: this.searchKey() };
        });
      case 'MODSEQ':
        return this.searchModseq();
    }
    const ext = this.searchKeys?.get(name);
    if (ext !== undefined) return ext(this, name);
    throw new ParseError(`Unknown search key ${clip(name)}`);
  }

  /** RFC 7162: `MODSEQ [SP entry-name SP entry-type-req] SP mod-sequence-valzer`. */
  private searchModseq(): SearchKey {
    this.sp();
    let entry: { name: string; kind: 'priv' | 'shared' | 'all' } | null = null;
    if (this.cur() === DQUOTE) {
      const name = this.quoted().toString('latin1');
      if (!/^\/flags\/\\?[^\\]+$/i.test(name)) throw new ParseError('Invalid MODSEQ entry name');
      this.sp();
      const kind = this.peekAtom()?.toLowerCase();
      if (kind !== 'priv' && kind !== 'shared' && kind !== 'all') this.fail('Invalid MODSEQ entry type');
      this.pos += kind.length;
      entry = { name, kind };
      this.sp();
    }
    return { type: 'modseq', modseq: this.number64(), entry };
  }
}

/**
 * A strict reader of server output for the fuzzer and the strict client:
 * splits the byte stream into responses (a line plus the literals it
 * announces) and checks each against the response grammar of RFC 3501 §7
 * and §9 (plus the extension responses Rookery sends: ENABLED, GENURLAUTH, URLFETCH, NAMESPACE,
 * ID). Written from the RFC, independent of the server's serializer.
 */

/** One complete response: its text with literals replaced by `{n}` markers, and the literals. */
export interface Response {
  /** The response line(s) in latin1, literal data left out (the `{n}` markers stay). */
  text: string;
  literals: Buffer[];
  /** Total bytes on the wire. */
  bytes: number;
}

export type ResponseKind = 'tagged' | 'untagged' | 'continuation';

export interface ParsedResponse {
  kind: ResponseKind;
  /** Tag of a tagged response. */
  tag?: string;
  /** OK / NO / BAD / BYE / PREAUTH, or the untagged keyword (CAPABILITY, FETCH, EXISTS, ...), upper-case. */
  type: string;
  /** Message number of EXISTS / RECENT / EXPUNGE / FETCH. */
  number?: number;
  /** Response code of a status response, without brackets. */
  code?: string;
  /** FETCH: item name (upper-case, as sent with section) → value. */
  fetch?: Map<string, Value>;
  /** FLAGS: the flag list. */
  flags?: string[];
  /** SEARCH: the numbers. */
  search?: number[];
  response: Response;
}

/** A value of the response grammar. */
export type Value = { t: 'atom'; v: string } | { t: 'num'; v: number } | { t: 'str'; v: Buffer } | { t: 'nil' } | { t: 'list'; v: Value[] };

export class ResponseError extends Error {
  constructor(
    message: string,
    readonly responseText: string,
  ) {
    super(`${message}: ${JSON.stringify(responseText.length > 300 ? responseText.slice(0, 300) + '...' : responseText)}`);
  }
}

/** Tagged or untagged status responses and continuation requests. */
const STATUS_LINE = /^(\+ |\* (OK|NO|BAD|BYE|PREAUTH)( |$)|[^ *+]+ (OK|NO|BAD)( |$))/i;

/** Splits a byte stream into responses; literal bytes are counted exactly. */
export class ResponseSplitter {
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;
  /** Partial response being assembled. */
  private text = '';
  private literals: Buffer[] = [];
  private bytes = 0;
  private literalLeft = -1;
  /** Longest line accepted before it counts as a runaway response. */
  constructor(private readonly maxLine = 16 * 1024 * 1024) {}

  /** Bytes received but not yet part of a complete response. */
  get partial(): number {
    return this.buf.length - this.pos + this.text.length;
  }

  push(chunk: Buffer, out: (r: Response) => void): void {
    this.buf = this.pos < this.buf.length ? Buffer.concat([this.buf.subarray(this.pos), chunk]) : chunk;
    this.pos = 0;
    for (;;) {
      if (this.literalLeft >= 0) {
        if (this.buf.length - this.pos < this.literalLeft) break;
        this.literals.push(this.buf.subarray(this.pos, this.pos + this.literalLeft));
        this.bytes += this.literalLeft;
        this.pos += this.literalLeft;
        this.literalLeft = -1;
      }
      const lf = this.buf.indexOf(0x0a, this.pos);
      if (lf < 0) {
        if (this.buf.length - this.pos > this.maxLine) throw new ResponseError('response line without end', this.buf.toString('latin1', this.pos, this.pos + 200));
        break;
      }
      const line = this.buf.toString('latin1', this.pos, lf + 1);
      this.bytes += lf + 1 - this.pos;
      this.pos = lf + 1;
      if (line.length < 2 || line[line.length - 2] !== '\r') throw new ResponseError('line not ended by CRLF (bare LF)', this.text + line);
      const body = line.slice(0, -2);
      if (body.includes('\r')) throw new ResponseError('bare CR in a response line', this.text + body);
      const firstLine = this.text === '';
      this.text += body;
      // A status response (and a continuation request) has no literals: a text that happens to end
      // in "{3}" (an echoed mailbox name) is text, not a literal (RFC 3501 §9 resp-text).
      const m = firstLine && STATUS_LINE.test(body) ? null : /\{(\d+)\}$/.exec(body);
      if (m) {
        const n = Number(m[1]);
        if (!Number.isSafeInteger(n) || m[1]!.length > 10) throw new ResponseError('literal size out of range', this.text);
        this.text += '\r\n';
        this.literalLeft = n;
        continue;
      }
      const r: Response = { text: this.text, literals: this.literals, bytes: this.bytes };
      this.text = '';
      this.literals = [];
      this.bytes = 0;
      out(r);
    }
  }

  /** True when nothing is left half-read (at a response boundary). */
  get atBoundary(): boolean {
    return this.pos >= this.buf.length && this.text === '' && this.literalLeft < 0;
  }
}

// ---------------------------------------------------------------- character classes (RFC 3501 §9)

const isChar = (c: number): boolean => c >= 0x01 && c <= 0x7f;
const isCtl = (c: number): boolean => c < 0x20 || c === 0x7f;
/** ATOM-CHAR: CHAR except atom-specials ( ) { SP CTL % * " \ ] */
function isAtomChar(c: number): boolean {
  return isChar(c) && !isCtl(c) && c !== 0x28 && c !== 0x29 && c !== 0x7b && c !== 0x20 && c !== 0x25 && c !== 0x2a && c !== 0x22 && c !== 0x5c && c !== 0x5d;
}
const isAstringChar = (c: number): boolean => isAtomChar(c) || c === 0x5d;
const isTagChar = (c: number): boolean => isAstringChar(c) && c !== 0x2b;
const isTextChar = (c: number): boolean => isChar(c) && c !== 0x0d && c !== 0x0a;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
function isUtf8(bytes: Buffer): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

const STATUS_WORDS = new Set(['OK', 'NO', 'BAD', 'BYE', 'PREAUTH']);

/** Cursor over one response's text, literals taken from `literals` in order. */
class Cursor {
  pos = 0;
  private lit = 0;
  constructor(
    readonly s: string,
    private readonly literals: Buffer[],
    /** The session enabled UTF8=ACCEPT or IMAP4rev2: quoted strings may carry UTF-8 (RFC 6855 §3, RFC 9051). */
    private readonly utf8 = false,
  ) {}

  fail(what: string): never {
    throw new ResponseError(`${what} at offset ${this.pos}`, this.s);
  }
  get end(): boolean {
    return this.pos >= this.s.length;
  }
  peek(): number {
    return this.pos < this.s.length ? this.s.charCodeAt(this.pos) : -1;
  }
  sp(): void {
    if (this.peek() !== 0x20) this.fail('expected SP');
    this.pos++;
  }
  trySp(): boolean {
    if (this.peek() !== 0x20) return false;
    this.pos++;
    return true;
  }
  char(ch: string): void {
    if (this.s[this.pos] !== ch) this.fail(`expected ${ch}`);
    this.pos++;
  }
  expectEnd(): void {
    if (!this.end) this.fail('unexpected data at end of response');
  }
  scan(pred: (c: number) => boolean): string {
    const start = this.pos;
    while (this.pos < this.s.length && pred(this.s.charCodeAt(this.pos))) this.pos++;
    return this.s.slice(start, this.pos);
  }
  atom(): string {
    const a = this.scan(isAtomChar);
    if (!a) this.fail('expected atom');
    return a;
  }
  number(): number {
    const d = this.scan((c) => c >= 0x30 && c <= 0x39);
    if (!d) this.fail('expected number');
    const n = Number(d);
    if (d.length > 10 || n > 4294967295) this.fail('number above 2^32-1');
    return n;
  }
  nzNumber(): number {
    const n = this.number();
    if (n === 0) this.fail('expected non-zero number');
    return n;
  }
  /** quoted / literal / (NIL when allowed) */
  string(allowNil: boolean): Value {
    const c = this.peek();
    if (c === 0x22) return { t: 'str', v: this.quoted() };
    if (c === 0x7b) return { t: 'str', v: this.literal() };
    if (c === 0x7e && this.s.charCodeAt(this.pos + 1) === 0x7b) return { t: 'str', v: this.literal8() };
    if (allowNil && this.s.startsWith('NIL', this.pos) && !isAtomChar(this.s.charCodeAt(this.pos + 3))) {
      this.pos += 3;
      return { t: 'nil' };
    }
    return this.fail(allowNil ? 'expected nstring' : 'expected string');
  }
  quoted(): Buffer {
    this.char('"');
    let out = '';
    for (;;) {
      // The splitter ends a response at CRLF: a quoted string still open there held a line break.
      if (this.end) this.fail('quoted string not closed before CRLF (CR and LF are not QUOTED-CHARs)');
      const c = this.s.charCodeAt(this.pos);
      if (c === 0x22) break;
      if (c === 0x5c) {
        const n = this.s.charCodeAt(this.pos + 1);
        if (n !== 0x22 && n !== 0x5c) this.fail('invalid escape in quoted string');
        out += this.s[this.pos + 1];
        this.pos += 2;
        continue;
      }
      if (!isTextChar(c) && !(this.utf8 && c >= 0x80 && c <= 0xff)) {
        // RFC 3501 §9 / RFC 9051 §9 QUOTED-CHAR: TEXT-CHAR (no NUL, CR, LF, 8-bit) but " and \; 8-bit only as
        // UTF-8 once the session enabled UTF8=ACCEPT or IMAP4rev2 (RFC 6855 §3 uQUOTED-CHAR).
        const what = c === 0 ? 'NUL' : c === 0x0d ? 'CR' : c === 0x0a ? 'LF' : '8-bit';
        this.fail(`invalid byte 0x${c.toString(16)} in quoted string (${what})`);
      }
      out += this.s[this.pos];
      this.pos++;
    }
    this.pos++;
    const bytes = Buffer.from(out, 'latin1');
    if (this.utf8 && !isUtf8(bytes)) this.fail('malformed UTF-8 in quoted string');
    return bytes;
  }
  literal(): Buffer {
    const m = /^\{(\d+)\}\r\n/.exec(this.s.slice(this.pos, this.pos + 16));
    if (!m) this.fail('malformed literal');
    this.pos += m[0].length;
    const data = this.literals[this.lit++];
    if (data === undefined || data.length !== Number(m[1])) this.fail('literal size mismatch');
    // RFC 3501 literal: *CHAR8, CHAR8 = %x01-ff (NUL needs literal8).
    if (data.includes(0)) this.fail('NUL in a literal');
    return data;
  }
  /** literal8 (RFC 3516): `~{n}` CRLF, any bytes. */
  literal8(): Buffer {
    this.char('~');
    const m = /^\{(\d+)\}\r\n/.exec(this.s.slice(this.pos, this.pos + 16));
    if (!m) this.fail('malformed literal8');
    this.pos += m[0].length;
    const data = this.literals[this.lit++];
    if (data === undefined || data.length !== Number(m[1])) this.fail('literal8 size mismatch');
    return data;
  }
  astring(): Buffer {
    const c = this.peek();
    if (c === 0x22) return this.quoted();
    if (c === 0x7b) return this.literal();
    const a = this.scan(isAstringChar);
    if (!a) this.fail('expected astring');
    return Buffer.from(a, 'latin1');
  }
  /** flag = "\" atom / atom, plus \* in PERMANENTFLAGS. */
  flag(allowWildcard: boolean): string {
    if (this.peek() === 0x5c) {
      this.pos++;
      if (this.peek() === 0x2a) {
        if (!allowWildcard) this.fail('\\* outside PERMANENTFLAGS');
        this.pos++;
        return '\\*';
      }
      return '\\' + this.atom();
    }
    return this.atom();
  }
  flagList(allowWildcard = false): string[] {
    this.char('(');
    const out: string[] = [];
    if (this.peek() !== 0x29) {
      for (;;) {
        out.push(this.flag(allowWildcard));
        if (!this.trySp()) break;
      }
    }
    this.char(')');
    return out;
  }
  /** A generic value: number, atom (incl. \flag), nstring, or a parenthesized list. */
  value(depth = 0): Value {
    if (depth > 200) this.fail('nesting too deep');
    const c = this.peek();
    if (c === 0x28) {
      this.pos++;
      const items: Value[] = [];
      if (this.peek() !== 0x29) {
        for (;;) {
          const item = this.value(depth + 1);
          items.push(item);
          // body-type-mpart = 1*body SP media-subtype: the bodies of a multipart follow each other without SP.
          if (item.t === 'list' && this.peek() === 0x28) continue;
          if (!this.trySp()) break;
        }
      }
      this.char(')');
      return { t: 'list', v: items };
    }
    if (c === 0x22 || c === 0x7b || (c === 0x7e && this.s.charCodeAt(this.pos + 1) === 0x7b)) return this.string(false);
    if (c >= 0x30 && c <= 0x39) {
      const start = this.pos;
      const d = this.scan((x) => x >= 0x30 && x <= 0x39);
      if (isAtomChar(this.peek())) {
        this.pos = start;
        return { t: 'atom', v: this.atom() };
      }
      return { t: 'num', v: Number(d) };
    }
    if (c === 0x5c) return { t: 'atom', v: this.flag(false) };
    const a = this.atom();
    return a === 'NIL' ? { t: 'nil' } : { t: 'atom', v: a };
  }
  /** resp-text = ["[" resp-text-code "]" SP] text (text: 1*TEXT-CHAR, RFC 3501). Returns the code. */
  respText(): string | undefined {
    let code: string | undefined;
    if (this.peek() === 0x5b) {
      this.pos++;
      const start = this.pos;
      code = this.respTextCode();
      code = this.s.slice(start, this.pos);
      this.char(']');
      if (this.end) this.fail('missing text after response code');
      this.sp();
    }
    const text = this.scan(isTextChar);
    if (!text) this.fail('empty or invalid response text');
    if (!this.end) this.fail(`invalid byte 0x${this.peek().toString(16)} in response text`);
    return code;
  }
  private respTextCode(): string {
    const name = this.atom().toUpperCase();
    switch (name) {
      case 'ALERT':
      case 'PARSE':
      case 'READ-ONLY':
      case 'READ-WRITE':
      case 'TRYCREATE':
        return name;
      case 'UIDNEXT':
      case 'UIDVALIDITY':
      case 'UNSEEN':
        this.sp();
        this.nzNumber();
        return name;
      case 'PERMANENTFLAGS':
        this.sp();
        this.flagList(true);
        return name;
      case 'BADCHARSET':
        if (this.trySp()) {
          this.char('(');
          for (;;) {
            this.astring();
            if (!this.trySp()) break;
          }
          this.char(')');
        }
        return name;
      case 'CAPABILITY': {
        const caps: string[] = [];
        while (this.trySp()) caps.push(this.atom());
        if (!caps.some((c) => c.toUpperCase() === 'IMAP4REV1')) this.fail('CAPABILITY without IMAP4rev1');
        return name;
      }
      case 'APPENDUID':
        this.sp();
        this.nzNumber();
        this.sp();
        this.uidSet();
        return name;
      case 'COPYUID':
        this.sp();
        this.nzNumber();
        this.sp();
        this.uidSet();
        this.sp();
        this.uidSet();
        return name;
      default:
        // atom [SP 1*<any TEXT-CHAR except "]">]
        if (this.trySp()) {
          if (!this.scan((c) => isTextChar(c) && c !== 0x5d)) this.fail('empty response code argument');
        }
        return name;
    }
  }
  uidSet(): void {
    for (;;) {
      this.nzNumber();
      if (this.peek() === 0x3a) {
        this.pos++;
        this.nzNumber();
      }
      if (this.peek() !== 0x2c) return;
      this.pos++;
    }
  }
  mailbox(): Buffer {
    return this.astring();
  }
}

const DATE_TIME = /^"[ 0-9]\d-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d{4} \d\d:\d\d:\d\d [+-]\d{4}"/;

/**
 * `*(SP nz-number) [SP search-sort-mod-seq]` after SEARCH or SORT; CONDSTORE (RFC 7162):
 * search-sort-mod-seq = "(" "MODSEQ" SP mod-sequence-value ")".
 */
function numbersWithModseq(c: Cursor): number[] {
  const nums: number[] = [];
  while (c.trySp()) {
    if (c.peek() === 0x28) {
      c.char('(');
      if (c.atom().toUpperCase() !== 'MODSEQ') c.fail('expected MODSEQ');
      c.sp();
      c.scan((x) => x >= 0x30 && x <= 0x39);
      c.char(')');
      break;
    }
    nums.push(c.nzNumber());
  }
  return nums;
}

/** FETCH msg-att: "(" item SP value *(SP item SP value) ")". */
function parseFetch(c: Cursor): Map<string, Value> {
  const items = new Map<string, Value>();
  c.char('(');
  for (;;) {
    const start = c.pos;
    const base = c.scan((x) => isAtomChar(x) && x !== 0x5b && x !== 0x3c).toUpperCase();
    if (!base) c.fail('expected FETCH item');
    let name = base;
    if (c.peek() === 0x5b) {
      if (!/^(BODY|BINARY|BINARY\.SIZE)$/.test(base)) c.fail(`section after ${base}`);
      // section: up to the matching "]", may hold a parenthesized header list with quoted strings.
      c.pos++;
      let depth = 0;
      for (;;) {
        const ch = c.peek();
        if (ch < 0) c.fail('unterminated section');
        if (ch === 0x22) {
          c.quoted();
          continue;
        }
        if (ch === 0x28) depth++;
        else if (ch === 0x29) depth--;
        else if (ch === 0x5d && depth === 0) break;
        else if (!isTextChar(ch)) c.fail('invalid byte in section');
        c.pos++;
      }
      c.pos++;
      if (c.peek() === 0x3c) {
        c.pos++;
        c.number();
        c.char('>');
      }
      name = c.s.slice(start, c.pos).toUpperCase();
    }
    c.sp();
    let value: Value;
    switch (base) {
      case 'FLAGS':
        value = { t: 'list', v: c.flagList(false).map((f) => ({ t: 'atom', v: f })) };
        break;
      case 'UID':
        value = { t: 'num', v: c.nzNumber() };
        break;
      case 'RFC822.SIZE':
        value = { t: 'num', v: c.number() };
        break;
      case 'INTERNALDATE':
        if (!DATE_TIME.test(c.s.slice(c.pos, c.pos + 40))) c.fail('malformed INTERNALDATE');
        value = { t: 'str', v: c.quoted() };
        break;
      case 'ENVELOPE':
      case 'BODYSTRUCTURE':
        value = c.value();
        if (value.t !== 'list') c.fail(`${base} is not a list`);
        if (base === 'ENVELOPE' && value.v.length !== 10) c.fail('ENVELOPE needs 10 fields');
        break;
      case 'BODY':
        // literal8 only answers BINARY (RFC 3516 §4.3); BODY[] is an nstring.
        if (c.peek() === 0x7e) c.fail(`literal8 in ${base}`);
        value = name === 'BODY' ? c.value() : c.string(true);
        if (name === 'BODY' && value.t !== 'list') c.fail('BODY structure is not a list');
        break;
      case 'RFC822':
      case 'RFC822.HEADER':
      case 'RFC822.TEXT':
        if (c.peek() === 0x7e) c.fail(`literal8 in ${base}`);
        value = c.string(true);
        break;
      case 'MODSEQ':
        value = c.value();
        break;
      case 'BINARY':
        // RFC 3516 msg-att: BINARY section-binary SP (nstring / literal8); literal8 when the data has NUL.
        if (name === 'BINARY') c.fail('BINARY without a section');
        value = c.string(true);
        break;
      case 'BINARY.SIZE':
        if (name === 'BINARY.SIZE') c.fail('BINARY.SIZE without a section');
        value = { t: 'num', v: c.number() };
        break;
      case 'PREVIEW':
        // RFC 8970: PREVIEW SP nstring, at most 256 characters.
        if (c.peek() === 0x7e) c.fail('literal8 in PREVIEW');
        value = c.string(true);
        if (value.t === 'str' && [...value.v.toString('utf8')].length > 256) c.fail('PREVIEW longer than 256 characters');
        break;
      default:
        value = c.value();
    }
    // The grammar allows an item twice (a client that asked twice); the last one wins here.
    items.set(name, value);
    if (!c.trySp()) break;
  }
  c.char(')');
  return items;
}

/**
 * Parses and checks one response. `inLiteralFree` is false for continuation
 * requests whose text is base64 (any text is accepted there).
 */
export function parseResponse(r: Response, options: { utf8?: boolean } = {}): ParsedResponse {
  const c = new Cursor(r.text, r.literals, options.utf8 ?? false);
  const first = c.peek();
  if (first === 0x2b) {
    // continue-req = "+" SP (resp-text / base64). Rookery also sends "+ " (empty base64).
    c.pos++;
    c.sp();
    const rest = c.scan(isTextChar);
    c.expectEnd();
    void rest;
    return { kind: 'continuation', type: '+', response: r };
  }
  if (first === 0x2a) {
    c.pos++;
    c.sp();
    return untagged(c, r);
  }
  const tag = c.scan(isTagChar);
  if (!tag) c.fail('response is neither "* ", "+ " nor tagged');
  c.sp();
  const status = c.atom();
  if (status !== 'OK' && status !== 'NO' && status !== 'BAD') c.fail(`tagged status ${status}`);
  c.sp();
  const code = c.respText();
  const parsed: ParsedResponse = { kind: 'tagged', tag, type: status, response: r };
  if (code !== undefined) parsed.code = code;
  return parsed;
}

function untagged(c: Cursor, r: Response): ParsedResponse {
  const p = c.peek();
  if (p >= 0x30 && p <= 0x39) {
    const n = c.number();
    c.sp();
    const word = c.atom().toUpperCase();
    const out: ParsedResponse = { kind: 'untagged', type: word, number: n, response: r };
    switch (word) {
      case 'EXISTS':
      case 'RECENT':
        break;
      case 'EXPUNGE':
        if (n === 0) c.fail('EXPUNGE 0');
        break;
      case 'FETCH':
        if (n === 0) c.fail('FETCH 0');
        c.sp();
        out.fetch = parseFetch(c);
        break;
      default:
        c.fail(`unknown message data ${word}`);
    }
    c.expectEnd();
    return out;
  }
  const word = c.atom().toUpperCase();
  const out: ParsedResponse = { kind: 'untagged', type: word, response: r };
  if (STATUS_WORDS.has(word)) {
    c.sp();
    const code = c.respText();
    if (code !== undefined) out.code = code;
    return out;
  }
  switch (word) {
    case 'CAPABILITY': {
      const caps: string[] = [];
      while (c.trySp()) caps.push(c.atom());
      if (!caps.some((x) => x.toUpperCase() === 'IMAP4REV1')) c.fail('CAPABILITY without IMAP4rev1');
      break;
    }
    case 'FLAGS':
      c.sp();
      out.flags = c.flagList(false);
      break;
    case 'LIST':
    case 'LSUB': {
      c.sp();
      c.flagList(false);
      c.sp();
      if (c.peek() === 0x22) {
        const d = c.quoted();
        if (d.length !== 1) c.fail('hierarchy delimiter is not one character');
      } else if (!c.s.startsWith('NIL', c.pos)) c.fail('expected delimiter');
      else c.pos += 3;
      c.sp();
      c.mailbox();
      // LIST-EXTENDED (RFC 5258): mbox-list-extended.
      if (c.trySp()) {
        const ext = c.value();
        if (ext.t !== 'list') c.fail('LIST extended data is not a list');
      }
      break;
    }
    case 'SEARCH':
      out.search = numbersWithModseq(c);
      break;
    case 'SORT':
      // RFC 5256: "SORT" *(SP nz-number), with the same RFC 7162 ending as SEARCH.
      numbersWithModseq(c);
      break;
    case 'THREAD':
      // RFC 5256: "THREAD" [SP 1*thread-list]; thread lists follow each other without a space.
      if (c.trySp()) {
        do {
          const v = c.value();
          if (v.t !== 'list') c.fail('THREAD data is not a thread list');
        } while (c.peek() === 0x28);
      }
      break;
    case 'VANISHED': {
      // RFC 7162: "VANISHED" [SP "(EARLIER)"] SP known-uids
      c.sp();
      if (c.s.startsWith('(EARLIER) ', c.pos)) c.pos += 10;
      c.uidSet();
      break;
    }
    case 'ACL':
      // RFC 4314 §3.6: "ACL" SP mailbox *(SP identifier SP rights); identifier and rights are astrings.
      c.sp();
      c.mailbox();
      while (c.trySp()) {
        c.astring();
        c.sp();
        c.astring();
      }
      break;
    case 'LISTRIGHTS':
      // RFC 4314 §3.7: "LISTRIGHTS" SP mailbox SP identifier SP rights *(SP rights).
      c.sp();
      c.mailbox();
      c.sp();
      c.astring();
      c.sp();
      c.astring();
      while (c.trySp()) c.astring();
      break;
    case 'MYRIGHTS':
      // RFC 4314 §3.8: "MYRIGHTS" SP mailbox SP rights.
      c.sp();
      c.mailbox();
      c.sp();
      c.astring();
      break;
    case 'METADATA':
      // RFC 5464 §5: "METADATA" SP mailbox SP (entry-values / entry-list); entry = astring,
      // entry-values = "(" entry SP value *(SP entry SP value) ")", value = nstring / literal8.
      c.sp();
      c.mailbox();
      c.sp();
      if (c.peek() === 0x28) {
        c.char('(');
        for (;;) {
          c.astring();
          c.sp();
          c.string(true);
          if (!c.trySp()) break;
        }
        c.char(')');
      } else {
        c.astring();
        while (c.trySp()) c.astring();
      }
      break;
    case 'ESEARCH':
    case 'QUOTA':
    case 'QUOTAROOT':
    case 'LANGUAGE':
    case 'COMPARATOR':
      // Extension responses (RFC 4731, 9208, 5255, 5256): well-formed values to the end.
      while (c.trySp()) c.value();
      break;
    case 'STATUS': {
      c.sp();
      c.mailbox();
      c.sp();
      c.char('(');
      if (c.peek() !== 0x29) {
        for (;;) {
          const att = c.atom().toUpperCase();
          c.sp();
          // APPENDLIMIT may be NIL (RFC 7889); MAILBOXID is a list (RFC 8474); the rest are numbers.
          if (att === 'APPENDLIMIT' && c.s.startsWith('NIL', c.pos)) c.pos += 3;
          else if (att === 'MAILBOXID') c.value();
          else c.scan((x) => x >= 0x30 && x <= 0x39) || c.fail(`STATUS ${att} without a number`);
          if (!c.trySp()) break;
        }
      }
      c.char(')');
      break;
    }
    case 'ENABLED':
      while (c.trySp()) c.atom();
      break;
    case 'GENURLAUTH':
      // RFC 4467 §9: "GENURLAUTH" 1*(SP url-full), url-full an astring.
      c.sp();
      c.astring();
      while (c.trySp()) c.astring();
      break;
    case 'URLFETCH': {
      // RFC 4467 §9: "URLFETCH" 1*(SP url SP nstring); RFC 5524 §5 adds urldata-ext:
      // url 1*(SP "(" url-metadata-el ")"), each element one BODYPARTSTRUCTURE body, BODY nstring or BINARY (nstring / literal8).
      const element = (v: Value): void => {
        if (v.t !== 'list' || v.v.length !== 2) c.fail('URLFETCH metadata element is not "(" name SP value ")"');
        const [name, value] = v.v as [Value, Value];
        if (name.t !== 'atom' || !['BODYPARTSTRUCTURE', 'BODY', 'BINARY'].includes(name.v)) c.fail('URLFETCH metadata item is not BODYPARTSTRUCTURE, BODY or BINARY');
        if (name.v === 'BODYPARTSTRUCTURE' ? value.t !== 'list' : value.t !== 'str' && value.t !== 'nil') c.fail(`URLFETCH ${name.v} has the wrong kind of value`);
      };
      do {
        c.sp();
        c.astring();
        c.sp();
        const v = c.value();
        if (v.t === 'list') {
          element(v);
          while (c.peek() === 0x20 && c.s.charCodeAt(c.pos + 1) === 0x28 /* ( */) {
            c.sp();
            element(c.value());
          }
        } else if (v.t !== 'nil' && v.t !== 'str') c.fail('URLFETCH data is neither NIL, a string nor a metadata list');
      } while (c.peek() === 0x20);
      break;
    }
    case 'NAMESPACE':
      for (let i = 0; i < 3; i++) {
        c.sp();
        const v = c.value();
        if (v.t !== 'nil' && v.t !== 'list') c.fail('namespace is neither NIL nor a list');
      }
      break;
    case 'ID': {
      c.sp();
      const v = c.value();
      if (v.t !== 'nil' && (v.t !== 'list' || v.v.length % 2 !== 0)) c.fail('ID is neither NIL nor a list of pairs');
      break;
    }
    default:
      c.fail(`unknown untagged response ${word}`);
  }
  c.expectEnd();
  return out;
}

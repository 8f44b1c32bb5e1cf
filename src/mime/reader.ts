/**
 * A small RFC 5322 / RFC 2045 lexer over header value bytes, shared by the
 * address, Content-Type and parameter parsers.
 *
 * The parse methods return 1 when more input follows, 0 at the end of the
 * input and -1 on a syntax error, so the grammar code above can tell
 * "stopped at end" from "stopped at something unexpected".
 */

export type Step = -1 | 0 | 1;

const enum C {
  TAB = 9,
  LF = 10,
  CR = 13,
  SP = 32,
  DQUOTE = 34,
  LPAREN = 40,
  RPAREN = 41,
  DOT = 46,
  LBRACKET = 91,
  BACKSLASH = 92,
  RBRACKET = 93,
}

let atextTable: Uint8Array | null = null;
let tokenTable: Uint8Array | null = null;

/** atext of RFC 5322 (8-bit bytes accepted, as mailers send raw UTF-8). */
function atext(): Uint8Array {
  if (atextTable === null) {
    const t = new Uint8Array(256);
    for (let c = 0x21; c < 0x7f; c++) t[c] = 1;
    for (const ch of '()<>[]:;@\\,."') t[ch.charCodeAt(0)] = 0;
    for (let c = 0x80; c < 0x100; c++) t[c] = 1;
    atextTable = t;
  }
  return atextTable;
}

/** token characters of RFC 2045 (no tspecials, no SP / CTLs; 8-bit accepted). */
function tokenChars(): Uint8Array {
  if (tokenTable === null) {
    const t = new Uint8Array(256);
    for (let c = 0x21; c < 0x7f; c++) t[c] = 1;
    for (const ch of '()<>@,;:\\"/[]?=') t[ch.charCodeAt(0)] = 0;
    for (let c = 0x80; c < 0x100; c++) t[c] = 1;
    tokenTable = t;
  }
  return tokenTable;
}

/** Growable byte accumulator. */
export class Bytes {
  private parts: number[] = [];
  push(byte: number): void {
    this.parts.push(byte);
  }
  append(src: Buffer, start: number, end: number): void {
    for (let i = start; i < end; i++) this.parts.push(src[i]!);
  }
  get length(): number {
    return this.parts.length;
  }
  clear(): void {
    this.parts.length = 0;
  }
  toBuffer(): Buffer {
    return Buffer.from(this.parts);
  }
}

export class Reader {
  pos: number;
  /** Content of the comment skipped last (escapes resolved, line breaks dropped). */
  lastComment: Buffer | null = null;

  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  more(): boolean {
    return this.pos < this.end;
  }

  /** The current byte, or -1 at the end. */
  cur(): number {
    return this.pos < this.end ? this.buf[this.pos]! : -1;
  }

  isAtext(c: number): boolean {
    return c >= 0 && atext()[c] === 1;
  }

  /** Skip whitespace, line breaks and (nested) comments. */
  skipCfws(): Step {
    const buf = this.buf;
    while (this.pos < this.end) {
      const c = buf[this.pos]!;
      if (c === C.SP || c === C.TAB || c === C.CR || c === C.LF) {
        this.pos++;
      } else if (c === C.LPAREN) {
        if (!this.skipComment()) return -1;
      } else {
        return 1;
      }
    }
    return 0;
  }

  private skipComment(): boolean {
    const buf = this.buf;
    const out = new Bytes();
    let level = 1;
    this.pos++;
    while (this.pos < this.end) {
      const c = buf[this.pos]!;
      if (c === C.BACKSLASH) {
        this.pos++;
        if (this.pos >= this.end) return false;
        out.push(buf[this.pos]!);
      } else if (c === C.LPAREN) {
        level++;
        out.push(c);
      } else if (c === C.RPAREN) {
        if (--level === 0) {
          this.pos++;
          this.lastComment = out.toBuffer();
          return true;
        }
        out.push(c);
      } else if (c !== C.CR && c !== C.LF) {
        out.push(c);
      }
      this.pos++;
    }
    return false;
  }

  /** A run of atext (dots included when `dots`), CFWS after it skipped. */
  parseAtom(out: Bytes, dots = false): Step {
    const t = atext();
    const buf = this.buf;
    const start = this.pos;
    while (this.pos < this.end) {
      const c = buf[this.pos]!;
      if (t[c] === 1 || (dots && c === C.DOT)) this.pos++;
      else break;
    }
    if (this.pos === start) return -1;
    out.append(buf, start, this.pos);
    return this.skipCfws();
  }

  /** dot-atom: atoms joined by dots, CFWS around the dots dropped; a dot before anything but an atom is an error. */
  parseDotAtom(out: Bytes): Step {
    if (!this.isAtext(this.cur())) return -1;
    const t = atext();
    const buf = this.buf;
    for (;;) {
      const start = this.pos;
      while (this.pos < this.end && t[buf[this.pos]!] === 1) this.pos++;
      out.append(buf, start, this.pos);
      let r = this.skipCfws();
      if (r <= 0) return r;
      if (this.cur() !== C.DOT) return 1;
      this.pos++;
      out.push(C.DOT);
      r = this.skipCfws();
      if (r <= 0) return r;
      if (!this.isAtext(this.cur())) return -1; // a dot must be followed by an atom (`b.,` is broken)
    }
  }

  /** quoted-string: content unescaped, folding line breaks dropped, CFWS after it skipped. */
  parseQuotedString(out: Bytes): Step {
    this.pos++; // opening quote
    return this.copyUntil(out, C.DQUOTE, false);
  }

  /**
   * Copies bytes up to `close` (quoted-pairs unescaped, folding line breaks
   * dropped), then skips CFWS. `keepClose` also copies the closing byte.
   */
  private copyUntil(out: Bytes, close: number, keepClose: boolean): Step {
    const buf = this.buf;
    while (this.pos < this.end) {
      const c = buf[this.pos]!;
      if (c === close) {
        if (keepClose) out.push(c);
        this.pos++;
        return this.skipCfws();
      }
      if (c === C.BACKSLASH) {
        this.pos++;
        if (this.pos >= this.end) return -1;
        out.push(buf[this.pos]!);
      } else if (c !== C.CR && c !== C.LF) {
        out.push(c);
      }
      this.pos++;
    }
    return -1;
  }

  /**
   * phrase (obs-phrase allowed): words and dots, joined by single spaces
   * (a dot sticks to the word before it). May be empty.
   */
  parsePhrase(out: Bytes): Step {
    if (!this.more()) return 0;
    let words = 0;
    for (;;) {
      const c = this.cur();
      if (c === C.DQUOTE) {
        if (words++ > 0) out.push(C.SP);
        const r = this.parseQuotedString(out);
        if (r <= 0) return r;
      } else if (c === C.DOT || this.isAtext(c)) {
        if (words++ > 0 && c !== C.DOT) out.push(C.SP);
        const r = this.parseAtom(out, true);
        if (r <= 0) return r;
      } else {
        return 1;
      }
    }
  }

  /** domain after '@': dot-atom or [domain-literal]. The current byte must be '@'. */
  parseDomain(out: Bytes): Step {
    this.pos++;
    const r = this.skipCfws();
    if (r <= 0) return r;
    if (this.cur() !== C.LBRACKET) return this.parseDotAtom(out);
    out.push(C.LBRACKET);
    this.pos++;
    return this.copyUntil(out, C.RBRACKET, true);
  }

  /**
   * RFC 2045 token as a view of the input (no copy), CFWS after it skipped.
   * @returns the token, or null when no token character is at hand
   */
  tokenView(): Buffer | null {
    const t = tokenChars();
    const buf = this.buf;
    const start = this.pos;
    while (this.pos < this.end && t[buf[this.pos]!] === 1) this.pos++;
    if (this.pos === start) return null;
    const view = buf.subarray(start, this.pos);
    this.skipCfws();
    return view;
  }
}

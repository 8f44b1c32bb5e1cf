/**
 * Test-only reading of FETCH responses as text (latin1: one char per byte,
 * so literal bytes survive): a generic value parser, a canonical rendering
 * that ignores the quoted-vs-literal choice, and a strict checker of the
 * RFC 3501 §9 / RFC 9051 §9 grammar of `body` and `envelope` that looks at
 * every SP and parenthesis.
 */

export type Val =
  | { t: 'nil' }
  | { t: 'num'; v: string }
  | { t: 'atom'; v: string }
  | { t: 'str'; v: string; lit: boolean }
  | { t: 'list'; v: Val[] };

/** One FETCH item: its value and the exact text of the value on the wire. */
export interface Item {
  val: Val;
  raw: string;
}

class ValueParser {
  pos = 0;
  constructor(readonly s: string) {}

  fail(what: string): never {
    throw new Error(`${what} at ${this.pos}: ${JSON.stringify(this.s.slice(Math.max(0, this.pos - 40), this.pos + 40))}`);
  }

  value(): Val {
    const s = this.s;
    const c = s[this.pos];
    if (c === '(') {
      this.pos++;
      const v: Val[] = [];
      while (s[this.pos] !== ')') {
        if (this.pos >= s.length) this.fail('unterminated list');
        if (v.length > 0 && s[this.pos] === ' ') this.pos++;
        v.push(this.value());
      }
      this.pos++;
      return { t: 'list', v };
    }
    if (c === '"') {
      let out = '';
      this.pos++;
      for (;;) {
        const ch = s[this.pos++];
        if (ch === undefined) this.fail('unterminated quoted string');
        if (ch === '"') break;
        if (ch === '\\') out += s[this.pos++];
        else out += ch;
      }
      return { t: 'str', v: out, lit: false };
    }
    if (c === '{' || (c === '~' && s[this.pos + 1] === '{')) {
      const m = /^~?\{(\d+)\+?\}\r\n/.exec(s.slice(this.pos, this.pos + 30));
      if (!m) this.fail('bad literal');
      const start = this.pos + m[0].length;
      const n = Number(m[1]);
      if (start + n > s.length) this.fail('short literal');
      this.pos = start + n;
      return { t: 'str', v: s.slice(start, start + n), lit: true };
    }
    // atom, number or NIL; brackets may hold spaces and parentheses (BODY[HEADER.FIELDS (A B)])
    const start = this.pos;
    let depth = 0;
    while (this.pos < s.length) {
      const ch = s[this.pos]!;
      if (ch === '[') depth++;
      else if (ch === ']') depth--;
      else if (depth === 0 && (ch === ' ' || ch === '(' || ch === ')')) break;
      this.pos++;
    }
    const text = s.slice(start, this.pos);
    if (text.length === 0) this.fail('empty atom');
    if (text === 'NIL') return { t: 'nil' };
    if (/^\d+$/.test(text)) return { t: 'num', v: text };
    return { t: 'atom', v: text };
  }
}

/**
 * Splits `* n FETCH (label value label value ...)` into its items.
 * @returns items by label (as the server wrote it, upper-cased)
 */
export function parseFetch(line: string): Map<string, Item> {
  const m = /^\* \d+ FETCH \(/.exec(line);
  if (!m) throw new Error(`not a FETCH response: ${line.slice(0, 80)}`);
  const p = new ValueParser(line);
  p.pos = m[0].length;
  const out = new Map<string, Item>();
  while (line[p.pos] !== ')') {
    if (out.size > 0) {
      if (line[p.pos] !== ' ') p.fail('expected SP between items');
      p.pos++;
    }
    const label = p.value();
    if (label.t !== 'atom') throw new Error('expected an item name');
    if (line[p.pos] !== ' ') p.fail('expected SP after item name');
    p.pos++;
    const start = p.pos;
    const val = p.value();
    out.set(label.v.toUpperCase(), { val, raw: line.slice(start, p.pos) });
  }
  if (p.pos !== line.length - 1) p.fail('text after the FETCH list');
  return out;
}

/** A rendering that is equal for equal values (strings shown the same whether quoted or literal). */
export function show(v: Val): string {
  switch (v.t) {
    case 'nil':
      return 'NIL';
    case 'num':
    case 'atom':
      return v.v;
    case 'str':
      return JSON.stringify(v.v);
    case 'list':
      return `(${v.v.map(show).join(' ')})`;
  }
}

/** Strict recursive-descent checker of `body` and `envelope` (RFC 3501 §9, with RFC 9051's message/global). */
class Grammar extends ValueParser {
  sp(): void {
    if (this.s[this.pos] !== ' ') this.fail('expected SP');
    this.pos++;
  }
  open(): void {
    if (this.s[this.pos] !== '(') this.fail('expected "("');
    this.pos++;
  }
  close(): void {
    if (this.s[this.pos] !== ')') this.fail('expected ")"');
    this.pos++;
  }
  nil(): boolean {
    if (this.s.startsWith('NIL', this.pos)) {
      this.pos += 3;
      return true;
    }
    return false;
  }
  string(): string {
    const c = this.s[this.pos];
    if (c !== '"' && c !== '{') this.fail('expected a string');
    const v = this.value();
    return v.t === 'str' ? v.v : this.fail('expected a string');
  }
  nstring(): string | null {
    return this.nil() ? null : this.string();
  }
  number(): void {
    const m = /^\d+/.exec(this.s.slice(this.pos, this.pos + 12));
    if (!m) this.fail('expected a number');
    this.pos += m[0].length;
  }
  param(): void {
    if (this.nil()) return;
    this.open();
    this.string();
    this.sp();
    this.string();
    while (this.s[this.pos] === ' ') {
      this.sp();
      this.string();
      this.sp();
      this.string();
    }
    this.close();
  }
  fields(): void {
    this.param();
    this.sp();
    this.nstring();
    this.sp();
    this.nstring();
    this.sp();
    this.string();
    this.sp();
    this.number();
  }
  dsp(): void {
    if (this.nil()) return;
    this.open();
    this.string();
    this.sp();
    this.param();
    this.close();
  }
  lang(): void {
    if (this.s[this.pos] !== '(') {
      this.nstring();
      return;
    }
    this.open();
    this.string();
    while (this.s[this.pos] === ' ') {
      this.sp();
      this.string();
    }
    this.close();
  }
  extension(): void {
    if (this.s[this.pos] === '(') {
      this.open();
      this.extension();
      while (this.s[this.pos] === ' ') {
        this.sp();
        this.extension();
      }
      this.close();
    } else if (/\d/.test(this.s[this.pos] ?? '')) {
      this.number();
    } else {
      this.nstring();
    }
  }
  /** `[SP dsp [SP lang [SP loc *(SP extension)]]]` after md5 / params. */
  extTail(): void {
    if (this.s[this.pos] !== ' ') return;
    this.sp();
    this.dsp();
    if (this.s[this.pos] !== ' ') return;
    this.sp();
    this.lang();
    if (this.s[this.pos] !== ' ') return;
    this.sp();
    this.nstring();
    while (this.s[this.pos] === ' ') {
      this.sp();
      this.extension();
    }
  }
  body(): void {
    this.open();
    if (this.s[this.pos] === '(') {
      do this.body();
      while (this.s[this.pos] === '(');
      this.sp();
      this.string();
      if (this.s[this.pos] === ' ') {
        this.sp();
        this.param();
        this.extTail();
      }
    } else {
      const type = this.string().toUpperCase();
      this.sp();
      const subtype = this.string().toUpperCase();
      this.sp();
      this.fields();
      if (type === 'TEXT') {
        this.sp();
        this.number();
      } else if (type === 'MESSAGE' && (subtype === 'RFC822' || subtype === 'GLOBAL') && this.s.startsWith(' (', this.pos)) {
        this.sp();
        this.envelope();
        this.sp();
        this.body();
        this.sp();
        this.number();
      } else if (type === 'MESSAGE' && subtype === 'RFC822') {
        this.fail('message/rfc822 without envelope');
      }
      if (this.s[this.pos] === ' ') {
        this.sp();
        this.nstring();
        this.extTail();
      }
    }
    this.close();
  }
  addresses(): void {
    if (this.nil()) return;
    this.open();
    do {
      this.open();
      this.nstring();
      this.sp();
      this.nstring();
      this.sp();
      this.nstring();
      this.sp();
      this.nstring();
      this.close();
    } while (this.s[this.pos] === '(');
    this.close();
  }
  envelope(): void {
    this.open();
    this.nstring();
    this.sp();
    this.nstring();
    for (let i = 0; i < 6; i++) {
      this.sp();
      this.addresses();
    }
    this.sp();
    this.nstring();
    this.sp();
    this.nstring();
    this.close();
  }
}

/**
 * Checks the wire text of a BODY/BODYSTRUCTURE or ENVELOPE value against
 * the grammar.
 * @returns null when it conforms, else the first error
 */
export function grammarError(kind: 'body' | 'envelope', raw: string): string | null {
  const g = new Grammar(raw);
  try {
    if (kind === 'body') g.body();
    else g.envelope();
    if (g.pos !== raw.length) g.fail('trailing text');
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

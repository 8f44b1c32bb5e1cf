/**
 * Turns typed response values (`./values.ts`) into bytes.
 *
 * The one rule for strings on the wire: a quoted string never carries CR,
 * LF, NUL or an octet above 0x7F (RFC 3501 §9 and RFC 9051 §9 QUOTED-CHAR;
 * RFC 3516 §4.3). Strings and Buffers go out quoted when every byte is a
 * TEXT-CHAR (7-bit, no NUL, CR or LF), with `"` and `\` escaped, and as a
 * literal `{n}\r\n<bytes>` otherwise, whatever produced them (message
 * parts, BINARY, URLFETCH, METADATA values, PREVIEW, ENVELOPE fields, a
 * script's `set`). `Utf8Text`, which only a session that enabled
 * UTF8=ACCEPT or IMAP4rev2 makes, may be quoted with UTF-8 in it (RFC 6855
 * §3 uQUOTED-CHAR: well-formed UTF-8, still no CR, LF or NUL); a plain
 * string with 8-bit text is a literal even then, which every client reads.
 * NUL goes out only in a literal8 `~{n}`, and only a `Literal` marked
 * binary makes one: the producer says where the grammar allows it (BINARY,
 * METADATA values); elsewhere a NUL is sent as 0x80 in a plain literal.
 * `Atom` is written as it is, so one with CR, LF, NUL or 8-bit is refused
 * (`astring()` in ./values.ts makes atoms only of text that can be one);
 * only `Raw`, from script rules that break the grammar on purpose, is not
 * checked. `null` is NIL, arrays are
 * parenthesized lists with SP between elements — except, in a list marked
 * with `adjoined()`, between the lists of its leading run, which the
 * grammar writes back to back (RFC 3501 §9 `body-type-mpart = 1*body SP
 * media-subtype`, `env-from = "(" 1*address ")"`: `...)(...`).
 *
 * Output is built as runs of ASCII text plus the Buffers that must go out
 * verbatim, and concatenated once per call.
 */
import { Atom, Literal, Raw, Utf8Text, type ImapValue } from './values.js';

export type ResponseStatus = 'OK' | 'NO' | 'BAD';
export type UntaggedStatus = ResponseStatus | 'BYE' | 'PREAUTH';

/**
 * A response code: its name alone (`'READ-WRITE'`) or with arguments
 * (`{ name: 'UIDNEXT', args: [4392] }`, `{ name: 'PERMANENTFLAGS', args: [[atom('\\Seen')]] }`).
 * Arguments are encoded like any value and separated by spaces.
 */
export type ResponseCode = string | { name: string; args?: readonly ImapValue[] };

/** Characters that force a literal in a JS string: NUL, CR, LF and anything above 0x7F. */
const NEEDS_LITERAL = /[\x00\r\n\u0080-\uffff]/;
const QUOTED_SPECIAL = /["\\]/g;
const TEXT_UNSAFE = /[\r\n\x00]/g;
/** What a UTF-8 quoted string (RFC 6855) cannot hold. */
const UTF8_NEEDS_LITERAL = /[\r\n\x00]/;
/** resp-text is 7-bit TEXT-CHARs (RFC 3501 §9): anything else is shown as `?`. */
const NOT_ASCII = /[^\x01-\x7f]/g;
const LITERAL_AT_END = /\{\d+\+?\}$/;

const ADJOINED = new WeakSet<readonly ImapValue[]>();

/**
 * Marks `list` so that the lists at its start are written without SP
 * between them: the `1*body` of a multipart BODYSTRUCTURE and the
 * `1*address` of an ENVELOPE address list. Later elements are separated as
 * usual (`(...)(...) "mixed" ("boundary" "b") NIL`).
 * @returns `list` itself
 */
export function adjoined<T extends ImapValue[]>(list: T): T {
  ADJOINED.add(list);
  return list;
}

/** Whether `list` was marked by `adjoined()`. */
export function isAdjoined(list: readonly ImapValue[]): boolean {
  return ADJOINED.has(list);
}

/** A copy of `data` with every NUL byte replaced by 0x80. */
function withoutNul(data: Buffer): Buffer {
  const copy = Buffer.from(data);
  for (let i = copy.indexOf(0); i >= 0; i = copy.indexOf(0, i + 1)) copy[i] = 0x80;
  return copy;
}

function bufferIsQuotable(buf: Buffer): boolean {
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (c === 0 || c === 0x0d || c === 0x0a || c > 0x7f) return false;
  }
  return true;
}

/**
 * Accumulates output: ASCII text in `text`, flushed into `parts` whenever
 * raw bytes must be inserted.
 */
/** Status texts made safe, by their text: most are a few constants (`NOOP completed`), sent for every command. */
const CLEAN_TEXTS = new Map<string, string>();
/** Bounded: texts that echo a client's words are many. */
const CLEAN_TEXTS_MAX = 1024;
const CLEAN_TEXT_LONGEST = 200;

/** Human-readable text made safe for a response line (CR, LF and NUL become spaces, non-ASCII `?`). */
function cleanText(text: string): string {
  const known = CLEAN_TEXTS.get(text);
  if (known !== undefined) return known;
  let clean = text.replace(TEXT_UNSAFE, ' ').replace(NOT_ASCII, '?');
  // Text that ends like a literal marker would make a client that scans for `{n}` first wait
  // for bytes that never come (an echoed mailbox name `{3}`, say).
  if (LITERAL_AT_END.test(clean)) clean += '.';
  if (CLEAN_TEXTS.size < CLEAN_TEXTS_MAX && text.length <= CLEAN_TEXT_LONGEST) CLEAN_TEXTS.set(text, clean);
  return clean;
}

class Writer {
  private parts: Buffer[] = [];
  private size = 0;
  text = '';

  /** A script rule's `literals: true`: every string goes out as a literal. */
  constructor(private readonly forceLiterals = false) {}

  bytes(buf: Buffer): void {
    this.flushText();
    if (buf.length === 0) return;
    this.parts.push(buf);
    this.size += buf.length;
  }

  private flushText(): void {
    if (this.text.length === 0) return;
    const buf = Buffer.from(this.text, 'utf8');
    this.parts.push(buf);
    this.size += buf.length;
    this.text = '';
  }

  value(value: ImapValue): void {
    if (value === null) {
      this.text += 'NIL';
    } else if (typeof value === 'number') {
      if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`Not an IMAP number: ${value}`);
      this.text += String(value);
    } else if (typeof value === 'string') {
      if (this.forceLiterals || NEEDS_LITERAL.test(value)) {
        this.literal(Buffer.from(value, 'utf8'), false);
      } else {
        this.text += `"${value.replace(QUOTED_SPECIAL, '\\$&')}"`;
      }
    } else if (Array.isArray(value)) {
      this.text += '(';
      // in an adjoined list, the leading run of lists goes out back to back
      let run = ADJOINED.has(value);
      for (let i = 0; i < value.length; i++) {
        const item = value[i]!;
        if (run && !Array.isArray(item)) run = false;
        if (i > 0 && !run) this.text += ' ';
        this.value(item);
      }
      this.text += ')';
    } else if (value instanceof Atom) {
      if (NEEDS_LITERAL.test(value.value)) throw new TypeError(`Not an IMAP atom: ${JSON.stringify(value.value.slice(0, 40))}`);
      this.text += value.value;
    } else if (value instanceof Literal) {
      this.literal(value.data, value.binary);
    } else if (value instanceof Utf8Text) {
      // RFC 6855 §3 uQUOTED-CHAR: UTF-8 may be quoted; CR, LF and NUL still need a literal.
      if (this.forceLiterals || UTF8_NEEDS_LITERAL.test(value.value)) this.literal(Buffer.from(value.value, 'utf8'), false);
      else this.text += `"${value.value.replace(QUOTED_SPECIAL, '\\$&')}"`;
    } else if (value instanceof Raw) {
      this.bytes(value.data);
    } else if (Buffer.isBuffer(value)) {
      if (!this.forceLiterals && bufferIsQuotable(value)) {
        this.text += `"${value.toString('latin1').replace(QUOTED_SPECIAL, '\\$&')}"`;
      } else {
        this.literal(value, false);
      }
    } else {
      throw new TypeError('Not an IMAP value');
    }
  }

  literal(data: Buffer, binary: boolean): void {
    // A literal is CHAR8, which has no NUL (RFC 3501 §9); only literal8 may carry one. Like
    // Dovecot, a NUL in a message served as text goes out as 0x80, so the size stays the same.
    if (!binary && data.indexOf(0) >= 0) data = withoutNul(data);
    this.text += `${binary ? '~' : ''}{${data.length}}\r\n`;
    this.bytes(data);
  }

  values(values: readonly ImapValue[]): void {
    for (let i = 0; i < values.length; i++) {
      if (i > 0) this.text += ' ';
      this.value(values[i]!);
    }
  }

  code(code: ResponseCode | null | undefined): void {
    if (code === null || code === undefined) return;
    if (typeof code === 'string') {
      this.text += ` [${code}]`;
      return;
    }
    this.text += ` [${code.name}`;
    if (code.args !== undefined && code.args.length > 0) {
      this.text += ' ';
      this.values(code.args);
    }
    this.text += ']';
  }

  /** Human-readable text: CR, LF and NUL would break the line, so they become spaces. */
  humanText(text: string): void {
    this.text += cleanText(text);
  }

  /** What was written, as UTF-8 text when it is text only (no literal or raw bytes), else as bytes. */
  finishTextOrBytes(): string | Buffer {
    return this.parts.length === 0 ? this.text : this.finish();
  }

  finish(): Buffer {
    this.flushText();
    if (this.parts.length === 1) return this.parts[0]!;
    return Buffer.concat(this.parts, this.size);
  }
}

/** Encodes one value. */
export function encodeValue(value: ImapValue): Buffer {
  const w = new Writer();
  w.value(value);
  return w.finish();
}

/** `<prefix> v1 v2 ...\r\n`; `prefix` is written as it is (`*`, a tag, `+`). */
export function encodeResponse(prefix: string, ...values: ImapValue[]): Buffer {
  return encodeResponseOf(prefix, values);
}

/**
 * `encodeResponse` for a list of any length: a SEARCH answer over 100,000
 * messages must not pass its numbers as call arguments (the stack limit).
 */
export function encodeResponseOf(prefix: string, values: readonly ImapValue[], options?: { literals?: boolean }): Buffer {
  return responseWriter(prefix, values, options?.literals === true).finish();
}

/** A Writer holding `<prefix> v1 v2 ...\r\n`. */
function responseWriter(prefix: string, values: readonly ImapValue[], literals: boolean): Writer {
  const w = new Writer(literals);
  w.text = prefix;
  if (values.length > 0) {
    w.text += ' ';
    w.values(values);
  }
  w.text += '\r\n';
  return w;
}

/**
 * `encodeResponseOf` as UTF-8 text when the response is text only (no
 * literal), so a session can add it to its turn's output without a buffer
 * of its own; as bytes otherwise.
 */
export function encodeResponseTextOrBytes(prefix: string, values: readonly ImapValue[]): string | Buffer {
  return responseWriter(prefix, values, false).finishTextOrBytes();
}

/** `* v1 v2 ...\r\n`, e.g. `untagged(3, atom('FETCH'), [atom('UID'), 7])`. */
export function untagged(...values: ImapValue[]): Buffer {
  return encodeResponseOf('*', values);
}

/**
 * The usual status line (`tag OK text`, `tag NO [CODE] text`) as one
 * UTF-8 string; null when the code has arguments (the serializer writes
 * those). A session adds the string to its turn's output without making a
 * buffer of its own (src/connection/connection.ts `writeText`).
 */
export function statusText(prefix: string, state: string, code: ResponseCode | null | undefined, text: string): string | null {
  if (code === null || code === undefined) return text.length > 0 ? `${prefix} ${state} ${cleanText(text)}\r\n` : `${prefix} ${state}\r\n`;
  if (typeof code === 'string') return text.length > 0 ? `${prefix} ${state} [${code}] ${cleanText(text)}\r\n` : `${prefix} ${state} [${code}]\r\n`;
  return null;
}

function status(prefix: string, state: string, code: ResponseCode | null | undefined, text: string): Buffer {
  // The usual answer, `tag OK text`: one string, one buffer.
  const plain = statusText(prefix, state, code, text);
  if (plain !== null) return Buffer.from(plain, 'utf8');
  const w = new Writer();
  w.text = `${prefix} ${state}`;
  w.code(code);
  if (text.length > 0) {
    w.text += ' ';
    w.humanText(text);
  }
  w.text += '\r\n';
  return w.finish();
}

/** `A1 OK [CODE args] text\r\n`. */
export function tagged(tag: string, state: ResponseStatus, code: ResponseCode | null | undefined, text: string): Buffer {
  return status(tag, state, code, text);
}

/** `* OK [CODE args] text\r\n` (also NO, BAD, BYE, PREAUTH). */
export function untaggedStatus(state: UntaggedStatus, code: ResponseCode | null | undefined, text: string): Buffer {
  return status('*', state, code, text);
}

/** `+ text\r\n` (`+ \r\n` for empty text, e.g. an empty SASL challenge). */
export function continuation(text = ''): Buffer {
  const w = new Writer();
  w.text = '+ ';
  w.humanText(text);
  w.text += '\r\n';
  return w.finish();
}

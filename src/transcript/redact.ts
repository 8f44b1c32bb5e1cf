/**
 * Takes credentials out of what a client sends before it reaches a
 * transcript: the password of LOGIN, the initial response of AUTHENTICATE
 * (RFC 4959 SASL-IR) and every SASL response line that follows it. Each
 * becomes `***`; everything else passes byte for byte.
 *
 * It follows the client's byte stream the way the server frames it: command
 * lines, `{n}` / `{n+}` / `~{n}` literals (whose bytes are never read as
 * commands), and the lines of an AUTHENTICATE exchange. A LOGIN command is
 * held until its end (it is short: the server bounds commands before login)
 * so that a password sent as a literal is caught too.
 */

/** What a credential is replaced with. */
export const REDACTED = '***';

/** Bytes read at a line start to find the command name. */
const HEAD_BYTES = 64;
/** A LOGIN held beyond this is not a real login: the rest is dropped, not kept. */
const MAX_HELD = 256 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const CLOSE_BRACE = 0x7d;

const LOGIN = Buffer.from('LOGIN');
const AUTHENTICATE = Buffer.from('AUTHENTICATE');

/**
 * The command a line starts with when it is one whose arguments are
 * credentials, null for any other, undefined when `view` (the line's first
 * bytes) does not tell yet. Byte by byte: it runs for every command.
 */
function commandName(view: Buffer, from = 0, to = view.length): 'LOGIN' | 'AUTHENTICATE' | null | undefined {
  const length = to - from;
  let sp = view.indexOf(SP, from);
  if (sp >= to) sp = -1;
  if (sp < 0) {
    const lf = view.indexOf(LF, from);
    return (lf >= 0 && lf < to) || length >= HEAD_BYTES ? null : undefined;
  }
  let end = sp + 1;
  while (end < to && view[end] !== SP && view[end] !== CR && view[end] !== LF) end++;
  if (end === to && length < HEAD_BYTES) return undefined;
  const len = end - sp - 1;
  const word = len === 5 ? LOGIN : len === 12 ? AUTHENTICATE : null;
  if (!word) return null;
  for (let k = 0; k < len; k++) {
    // ASCII letters only: clearing bit 0x20 upper-cases them.
    if ((view[sp + 1 + k]! & 0xdf) !== word[k]) return null;
  }
  return len === 5 ? 'LOGIN' : 'AUTHENTICATE';
}

/**
 * True when the line that starts at `start` ends at `lf` (an LF, -1: not
 * in this chunk) with CRLF and no `}` before it: no literal follows it.
 */
function endsWithoutLiteral(chunk: Buffer, start: number, lf: number): boolean {
  return lf - start >= 2 && chunk[lf - 1] === CR && chunk[lf - 2] !== CLOSE_BRACE;
}

/**
 * True when `chunk` is whole command lines (it ends with an LF), none of
 * which announces a literal or is a LOGIN or AUTHENTICATE: nothing in it
 * is redacted and nothing follows it. A pipelining client sends dozens of
 * such lines in one chunk; they are looked at in place.
 */
function isPlainCommandLines(chunk: Buffer): boolean {
  if (chunk.length === 0 || chunk[chunk.length - 1] !== LF) return false;
  for (let start = 0; start < chunk.length; ) {
    const lf = chunk.indexOf(LF, start);
    if (!endsWithoutLiteral(chunk, start, lf) || commandName(chunk, start, lf + 1) !== null) return false;
    start = lf + 1;
  }
  return true;
}

type Mode = 'start' | 'line' | 'literal' | 'sasl';

export class CredentialFilter {
  private mode: Mode = 'start';
  /** Bytes of a command line's start not yet classified (split across chunks). */
  private head: Buffer | null = null;
  private literalLeft = 0;
  /** A synchronizing literal the server has not yet agreed to (`+`): a refusal cancels it. */
  private syncPending = false;
  /** The last bytes of the current line: a literal header `{n}` at its end spans chunks. */
  private tail = '';
  /** The held LOGIN command (or AUTHENTICATE line) and its name, or null. */
  private held: Buffer[] | null = null;
  private heldBytes = 0;
  private heldKind: 'LOGIN' | 'AUTHENTICATE' | null = null;
  /** Tag of the command being read (a refused literal is answered with it). */
  private tag = '';
  /** A SASL response line split across chunks. */
  private saslLine: Buffer | null = null;
  private out: Buffer[] = [];

  /** The bytes to record for a chunk from the client (null: nothing yet, held). */
  client(chunk: Buffer): Buffer | null {
    // The usual chunk: whole command lines, no literal, no credential. It passes as it is.
    if (this.mode === 'start' && this.head === null && isPlainCommandLines(chunk)) return chunk;
    const out = this.out;
    out.length = 0;
    this.feed(chunk);
    if (out.length === 0) return null;
    const result = out.length === 1 ? out[0]! : Buffer.concat(out);
    out.length = 0;
    return result;
  }

  /** True while `server` has something to look for (a synchronizing literal awaiting its `+`); false for most output. */
  get watchesServer(): boolean {
    return this.syncPending && this.mode === 'literal';
  }

  /**
   * Sees what the server sends: a synchronizing literal the server refuses
   * (a tagged NO instead of `+`) is never sent, so what follows is a new command.
   */
  server(chunk: Buffer): void {
    if (!this.syncPending || this.mode !== 'literal') return;
    this.syncPending = false;
    if (chunk[0] === 0x2b /* + */) return;
    const text = chunk.toString('latin1');
    if (text.startsWith(`${this.tag} `) || text.includes(`\r\n${this.tag} `)) {
      this.literalLeft = 0;
      this.endCommand();
    }
  }

  private emit(data: Buffer): void {
    if (data.length === 0) return;
    if (this.held) {
      if (this.heldBytes + data.length > MAX_HELD) return;
      this.held.push(data);
      this.heldBytes += data.length;
    } else {
      this.out.push(data);
    }
  }

  private feed(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      switch (this.mode) {
        case 'literal': {
          this.syncPending = false;
          const n = Math.min(this.literalLeft, chunk.length - i);
          this.emit(chunk.subarray(i, i + n));
          this.literalLeft -= n;
          i += n;
          if (this.literalLeft === 0) {
            this.mode = 'line';
            this.tail = '';
          }
          break;
        }
        case 'line': {
          const lf = chunk.indexOf(LF, i);
          // The common line: it ends in this chunk with CRLF, not after a `}`: no literal follows.
          if (endsWithoutLiteral(chunk, i, lf)) {
            this.emit(chunk.subarray(i, lf + 1));
            i = lf + 1;
            this.tail = '';
            this.endCommand();
            break;
          }
          const end = lf < 0 ? chunk.length : lf + 1;
          const piece = chunk.subarray(i, end);
          this.emit(piece);
          this.tail = (this.tail + piece.subarray(Math.max(0, piece.length - 24)).toString('latin1')).slice(-24);
          i = end;
          if (lf >= 0) this.lineEnd();
          break;
        }
        case 'start':
          i = this.classify(chunk, i);
          break;
        case 'sasl':
          i = this.saslResponse(chunk, i);
          break;
      }
    }
  }

  /** A line ended: a literal follows it, or the command is complete. */
  private lineEnd(): void {
    const m = /(~?)\{(\d{1,12})(\+?)\}\r?\n$/.exec(this.tail);
    this.tail = '';
    if (m) {
      this.literalLeft = Number(m[2]);
      this.syncPending = m[3] !== '+';
      this.mode = this.literalLeft > 0 ? 'literal' : 'line';
      return;
    }
    this.endCommand();
  }

  private endCommand(): void {
    const kind = this.heldKind;
    if (this.held) {
      const held = Buffer.concat(this.held);
      this.held = null;
      this.heldBytes = 0;
      this.heldKind = null;
      this.emit(kind === 'LOGIN' ? redactLogin(held) : redactAuthenticate(held));
    }
    this.mode = kind === 'AUTHENTICATE' ? 'sasl' : 'start';
  }

  /** At a line start: reads far enough to know the command, then goes on in `line` mode. */
  private classify(chunk: Buffer, i: number): number {
    const available = chunk.length - i;
    let view: Buffer;
    let consumed: number;
    if (this.head) {
      const take = Math.min(available, HEAD_BYTES - this.head.length);
      view = Buffer.concat([this.head, chunk.subarray(i, i + take)]);
      consumed = take;
    } else {
      consumed = Math.min(available, HEAD_BYTES);
      view = chunk.subarray(i, i + consumed);
    }
    const name = commandName(view);
    if (name === undefined) {
      this.head = Buffer.from(view);
      return chunk.length;
    }
    this.head = null;
    const sp = view.indexOf(SP);
    this.tag = sp > 0 ? view.toString('latin1', 0, sp) : '';
    if (name !== null) {
      this.held = [];
      this.heldBytes = 0;
      this.heldKind = name;
    }
    this.mode = 'line';
    // The classified bytes go through `line` mode like any other; what came from an earlier chunk first.
    const before = view.length - consumed;
    if (before > 0) this.feed(view.subarray(0, before));
    return i;
  }

  /**
   * A line inside an AUTHENTICATE exchange: a SASL response (base64, no
   * space) becomes `***`, `*` (cancel) stays. A line with a space is a
   * command: the exchange is over.
   */
  private saslResponse(chunk: Buffer, i: number): number {
    const lf = chunk.indexOf(LF, i);
    const part = chunk.subarray(i, lf < 0 ? chunk.length : lf + 1);
    const line = this.saslLine ? Buffer.concat([this.saslLine, part]) : part;
    const spaced = line.indexOf(SP) >= 0;
    if (spaced) {
      // A command: read it from its start as any other.
      this.saslLine = null;
      this.mode = 'start';
      if (line !== part) this.feed(line.subarray(0, line.length - part.length));
      return i;
    }
    if (lf < 0) {
      this.saslLine = line.length > MAX_HELD ? line.subarray(0, 0) : Buffer.from(line);
      return chunk.length;
    }
    this.saslLine = null;
    const body = line.toString('latin1').replace(/\r?\n$/, '');
    this.emit(body === '*' ? line : Buffer.from(`${REDACTED}\r\n`, 'latin1'));
    return lf + 1;
  }
}

/** `tag LOGIN user password`: the password (atom, quoted string or literal) becomes `***`. */
export function redactLogin(command: Buffer): Buffer {
  const text = command.toString('latin1');
  const start = /^\S* \S+ /.exec(text);
  if (!start) return command;
  let at = start[0].length;
  const userEnd = astringEnd(text, at);
  if (userEnd < 0 || text[userEnd] !== ' ') return Buffer.from(`${text.slice(0, at)}${REDACTED}\r\n`, 'latin1');
  at = userEnd + 1;
  return Buffer.from(`${text.slice(0, at)}${REDACTED}\r\n`, 'latin1');
}

/** `tag AUTHENTICATE mechanism [initial-response]`: the initial response becomes `***`. */
export function redactAuthenticate(line: Buffer): Buffer {
  const text = line.toString('latin1');
  const m = /^(\S* \S+ \S+) \S/.exec(text);
  return m ? Buffer.from(`${m[1]} ${REDACTED}\r\n`, 'latin1') : line;
}

/** Index just past the astring starting at `at` (atom, quoted, or literal), or -1. */
function astringEnd(text: string, at: number): number {
  if (text[at] === '"') {
    for (let i = at + 1; i < text.length; i++) {
      if (text[i] === '\\') i++;
      else if (text[i] === '"') return i + 1;
    }
    return -1;
  }
  const lit = /^~?\{(\d+)\+?\}\r\n/.exec(text.slice(at, at + 24));
  if (lit) {
    const end = at + lit[0].length + Number(lit[1]);
    return end <= text.length ? end : -1;
  }
  const sp = text.indexOf(' ', at);
  return sp < 0 ? -1 : sp;
}

/**
 * Streaming framer of client input: turns socket chunks into whole commands
 * (CRLF-terminated lines with their literals) or raw lines.
 *
 * A command is delivered as `Segment[]`: text pieces (Buffers) alternating
 * with `LiteralSegment`s, starting and ending with text. A text piece never
 * contains the literal marker (`{n}`, `{n+}`, `~{n}`, `~{n+}`) nor the CRLF
 * that follows it; the literal sits where its marker was. The last text
 * piece has no CRLF. Example: `A1 LOGIN {3}\r\nbob pw\r\n` is
 * `[<"A1 LOGIN ">, Literal(<"bob">), <" pw">]`.
 *
 * Flow control is pull-based: after delivering a command or a line the
 * reader pauses until the owner calls `next(mode)`. A rejection (the
 * command was refused and discarded by the framer) does not pause: reading
 * goes on in the same mode; call `destroy()` from `onReject` to stop.
 * Input keeps being queued meanwhile (`bufferedBytes`); the owner pauses its
 * socket when that grows. Bytes the reader is consuming (a partial command,
 * a literal being received) do not count: they are bounded by the limits.
 */

export class LiteralSegment {
  constructor(
    readonly data: Buffer,
    /** Sent as literal8 (`~{n}`, RFC 3516). */
    readonly binary: boolean = false,
  ) {}
}

export type Segment = Buffer | LiteralSegment;

/** `command`: commands with literals; `line`: one raw line (IDLE's DONE, AUTHENTICATE data). */
export type ReaderMode = 'command' | 'line';

export interface LiteralInfo {
  /** Tag of the command, when the start of its first line has one. */
  tag: string | null;
  /** Command name uppercased (`UID FETCH` for UID commands), when recognizable. */
  command: string | null;
  /** Announced size in bytes. */
  size: number;
  /** `{n}`: the client waits for a continuation; `{n+}`: the bytes follow at once. */
  sync: boolean;
  /** Literal8 (`~{n}`). */
  binary: boolean;
  /** 0 for the first literal of the command. */
  index: number;
  /** Bytes of the command so far (text and literals), this literal excluded. */
  commandBytes: number;
}

export type LiteralVerdict =
  | { ok: true }
  | { ok: false; response: 'BAD' | 'NO'; code?: string; text: string };

export interface RejectInfo {
  tag: string | null;
  command: string | null;
  response: 'BAD' | 'NO';
  /** Response code without brackets, e.g. `TOOBIG`. */
  code?: string;
  text: string;
  /**
   * The reader could not skip what the client sends next (a non-synchronizing
   * literal whose size is unusable): what follows is probably garbage and
   * the owner should end the connection.
   */
  fatal: boolean;
}

export interface ReaderHooks {
  /** A whole command. */
  onCommand(segments: Segment[]): void;
  /** A line in `line` mode, CR LF (or bare LF) stripped. */
  onLine(line: Buffer): void;
  /** A command (or line) refused by framing limits or by `checkLiteral`; it has been discarded. */
  onReject(info: RejectInfo): void;
  /** Write the continuation request for an accepted synchronizing literal (`+ OK\r\n`). */
  sendContinuation(): void;
  /**
   * Decides on a literal when its marker is seen, before anything is sent.
   * Without this hook every literal within the reader's limits is accepted.
   */
  checkLiteral?(info: LiteralInfo): LiteralVerdict;
}

export interface ReaderOptions {
  /** Longest line in bytes, CRLF and literals excluded. Default 65536. */
  maxLineLength?: number;
  /** Largest command, text and literals together. Default 256 MiB. */
  maxCommandBytes?: number;
  /** Most literals in one command. Default 10000. */
  maxLiterals?: number;
  /** Mode at start. Default `command`. */
  mode?: ReaderMode;
  /** Start paused (until the first `next()`). Default false. */
  paused?: boolean;
}

/** Hooks and options in one object. */
export interface ReaderConfig extends ReaderOptions {
  hooks: ReaderHooks;
}

const LF = 0x0a;
const CR = 0x0d;
const EMPTY: Buffer = Buffer.alloc(0);
/** Longest literal marker: `~{` + 19 digits + `+}`. */
const TAIL_KEEP = 32;
/** First bytes of an overlong line read for its tag and command name. */
const HEAD_KEEP = 1024;

const S_TEXT = 0;
const S_LITERAL = 1;
const S_SKIP_BYTES = 2;
const S_SKIP_TEXT = 3;
type State = typeof S_TEXT | typeof S_LITERAL | typeof S_SKIP_BYTES | typeof S_SKIP_TEXT;

interface Marker {
  /** Offset of `{` (or `~`) in the line. */
  start: number;
  /** -1 when the size is unusable (more than 19 digits or above MAX_SAFE_INTEGER). */
  size: number;
  sync: boolean;
  binary: boolean;
}

/** Finds a literal marker at the very end of a line (CRLF already stripped). */
function findMarker(line: Buffer): Marker | null {
  let i = line.length - 1;
  if (i < 0 || line[i] !== 0x7d /* } */) return null;
  i--;
  let sync = true;
  if (i >= 0 && line[i] === 0x2b /* + */) {
    sync = false;
    i--;
  }
  const digitsEnd = i + 1;
  while (i >= 0 && line[i]! >= 0x30 && line[i]! <= 0x39) i--;
  const digitsStart = i + 1;
  if (digitsStart === digitsEnd || i < 0 || line[i] !== 0x7b /* { */) return null;
  let start = i;
  let binary = false;
  if (i > 0 && line[i - 1] === 0x7e /* ~ */) {
    binary = true;
    start = i - 1;
  }
  let size = -1;
  if (digitsEnd - digitsStart <= 19) {
    let value = 0;
    for (let k = digitsStart; k < digitsEnd; k++) value = value * 10 + (line[k]! - 0x30);
    if (value <= Number.MAX_SAFE_INTEGER) size = value;
  }
  return { start, size, sync, binary };
}

function isTagChar(c: number): boolean {
  // ASTRING-CHAR except "+": no CTL, SP, ( ) { % * " \ +
  return (
    c > 0x20 &&
    c < 0x7f &&
    c !== 0x28 &&
    c !== 0x29 &&
    c !== 0x7b &&
    c !== 0x25 &&
    c !== 0x2a &&
    c !== 0x22 &&
    c !== 0x5c &&
    c !== 0x2b
  );
}

function isAtomChar(c: number): boolean {
  return (isTagChar(c) || c === 0x2b) && c !== 0x5d;
}

/**
 * Best-effort tag and command name from the start of a command's first
 * line. `complete` is false when `line` is only the first bytes of a line
 * too long to keep: a tag or name that runs to the end of those bytes may
 * go on, so it is unknown (a tagged answer must carry the whole tag).
 */
function extractHead(line: Buffer, complete = true): { tag: string | null; command: string | null } {
  let i = 0;
  while (i < line.length && isTagChar(line[i]!)) i++;
  if (i === 0 || (i < line.length && line[i] !== 0x20) || (!complete && i === line.length)) return { tag: null, command: null };
  const tag = line.toString('latin1', 0, i);
  const word = (from: number): number => {
    let j = from;
    while (j < line.length && isAtomChar(line[j]!)) j++;
    return j;
  };
  const cmdStart = i + 1;
  const cmdEnd = word(cmdStart);
  if (cmdEnd === cmdStart || (!complete && cmdEnd === line.length)) return { tag, command: null };
  let command = line.toString('latin1', cmdStart, cmdEnd).toUpperCase();
  if (command === 'UID' && line[cmdEnd] === 0x20) {
    const subEnd = word(cmdEnd + 1);
    if (subEnd > cmdEnd + 1 && (complete || subEnd < line.length)) command += ' ' + line.toString('latin1', cmdEnd + 1, subEnd).toUpperCase();
  }
  return { tag, command };
}

function join(parts: Buffer[], length: number): Buffer {
  if (parts.length === 0) return EMPTY;
  if (parts.length === 1) return parts[0]!;
  return Buffer.concat(parts, length);
}

/** The last `TAIL_KEEP` bytes of `tail` followed by `piece`. */
function appendTail(tail: Buffer, piece: Buffer): Buffer {
  if (piece.length >= TAIL_KEEP) return piece.subarray(piece.length - TAIL_KEEP);
  if (piece.length === 0) return tail;
  const keep = Math.min(tail.length, TAIL_KEEP - piece.length);
  return Buffer.concat([tail.subarray(tail.length - keep), piece]);
}

export class CommandReader {
  private readonly hooks: ReaderHooks;
  private readonly maxLineLength: number;
  private readonly maxCommandBytes: number;
  private readonly maxLiterals: number;

  private mode: ReaderMode;
  private paused: boolean;
  private running = false;
  private destroyed = false;

  // Input not consumed yet.
  private queue: Buffer[] = [];
  private qHead = 0;
  private qOff = 0;
  private queued = 0;

  private state: State = S_TEXT;

  // Current line: its first part alone (most lines arrive in one chunk), a list from the second part on.
  private lineFirst: Buffer | null = null;
  private lineParts: Buffer[] | null = null;
  private lineLen = 0;

  // Current command.
  private segments: Segment[] = [];
  private cmdBytes = 0;
  private literalCount = 0;
  private tag: string | null = null;
  private command: string | null = null;
  /**
   * The first line of the command, read for its tag and name only when
   * something asks (a literal's check, a refusal): most commands are one
   * line that needs neither, and making the strings cost every command.
   */
  private headLine: Buffer | null = null;
  private headComplete = true;

  // Literal being received.
  private litParts: Buffer[] = [];
  private litSize = 0;
  private litRemaining = 0;
  private litBinary = false;

  // Discarding a refused command.
  private skipRemaining = 0;
  private tail: Buffer = EMPTY;
  private pendingReject: RejectInfo | null = null;

  /** `new CommandReader(hooks, options)` or `new CommandReader({ hooks, ...options })`. */
  constructor(config: ReaderConfig);
  constructor(hooks: ReaderHooks, options?: ReaderOptions);
  constructor(first: ReaderHooks | ReaderConfig, second: ReaderOptions = {}) {
    let hooks: ReaderHooks;
    let options: ReaderOptions;
    if ('hooks' in first) {
      hooks = first.hooks;
      options = first;
    } else {
      hooks = first;
      options = second;
    }
    this.hooks = hooks;
    this.maxLineLength = options.maxLineLength ?? 65536;
    this.maxCommandBytes = options.maxCommandBytes ?? 256 * 1024 * 1024;
    this.maxLiterals = options.maxLiterals ?? 10000;
    this.mode = options.mode ?? 'command';
    this.paused = options.paused ?? false;
  }

  /** Received bytes not consumed yet (they pile up while the reader is paused). */
  get bufferedBytes(): number {
    return this.queued - this.qOff;
  }

  /** True between delivering a command or line and the next `next()`. */
  get isPaused(): boolean {
    return this.paused;
  }

  get currentMode(): ReaderMode {
    return this.mode;
  }

  /** True while a command or line has started but is not complete. */
  get inProgress(): boolean {
    return this.state !== S_TEXT || this.lineLen > 0 || this.segments.length > 0;
  }

  /** Feeds bytes from the socket. */
  push(chunk: Buffer): void {
    if (this.destroyed || chunk.length === 0) return;
    this.queue.push(chunk);
    this.queued += chunk.length;
    this.pump();
  }

  /** Resumes after a delivered item; `mode` says what to read next. */
  next(mode: ReaderMode = 'command'): void {
    if (this.destroyed) return;
    this.mode = mode;
    this.paused = false;
    this.pump();
  }

  /**
   * Stops delivering until the next `next()`. For an owner that ends the
   * command a rejected line belonged to, so that what follows is not read
   * in the old mode.
   */
  pause(): void {
    this.paused = true;
  }

  /**
   * Drops received bytes not consumed yet. STARTTLS uses it: plain text a
   * client sent after the command must not be read as if it came over TLS.
   */
  discardBuffered(): void {
    this.queue = [];
    this.qHead = 0;
    this.qOff = 0;
    this.queued = 0;
  }

  /** Drops all state; nothing is delivered afterwards. */
  destroy(): void {
    this.destroyed = true;
    this.queue = [];
    this.qHead = 0;
    this.qOff = 0;
    this.queued = 0;
    this.resetCommand();
    this.lineFirst = null;
    this.lineParts = null;
    this.litParts = [];
    this.pendingReject = null;
  }

  // -------------------------------------------------------------------------

  private pump(): void {
    if (this.running) return; // a hook called next()/push(): the loop below carries on
    this.running = true;
    try {
      while (!this.paused && !this.destroyed && this.qHead < this.queue.length) {
        const chunk = this.queue[this.qHead]!;
        switch (this.state) {
          case S_TEXT:
            this.stepText(chunk);
            break;
          case S_LITERAL:
            this.stepLiteral(chunk);
            break;
          case S_SKIP_BYTES:
            this.stepSkipBytes(chunk);
            break;
          case S_SKIP_TEXT:
            this.stepSkipText(chunk);
            break;
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** Marks `chunk` consumed up to `offset`. */
  private consume(chunk: Buffer, offset: number): void {
    if (offset < chunk.length) {
      this.qOff = offset;
      return;
    }
    this.queued -= chunk.length;
    this.qOff = 0;
    this.queue[this.qHead] = EMPTY;
    this.qHead++;
    if (this.qHead === this.queue.length) {
      this.queue = [];
      this.qHead = 0;
    } else if (this.qHead >= 64 && this.qHead * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.qHead);
      this.qHead = 0;
    }
  }

  private stepText(chunk: Buffer): void {
    const off = this.qOff;
    const lf = chunk.indexOf(LF, off);
    const end = lf < 0 ? chunk.length : lf;
    const n = end - off;
    // One byte of slack for the CR before LF; checked exactly in lineDone().
    if (this.lineLen + n > this.maxLineLength + 1) {
      this.overflow(chunk, off, end, this.mode === 'line' ? 'Line too long' : 'Command line too long', undefined);
      return;
    }
    if (this.mode === 'command' && this.cmdBytes + this.lineLen + n > this.maxCommandBytes + 1) {
      this.overflow(chunk, off, end, 'Command too large', 'TOOBIG');
      return;
    }
    if (n > 0) {
      const part = chunk.subarray(off, end);
      if (this.lineFirst === null) this.lineFirst = part;
      else (this.lineParts ??= [this.lineFirst]).push(part);
      this.lineLen += n;
    }
    if (lf < 0) {
      this.consume(chunk, chunk.length);
      return;
    }
    this.consume(chunk, lf + 1);
    this.lineDone();
  }

  /** The current line exceeds a limit: discard the rest of it (and of its command). */
  private overflow(chunk: Buffer, off: number, end: number, text: string, code: string | undefined): void {
    if (this.mode === 'command' && this.segments.length === 0) {
      // Always the same first bytes of the line, however it arrived in chunks: at least
      // min(HEAD_KEEP, maxLineLength + 1) bytes of it are at hand when it overflows.
      const keep = Math.min(HEAD_KEEP, this.maxLineLength + 1);
      const head = Buffer.concat([...this.takeLineParts(), chunk.subarray(off, Math.min(end, off + keep))]).subarray(0, keep);
      this.headLine = head;
      this.headComplete = false;
    }
    let tail = EMPTY;
    for (const part of this.takeLineParts()) tail = appendTail(tail, part);
    this.lineLen = 0;
    this.startSkipping(this.makeReject(code === 'TOOBIG' ? 'NO' : 'BAD', code, text, false), tail);
    // stepSkipText continues from `off` and finds the same LF.
  }

  /** The current line's parts so far, in order; the line is empty after. */
  private takeLineParts(): Buffer[] {
    const parts = this.lineParts ?? (this.lineFirst !== null ? [this.lineFirst] : []);
    this.lineFirst = null;
    this.lineParts = null;
    return parts;
  }

  private lineDone(): void {
    let line = this.lineParts !== null ? Buffer.concat(this.lineParts, this.lineLen) : (this.lineFirst ?? EMPTY);
    this.lineFirst = null;
    this.lineParts = null;
    this.lineLen = 0;
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);

    if (this.mode === 'line') {
      if (line.length > this.maxLineLength) {
        this.deliverReject(this.makeReject('BAD', undefined, 'Line too long', false));
        return;
      }
      this.paused = true;
      this.hooks.onLine(line);
      return;
    }

    if (this.segments.length === 0) {
      this.headLine = line;
      this.headComplete = true;
    }
    if (line.length > this.maxLineLength) {
      this.startSkipping(this.makeReject('BAD', undefined, 'Command line too long', false), EMPTY);
      this.skippedLineDone(line);
      return;
    }

    const marker = findMarker(line);
    if (marker === null) {
      this.segments.push(line);
      const segments = this.segments;
      this.resetCommand();
      this.paused = true;
      this.hooks.onCommand(segments);
      return;
    }

    const text = line.subarray(0, marker.start);
    this.segments.push(text);
    this.cmdBytes += text.length;
    const index = this.literalCount++;

    if (marker.size < 0) {
      // A non-synchronizing literal of unknown size: its bytes cannot be skipped.
      this.deliverReject(this.makeReject('BAD', undefined, 'Literal size too large', !marker.sync));
      return;
    }
    let refusal: RejectInfo | null = null;
    if (index >= this.maxLiterals) {
      refusal = this.makeReject('BAD', undefined, 'Too many literals in command', false);
    } else if (this.cmdBytes + marker.size > this.maxCommandBytes) {
      // One rule for size: a command too large is NO [TOOBIG], whichever limit it passed (RFC 7889 §4 / RFC 5530).
      refusal = this.makeReject('NO', 'TOOBIG', 'Command too large', false);
    } else if (this.hooks.checkLiteral) {
      this.readHead();
      const verdict = this.hooks.checkLiteral({
        tag: this.tag,
        command: this.command,
        size: marker.size,
        sync: marker.sync,
        binary: marker.binary,
        index,
        commandBytes: this.cmdBytes,
      });
      if (!verdict.ok) refusal = this.makeReject(verdict.response, verdict.code, verdict.text, false);
    }
    if (this.destroyed) return;

    if (refusal !== null) {
      if (marker.sync) {
        // The client waits for a continuation that will not come: the command ends here.
        this.deliverReject(refusal);
      } else {
        this.startSkipping(refusal, EMPTY);
        this.state = S_SKIP_BYTES;
        this.skipRemaining = marker.size;
        if (marker.size === 0) this.state = S_SKIP_TEXT;
      }
      return;
    }

    if (marker.sync) this.hooks.sendContinuation();
    this.litSize = marker.size;
    this.litRemaining = marker.size;
    this.litBinary = marker.binary;
    this.litParts = [];
    this.state = S_LITERAL;
    if (marker.size === 0) this.literalDone();
  }

  private stepLiteral(chunk: Buffer): void {
    const off = this.qOff;
    const take = Math.min(this.litRemaining, chunk.length - off);
    this.litParts.push(off === 0 && take === chunk.length ? chunk : chunk.subarray(off, off + take));
    this.litRemaining -= take;
    this.consume(chunk, off + take);
    if (this.litRemaining === 0) this.literalDone();
  }

  private literalDone(): void {
    const data = join(this.litParts, this.litSize);
    this.litParts = [];
    this.segments.push(new LiteralSegment(data, this.litBinary));
    this.cmdBytes += this.litSize;
    this.state = S_TEXT;
  }

  private stepSkipBytes(chunk: Buffer): void {
    const off = this.qOff;
    const take = Math.min(this.skipRemaining, chunk.length - off);
    this.skipRemaining -= take;
    this.consume(chunk, off + take);
    if (this.skipRemaining === 0) {
      this.state = S_SKIP_TEXT;
      this.tail = EMPTY;
    }
  }

  private stepSkipText(chunk: Buffer): void {
    const off = this.qOff;
    const lf = chunk.indexOf(LF, off);
    const end = lf < 0 ? chunk.length : lf;
    this.tail = appendTail(this.tail, chunk.subarray(Math.max(off, end - TAIL_KEEP), end));
    if (lf < 0) {
      this.consume(chunk, chunk.length);
      return;
    }
    this.consume(chunk, lf + 1);
    let tail = this.tail;
    if (tail.length > 0 && tail[tail.length - 1] === CR) tail = tail.subarray(0, tail.length - 1);
    this.tail = EMPTY;
    this.skippedLineDone(tail);
  }

  /** End of a discarded line: skip a non-synchronizing literal it announces, else deliver the rejection. */
  private skippedLineDone(lineEnd: Buffer): void {
    const marker = this.mode === 'command' ? findMarker(lineEnd) : null;
    if (marker !== null && !marker.sync && marker.size >= 0) {
      this.skipRemaining = marker.size;
      this.state = marker.size === 0 ? S_SKIP_TEXT : S_SKIP_BYTES;
      return;
    }
    const reject = this.pendingReject!;
    if (marker !== null && !marker.sync && marker.size < 0) reject.fatal = true;
    this.pendingReject = null;
    this.deliverReject(reject);
  }

  private startSkipping(reject: RejectInfo, tail: Buffer): void {
    this.pendingReject = reject;
    this.tail = tail;
    this.segments = [];
    this.litParts = [];
    this.state = S_SKIP_TEXT;
  }

  /** Reads the tag and name of the command's first line, once. */
  private readHead(): void {
    const line = this.headLine;
    if (line === null) return;
    this.headLine = null;
    ({ tag: this.tag, command: this.command } = extractHead(line, this.headComplete));
  }

  private makeReject(response: 'BAD' | 'NO', code: string | undefined, text: string, fatal: boolean): RejectInfo {
    this.readHead();
    const info: RejectInfo = { tag: this.tag, command: this.command, response, text, fatal };
    if (code !== undefined) info.code = code;
    return info;
  }

  private deliverReject(info: RejectInfo): void {
    this.resetCommand();
    this.state = S_TEXT;
    // No pause: the command is gone and reading goes on in the same mode.
    this.hooks.onReject(info);
  }

  private resetCommand(): void {
    this.segments = [];
    this.cmdBytes = 0;
    this.literalCount = 0;
    this.tag = null;
    this.command = null;
    this.headLine = null;
  }
}

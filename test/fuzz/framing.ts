/**
 * The fuzzer's own model of command framing (RFC 3501 §4.3, RFC 7888):
 * it follows the bytes the fuzzer sends and knows, at the end of a batch,
 * whether the server is inside a line or a literal, so the fuzzer can send
 * exactly what completes the pending command before its probe.
 *
 * It never under-counts: a synchronizing literal that the server may
 * accept is assumed accepted (over-filling a literal the server refused
 * only adds a garbage line), one it must refuse (above every configured
 * literal limit, or on a line longer than the server's line limit) is
 * assumed refused.
 *
 * Over-filling is harmless unless the bytes taken for the literal, read by
 * the server as lines (it refused the literal), announce a literal of
 * their own: then the server waits for bytes the framer never counted and
 * the probe is not answered. The framer cannot tell which happened, so it
 * says so (`ambiguous`): a probe timeout in such a batch is the fuzzer's
 * doubt, not the server's hang. The same doubt comes after IDLE and
 * AUTHENTICATE: the server reads the next lines as lines (DONE, SASL
 * responses; how many depends on the mechanism and its outcome), so a
 * literal announced on one of them may be no literal to the server.
 */

export interface FramerLimits {
  /** Sizes above this are refused in every state (the server's largest literal limit). */
  maxLiteral: number;
  /** The server's `maxLineLength`: a longer line is refused whole, a synchronizing literal it announces with it. */
  maxLine?: number;
}

/** A literal announcement at a line's end, as the server reads one. */
const MARKER_LINE = /\{\d+\+?\}\r?\n/;
/** A command line that may put the server into line mode (RFC 2177 IDLE, RFC 3501 AUTHENTICATE). */
const LINE_MODE_COMMAND = /^\S* +(?:UID +)?(?:IDLE|AUTHENTICATE)\b/i;
/** Lines after such a command that the server may still read as lines (SASL: response, error ack). */
const LINE_MODE_LINES = 3;

export class ShadowFramer {
  /** Bytes still owed to the literal being sent; -1 when in a line. */
  literalLeft = -1;
  /** The current line so far (only its last 40 bytes matter). */
  private tail = '';
  /** True when a literal announced a size nobody can send (the server closes the connection). */
  unusable = false;
  /** A literal ended and its command line goes on. */
  private afterLiteral = false;
  /** Bytes of the current line so far (since its start or the end of the literal before it). */
  private lineLength = 0;
  /** The literal being sent is synchronizing: the server may have refused it (see `ambiguous`). */
  private assumed = false;
  /** The last bytes of an assumed literal's data, for an announcement split across writes. */
  private assumedTail = '';
  /** Since `clearAmbiguity`: assumed literal data held something the server would read as a literal announcement. */
  ambiguous = false;
  /** The first bytes of the current line (the command name tells whether line mode may follow). */
  private head = '';
  /** Lines still to come that the server may read in line mode (after IDLE or AUTHENTICATE). */
  private lineModeLines = 0;

  constructor(private readonly limits: FramerLimits) {}

  /** True at the start of a line, outside any literal. */
  get atLineStart(): boolean {
    return this.literalLeft < 0 && this.tail === '' && !this.afterLiteral;
  }

  feed(data: Buffer): void {
    let pos = 0;
    while (pos < data.length) {
      if (this.literalLeft >= 0) {
        const take = Math.min(this.literalLeft, data.length - pos);
        if (this.assumed && !this.ambiguous) {
          const text = this.assumedTail + data.toString('latin1', pos, pos + take);
          if (MARKER_LINE.test(text)) this.ambiguous = true;
          this.assumedTail = text.slice(-24);
        }
        this.literalLeft -= take;
        pos += take;
        if (this.literalLeft === 0) {
          this.literalLeft = -1;
          this.afterLiteral = true;
        }
        continue;
      }
      const lf = data.indexOf(0x0a, pos);
      if (this.head.length < 64 && !this.afterLiteral) this.head += data.toString('latin1', pos, Math.min(lf < 0 ? data.length : lf, pos + 64 - this.head.length));
      if (lf < 0) {
        this.tail = (this.tail + data.toString('latin1', Math.max(pos, data.length - 40), data.length)).slice(-40);
        this.lineLength += data.length - pos;
        return;
      }
      let line = (this.tail + data.toString('latin1', Math.max(pos, lf - 40), lf)).slice(-40);
      let length = this.lineLength + (lf - pos);
      pos = lf + 1;
      this.tail = '';
      this.lineLength = 0;
      this.afterLiteral = false;
      if (line.endsWith('\r')) {
        line = line.slice(0, -1);
        length--;
      }
      const tooLong = this.limits.maxLine !== undefined && length > this.limits.maxLine;
      const head = this.head;
      this.head = '';
      const maybeLineMode = this.lineModeLines > 0;
      if (maybeLineMode) this.lineModeLines--;
      if (LINE_MODE_COMMAND.test(head)) this.lineModeLines = LINE_MODE_LINES;
      const m = /\{(\d+)(\+?)\}$/.exec(line);
      if (!m) continue;
      if (maybeLineMode) this.ambiguous = true;
      const digits = m[1]!;
      const size = digits.length > 19 ? Infinity : Number(digits);
      const sync = m[2] === '';
      if (!Number.isSafeInteger(size)) {
        // Unusable size: a synchronizing one is just refused; a non-synchronizing one cannot be skipped.
        if (!sync) this.unusable = true;
        continue;
      }
      // Refused: no literal follows (a non-synchronizing one on a line too long is skipped: counted as sent).
      if (sync && (size > this.limits.maxLiteral || tooLong)) continue;
      this.literalLeft = size;
      this.assumed = sync;
      this.assumedTail = '';
      if (size === 0) {
        this.literalLeft = -1;
        this.afterLiteral = true;
      }
    }
  }

  /**
   * Bytes that bring the server back to the start of a command line: end
   * the current line, fill any literal it announces, repeat. Null when
   * that would take more than `maxFill` bytes (reconnect instead).
   */
  completion(maxFill: number): Buffer | null {
    const parts: Buffer[] = [];
    let total = 0;
    for (let i = 0; i < 100; i++) {
      if (this.unusable) return null;
      if (this.literalLeft > 0) {
        if (total + this.literalLeft > maxFill) return null;
        const fill = Buffer.alloc(this.literalLeft, 0x78);
        parts.push(fill);
        total += fill.length;
        this.feed(fill);
        continue;
      }
      if (this.atLineStart) return Buffer.concat(parts);
      const crlf = Buffer.from('\r\n');
      parts.push(crlf);
      total += 2;
      this.feed(crlf);
    }
    return null;
  }

  /** A probe was answered: the server and the framer agree again. */
  clearAmbiguity(): void {
    this.ambiguous = false;
  }

  reset(): void {
    this.literalLeft = -1;
    this.tail = '';
    this.unusable = false;
    this.afterLiteral = false;
    this.lineLength = 0;
    this.assumed = false;
    this.assumedTail = '';
    this.ambiguous = false;
    this.head = '';
    this.lineModeLines = 0;
  }
}

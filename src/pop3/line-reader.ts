/**
 * POP3 command lines out of the byte stream: a line ends with LF (CRLF as
 * RFC 1939 wants it; a bare LF is taken too, as Dovecot does). A line over
 * the limit is skipped up to its end and reported in its place, so a client
 * that floods one endless line costs at most the limit.
 */

/** What `take` returns in place of a line that was over the limit (its bytes are gone). */
export const TOO_LONG = Symbol('too long');

export type ReadLine = Buffer | typeof TOO_LONG;

export class LineReader {
  /** Whole lines not taken yet, in order (without their line end). */
  private readonly lines: ReadLine[] = [];
  private head = 0;
  /** Octets of `lines` and `tail`: what the connection's input high-water mark counts. */
  private bytes = 0;
  /** The unfinished last line. */
  private tail: Buffer[] = [];
  private tailBytes = 0;
  /** True while the rest of an over-long line is being dropped. */
  private skipping = false;

  constructor(private readonly maxLine: number) {}

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      const lf = chunk.indexOf(10, at);
      if (lf < 0) {
        this.addTail(chunk.subarray(at));
        return;
      }
      if (this.skipping) {
        this.skipping = false;
        this.lines.push(TOO_LONG);
      } else {
        const part = chunk.subarray(at, lf + 1);
        if (this.tailBytes + part.length > this.maxLine) this.lines.push(TOO_LONG);
        else {
          const whole = this.tail.length === 0 ? Buffer.from(part) : Buffer.concat([...this.tail, part]);
          const end = whole.length >= 2 && whole[whole.length - 2] === 13 ? whole.length - 2 : whole.length - 1;
          const line = whole.subarray(0, end);
          this.lines.push(line);
          this.bytes += line.length;
        }
      }
      this.bytes -= this.tailBytes;
      this.tail = [];
      this.tailBytes = 0;
      at = lf + 1;
    }
  }

  private addTail(part: Buffer): void {
    if (this.skipping) return;
    if (this.tailBytes + part.length > this.maxLine) {
      // Dropped now; reported once the line ends.
      this.bytes -= this.tailBytes;
      this.tail = [];
      this.tailBytes = 0;
      this.skipping = true;
      return;
    }
    // A copy: the chunk may be large and is not ours to keep.
    this.tail.push(Buffer.from(part));
    this.tailBytes += part.length;
    this.bytes += part.length;
  }

  /** The next line without its line end, TOO_LONG for a line over the limit, or null when none is complete. */
  take(): ReadLine | null {
    if (this.head >= this.lines.length) return null;
    const line = this.lines[this.head]!;
    this.lines[this.head++] = TOO_LONG;
    if (this.head > 1024 && this.head * 2 > this.lines.length) {
      this.lines.splice(0, this.head);
      this.head = 0;
    } else if (this.head === this.lines.length) {
      this.lines.length = 0;
      this.head = 0;
    }
    if (line !== TOO_LONG) this.bytes -= line.length;
    return line;
  }

  /** True when a whole line (or an over-long one to report) waits. */
  get hasLine(): boolean {
    return this.head < this.lines.length;
  }

  get bufferedBytes(): number {
    return this.bytes;
  }

  /** Drops what was read and not taken (plain text sent before a TLS upgrade, RFC 2595 §4). */
  discard(): void {
    this.lines.length = 0;
    this.head = 0;
    this.bytes = 0;
    this.tail = [];
    this.tailBytes = 0;
    this.skipping = false;
  }
}

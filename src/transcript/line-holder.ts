/**
 * Line splitting for the line-based credential filters (POP3, SMTP): a
 * client's chunk is cut at each LF, a line split across chunks is held
 * until its end arrives, and a partial line held beyond `max` octets is no
 * command the server would take, so it passes as it is.
 */
export class LineHolder {
  private held: Buffer[] = [];
  private heldBytes = 0;

  constructor(private readonly max: number) {}

  /** True while part of a line waits for its end. */
  get holding(): boolean {
    return this.held.length > 0;
  }

  /** Each complete line of `chunk` from `at` on (with its LF) goes through `line` into `out`; the rest is held. */
  split(chunk: Buffer, at: number, out: Buffer[], line: (whole: Buffer) => Buffer): void {
    while (at < chunk.length) {
      const lf = chunk.indexOf(0x0a, at);
      if (lf < 0) {
        this.hold(chunk.subarray(at), out);
        return;
      }
      const part = chunk.subarray(at, lf + 1);
      const whole = this.held.length === 0 ? part : Buffer.concat([...this.held, part]);
      this.held = [];
      this.heldBytes = 0;
      out.push(line(whole));
      at = lf + 1;
    }
  }

  private hold(part: Buffer, out: Buffer[]): void {
    if (this.heldBytes + part.length > this.max) {
      out.push(...this.held, part);
      this.held = [];
      this.heldBytes = 0;
      return;
    }
    this.held.push(Buffer.from(part));
    this.heldBytes += part.length;
  }
}

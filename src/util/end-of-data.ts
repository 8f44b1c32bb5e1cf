/**
 * Finds the end of an SMTP message body (RFC 5321 §4.1.1.4: a line that
 * is a lone `.`) in chunks as they arrive, without turning the body into
 * strings or lines: the body is most of what a client sends.
 */
export class EndOfData {
  /** The start of the current line, while it could still be `.` (at most `.\r`); null once it cannot. */
  private partial: string | null = '';

  /** Starts a new body (after a 354). */
  reset(): void {
    this.partial = '';
  }

  /** The offset just past the end-of-data line in `chunk` from `at`, or -1 when the body goes on. */
  scan(chunk: Buffer, at: number): number {
    for (;;) {
      const lf = chunk.indexOf(0x0a, at);
      if (lf < 0) {
        this.extend(chunk, at, chunk.length);
        return -1;
      }
      this.extend(chunk, at, lf);
      const line = this.partial;
      this.partial = '';
      if (line === '.' || line === '.\r') return lf + 1;
      at = lf + 1;
    }
  }

  private extend(chunk: Buffer, from: number, to: number): void {
    if (this.partial === null || to === from) return;
    this.partial = to - from + this.partial.length > 2 ? null : this.partial + chunk.toString('latin1', from, to);
  }
}

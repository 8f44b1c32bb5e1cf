/**
 * Cuts an IMAP byte stream into units the way the peer meant them: a line
 * up to CRLF with the literals it announces. On the client side a
 * synchronizing literal `{n}` waits for the server's `+`, so its bytes start
 * a unit of their own (the replay has to send the `+` between); on the
 * server side, and for `{n+}`, the literal belongs to the line.
 */
export interface WireUnit {
  readonly bytes: Buffer;
  /** True when the unit starts a command (client) or a response (server), not literal data that continues one. */
  readonly starts: boolean;
}

const LF = 0x0a;

export class UnitFramer {
  private parts: Buffer[] = [];
  /** Bytes in `parts`. */
  private held = 0;
  private literalLeft = 0;
  private starts = true;
  private tail = '';
  /** Set once a unit grew past `maxUnit`: the stream is not followed any further. */
  overflow = false;

  constructor(
    private readonly side: 'client' | 'server',
    /** Largest unit in bytes: a peer cannot make the framer hold more. */
    readonly maxUnit = Infinity,
  ) {}

  push(chunk: Buffer): WireUnit[] {
    const out: WireUnit[] = [];
    let i = 0;
    while (i < chunk.length && !this.overflow) {
      if (this.literalLeft > 0) {
        const n = Math.min(this.literalLeft, chunk.length - i);
        this.hold(chunk.subarray(i, i + n));
        this.literalLeft -= n;
        i += n;
        continue;
      }
      const lf = chunk.indexOf(LF, i);
      const end = lf < 0 ? chunk.length : lf + 1;
      const piece = chunk.subarray(i, end);
      this.hold(piece);
      this.tail = (this.tail + piece.subarray(Math.max(0, piece.length - 24)).toString('latin1')).slice(-24);
      i = end;
      if (lf < 0) break;
      const m = /~?\{(\d{1,12})(\+?)\}\r?\n$/.exec(this.tail);
      this.tail = '';
      if (m && Number(m[1]) > 0) {
        const size = Number(m[1]);
        if (this.side === 'client' && m[2] !== '+') {
          out.push(this.take());
          this.starts = false;
        }
        this.literalLeft = size;
        continue;
      }
      out.push(this.take());
      this.starts = true;
    }
    return out;
  }

  private hold(piece: Buffer): void {
    this.held += piece.length;
    if (this.held > this.maxUnit) {
      this.overflow = true;
      this.parts = [];
      this.held = 0;
      return;
    }
    this.parts.push(piece);
  }

  /** Forgets a literal announced but never coming (its command was refused). */
  cancelLiteral(): void {
    this.literalLeft = 0;
    this.parts = [];
    this.held = 0;
    this.starts = true;
    this.tail = '';
  }

  /** What is left that is not a whole unit (a recording that ended mid-line). */
  rest(): WireUnit | null {
    return this.parts.length > 0 ? this.take() : null;
  }

  private take(): WireUnit {
    const unit = { bytes: this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts), starts: this.starts };
    this.parts = [];
    this.held = 0;
    return unit;
  }
}

/**
 * Cuts a POP3 byte stream into units for replay: one line up to LF. POP3
 * has no literals (RFC 1939 section 3: commands and responses are single
 * lines; a multi-line response is lines too, and AUTH's continuations of
 * RFC 5034 are lines), so a `{5}` at a line's end is just text here.
 */
import type { WireUnit } from './framer.js';

const LF = 0x0a;

export class LineFramer {
  private parts: Buffer[] = [];
  private held = 0;
  /** Set once a line grew past `maxUnit`: the stream is not followed any further. */
  overflow = false;

  constructor(
    /** Largest line in bytes: a peer cannot make the framer hold more. */
    readonly maxUnit = Infinity,
  ) {}

  push(chunk: Buffer): WireUnit[] {
    const out: WireUnit[] = [];
    let i = 0;
    while (i < chunk.length && !this.overflow) {
      const lf = chunk.indexOf(LF, i);
      const end = lf < 0 ? chunk.length : lf + 1;
      this.held += end - i;
      if (this.held > this.maxUnit) {
        this.overflow = true;
        this.parts = [];
        this.held = 0;
        break;
      }
      this.parts.push(chunk.subarray(i, end));
      i = end;
      if (lf >= 0) out.push(this.take());
    }
    return out;
  }

  /** POP3 announces no literals: nothing to forget. */
  cancelLiteral(): void {}

  /** What is left that is not a whole line (a recording that ended mid-line). */
  rest(): WireUnit | null {
    return this.parts.length > 0 ? this.take() : null;
  }

  private take(): WireUnit {
    const unit = { bytes: this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts), starts: true };
    this.parts = [];
    this.held = 0;
    return unit;
  }
}

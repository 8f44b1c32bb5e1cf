/**
 * A growing byte buffer for one message: header lines and body text are
 * written into one Buffer (doubling when full) instead of joining strings
 * per line, and filler text is copied from lines encoded once.
 */
import { Rng } from './random.js';

export class Bytes {
  private buf: Buffer;
  length = 0;

  constructor(capacity = 4096) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  /** Text as UTF-8 (ASCII is the common case and the same bytes). */
  text(s: string): this {
    this.room(s.length * 3);
    this.length += this.buf.write(s, this.length, 'utf8');
    return this;
  }

  /** Text as one byte per character (8-bit header cases). */
  latin1(s: string): this {
    this.room(s.length);
    this.length += this.buf.write(s, this.length, 'latin1');
    return this;
  }

  /** A line of text and CRLF. */
  line(s: string): this {
    return this.text(s).text('\r\n');
  }

  raw(b: Uint8Array): this {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
    return this;
  }

  /** base64 of `data` in lines of 76 characters (RFC 2045 §6.8), each ending in CRLF. */
  base64(data: Buffer): this {
    const text = data.toString('base64');
    this.room(text.length + Math.ceil(text.length / 76) * 2);
    for (let i = 0; i < text.length; i += 76) {
      this.length += this.buf.write(text.slice(i, i + 76), this.length, 'latin1');
      this.buf[this.length++] = 0x0d;
      this.buf[this.length++] = 0x0a;
    }
    return this;
  }

  /** Lines of filler text until `octets` more bytes are written (the last line cut to fit, CRLF kept). */
  filler(rng: Rng, octets: number): this {
    this.room(octets);
    this.length = fillInto(this.buf, this.length, rng, octets);
    return this;
  }

  /** Where filler text goes once the rest of the message is written and its size known. */
  private holeAt = -1;

  /** Empties the buffer for the next message, keeping its memory: one scratch buffer serves a whole run. */
  reset(): this {
    this.length = 0;
    this.holeAt = -1;
    return this;
  }

  /** Marks the place for filler (the first mark counts). */
  hole(): this {
    if (this.holeAt < 0) this.holeAt = this.length;
    return this;
  }

  /**
   * The bytes written, copied into a Buffer of their own size; with a hole
   * marked and `size` larger than what was written, filler lines make up
   * the difference there, so the message has exactly `size` octets.
   */
  done(rng?: Rng, size = 0): Buffer {
    const missing = size - this.length;
    if (!rng || this.holeAt < 0 || missing <= 0) return Buffer.from(this.buf.subarray(0, this.length));
    // The filler is written straight into the message's own Buffer, between the two halves.
    const out = Buffer.allocUnsafe(this.length + missing);
    this.buf.copy(out, 0, 0, this.holeAt);
    const end = fillInto(out, this.holeAt, rng, missing);
    this.buf.copy(out, end, this.holeAt, this.length);
    return out;
  }

  /** The bytes written so far, as a view (for measuring or copying into a parent). */
  view(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** Writes `octets` bytes of filler lines into `buf` at `at` (room must be there); returns the end offset. */
function fillInto(buf: Buffer, at: number, rng: Rng, octets: number): number {
  const pool = fillerLines();
  let left = octets;
  let i = at;
  while (left > 2) {
    const line = pool[rng.below(pool.length)]!;
    if (line.length <= left) {
      line.copy(buf, i);
      i += line.length;
      left -= line.length;
    } else {
      // A cut line still ends in CRLF so the body stays well formed.
      line.copy(buf, i, 0, left - 2);
      i += left - 2;
      buf[i++] = 0x0d;
      buf[i++] = 0x0a;
      left = 0;
    }
  }
  if (left === 2) {
    buf[i++] = 0x0d;
    buf[i++] = 0x0a;
  } else if (left === 1) buf[i++] = 0x20;
  return i;
}

export const WORDS: readonly string[] = (
  'the of and to in a is that for it as was with be by on not he this are or his from at which but have an they ' +
  'you were their one all we can her has there been if more when will would who so no meeting report budget ' +
  'review draft schedule project release quarter invoice travel lunch agenda notes update question answer ' +
  'customer server backup network printer office holiday contract proposal design test build deploy ticket ' +
  'friday monday tomorrow yesterday morning evening please thanks regards attached below above soon later'
).split(' ');

let lines: Buffer[] | null = null;

/**
 * 512 lines of 40-76 characters drawn once from a fixed seed: the pool every
 * message's filler picks from (made on first use, never at import).
 */
function fillerLines(): Buffer[] {
  if (lines) return lines;
  const rng = new Rng(0x5eed1e55);
  const out: Buffer[] = [];
  for (let i = 0; i < 512; i++) {
    const target = rng.int(40, 76);
    let s = '';
    while (s.length < target) s += (s ? ' ' : '') + rng.pick(WORDS);
    if (rng.chance(0.3)) s = `${s[0]!.toUpperCase()}${s.slice(1)}.`;
    out.push(Buffer.from(`${s}\r\n`, 'latin1'));
  }
  lines = out;
  return out;
}

/** `n` words drawn from the word list, space separated. */
export function words(rng: Rng, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += (i ? ' ' : '') + rng.pick(WORDS);
  return s;
}

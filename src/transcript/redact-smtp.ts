/**
 * Takes SMTP credentials out of what a client sends before it reaches a
 * transcript: the initial response of AUTH (RFC 4954 §4: `AUTH PLAIN
 * <base64>`) and every SASL line the client sends after a `334`
 * challenge, until the server's final reply. Each becomes `***`. A message
 * body (after `354`, to the lone `.`) passes untouched, whatever its
 * lines look like.
 */
import { EndOfData } from '../util/end-of-data.js';
import { LineHolder } from './line-holder.js';
import { REDACTED } from './redact.js';

/** A partial line held beyond this is not a command the server would take: it passes as it is. */
const MAX_HELD = 64 * 1024;

export class SmtpCredentialFilter {
  private readonly lines = new LineHolder(MAX_HELD);
  /** The server's last reply was 334: the next client line is a SASL response. */
  private sasl = false;
  /** The server's last reply was 354: client lines are a body until `.`. */
  private data = false;
  private readonly endOfData = new EndOfData();

  client(chunk: Buffer): Buffer | null {
    const out: Buffer[] = [];
    let at = 0;
    if (this.data && !this.lines.holding) {
      // The body passes as it is, in one piece, up to and with its end-of-data line.
      const end = this.endOfData.scan(chunk, 0);
      if (end < 0) return chunk;
      this.data = false;
      out.push(chunk.subarray(0, end));
      at = end;
    }
    this.lines.split(chunk, at, out, (line) => this.redactLine(line));
    if (out.length === 0) return null;
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  /** Every reply's code moves the filter's state (334, 354): it always looks. */
  readonly watchesServer = true;

  server(chunk: Buffer): void {
    // Replies are whole lines here (smtp-server writes each reply at once); the last line's code counts.
    const text = chunk.toString('latin1');
    const last = text.replace(/\r?\n$/, '').split(/\r?\n/).pop() ?? '';
    const code = last.slice(0, 3);
    if (!/^[2-5][0-9][0-9]$/.test(code)) return;
    this.sasl = code === '334';
    if (code === '354') {
      this.data = true;
      this.endOfData.reset();
    }
  }

  private redactLine(line: Buffer): Buffer {
    const end = line.length >= 2 && line[line.length - 2] === 0x0d ? line.length - 2 : line.length - 1;
    const eol = line.subarray(end).toString('latin1');
    if (this.data) {
      // A body begun in the middle of a chunk (the client sent it before the 354 arrived).
      if (this.endOfData.scan(line, 0) >= 0) this.data = false;
      return line;
    }
    if (this.sasl) {
      // One response per challenge; the next 334 turns this on again.
      this.sasl = false;
      return Buffer.from(`${REDACTED}${eol}`, 'latin1');
    }
    const text = line.subarray(0, end).toString('latin1');
    // Spacing and case are the client's: a server may take `auth\tplain <ir>` too, and its secret is as real.
    const m = /^([ \t]*auth[ \t]+[^ \t]+[ \t]+)\S/i.exec(text);
    return m ? Buffer.from(`${m[1]}${REDACTED}${eol}`, 'latin1') : line;
  }
}

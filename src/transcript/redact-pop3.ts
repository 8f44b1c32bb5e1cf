/**
 * Takes POP3 credentials out of what a client sends before it reaches a
 * transcript (the IMAP filter of ./redact.ts reads IMAP's framing, which
 * POP3 lines do not follow): the password of PASS, the initial response of
 * AUTH and every SASL line of the exchange that follows it, until the
 * server's `+OK` or `-ERR` ends it. Each becomes `***`; other lines pass
 * byte for byte. APOP's digest is not a password and stays.
 */
import { LineHolder } from './line-holder.js';
import { REDACTED } from './redact.js';

/** A partial line held beyond this is not a command the server would take: it passes as it is. */
const MAX_HELD = 64 * 1024;

export class Pop3CredentialFilter {
  /** The unfinished line, split across chunks. */
  private readonly lines = new LineHolder(MAX_HELD);
  /** Inside an AUTH exchange: every client line is a SASL response. */
  private sasl = false;

  client(chunk: Buffer): Buffer | null {
    const out: Buffer[] = [];
    this.lines.split(chunk, 0, out, (line) => this.redactLine(line));
    if (out.length === 0) return null;
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  /** True while `server` has something to look for: the end of an AUTH exchange. */
  get watchesServer(): boolean {
    return this.sasl;
  }

  server(chunk: Buffer): void {
    // The AUTH exchange ends with the server's status line; `+ ` lines are its challenges.
    if (this.sasl && (startsWith(chunk, '+OK') || startsWith(chunk, '-ERR'))) this.sasl = false;
  }

  private redactLine(line: Buffer): Buffer {
    const end = line.length >= 2 && line[line.length - 2] === 0x0d ? line.length - 2 : line.length - 1;
    if (this.sasl) return Buffer.from(`${REDACTED}${line.subarray(end).toString('latin1')}`, 'latin1');
    const text = line.subarray(0, end).toString('latin1');
    const eol = line.subarray(end).toString('latin1');
    const m = /^(\S+)(?: (\S+))?/.exec(text);
    const verb = m?.[1]?.toUpperCase();
    if (verb === 'PASS' && text.length > 5) return Buffer.from(`${text.slice(0, 5)}${REDACTED}${eol}`, 'latin1');
    if (verb === 'AUTH' && m?.[2] !== undefined) {
      this.sasl = true;
      const head = `${m[1]} ${m[2]}`;
      return text.length > head.length ? Buffer.from(`${head} ${REDACTED}${eol}`, 'latin1') : line;
    }
    return line;
  }
}

function startsWith(chunk: Buffer, text: string): boolean {
  return chunk.length >= text.length && chunk.toString('latin1', 0, text.length) === text;
}

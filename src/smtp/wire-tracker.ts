/**
 * Follows an SMTP conversation at the socket boundary, from the cleartext
 * bytes both sides send, to tell which reply answers which command (RFC
 * 5321 §4.2: one reply per command, in order, also when pipelined, RFC
 * 2920). smtp-server runs the protocol; this only watches it, so that
 * command events and the STARTTLS switch come from what was on the wire.
 */
import { EndOfData } from '../util/end-of-data.js';

/** Commands held waiting for their replies beyond this are a flood: the oldest are not followed. */
const MAX_PENDING = 1024;
/** A partial line held beyond this is not a command smtp-server would take. */
const MAX_HELD = 64 * 1024;

export interface TrackedReply {
  /** The command's number in the session (1 for the first). */
  seq: number;
  /** Its verb, upper case (`MAIL`, `AUTH`, ...). */
  verb: string;
  code: number;
}

export class SmtpWireTracker {
  private seq = 0;
  private readonly pending: { seq: number; verb: string }[] = [];
  private head = 0;
  /** Client lines are a message body (after 354) until the lone `.`. */
  private data = false;
  /** The next client line is a SASL response (after 334), not a command. */
  private sasl = false;
  private clientHeld = '';
  private readonly endOfData = new EndOfData();
  private serverHeld = '';

  constructor(private readonly onReply: (reply: TrackedReply) => void) {}

  client(chunk: Buffer): void {
    let at = 0;
    if (this.data) {
      at = this.endOfData.scan(chunk, 0);
      if (at < 0) return;
      this.data = false;
    }
    // Command lines until a body begins; a body starts only after the server's 354, so never in this chunk.
    this.clientHeld = lines(this.clientHeld + chunk.toString('latin1', at), (line) => this.clientLine(line));
  }

  server(chunk: Buffer): void {
    this.serverHeld = lines(this.serverHeld + chunk.toString('latin1'), (line) => this.serverLine(line));
  }

  private clientLine(line: string): void {
    if (this.sasl) {
      this.sasl = false;
      return;
    }
    const verb = (line.trimStart().split(/[ \t]/, 1)[0] ?? '').toUpperCase();
    ++this.seq;
    if (this.pending.length - this.head >= MAX_PENDING) return;
    this.pending.push({ seq: this.seq, verb });
  }

  private serverLine(line: string): void {
    // `250-...` continues a multi-line reply; the line with a space (or nothing) after the code ends it.
    if (line.length >= 4 && line[3] === '-') return;
    const code = Number(line.slice(0, 3));
    if (!Number.isInteger(code)) return;
    if (this.head >= this.pending.length) return; // the greeting, or a reply to no command (421 at a disconnect)
    const command = this.pending[this.head]!;
    // 354 and 334 are intermediate: the command goes on with the body or a SASL response.
    if (code === 354) {
      this.data = true;
      this.endOfData.reset();
      return;
    }
    if (code === 334) {
      this.sasl = true;
      return;
    }
    this.head++;
    if (this.head > 256 && this.head * 2 > this.pending.length) {
      this.pending.splice(0, this.head);
      this.head = 0;
    }
    this.onReply({ seq: command.seq, verb: command.verb, code });
  }
}

/** Calls `each` per complete line (CRLF or LF dropped) and returns the unfinished rest. */
function lines(text: string, each: (line: string) => void): string {
  let at = 0;
  for (let lf = text.indexOf('\n'); lf >= 0; lf = text.indexOf('\n', at)) {
    each(text.slice(at, lf > at && text[lf - 1] === '\r' ? lf - 1 : lf));
    at = lf + 1;
  }
  const rest = text.slice(at);
  return rest.length > MAX_HELD ? '' : rest;
}

/** RFC 5321 §4.2.1: 2yz and 3yz go on; 500/501 are syntax errors; other 4yz/5yz are refusals. */
export function replyStatus(code: number): 'OK' | 'NO' | 'BAD' {
  if (code < 400) return 'OK';
  return code === 500 || code === 501 ? 'BAD' : 'NO';
}

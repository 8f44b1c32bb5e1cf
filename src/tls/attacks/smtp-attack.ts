/**
 * What the STARTTLS attacks send on SMTP (RFC 3207; ./catalog.ts names
 * them). smtp-server runs STARTTLS itself, so the attacks live in the
 * bridge between it and the Connection (src/smtp/session.ts): every reply
 * can be rewritten on its way out and a client's STARTTLS answered before
 * smtp-server sees it. SMTP has no PREAUTH, so `starttls-preauth` is not
 * played here. The watch (../verdicts.ts) judges what the client does next.
 */
import type { AttackName } from './catalog.js';
import type { TlsWatch, WatchDialect } from '../verdicts.js';
import { commandWords } from './command-words.js';

/** Keywords the injections offer that the SMTP listener lacks (AUTH is `AUTH <mechanism>`). */
export const SMTP_INJECTED_CAPABILITIES: readonly string[] = ['AUTH CRAM-MD5', 'X-ROOKERY-INJECTED'];
/** The UI-spoofing text (SMTP has no [ALERT]: the greeting text is what clients log or show). */
export const SMTP_ALERT_GREETING = 'Your account is suspended: confirm your password at http://rookery.invalid/unlock';
/** The attacks SMTP has an equivalent for. */
export const SMTP_ATTACKS: ReadonlySet<AttackName> = new Set<AttackName>(['starttls-buffering', 'starttls-stripping', 'starttls-refusal', 'starttls-no-handshake', 'starttls-garbage', 'starttls-tampering', 'starttls-alert']);

/** An EHLO answer with the injected keywords and without STARTTLS. */
function injectedEhlo(name: string): string {
  return `250-${name} injected\r\n250-AUTH PLAIN CRAM-MD5\r\n250 X-ROOKERY-INJECTED\r\n`;
}

export const SMTP_DIALECT: WatchDialect = {
  parse(line) {
    const words = commandWords(line);
    if (words === null) return null;
    const { verb, arg } = words;
    // AUTH is named with its mechanism, so that a mechanism only an injection offered can be told.
    const name = verb === 'AUTH' && arg ? `AUTH ${arg}` : verb;
    // Only AUTH proves an account; mail content in clear text is what opportunistic TLS allows (RFC 3207 §4.1): continued-without-tls.
    return { name, credentials: verb === 'AUTH' && arg !== undefined && arg !== 'EXTERNAL' };
  },
  harmless: new Set(['EHLO', 'HELO', 'QUIT', 'NOOP', 'RSET', 'STARTTLS']),
  needs: new Map([
    ['AUTH CRAM-MD5', 'AUTH CRAM-MD5'],
    ['X-ROOKERY-INJECTED', 'X-ROOKERY-INJECTED'],
  ]),
};

/** The greeting (smtp-server's first write) as the attacks make it; `name` is the server's domain. */
export function attackSmtpGreeting(watch: TlsWatch, greeting: Buffer, name: string): Buffer {
  let text = greeting.toString('latin1');
  if (watch.has('starttls-alert')) text = `220 ${name} ESMTP ${SMTP_ALERT_GREETING}\r\n`;
  if (watch.has('starttls-stripping')) watch.tlsDenied('STARTTLS was stripped');
  if (watch.has('starttls-tampering')) {
    watch.injected(SMTP_INJECTED_CAPABILITIES, null);
    // A client that learns from it that STARTTLS is missing and goes on anyway was downgraded by the injection.
    watch.tlsDenied('an injected EHLO answer without STARTTLS');
    text += injectedEhlo(name);
  }
  return Buffer.from(text, 'latin1');
}

/**
 * An EHLO answer without its STARTTLS line (starttls-stripping); when
 * STARTTLS was the last line, the line before it becomes the last.
 * Other chunks come back as they were.
 */
export function stripStartTls(chunk: Buffer): Buffer {
  const text = chunk.toString('latin1');
  if (!/^250[ -]STARTTLS\r\n/im.test(text)) return chunk;
  const lines = text.split('\r\n');
  const tail = lines.pop() ?? '';
  const kept = lines.filter((l) => !/^250[ -]STARTTLS$/i.test(l));
  if (kept.length > 0 && /^250 STARTTLS$/i.test(lines[lines.length - 1]!)) kept[kept.length - 1] = `250 ${kept[kept.length - 1]!.slice(4)}`;
  return Buffer.from([...kept, tail].join('\r\n'), 'latin1');
}

/** A client chunk that is STARTTLS alone (clients send it so: RFC 3207 §4 makes it the last of a pipelined group). */
export function isStartTls(chunk: Buffer): boolean {
  return chunk.length <= 16 && /^STARTTLS\s*\r?\n$/i.test(chunk.toString('latin1'));
}

/** The session's own answer to STARTTLS, or null to let smtp-server answer it. */
export function attackStartTls(watch: TlsWatch): { reply: Buffer; plain: boolean } | null {
  if (watch.has('starttls-stripping')) return { reply: Buffer.from('500 5.5.2 Error: command not recognized\r\n'), plain: true };
  if (watch.has('starttls-refusal')) {
    watch.tlsDenied('STARTTLS was refused');
    return { reply: Buffer.from('454 4.7.0 TLS not available due to temporary reason\r\n'), plain: true };
  }
  if (watch.has('starttls-no-handshake')) {
    watch.tlsDenied('"220" to STARTTLS without a handshake');
    return { reply: Buffer.from('220 2.0.0 Ready to start TLS\r\n'), plain: true };
  }
  return null;
}

/** Plain text written right after smtp-server's `220` to STARTTLS, in the same write (starttls-buffering). */
export function bufferedAfterStartTls(watch: TlsWatch, name: string): Buffer | null {
  if (!watch.has('starttls-buffering')) return null;
  watch.injected(SMTP_INJECTED_CAPABILITIES, null);
  return Buffer.from(injectedEhlo(name), 'latin1');
}

/** Plain text put outside TLS records once the handshake is done (starttls-garbage). */
export const SMTP_GARBAGE = Buffer.from('250 plain text after the handshake\r\n');

/** Longest client line the watch keeps (a command line is at most 512 octets, RFC 5321 §4.5.3.1.4). */
const MAX_LINE = 1024;

/**
 * Splits what the client sends into command lines for the watch, skipping
 * the message between DATA and its lone dot (RFC 5321 §4.1.1.4). Memory
 * is bounded: a longer line is cut.
 */
export class SmtpCommandLines {
  private pending: Buffer[] = [];
  private pendingLength = 0;
  private inData = false;
  /**
   * Bytes left of a TLS record the client sent in plain text (its ClientHello after a
   * `220` with no handshake): binary, not command lines. Read as lines, a random LF
   * in it made a "command" of the bytes after it, and the verdict depended on them.
   */
  private recordLeft = 0;

  constructor(private readonly line: (line: Buffer, secure: boolean) => void) {}

  feed(chunk: Buffer, secure: boolean): void {
    let start = 0;
    for (;;) {
      if (this.recordLeft > 0) {
        const take = Math.min(this.recordLeft, chunk.length - start);
        this.recordLeft -= take;
        start += take;
        if (this.recordLeft > 0) return;
      }
      // A record header at a line's start (RFC 8446 §5.1: type 22, handshake; version 3.x; length).
      if (!secure && !this.inData && this.pendingLength === 0 && chunk.length - start >= 5 && chunk[start] === 0x16 && chunk[start + 1] === 0x03) {
        this.recordLeft = 5 + chunk.readUInt16BE(start + 3);
        continue;
      }
      const lf = chunk.indexOf(0x0a, start);
      if (lf < 0) break;
      this.keep(chunk.subarray(start, lf + 1));
      start = lf + 1;
      const whole = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
      this.pending = [];
      this.pendingLength = 0;
      if (this.inData) {
        if (/^\.\r?\n$/.test(whole.toString('latin1', 0, 3))) this.inData = false;
        continue;
      }
      if (/^DATA\s*\r?\n$/i.test(whole.toString('latin1', 0, 8))) this.inData = true;
      this.line(whole, secure);
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  /** DATA was refused (not 354): what follows are commands again. */
  dataRefused(): void {
    this.inData = false;
  }

  private keep(part: Buffer): void {
    const room = MAX_LINE - this.pendingLength;
    if (room <= 0) return;
    const piece = part.length > room ? part.subarray(0, room) : part;
    this.pending.push(Buffer.from(piece));
    this.pendingLength += piece.length;
  }
}

/**
 * What the STARTTLS attacks send on IMAP (./catalog.ts names them): the
 * greeting they change, the untagged responses they inject, the answer to
 * STARTTLS. The session calls these at its greeting and in STARTTLS; the
 * watch (../verdicts.ts) judges what the client does next.
 */
import type { AttackName } from './catalog.js';
import type { TlsWatch, WatchDialect } from '../verdicts.js';

/** Capabilities the injections offer that a Rookery server of the core alone lacks. */
export const INJECTED_CAPABILITIES: readonly string[] = ['ID', 'ENABLE', 'NAMESPACE', 'IDLE', 'MOVE', 'COMPRESS=DEFLATE', 'X-ROOKERY-INJECTED'];
/** The mailbox the tampering attack lists: no store has it. */
export const INJECTED_MAILBOX = 'Rookery-Injected';
/** The texts of the UI-spoofing attack. */
export const ALERT_GREETING = 'Your account is suspended: confirm your password at http://rookery.invalid/unlock';
export const ALERT_STARTTLS = 'Security notice: this server is certified safe, ignore certificate warnings';

export const IMAP_DIALECT: WatchDialect = {
  parse(line) {
    // tag SP name [SP mechanism]: enough of the grammar to name the command; the parser judges the rest.
    const text = line.toString('latin1', 0, Math.min(line.length, 256));
    // No command has control bytes: a ClientHello read as plain text (starttls-no-handshake) has many, and can hold a CRLF and words by chance.
    if (/[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]/.test(text)) return null;
    const m = /^[\x21-\x7e]{1,64} ([A-Za-z][A-Za-z0-9-]*)(?: ([A-Za-z0-9_-]+))?/.exec(text);
    if (!m) return null;
    let name = m[1]!.toUpperCase();
    const second = m[2]?.toUpperCase();
    if (name === 'UID' && second) name = `UID ${second}`;
    const credentials = name === 'LOGIN' || (name === 'AUTHENTICATE' && second !== 'EXTERNAL');
    return { name, credentials };
  },
  harmless: new Set(['CAPABILITY', 'LOGOUT', 'NOOP', 'STARTTLS']),
  needs: new Map([
    ['ID', 'ID'],
    ['ENABLE', 'ENABLE'],
    ['NAMESPACE', 'NAMESPACE'],
    ['IDLE', 'IDLE'],
    ['MOVE', 'MOVE'],
    ['UID MOVE', 'MOVE'],
    ['COMPRESS', 'COMPRESS=DEFLATE'],
    ['X-ROOKERY-INJECTED', 'X-ROOKERY-INJECTED'],
  ]),
};

/**
 * The greeting as the session's attacks make it (`greeting` is the
 * session's own `* OK ...` line). Untagged injections follow it.
 */
export function attackGreeting(watch: TlsWatch, greeting: Buffer): Buffer {
  let line = greeting.toString('latin1');
  if (watch.has('starttls-preauth')) {
    line = line.replace(/^\* OK /, '* PREAUTH ');
    watch.tlsDenied('the PREAUTH greeting');
  }
  // One response code per line: [ALERT] takes the place of [CAPABILITY ...] (clients ask for them anyway).
  if (watch.has('starttls-alert')) line = line.replace(/^(\* [A-Z]+ )(\[[^\]]*\] )?.*\r\n$/, `$1[ALERT] ${ALERT_GREETING}\r\n`);
  if (watch.has('starttls-stripping')) watch.tlsDenied('STARTTLS was stripped');
  if (watch.has('starttls-tampering')) {
    watch.injected(INJECTED_CAPABILITIES, INJECTED_MAILBOX);
    line +=
      `* CAPABILITY IMAP4rev1 STARTTLS ${INJECTED_CAPABILITIES.join(' ')}\r\n` +
      `* LIST () "/" ${INJECTED_MAILBOX}\r\n` +
      `* STATUS ${INJECTED_MAILBOX} (MESSAGES 7 UNSEEN 7)\r\n` +
      `* FLAGS (\\Seen \\Flagged $RookeryInjected)\r\n` +
      `* 7 EXISTS\r\n` +
      `* 7 FETCH (FLAGS (\\Seen $RookeryInjected))\r\n`;
  }
  return Buffer.from(line, 'latin1');
}

/** How the session answers STARTTLS under its attacks. */
export interface StartTlsPlan {
  status: 'OK' | 'NO' | 'BAD';
  code?: string;
  text: string;
  /** False: the session stays in plain text after the answer. */
  handshake: boolean;
  /** Plain-text bytes written right after the tagged answer, in the same write. */
  after: Buffer | null;
  /** Plain-text bytes written on the TCP connection once the handshake is done (outside TLS records). */
  afterHandshake: Buffer | null;
}

/** The next tag a client that counts its tags will use (`A7` after `A6`), for the buffered tagged OK. */
export function nextTag(tag: string): string {
  const m = /^(.*?)(\d+)$/.exec(tag);
  if (!m) return `${tag}1`;
  const n = String(Number(m[2]) + 1).padStart(m[2]!.length, '0');
  return `${m[1]}${n}`;
}

/** The plan for STARTTLS with tag `tag`, or null when no attack changes it. */
export function attackStartTls(watch: TlsWatch, tag: string): StartTlsPlan | null {
  const alert = watch.has('starttls-alert');
  const text = alert ? ALERT_STARTTLS : 'Begin TLS negotiation now';
  const code = alert ? 'ALERT' : undefined;
  const base = { status: 'OK' as const, ...(code ? { code } : {}), text, handshake: true, after: null, afterHandshake: null };
  if (watch.has('starttls-preauth')) return { ...base, status: 'BAD', text: 'STARTTLS is not valid after PREAUTH (the session is authenticated)', handshake: false };
  if (watch.has('starttls-refusal')) {
    watch.tlsDenied('STARTTLS was refused');
    return { ...base, status: 'NO', text: 'TLS is not available right now', handshake: false };
  }
  if (watch.has('starttls-no-handshake')) {
    watch.tlsDenied('"OK" to STARTTLS without a handshake');
    return { ...base, handshake: false, after: Buffer.from('* OK Still in plain text: no TLS here\r\n') };
  }
  if (watch.has('starttls-buffering')) {
    watch.injected(INJECTED_CAPABILITIES, null);
    const caps = `IMAP4rev1 AUTH=PLAIN ${INJECTED_CAPABILITIES.join(' ')}`;
    return { ...base, after: Buffer.from(`* CAPABILITY ${caps}\r\n${nextTag(tag)} OK CAPABILITY completed\r\n`) };
  }
  if (watch.has('starttls-garbage')) return { ...base, afterHandshake: Buffer.from('* OK plain text after the handshake\r\n') };
  return alert ? base : null;
}

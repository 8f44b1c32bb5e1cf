/**
 * What the STARTTLS attacks send on POP3 STLS (RFC 2595 §4; ./catalog.ts
 * names them). POP3 has no untagged responses: what an attack injects is
 * a whole answer the client takes for the answer to its next command, so
 * the injected CAPA answer stands in for the server's own. The session
 * calls these at its greeting, in CAPA and in STLS; the watch
 * (../verdicts.ts) judges what the client does next.
 */
import type { TlsWatch, WatchDialect } from '../verdicts.js';
import { commandWords } from './command-words.js';

/** Capabilities the injections offer that the POP3 listener lacks (a SASL mechanism is `SASL <name>`). */
export const POP3_INJECTED_CAPABILITIES: readonly string[] = ['SASL CRAM-MD5', 'X-ROOKERY-INJECTED'];
/** The texts of the UI-spoofing attack (POP3 has no [ALERT]: the text of a +OK is what clients show). */
export const POP3_ALERT_GREETING = 'Your account is suspended: confirm your password at http://rookery.invalid/unlock';
export const POP3_ALERT_STLS = 'Security notice: this server is certified safe, ignore certificate warnings';

/** A CAPA answer naming the injected capabilities; with `stls` false it has no STLS line. */
function injectedCapa(stls: boolean): string {
  const lines = ['TOP', 'UIDL', 'USER', 'SASL PLAIN CRAM-MD5', 'X-ROOKERY-INJECTED', ...(stls ? ['STLS'] : [])];
  return `+OK Capability list follows\r\n${lines.join('\r\n')}\r\n.\r\n`;
}

export const POP3_DIALECT: WatchDialect = {
  parse(line) {
    const words = commandWords(line);
    if (words === null) return null;
    const { verb, arg: mechanism } = words;
    // AUTH is named with its mechanism, so that a mechanism only an injection offered can be told.
    const name = verb === 'AUTH' && mechanism ? `AUTH ${mechanism}` : verb;
    // USER names the account; PASS, APOP and AUTH (but EXTERNAL, which sends no secret) prove it.
    const credentials = verb === 'USER' || verb === 'PASS' || verb === 'APOP' || (verb === 'AUTH' && mechanism !== undefined && mechanism !== 'EXTERNAL');
    return { name, credentials };
  },
  harmless: new Set(['CAPA', 'QUIT', 'NOOP', 'STLS']),
  needs: new Map([
    ['AUTH CRAM-MD5', 'SASL CRAM-MD5'],
    ['X-ROOKERY-INJECTED', 'X-ROOKERY-INJECTED'],
  ]),
};

/** The capabilities a CAPA answer offers, as the watch compares them (`SASL <mechanism>` one by one). */
export function pop3Offered(lines: readonly string[]): Set<string> {
  const offered = new Set<string>();
  for (const line of lines) {
    const [name, ...rest] = line.toUpperCase().split(' ');
    if (name === 'SASL') for (const m of rest) offered.add(`SASL ${m}`);
    else offered.add(name!);
  }
  return offered;
}

/**
 * The greeting as the session's attacks make it (`greeting` is the
 * session's `+OK ...` line, with an APOP timestamp at its end when set).
 */
export function attackPop3Greeting(watch: TlsWatch, greeting: Buffer): Buffer {
  let line = greeting.toString('latin1');
  if (watch.has('starttls-alert')) {
    // The APOP timestamp (RFC 1939 §7) stays the last word, so APOP clients still log in.
    const stamp = /( <[^>]*>)\r\n$/.exec(line)?.[1] ?? '';
    line = `+OK ${POP3_ALERT_GREETING}${stamp}\r\n`;
  }
  if (watch.has('starttls-stripping')) watch.tlsDenied('STLS was stripped');
  if (watch.has('starttls-tampering')) {
    watch.injected(POP3_INJECTED_CAPABILITIES, null);
    // A client that learns from it that STLS is missing and logs in anyway was downgraded by the injection.
    watch.tlsDenied('an injected CAPA answer without STLS');
    line += injectedCapa(false);
  }
  return Buffer.from(line, 'latin1');
}

/** STLS is left out of CAPA and STLS is answered as unknown (starttls-stripping). */
export function stlsStripped(watch: TlsWatch | null): boolean {
  return watch?.has('starttls-stripping') ?? false;
}

/** How the session answers STLS under its attacks. */
export interface StlsPlan {
  ok: boolean;
  text: string;
  /** False: the session stays in plain text after the answer. */
  handshake: boolean;
  /** Plain-text bytes written right after the answer, in the same write. */
  after: Buffer | null;
  /** Plain-text bytes written on the TCP connection once the handshake is done (outside TLS records). */
  afterHandshake: Buffer | null;
}

/** The plan for STLS, or null when no attack changes it. */
export function attackStls(watch: TlsWatch): StlsPlan | null {
  const alert = watch.has('starttls-alert');
  const base: StlsPlan = { ok: true, text: alert ? POP3_ALERT_STLS : 'Begin TLS negotiation', handshake: true, after: null, afterHandshake: null };
  if (watch.has('starttls-refusal')) {
    watch.tlsDenied('STLS was refused');
    return { ...base, ok: false, text: 'TLS is not available right now', handshake: false };
  }
  if (watch.has('starttls-no-handshake')) {
    watch.tlsDenied('"+OK" to STLS without a handshake');
    return { ...base, handshake: false };
  }
  if (watch.has('starttls-buffering')) {
    watch.injected(POP3_INJECTED_CAPABILITIES, null);
    return { ...base, after: Buffer.from(injectedCapa(false), 'latin1') };
  }
  if (watch.has('starttls-garbage')) return { ...base, afterHandshake: Buffer.from('+OK plain text after the handshake\r\n') };
  return alert ? base : null;
}

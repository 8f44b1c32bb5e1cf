/**
 * The POP3 fuzzer's corpus and input generator: valid and broken commands
 * of RFC 1939 (USER, PASS, APOP, STAT, LIST, RETR, DELE, NOOP, RSET, QUIT,
 * TOP, UIDL), RFC 2449 (CAPA), RFC 2595 (STLS), RFC 5034 (AUTH with SASL
 * PLAIN, LOGIN, XOAUTH2, OAUTHBEARER, initial responses and continuation
 * answers) and RFC 6856 (UTF8, LANG), picked by the state the session is
 * in and then mutated (case, spacing, octets, lengths).
 *
 * Every input is one line without LF: whether a bare LF ends a line is
 * something servers answer differently, and the oracle must know where
 * each line ends to ask for exactly one answer per line.
 */
import { createHash } from 'node:crypto';
import { Rand } from './generate.js';

/** The state the session is in when the input is sent (RFC 1939 section 3, RFC 5034 section 4). */
export type Pop3FuzzState = 'authorization' | 'afterUser' | 'transaction' | 'authContinuation';

export const FUZZ_USER = 'testuser';
export const FUZZ_PASS = 'testpass';
export const FUZZ_TOKEN = 'testtoken';

const b64 = (s: string): string => Buffer.from(s, 'latin1').toString('base64');

/** SASL initial responses and continuation answers, valid and not. */
export const SASL: readonly string[] = [
  b64(`\0${FUZZ_USER}\0${FUZZ_PASS}`),
  b64(`${FUZZ_USER}\0${FUZZ_USER}\0${FUZZ_PASS}`),
  b64(`\0${FUZZ_USER}\0wrong`),
  b64(`\0\0`),
  b64(FUZZ_USER),
  b64(FUZZ_PASS),
  b64(`user=${FUZZ_USER}\x01auth=Bearer ${FUZZ_TOKEN}\x01\x01`),
  b64(`n,a=${FUZZ_USER},\x01auth=Bearer ${FUZZ_TOKEN}\x01\x01`),
  b64(`user=${FUZZ_USER}\x01auth=Bearer nope\x01\x01`),
  '*',
  '=',
  '',
  '====',
  'not base64!',
  'AAAA====AAAA',
  b64('x'.repeat(3000)),
];

const MECHANISMS = ['PLAIN', 'LOGIN', 'XOAUTH2', 'OAUTHBEARER', 'CRAM-MD5', 'X-UNKNOWN', 'plain', ''];

/** Commands for the AUTHORIZATION state (before and after USER). */
const AUTHORIZATION: readonly string[] = [
  `USER ${FUZZ_USER}`,
  'USER nobody',
  'USER',
  `USER ${FUZZ_USER} extra`,
  `PASS ${FUZZ_PASS}`,
  'PASS wrong',
  'PASS',
  `PASS ${FUZZ_PASS} with spaces`,
  'APOP',
  `APOP ${FUZZ_USER}`,
  `APOP ${FUZZ_USER} 0123456789abcdef0123456789abcdef`,
  `APOP ${FUZZ_USER} zz`,
  'AUTH PLAIN',
  'AUTH LOGIN',
  'AUTH XOAUTH2',
  'AUTH OAUTHBEARER',
  // SASL EXTERNAL (a client certificate) and what the STARTTLS attacks inject (docs/tls.md).
  'AUTH EXTERNAL',
  'AUTH EXTERNAL =',
  `AUTH EXTERNAL ${Buffer.from(FUZZ_USER).toString('base64')}`,
  'AUTH CRAM-MD5',
  'X-ROOKERY-INJECTED',
  'CAPA',
  'UTF8',
  'LANG',
  'LANG en',
  'QUIT',
  'NOOP',
  'STAT',
  'RETR 1',
];

/** Commands for the TRANSACTION state. */
const TRANSACTION: readonly string[] = [
  'STAT',
  'LIST',
  'LIST 1',
  'LIST 2',
  'LIST 0',
  'LIST -1',
  'LIST a',
  'LIST 99999999999999999999999',
  'LIST 1 2',
  'RETR 1',
  'RETR 2',
  'RETR 3',
  'RETR',
  'RETR 0',
  'RETR 1 1',
  'RETR 4294967297',
  'TOP 1 0',
  'TOP 2 1',
  'TOP 3 100',
  'TOP 1',
  'TOP 1 -1',
  'TOP 1 99999999999999999999',
  'TOP x y',
  'TOP',
  'DELE 1',
  'DELE 2',
  'DELE 0',
  'DELE',
  'RSET',
  'RSET now',
  'NOOP',
  'NOOP x',
  'UIDL',
  'UIDL 1',
  'UIDL 0',
  'UIDL 3',
  'LAST',
  'CAPA',
  `USER ${FUZZ_USER}`,
  `PASS ${FUZZ_PASS}`,
  'APOP a b',
  'AUTH PLAIN',
  'UTF8',
  'LANG',
  'LANG *',
  'QUIT',
];

/** Lines that are no command at all. */
const JUNK: readonly string[] = ['', ' ', 'X', 'XYZZY', 'HELO there', 'A1 LOGIN a b', 'GET / HTTP/1.1', '\x00', '\xff\xfe', '.', '+OK', '-ERR', '* OK'];

export interface Pop3Input {
  line: string;
  /** STLS and QUIT end a batch: nothing may follow them in the same write. */
  ends: 'stls' | 'quit' | null;
}

/**
 * A seeded generator of POP3 input lines. `greeting` is the session's
 * banner, so that some APOP digests are right (RFC 1939 section 7).
 */
export class Pop3Generator {
  constructor(readonly rand: Rand) {}

  next(state: Pop3FuzzState, greeting: string): Pop3Input {
    const r = this.rand;
    let line: string;
    const roll = r.int(0, 99);
    if (state === 'authContinuation') line = roll < 80 ? r.pick(SASL) : r.pick([...TRANSACTION, ...JUNK]);
    else if (roll < 6) line = r.pick(JUNK);
    else if (roll < 10) line = `AUTH ${r.pick(MECHANISMS)}${r.chance(0.6) ? ` ${r.pick(SASL)}` : ''}`.trimEnd();
    else if (roll < 13) line = this.apop(greeting);
    else if (roll < 15) line = 'STLS';
    else if (roll < 80) line = r.pick(state === 'transaction' ? TRANSACTION : state === 'afterUser' ? [`PASS ${FUZZ_PASS}`, ...AUTHORIZATION] : AUTHORIZATION);
    // commands of the other state: each must get -ERR, and the session goes on
    else line = r.pick(state === 'transaction' ? AUTHORIZATION : TRANSACTION);
    if (r.chance(0.25)) line = this.mutate(line);
    const keyword = line.split(' ')[0]!.toUpperCase();
    // Bare "AUTH" lists mechanisms on some servers (multi-line) and is an error on others; RFC 5034 leaves it open.
    if (keyword === 'AUTH' && line.trim().toUpperCase() === 'AUTH') line = 'AUTH X-NONE';
    return { line, ends: keyword === 'STLS' && state !== 'authContinuation' ? 'stls' : keyword === 'QUIT' && state !== 'authContinuation' ? 'quit' : null };
  }

  private apop(greeting: string): string {
    const stamp = /<[^>]*>/.exec(greeting)?.[0];
    if (stamp !== undefined && this.rand.chance(0.5)) return `APOP ${FUZZ_USER} ${createHash('md5').update(stamp + FUZZ_PASS).digest('hex')}`;
    return `APOP ${this.rand.pick([FUZZ_USER, 'nobody', ''])} ${createHash('md5').update(String(this.rand.int(0, 1e6))).digest('hex')}`;
  }

  /** One mutation of a line: keeps it a single line without LF. */
  mutate(line: string): string {
    const r = this.rand;
    switch (r.int(0, 11)) {
      case 0:
        return line.toLowerCase();
      case 1:
        return line.replace(/^(\S+)/, (k) => [...k].map((c) => (r.chance(0.5) ? c.toLowerCase() : c.toUpperCase())).join(''));
      case 2:
        return line.replace(/ /g, '  ');
      case 3:
        return `${line} `;
      case 4:
        return ` ${line}`;
      case 5:
        return line.replace(/ /g, '\t');
      case 6:
        return line.slice(0, r.int(0, line.length));
      case 7:
        return `${line} ${'9'.repeat(r.int(1, 40))}`;
      case 8:
        return `${line}${'A'.repeat(r.pick([200, 600, 1000, 9000]))}`;
      case 9:
        return `${line}\x00${line}`;
      case 10:
        return `${line}\r`;
      default:
        return line.replace(/./g, (c) => (r.chance(0.05) ? String.fromCharCode(r.int(0x80, 0xff)) : c));
    }
  }
}

/**
 * The SMTP fuzzer's corpus and input generator: valid and broken commands
 * of RFC 5321 (EHLO, HELO, MAIL, RCPT, DATA, RSET, NOOP, VRFY, EXPN, HELP,
 * QUIT), RFC 4954 (AUTH PLAIN and LOGIN, initial responses and SASL
 * answers, `*` to cancel), RFC 1870 (SIZE=), RFC 6531 (SMTPUTF8) and
 * message bodies with dot-stuffing (RFC 5321 §4.5.2), then mutated (case,
 * spacing, octets, lengths). Every input is one line without CR or LF.
 */
import { Rand } from './generate.js';

const b64 = (s: string): string => Buffer.from(s, 'latin1').toString('base64');

/** SASL answers after a 334, valid and not. */
export const SMTP_SASL: readonly string[] = [
  b64('\0testuser\0testpass'),
  b64('\0testuser\0wrong'),
  b64('testuser'),
  b64('testpass'),
  '*',
  '=',
  '',
  'not base64!',
];

const ADDRESSES = ['testuser@example.com', 'a@b.c', '', 'x@[127.0.0.1]', 'bad address', '"quoted local"@example.com', 'ü@example.com', 'a'.repeat(300) + '@example.com'];

const COMMANDS: readonly ((r: Rand) => string)[] = [
  () => 'EHLO client.test',
  () => 'HELO client.test',
  () => 'EHLO',
  (r) => `MAIL FROM:<${r.pick(ADDRESSES)}>`,
  (r) => `MAIL FROM:<${r.pick(ADDRESSES)}> SIZE=${r.int(0, 10 ** 9)}`,
  (r) => `MAIL FROM:<${r.pick(ADDRESSES)}> SMTPUTF8 BODY=8BITMIME`,
  (r) => `RCPT TO:<${r.pick(ADDRESSES)}>`,
  () => 'RCPT TO:',
  () => 'DATA',
  () => 'RSET',
  () => 'NOOP',
  (r) => `VRFY ${r.pick(ADDRESSES)}`,
  () => 'EXPN list',
  () => 'HELP',
  () => `AUTH PLAIN ${b64('\0testuser\0testpass')}`,
  () => 'AUTH PLAIN',
  () => 'AUTH LOGIN',
  () => `AUTH LOGIN ${b64('testuser')}`,
  () => 'AUTH CRAM-MD5',
  () => 'STARTTLS',
  () => 'BDAT 10 LAST',
  () => 'QUIT',
];

/** Body lines after a 354: text, a leading dot (stuffed by the driver), long lines, 8-bit octets. */
export function bodyLines(r: Rand): string[] {
  const n = r.int(0, 6);
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(
      r.pick([
        'Subject: fuzz',
        '',
        '.leading dot',
        '..two dots',
        'AUTH PLAIN not-a-credential',
        'x'.repeat(r.int(0, 2000)),
        Buffer.from(r.bytes(r.int(1, 40), 'abc\xe9\xfc\x80\t ')).toString('latin1'),
      ]),
    );
  }
  return lines;
}

export class SmtpGenerator {
  constructor(private readonly r: Rand) {}

  /** A command line (a SASL answer when `sasl`), one line without CR or LF. */
  next(sasl: boolean): string {
    const r = this.r;
    let line = sasl ? r.pick(SMTP_SASL) : r.pick(COMMANDS)(r);
    if (r.chance(0.2)) line = this.mutate(line);
    return line.replace(/[\r\n]/g, ' ');
  }

  private mutate(line: string): string {
    const r = this.r;
    switch (r.int(0, 5)) {
      case 0:
        return line.toLowerCase();
      case 1:
        return line.replace(/ /g, r.pick(['  ', '\t', '']));
      case 2:
        return `${line} ${r.bytes(r.int(1, 30), 'abc:<>@=\x00\x7f\xff').toString('latin1')}`;
      case 3:
        return line.slice(0, r.int(0, line.length));
      case 4:
        return line + 'A'.repeat(r.int(100, 1200));
      default:
        return ` ${line}`;
    }
  }
}

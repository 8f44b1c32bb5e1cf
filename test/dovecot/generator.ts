/**
 * A seeded generator of tricky messages for the differential test: nested
 * multiparts, message/rfc822 inside multiparts, RFC 2231 parameters,
 * RFC 2047 words, groups and comments in addresses, missing and duplicate
 * headers, bare LF, long and folded lines, empty parts and broken
 * boundaries. Each message carries the names of the features it uses, so
 * the allow-list can say which feature explains a difference. The mailbox
 * generator's whole malformed catalogue follows them.
 */
import { generateMailbox, MALFORMED_CASE_NAMES } from '../../src/generator/index.js';
import { Prng } from '../../src/util/prng.js';

export interface Generated {
  raw: Buffer;
  features: Set<string>;
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];

class Gen {
  readonly features = new Set<string>();
  private boundaryCount = 0;

  constructor(readonly rng: Prng) {}

  chance(p: number): boolean {
    return this.rng.next() < p;
  }
  int(lo: number, hi: number): number {
    return lo + this.rng.below(hi - lo + 1);
  }
  pick<T>(list: readonly T[]): T {
    return list[this.rng.below(list.length)]!;
  }
  feature<T>(name: string, value: T): T {
    this.features.add(name);
    return value;
  }

  words(n: number): string {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(this.pick(WORDS));
    return out.join(' ');
  }

  address(): string {
    const user = this.pick(['alice', 'bob', 'carol', 'dave', 'u0', 'u1']);
    const dom = this.pick(['example.com', 'example.org', 'mail.example.net']);
    switch (this.int(0, 21)) {
      case 0:
      case 1:
      case 2:
        return `${user}@${dom}`;
      case 3:
      case 4:
        return `${user[0]!.toUpperCase()}${user.slice(1)} Example <${user}@${dom}>`;
      case 5:
        return `"Doe, ${user}" <${user}@${dom}>`;
      case 6:
        return this.feature('rfc2047', `=?utf-8?q?J=C3=BCrgen_${user}?= <${user}@${dom}>`);
      case 7:
        return this.feature('comment', `${user}@${dom} (${user} comment)`);
      case 8:
        return this.feature('comment', `${user} (the (nested) one) <${user}@${dom}>`);
      case 9:
        return this.feature('group', `Team ${user}: ${user}@${dom}, "B B" <b@${dom}>;`);
      case 10:
        return this.feature('group', 'undisclosed-recipients:;');
      case 11:
        return this.feature('bad-address', '<>');
      case 12:
        return this.feature('bad-address', '@');
      case 13:
        return this.feature('bad-address', `<${user}@${dom}`);
      case 14:
        return this.feature('bad-address', `John ${user}`);
      case 15:
        return this.feature('bad-address', `${user}@`);
      case 16:
        return this.feature('bad-address', `@${dom}`);
      case 17:
        return this.feature('route', `<@relay.example,@r2.example:${user}@${dom}>`);
      case 18:
        return `"quoted local"@${dom}`;
      case 19:
        return `${user}@[192.0.2.1]`;
      case 20:
        return this.feature('8bit-header', `Jürgen ${user} <${user}@${dom}>`);
      default:
        return this.feature('rfc2047', `=?iso-8859-1?b?${Buffer.from('Andr\xe9', 'latin1').toString('base64')}?= <${user}@${dom}>`);
    }
  }

  addressList(): string {
    const n = this.int(1, 3);
    const list: string[] = [];
    for (let i = 0; i < n; i++) list.push(this.address());
    if (n > 1 && this.chance(0.3)) return this.feature('folded', list.join(',\r\n\t'));
    return list.join(', ');
  }

  subject(): string {
    switch (this.int(0, 7)) {
      case 0:
        return this.feature('rfc2047', `=?utf-8?b?${Buffer.from('Grüße aus Köln').toString('base64')}?= ${this.words(2)}`);
      case 1:
        return this.feature('folded', `${this.words(4)}\r\n ${this.words(3)}\r\n\t${this.words(2)}`);
      case 2:
        return '';
      case 3:
        return this.feature('long-line', this.words(200));
      case 4:
        return `  ${this.words(2)}\t ${this.words(1)}  `;
      case 5:
        return this.feature('8bit-header', `Café ${this.words(2)}`);
      default:
        return this.words(this.int(1, 5));
    }
  }

  /** Top-level or encapsulated header fields, without the blank line. */
  messageHeader(): string[] {
    const h: string[] = [];
    const add = (name: string, value: string): void => {
      h.push(`${name}: ${value}`);
    };
    if (this.chance(0.9)) add('From', this.addressList());
    else this.features.add('missing-header');
    if (this.chance(0.12)) add(this.feature('dup-from', 'From'), this.addressList());
    if (this.chance(0.8)) add('To', this.addressList());
    if (this.chance(0.1)) add(this.feature('dup-header', 'To'), this.addressList());
    if (this.chance(0.3)) add('Cc', this.addressList());
    if (this.chance(0.1)) add('Bcc', this.addressList());
    if (this.chance(0.1)) add('Sender', this.addressList());
    if (this.chance(0.1)) add('Reply-To', this.chance(0.3) ? '' : this.addressList());
    if (this.chance(0.85)) add('Subject', this.subject());
    if (this.chance(0.08)) add(this.feature('dup-header', 'Subject'), this.subject());
    if (this.chance(0.85)) add('Date', this.pick(['Mon, 2 Nov 2026 10:00:00 +0000', 'Tue, 3 Mar 2026 23:59:59 -0800 (PST)', 'garbage date', '']));
    if (this.chance(0.7)) add('Message-ID', `<${this.int(1, 99999)}.${this.pick(WORDS)}@example.com>`);
    if (this.chance(0.2)) add('In-Reply-To', this.chance(0.5) ? `<${this.int(1, 999)}@example.com>` : `<a@b>\r\n <c@d>`);
    if (this.chance(0.15)) add('X-Long', this.feature('long-line', 'x'.repeat(this.int(990, 1100))));
    if (this.chance(0.1)) h.push(this.feature('odd-header', 'X-No-Colon-Line'));
    if (this.chance(0.1)) h.push(this.feature('odd-header', 'X-Space-Before-Colon : value'));
    return h;
  }

  boundary(parents: string[]): { header: string; value: string | null } {
    const n = ++this.boundaryCount;
    const r = this.int(0, 29);
    if (r === 0) return { header: this.feature('no-boundary', ''), value: null };
    if (r === 1) return { header: this.feature('no-boundary', '; boundary=""'), value: null };
    if (r === 2) {
      // over 70 characters (RFC 2046's limit); Dovecot compares only the first 80
      const length = this.pick([72, 85]);
      const v = `${'b'.repeat(length)}${n}`;
      return { header: this.feature(length > 80 ? 'long-boundary' : 'boundary-over-70', `; boundary="${v}"`), value: v };
    }
    if (r === 3 && parents.length > 0) {
      const v = parents[parents.length - 1]!;
      return { header: this.feature('self-nested-boundary', `; boundary="${v}"`), value: v };
    }
    if (r === 4 && parents.length > 0) {
      // a child boundary that starts with the parent's: the longest match wins
      const v = `${parents[parents.length - 1]!}-inner`;
      return { header: this.feature('prefix-boundary', `; boundary="${v}"`), value: v };
    }
    if (r === 5) {
      const v = `sp ace ${n}`;
      return { header: `; boundary="${v}"`, value: v };
    }
    const v = `=_b${n}_${this.int(100, 999)}`;
    return { header: this.chance(0.5) ? `; boundary="${v}"` : `;\r\n\tboundary="${v}"`, value: v };
  }

  contentType(): string | null {
    switch (this.int(0, 25)) {
      case 0:
        return null;
      case 1:
        return 'text/plain';
      case 2:
        return 'text/plain; charset=utf-8';
      case 3:
        return 'TEXT/HTML; CHARSET="ISO-8859-1"';
      case 4:
        return 'text/plain; format=flowed; delsp=yes';
      case 5:
        return 'application/octet-stream; name="data.bin"';
      case 6:
        return this.feature('rfc2231', "application/pdf; name*0*=utf-8''na%C3%AF; name*1*=ve.pdf");
      case 7:
        return this.feature('rfc2231', 'application/pdf; name*0="long"; name*1="name.pdf"');
      case 8:
        return this.feature('rfc2231', 'application/pdf; name*0="a"; name*2="c"');
      case 9:
        return this.feature('rfc2231', "text/plain; charset*=utf-8''utf-8");
      case 10:
        return this.feature('bad-type', 'foo/bar/baz');
      case 11:
        return this.feature('bad-type', 'text');
      case 12:
        return this.feature('bad-type', '/plain');
      case 13:
        return this.feature('bad-type', 'text/');
      case 14:
        return 'image/png; name=logo.png';
      case 15:
        return 'text/plain; charset="us-ascii" (comment)';
      case 16:
        return this.feature('rfc2047', 'application/msword; name="=?utf-8?q?R=C3=A9sum=C3=A9.doc?="');
      case 17:
        return 'text/plain;\r\n\tcharset=us-ascii;\r\n\tname="folded.txt"';
      case 18:
        return 'text/plain; charset=utf-8; charset=iso-8859-1';
      case 19:
        return this.feature('bad-type', 'text/plain; =broken; charset=utf-8');
      case 20:
        return this.feature('rfc2231', "application/x-y; name*0*=utf-8'en'a%20b; name*1=\"c d\"; NAME*2*=%41");
      case 21:
        return this.feature('comment', 'text/(c1)plain (c2); (c3) charset=(c4)utf-8');
      case 22:
        return this.feature('rfc2231', "application/x-y; filename*=''plain; title*=us-ascii'en-us'This%20is%20%2A%2A%2Afun%2A%2A%2A");
      default:
        return 'text/plain; charset=us-ascii';
    }
  }

  mimeExtras(h: string[]): void {
    if (this.chance(0.3)) h.push(`Content-Transfer-Encoding: ${this.pick(['7bit', '8bit', 'base64', 'quoted-printable', 'QUOTED-PRINTABLE', 'x-uuencode', 'bad value', ''])}`);
    if (this.chance(0.15)) h.push(`Content-ID: <cid${this.int(1, 99)}@example.com>`);
    if (this.chance(0.1)) h.push(this.feature('folded', `Content-Description: ${this.words(2)}\r\n ${this.words(2)}`));
    if (this.chance(0.05)) h.push('Content-MD5: Q2hlY2sgSW50ZWdyaXR5IQ==');
    if (this.chance(0.08)) h.push(`Content-Language: ${this.pick(['en', 'en, fr', 'de-DE (German)', ''])}`);
    if (this.chance(0.05)) h.push(this.pick(['Content-Location: http://example.com/x', 'Content-Location: http://example.com/\r\n folded', 'Content-Location:']));
    if (this.chance(0.25)) {
      h.push(
        `Content-Disposition: ${this.pick([
          'inline',
          'attachment; filename="a b.txt"',
          'ATTACHMENT; FILENAME=x.txt; size=12',
          this.feature('bad-disposition', ';filename=d.txt'),
          this.feature('rfc2231', "attachment; filename*=utf-8''%E2%82%AC.txt"),
          this.feature('rfc2231', "attachment; filename*0*=utf-8''a%20; filename*1=b.txt"),
          '',
        ])}`,
      );
    }
  }

  text(): string {
    switch (this.int(0, 9)) {
      case 0:
        return '';
      case 1:
        return this.feature('long-line', `${'y'.repeat(this.int(998, 1200))}\r\n`);
      case 2:
        return this.words(3); // no final line break
      case 3:
        return this.feature('8bit-body', 'Grüße\r\ncafé\r\n');
      case 4:
        return '\r\n\r\n';
      case 5:
        return this.feature('boundary-like', `--not-a-boundary\r\n${this.words(2)}\r\n`);
      case 6:
        return this.feature('lone-cr', `${this.words(2)}\r${this.words(1)}\r\n`);
      default: {
        const lines: string[] = [];
        for (let i = this.int(1, 5); i > 0; i--) lines.push(this.words(this.int(1, 8)));
        return `${lines.join('\r\n')}\r\n`;
      }
    }
  }

  /** A body part (header lines + body) for inside a multipart. */
  part(depth: number, parents: string[], inDigest: boolean): string {
    const r = this.int(0, 99);
    if (depth < 4 && r < 18) return this.multipart(depth + 1, parents, []);
    if (depth < 4 && r < 30) return this.encapsulated(depth, parents, 'rfc822');
    if (depth < 4 && r < 31) return this.encapsulated(depth, parents, this.feature('message-global', 'global'));
    if (r < 36) return this.feature('empty-part', '');
    if (r < 39) return this.feature('empty-part', '\r\n');
    if (r < 42) return this.feature('header-only-part', 'Content-Type: text/plain');
    const h: string[] = [];
    const ct = inDigest && this.chance(0.5) ? null : this.contentType();
    if (ct !== null) h.push(`Content-Type: ${ct}`);
    this.mimeExtras(h);
    if (inDigest && ct === null) return `${h.join('\r\n')}${h.length ? '\r\n' : ''}\r\n${this.messageHeader().join('\r\n')}\r\n\r\n${this.text()}`;
    return `${h.join('\r\n')}${h.length ? '\r\n' : ''}\r\n${this.text()}`;
  }

  encapsulated(depth: number, parents: string[], subtype: string): string {
    const head = `Content-Type: message/${subtype}`;
    switch (this.int(0, 9)) {
      case 0:
        return this.feature('empty-message', head); // no blank line, no body (item 2)
      case 1:
        return this.feature('empty-message', `${head}\r\n`); // blank line, nothing after it
      case 2:
        return this.feature('empty-message', `${head}\r\n\r\n${this.messageHeader().join('\r\n')}`); // header, no blank line
      default: {
        const inner = this.message(depth + 1, parents);
        const cte = this.pick(['', '', '', '\r\nContent-Transfer-Encoding: 7bit', this.feature('encoded-message', '\r\nContent-Transfer-Encoding: base64')]);
        return `${head}${cte}\r\n\r\n${inner}`;
      }
    }
  }

  /** A multipart body part: its Content-Type header, blank line, and body. */
  multipart(depth: number, parents: string[], extraHeader: string[]): string {
    const subtype = this.pick(['mixed', 'mixed', 'alternative', 'related', 'digest', 'signed', 'MIXED']);
    const b = this.boundary(parents);
    const h = [...extraHeader, `Content-Type: multipart/${subtype}${b.header}`];
    if (this.chance(0.2)) this.mimeExtras(h);
    const lines: string[] = [];
    if (this.chance(0.3)) lines.push(this.feature('preamble', 'This is a preamble.'));
    const delimiter = b.value ?? this.pick(['', 'x']);
    const n = this.int(0, 3) === 0 ? this.feature('no-parts', 0) : this.int(1, 4);
    const inner = b.value === null ? parents : [...parents, b.value];
    for (let i = 0; i < n; i++) {
      const tail = this.chance(0.9) ? '' : this.pick([this.feature('delimiter-blanks', '  '), this.feature('delimiter-garbage', 'garbage'), this.feature('delimiter-garbage', '-x')]);
      lines.push(`--${delimiter}${tail}`);
      lines.push(this.part(depth, inner, subtype === 'digest'));
    }
    if (this.chance(0.85)) lines.push(`--${delimiter}--${this.chance(0.1) ? this.feature('delimiter-garbage', ' trailing') : ''}`);
    else this.features.add('missing-close');
    if (this.chance(0.2)) lines.push(this.feature('epilogue', 'epilogue text'));
    return `${h.join('\r\n')}\r\n\r\n${lines.join('\r\n')}${this.chance(0.7) ? '\r\n' : ''}`;
  }

  /** A whole message (header, blank line, body). */
  message(depth: number, parents: string[] = []): string {
    const h = this.messageHeader();
    if (this.chance(0.7)) h.push('MIME-Version: 1.0');
    const r = this.int(0, 99);
    if (depth < 4 && r < 50) return `${h.join('\r\n')}\r\n${this.multipart(depth, parents, [])}`;
    const ct = this.contentType();
    if (ct !== null) h.push(`Content-Type: ${ct}`);
    this.mimeExtras(h);
    return `${h.join('\r\n')}\r\n\r\n${this.text()}`;
  }

  /** Nested multiparts (or messages) deeper than Dovecot's limit of 100. */
  deep(levels: number, messages: boolean): string {
    let body = 'Content-Type: text/plain\r\n\r\ninnermost\r\n';
    for (let i = levels; i > 0; i--) {
      if (messages) body = `Content-Type: message/rfc822\r\n\r\nSubject: level ${i}\r\n${body}`;
      else body = `Content-Type: multipart/mixed; boundary="d${i}x"\r\n\r\n--d${i}x\r\n${body}\r\n--d${i}x--\r\n`;
    }
    return `From: deep@example.com\r\nSubject: deep\r\nMIME-Version: 1.0\r\n${body}`;
  }
}

/** Line ending changes applied after generation. */
function lineEndings(g: Gen, text: string): string {
  const r = g.int(0, 9);
  if (r === 0) {
    g.features.add('bare-lf');
    return text.replace(/\r\n/g, '\n');
  }
  if (r === 1) {
    g.features.add('bare-lf');
    g.features.add('mixed-eol');
    let i = 0;
    return text.replace(/\r\n/g, () => (i++ % 3 === 0 ? '\n' : '\r\n'));
  }
  return text;
}

/**
 * `count` messages from `seed`; the same seed always gives the same messages.
 * @returns the messages with their feature names
 */
export function generateMessages(seed: number, count: number): Generated[] {
  const rng = new Prng(seed);
  const out: Generated[] = [];
  for (let i = 0; i < count; i++) {
    const g = new Gen(rng);
    let text: string;
    if (i % 97 === 50) text = g.feature('deep', g.deep(g.int(101, 110), false));
    else if (i % 97 === 80) text = g.feature('deep', g.deep(g.int(101, 105), true));
    else text = g.message(0);
    text = lineEndings(g, text);
    out.push({ raw: Buffer.from(text, 'utf8'), features: g.features });
  }
  return [...out, ...catalogue(seed)];
}

/** Cases of the generator's catalogue Dovecot will not store (its APPEND answers NO): docs/compare.md. */
export const REFUSED_BY_DOVECOT: readonly string[] = ['empty-message', 'nul-in-header', 'nul-in-body'];

/**
 * Every case of the mailbox generator's malformed catalogue (docs/generator.md), after the
 * messages above, each with its case name as a feature and, where the allow-list knows the
 * breakage by another name, that one too.
 */
function catalogue(seed: number): Generated[] {
  const cases = MALFORMED_CASE_NAMES.filter((n) => !REFUSED_BY_DOVECOT.includes(n));
  const alias = new Map([['rfc822-header-no-blank-line', 'empty-message']]);
  return generateMailbox({ seed, count: cases.length, profile: 'malformed', cases }).messages.map((m) => ({
    raw: m.raw,
    features: new Set([m.case!, alias.get(m.case!) ?? m.case!]),
  }));
}

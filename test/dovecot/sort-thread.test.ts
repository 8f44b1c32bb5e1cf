/**
 * SORT and THREAD against Dovecot: generated mailboxes (subjects with
 * Re:/Fwd:/[blob]/(fwd)/[fwd: ] artifacts, RFC 2047 words and non-ASCII
 * text, addresses with and without display names, dates in several zones,
 * missing and unparsable, Message-ID/References/In-Reply-To forests with
 * missing parents, loops and duplicate IDs) are appended byte for byte,
 * with the same INTERNALDATE, to Rookery and to a throwaway Dovecot, and
 * every SORT key, ESORT's result options and both THREAD algorithms must
 * answer the same.
 *
 * One deliberate difference, left out of the generated text: Dovecot's
 * i;unicode-casemap decomposes some characters only one level or not at all
 * (U+212B ANGSTROM SIGN stays U+00C5, the Latin digraphs DŽ/LJ/NJ/DZ and the
 * Greek letters with ypogegrammeni keep their title forms), where RFC 5051
 * asks for full NFKD, which Rookery does (src/extensions/sort/collate.ts).
 * Set ROOKERY_SORT_DIFF_SEEDS=1,2,3 and ROOKERY_SORT_DIFF_COUNT to explore.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawClient } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';
import { findDovecot, startDovecot } from './dovecot.js';

const SEEDS = (process.env.ROOKERY_SORT_DIFF_SEEDS ?? '1,2,3').split(',').map(Number);
const COUNT = Number(process.env.ROOKERY_SORT_DIFF_COUNT ?? 150);

const SUBJECTS = ['hello', 'Hello', 'HELLO world', 'café', '=?UTF-8?Q?caf=C3=A9?=', 'CAFE\u0301', 'Topic', '', 'zeta', 'alpha beta', '[list]', 'x',
  'stra\u00dfe', 'STRASSE', '\ufb01le', 'file', '\uff21bc', 'abc', '\u03a9mega', '\u03c9mega', '\u00b5x', '\u0131x', '\u{10400}z', '\ue000z', '=?ISO-8859-1?Q?Gr=FC=DFe?='];
const PREFIXES = ['', 'Re: ', 'RE: re: ', 'Fwd: ', 'Fw: ', '[list] ', 'Re: [list] ', '[a] Re: ', 'Re[2]: ', 'Re [x]: ', '  ', 'Re:'];
const TRAILERS = ['', '', ' (fwd)', '(FWD)', '  '];
const NAMES = ['Alice', '"Bob Smith"', '=?UTF-8?Q?=C3=89mile?=', '', 'zed', '"Dr. X"'];
const LOCALS = ['alice', 'Bob', 'carol', 'dave', 'emile', 'zz'];
const ODD_ADDRESSES = ['a: xx@xx.org, yy@yy.org;', 'Zed: aa@aa.org;', 'empty:;', 'undisclosed-recipients:;', ': a@b;', '=?UTF-8?Q?gr=C3=BCppe?=: x@y;',
  '"Team" : Alice <alice@ex1.org>;', 'dave', 'carol@', '@ex1.org', '"" <emile@ex2.org>', '(comment) zz@ex0.org', 'Bob <bob>'];
const ZONES = ['+0000', '-0500', '+0130', 'GMT', 'EST', '+1200'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

interface Generated {
  raw: Buffer;
  internaldate: string;
}

function generate(seed: number, count: number): Generated[] {
  let state = seed;
  const rnd = (): number => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
  const int = (n: number): number => Math.floor(rnd() * n);
  const two = (n: number): string => String(n).padStart(2, '0');
  const address = (): string => {
    // Lists that start with a group (RFC 5256 §3: the first address is then the group start), empty
    // groups, and addresses without a host or a local part.
    if (rnd() < 0.15) return pick(ODD_ADDRESSES);
    const name = pick(NAMES);
    const addr = `${pick(LOCALS)}@ex${int(3)}.org`;
    return name ? `${name} <${addr}>` : addr;
  };
  const out: Generated[] = [];
  for (let i = 0; i < count; i++) {
    let subject = `${pick(PREFIXES)}${pick(SUBJECTS)}${pick(TRAILERS)}`;
    if (rnd() < 0.1) subject = `[fwd: ${subject}]`;
    if (rnd() < 0.05) subject = `Re: [fwd: ${subject}]`;
    let h = '';
    if (rnd() < 0.95) h += `From: ${address()}\r\n`;
    if (rnd() < 0.8) h += `To: ${address()}\r\n`;
    if (rnd() < 0.4) h += `Cc: ${address()}\r\n`;
    if (rnd() < 0.95) h += `Subject: ${subject}\r\n`;
    const d = rnd();
    if (d < 0.05) h += 'Date: garbage\r\n';
    else if (d < 0.9) h += `Date: ${pick(['Mon, ', ''])}${1 + int(28)} ${pick(MONTHS)} ${pick(['2020', '2021', '21'])} ${two(int(24))}:${two(int(60))}:00 ${pick(ZONES)}\r\n`;
    // Mostly unique IDs, some duplicates of earlier ones, some none.
    if (rnd() < 0.9) h += `Message-ID: <m${rnd() < 0.05 && i > 0 ? int(i) : i}@x>\r\n`;
    if (i > 0 && rnd() < 0.6) {
      const refs: string[] = [];
      // Parents mostly earlier (a few later or missing: loops, dummies).
      let j = int(i + 5);
      for (let k = 0, n = 1 + int(4); k < n; k++) {
        refs.unshift(`<m${j}@x>`);
        j = int(j + 3);
      }
      h += rnd() < 0.7 ? `References: ${refs.join(' ')}\r\n` : `In-Reply-To: ${refs[refs.length - 1]}\r\n`;
    }
    const internaldate = `${String(1 + int(28)).padStart(2, ' ')}-${pick(MONTHS)}-2022 ${two(int(24))}:00:00 ${pick(['+0000', '-0700'])}`;
    out.push({ raw: Buffer.from(`${h}\r\n${'x'.repeat(int(200))}\r\n`, 'utf8'), internaldate });
  }
  return out;
}

async function load(port: number, user: string, password: string, messages: readonly Generated[]): Promise<RawClient> {
  const c = await RawClient.connect(port);
  await c.line();
  c.write(`L1 LOGIN ${user} ${password}\r\n`);
  await c.until('L1', 20_000);
  let n = 0;
  for (const m of messages) {
    const tag = `A${++n}`;
    c.write(`${tag} APPEND INBOX "${m.internaldate}" {${m.raw.length}}\r\n`);
    await c.line(20_000);
    c.write(Buffer.concat([m.raw, Buffer.from('\r\n')]));
    const lines = await c.until(tag, 20_000);
    if (!lines.at(-1)!.startsWith(`${tag} OK`)) throw new Error(`APPEND: ${lines.join(' | ')}`);
  }
  c.write('S1 SELECT INBOX\r\n');
  await c.until('S1', 20_000);
  return c;
}

const COMMANDS = [
  'SORT (ARRIVAL) UTF-8 ALL',
  'SORT (DATE) UTF-8 ALL',
  'SORT (REVERSE DATE) UTF-8 ALL',
  'SORT (SUBJECT) UTF-8 ALL',
  'SORT (REVERSE SUBJECT DATE) UTF-8 ALL',
  'SORT (FROM) UTF-8 ALL',
  'SORT (TO) UTF-8 ALL',
  'SORT (CC) UTF-8 ALL',
  'SORT (SIZE) UTF-8 ALL',
  'SORT (DISPLAYFROM) UTF-8 ALL',
  'SORT (DISPLAYTO) UTF-8 ALL',
  'UID SORT (SUBJECT ARRIVAL) UTF-8 SINCE 10-Jun-2022',
  // ESORT (RFC 5267 §3): MIN/MAX first and last in sort order, ALL in sort order with ascending runs as ranges.
  'SORT RETURN (MIN MAX COUNT ALL) (SUBJECT) UTF-8 ALL',
  'UID SORT RETURN (ALL) (REVERSE DATE) UTF-8 ALL',
  'SORT RETURN (MIN) (FROM) UTF-8 SINCE 10-Jun-2022',
  'SORT RETURN () (SIZE) UTF-8 ALL',
  'THREAD ORDEREDSUBJECT UTF-8 ALL',
  'THREAD REFERENCES UTF-8 ALL',
  'UID THREAD REFERENCES UTF-8 NOT LARGER 120',
];

/** Address headers whose first ENVELOPE address is no plain mailbox, one per message. */
const ADDRESS_CASES = ['foo bar <a@b.c>', 'b@c.d', 'd', '=?iso-8859-1?q?foo_aar?= <e@f.g>', '=?iso-8859-1?q?foo_car?= <f@g.h>', 'a: xx@xx.org, yy@yy.org;',
  'z: aa@aa.org, bb@bb.org;', 'empty:;', 'user2: blah@domain1.org;', '"" <c@d.e>', '=?utf-8?q?=C3=A9mile?= <x@y>', 'g: ;', '"q" <@route:x@y>', '<@h>',
  'x@', '@x', ': a@b;', 'undisclosed-recipients:;', '(comment) m@n', 'Group Name: x@y;', '=?utf-8?q?gr?=: x@y;', 'd@a.b', 'x@a', 'MISSING_MAILBOX@a',
  '"=?utf-8?q?=C3=A9?=" <p@q>', 'Undisclosed recipients:;, a@b', '"Team": "=?utf-8?q?Zo=C3=AB?=" <zoe@x>;', 'John Smith', 'alice <alice>'];

test('SORT by FROM, TO, CC, DISPLAYFROM and DISPLAYTO answers like Dovecot for groups, empty groups, hostless addresses and encoded words', { timeout: 120_000 }, async (t) => {
  if (findDovecot() === null) {
    t.skip('dovecot not installed (Debian: apt-get install dovecot-imapd)');
    return;
  }
  const messages = ADDRESS_CASES.map((a, i) => ({ raw: Buffer.from(`From: ${a}\r\nTo: ${a}\r\nCc: ${a}\r\nSubject: s${i}\r\n\r\nbody\r\n`), internaldate: '01-Jun-2022 10:00:00 +0000' }));
  const dovecot = (await startDovecot())!;
  const { server, port } = await startServer({ plugins: ['ESEARCH', 'SORT'] });
  try {
    const rook = await load(port, 'testuser', 'testpass', messages);
    const dove = await load(dovecot.port, 'u', 'pass', messages);
    let n = 0;
    for (const command of ['SORT (FROM) UTF-8 ALL', 'SORT (TO) UTF-8 ALL', 'SORT (CC) UTF-8 ALL', 'SORT (DISPLAYFROM) UTF-8 ALL', 'SORT (DISPLAYTO) UTF-8 ALL',
      'SORT (REVERSE DISPLAYTO) UTF-8 ALL', 'SORT (DISPLAYTO) UTF-8 1:8', 'FETCH 1:* (ENVELOPE)']) {
      const tag = `G${++n}`;
      rook.write(`${tag} ${command}\r\n`);
      dove.write(`${tag} ${command}\r\n`);
      const [mine, theirs] = await Promise.all([rook.until(tag, 20_000), dove.until(tag, 20_000)]);
      assert.deepEqual(mine.slice(0, -1), theirs.slice(0, -1), command);
      assert.match(theirs.at(-1)!, new RegExp(`^${tag} OK`), command);
    }
    rook.close();
    dove.close();
  } finally {
    await server.stop();
    await dovecot.stop();
  }
});

test('SORT and THREAD answer like Dovecot for generated mailboxes', { timeout: 300_000 }, async (t) => {
  if (findDovecot() === null) {
    t.skip('dovecot not installed (Debian: apt-get install dovecot-imapd)');
    return;
  }
  for (const seed of SEEDS) {
    const messages = generate(seed, COUNT);
    const dovecot = (await startDovecot())!;
    const { server, port } = await startServer({ plugins: ['ESEARCH', 'SORT', 'THREAD'] });
    try {
      const rook = await load(port, 'testuser', 'testpass', messages);
      const dove = await load(dovecot.port, 'u', 'pass', messages);
      let n = 0;
      for (const command of COMMANDS) {
        const tag = `C${++n}`;
        rook.write(`${tag} ${command}\r\n`);
        dove.write(`${tag} ${command}\r\n`);
        const [mine, theirs] = await Promise.all([rook.until(tag, 20_000), dove.until(tag, 20_000)]);
        // Dovecot writes an empty THREAD answer as `* THREAD ` (a stray space; RFC 5256: "THREAD" [SP 1*thread-list]).
        const data = (lines: string[]): string | undefined => lines.find((l) => /^\* (SORT|THREAD|ESEARCH)\b/.test(l))?.trimEnd();
        assert.ok(data(theirs), `Dovecot answered ${command} with ${theirs.join(' | ')}`);
        assert.equal(data(mine), data(theirs), `seed ${seed}: ${command}`);
      }
      rook.close();
      dove.close();
    } finally {
      await server.stop();
      await dovecot.stop();
    }
  }
});

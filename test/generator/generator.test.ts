/**
 * The mailbox generator: determinism across processes, the knobs doing
 * what docs/generator.md says (checked by reading the messages back through
 * a real Rookery over IMAP where structure matters), option errors.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { TextDecoder } from 'node:util';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createServer, generateMailbox, MALFORMED_CASE_NAMES, ServiceError } from '../../src/index.js';
import { NAME_SAMPLES } from '../../src/generator/charsets.js';
import { decodeCharset } from '../../src/mime/charset.js';
import { rawSession, startServer } from '../helpers/server.js';

const HASHER = fileURLToPath(new URL('./hash-mailbox.js', import.meta.url));

function runHasher(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HASHER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`hasher exited ${code}: ${err}`))));
  });
}

const header = (raw: Buffer, name: string): string | null => {
  const text = raw.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const head = end < 0 ? text : text.slice(0, end);
  const m = new RegExp(`^${name}:[ \\t]*((?:.*)(?:\\r?\\n[ \\t].*)*)`, 'im').exec(head);
  return m ? m[1]!.replace(/\r?\n[ \t]/g, ' ') : null;
};

test('the same seed gives byte-identical mailboxes in two processes; another seed does not', { timeout: 60_000 }, async () => {
  const [a, b, c, d] = await Promise.all([
    runHasher(['7', '3000', 'realistic']),
    runHasher(['7', '3000', 'realistic']),
    runHasher(['8', '3000', 'realistic']),
    runHasher(['7', String(MALFORMED_CASE_NAMES.length * 2), 'malformed']),
  ]);
  assert.match(a, /^[0-9a-f]{64} \d+$/);
  assert.equal(a, b);
  assert.notEqual(a.split(' ')[0], c.split(' ')[0]);
  // And in this process: the hasher's figure is the generator's, not an artefact of the child.
  const here = createHash('sha256');
  for (const m of generateMailbox({ seed: 7, count: MALFORMED_CASE_NAMES.length * 2, profile: 'malformed' }).messages) {
    here.update(m.raw).update(m.flags.join(' ')).update(String(m.internaldate.ms));
  }
  assert.equal(d.split(' ')[0], here.digest('hex'));
});

test('message i is the same whatever the count (a larger mailbox extends a smaller one)', () => {
  const small = generateMailbox({ seed: 3, count: 50 }).messages;
  const large = generateMailbox({ seed: 3, count: 120 }).messages;
  for (let i = 0; i < 50; i++) assert.ok(small[i]!.raw.equals(large[i]!.raw), `message ${i}`);
});

test('every charset sample decodes back to its text (Node TextDecoder and Rookery\'s decoder)', () => {
  for (const [, text, charset, b64] of NAME_SAMPLES) {
    const bytes = Buffer.from(b64, 'base64');
    assert.equal(decodeCharset(bytes, charset), text, `${charset} ${text}`);
    if (charset !== 'utf-7') assert.equal(new TextDecoder(charset).decode(bytes), text, `${charset} ${text}`);
  }
});

test('threads: replies name earlier messages, within depth and breadth; broken and subject-only replies exist', () => {
  const { messages } = generateMailbox({ seed: 11, count: 3000, threads: { replies: 0.6, maxDepth: 4, maxBreadth: 3, brokenReferences: 0.1, subjectOnly: 0.1 } });
  const ids = new Map(messages.map((m, i) => [`<${m.messageId}>`, i]));
  const depth = new Map<number, number>();
  const kids = new Map<number, number>();
  let broken = 0;
  let subjectOnly = 0;
  let linked = 0;
  messages.forEach((m, i) => {
    const parent = m.parent;
    depth.set(i, parent === null ? 1 : depth.get(parent)! + 1);
    assert.ok(depth.get(i)! <= 4, `message ${i} is at depth ${depth.get(i)}`);
    if (parent === null) {
      assert.equal(header(m.raw, 'In-Reply-To'), null);
      return;
    }
    assert.ok(parent < i);
    kids.set(parent, (kids.get(parent) ?? 0) + 1);
    assert.ok(kids.get(parent)! <= 3);
    assert.match(header(m.raw, 'Subject')!, /^(Re|RE|AW|Sv|Fwd|Re\[2\]): /);
    const irt = header(m.raw, 'In-Reply-To');
    if (irt === null) {
      subjectOnly++;
      assert.equal(header(m.raw, 'References'), null);
    } else if (!ids.has(irt)) {
      broken++;
      assert.match(irt, /^<gone\./);
    } else {
      linked++;
      assert.equal(ids.get(irt), parent);
      // References: the whole chain, the root first and the parent last (RFC 5322 §3.6.4).
      const refs = header(m.raw, 'References')!.split(/\s+/);
      assert.equal(refs[refs.length - 1], irt);
      assert.equal(refs.length, depth.get(i)! - 1);
    }
  });
  assert.ok(linked > 500, `linked ${linked}`);
  assert.ok(broken > 20, `broken ${broken}`);
  assert.ok(subjectOnly > 20, `subject-only ${subjectOnly}`);
});

test('addresses: encoded words in many charsets that Rookery decodes, groups and hostless addresses', () => {
  const { messages } = generateMailbox({ seed: 5, count: 2000, addresses: { groups: 0.2, hostless: 0.1, people: 3000 } });
  const charsets = new Set<string>();
  let groups = 0;
  let hostless = 0;
  for (const m of messages) {
    const from = header(m.raw, 'From')!;
    for (const w of from.matchAll(/=\?([^?]+)\?([BQ])\?([^?]*)\?=/gi)) charsets.add(w[1]!.toLowerCase());
    const to = header(m.raw, 'To')!;
    if (/^[^<>"@]*:.*;$/.test(to)) groups++;
    if (/(^|, )[a-z]+(,|$)/.test(to)) hostless++;
  }
  assert.ok(charsets.size >= 15, `only ${[...charsets].join(' ')}`);
  for (const c of ['utf-8', 'iso-8859-1', 'koi8-r', 'shift_jis', 'iso-2022-jp', 'euc-kr', 'big5', 'gb18030', 'windows-1251', 'utf-7']) assert.ok(charsets.has(c), c);
  assert.ok(groups > 200, `groups ${groups}`);
  assert.ok(hostless > 20, `hostless ${hostless}`);
});

test('dates: zones, named zones, missing, invalid, far past and far future', () => {
  const { messages } = generateMailbox({ seed: 9, count: 3000, dates: { missing: 0.05, invalid: 0.05, farPast: 0.05, farFuture: 0.05, zones: 0.8 } });
  const dates = messages.map((m) => header(m.raw, 'Date'));
  assert.ok(dates.filter((d) => d === null).length > 80);
  const valid = /^(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), )?\d{2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) \d{2}:\d{2}:\d{2} ([+-]\d{4}|[A-Z]{2,3})$/;
  const years = dates.filter((d): d is string => d !== null).map((d) => valid.exec(d)).filter((m) => m !== null).map((m) => Number(m[1]));
  assert.ok(dates.filter((d) => d !== null && !valid.test(d)).length > 80, 'invalid dates');
  assert.ok(years.some((y) => y < 1980) && years.some((y) => y >= 2090), 'far past and future');
  const zones = new Set(dates.map((d) => (d ? valid.exec(d)?.[2] : undefined)).filter(Boolean));
  for (const z of ['+0530', '+0545', '-0800', 'EST', 'GMT', '-0000']) assert.ok(zones.has(z), z);
  // Arrival dates (internal dates) rise with the index, whatever the Date header says.
  for (let i = 1; i < messages.length; i++) assert.ok(messages[i]!.internaldate.ms >= messages[i - 1]!.internaldate.ms - 3_600_000);
});

test('sizes: a plain message has exactly the size asked; none exceeds the append limit', () => {
  for (const m of generateMailbox({ seed: 2, count: 200, size: 5000, bodies: { plain: 1 } }).messages) assert.equal(m.raw.length, 5000);
  const big = generateMailbox({ seed: 2, count: 40, size: { min: 100, max: 250_000 }, attachmentSize: 200_000, appendLimit: 250_000 }).messages;
  assert.ok(big.every((m) => m.raw.length <= 250_000));
  assert.ok(big.some((m) => m.raw.length > 100_000));
  const tiny = generateMailbox({ seed: 2, count: 20, size: 0, bodies: { plain: 1 } }).messages;
  assert.ok(tiny.every((m) => m.raw.length < 1500));
});

test('flags and keywords follow their shares', () => {
  const all = generateMailbox({ seed: 4, count: 300, flags: { seen: 1, answered: 0, flagged: 0, draft: 0, deleted: 0, keywordShare: 1, keywords: ['$Work', 'Later'] } }).messages;
  for (const m of all) {
    assert.equal(m.flags[0], '\\Seen');
    assert.ok(['$Work', 'Later'].includes(m.flags[1]!));
  }
  const none = generateMailbox({ seed: 4, count: 300, flags: { seen: 0, answered: 0, flagged: 0, draft: 0, deleted: 0, keywordShare: 0 } }).messages;
  assert.ok(none.every((m) => m.flags.length === 0));
});

/** FETCH BODYSTRUCTURE of every message of INBOX, by UID order. */
async function bodystructures(port: number): Promise<string[]> {
  const c = await rawSession(port);
  await c.command('SELECT INBOX');
  const lines = await c.command('FETCH 1:* (BODYSTRUCTURE)');
  c.close();
  return lines.filter((l) => /^\* \d+ FETCH/.test(l));
}

test('body shapes, read back by Rookery\'s BODYSTRUCTURE: every kind is what its RFC says', { timeout: 30_000 }, async () => {
  const shapes: [string, RegExp][] = [
    ['plain', /^\* \d+ FETCH \(BODYSTRUCTURE \("text" "plain"/i],
    ['html', /^\* \d+ FETCH \(BODYSTRUCTURE \("text" "html"/i],
    ['alternative', /\("text" "plain".*\("text" "html".*"alternative"/i],
    ['related', /"image" "(png|jpeg|gif)" \("name" "[^"]+"\) "<img\d+\.[^>]+>".*"related" \("type" "text\/html"/i],
    ['attachment', /"attachment" \("filename/i],
    ['rfc822', /"message" "rfc822"/i],
    ['calendar', /"text" "calendar" \("charset" "utf-8" "method" "(REQUEST|CANCEL)"\)/i],
    ['signed', /"signed" \(.*"protocol" "application\/(pgp|pkcs7)-signature"/i],
    ['encrypted', /"encrypted" \("protocol" "application\/pgp-encrypted"|"application" "pkcs7-mime" \("smime-type" "enveloped-data"/i],
  ];
  for (const [kind, shape] of shapes) {
    const { server, port } = await startServer({ storage: { INBOX: { generate: { seed: 21, count: 12, bodies: { [kind]: 1 } } } } });
    try {
      const lines = await bodystructures(port);
      assert.equal(lines.length, 12, kind);
      for (const l of lines) assert.match(l, shape, `${kind}: ${l.slice(0, 400)}`);
    } finally {
      await server.stop();
    }
  }
  // Signed shapes keep exactly two parts: the content, then the signature (RFC 1847 §2.1).
  const signed = generateMailbox({ seed: 21, count: 12, bodies: { signed: 1 } }).messages;
  for (const m of signed) {
    const boundary = /boundary="([^"]+)"/.exec(m.raw.toString('latin1'))![1]!;
    const parts = m.raw.toString('latin1').split(`\r\n--${boundary}\r\n`);
    assert.equal(parts.length, 3);
    // RFC 3156 §3: what is signed goes in 7bit or quoted-printable, so no transport can change it.
    assert.match(parts[1]!, /^Content-Type: text\/plain[^]*?Content-Transfer-Encoding: (7bit|quoted-printable)\r\n/);
  }
});

test('options: typos, wrong types and out-of-range values are errors that name the option', () => {
  const expectError = (options: unknown, pattern: RegExp): void => {
    assert.throws(() => generateMailbox(options as never), (err: unknown) => err instanceof ServiceError && pattern.test(err.message));
  };
  expectError({ conut: 5 }, /options\.conut: unknown key; did you mean "count"\?/);
  expectError({ count: -1 }, /options\.count: expected an integer from 0 to 10000000/);
  expectError({ profile: 'broken' }, /options\.profile: expected "realistic" or "malformed"/);
  expectError({ cases: ['no-such-case'] }, /options\.cases\[0\]/);
  expectError({ size: { min: 10, max: 5 } }, /min \(10\) is larger than max \(5\)/);
  expectError({ bodies: { plain: 0 } }, /every weight is 0/);
  expectError({ flags: { keywords: ['bad keyword'] } }, /not an IMAP keyword/);
  expectError({ addresses: { scripts: ['klingon'] } }, /addresses\.scripts\[0\]/);
  expectError({ threads: { replies: 2 } }, /threads\.replies: expected a share between 0 and 1/);
  expectError({ dates: { zonez: 1 } }, /dates\.zonez: unknown key; did you mean "zones"\?/);
});

test('storage generate: the mailbox holds listed, then generated messages; a bad key fails construction naming its path', async () => {
  const { server, port } = await startServer({ storage: { INBOX: { messages: ['Subject: listed\r\n\r\nfirst\r\n'], generate: { seed: 3, count: 25 } } } });
  try {
    const expected = generateMailbox({ seed: 3, count: 25 }).messages;
    const listed = server.control.listMessages('INBOX', { raw: true });
    assert.equal(listed.length, 26);
    assert.equal(Buffer.from(listed[0]!.raw!, 'base64').toString(), 'Subject: listed\r\n\r\nfirst\r\n');
    for (let i = 0; i < 25; i++) {
      assert.ok(Buffer.from(listed[i + 1]!.raw!, 'base64').equals(expected[i]!.raw));
      assert.deepEqual(listed[i + 1]!.flags, expected[i]!.flags);
    }
    // A reset restores the generated mailbox (shared seed messages, no second generation).
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    await c.command('STORE 1:* +FLAGS (\\Deleted)');
    await c.command('EXPUNGE');
    c.close();
    assert.equal(server.control.getMailbox('INBOX').messages, 0);
    server.control.reset();
    assert.equal(server.control.getMailbox('INBOX').messages, 26);
  } finally {
    await server.stop();
  }
  assert.throws(() => createServer({ storage: { INBOX: { generate: { seed: 1, conut: 3 } as never } } }), /storage\.INBOX\.generate\.conut: unknown key; did you mean "count"\?/);
  assert.throws(() => createServer({ storage: { INBOX: { generate: 'seven' as never } } }), /storage\.INBOX\.generate: expected an object/);
  assert.throws(() => createServer({ storage: { INBOX: { generat: {} } } }), /storage\.INBOX\.generat: unknown key; did you mean "generate"\?/);
});

/**
 * SORT (RFC 5256), SORT=DISPLAY (RFC 5957) and ESORT (RFC 5267 §3) over
 * real sockets, with expectations worked out from the RFCs' rules: base
 * subject extraction (§2.1) edge by edge, i;unicode-casemap (RFC 5051),
 * the sent date with time zones and the INTERNALDATE fallback (§2.2), the
 * first address's local part, display names, ties in mailbox order, UID
 * SORT, search criteria, errors, the ESEARCH answer of SORT RETURN, and a
 * sort order kept across an expunge and an append, and Python imaplib's
 * sort() and thread().
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { baseSubject } from '../../src/extensions/sort/base-subject.js';
import { collationKey } from '../../src/util/casemap.js';
import { parseDateBytes, parseDateHeader } from '../../src/extensions/sort/keys.js';
import { rawSession, startServer } from '../helpers/server.js';
import type { RawClient } from '../helpers/raw-client.js';

test('RFC 5256 §2.1 base subject: refwd leaders, blobs, (fwd) trailers, [fwd: ] wrappers, repeated until stable', () => {
  const cases: [string | null, string, boolean][] = [
    ['hello', 'hello', false],
    ['Re: hello', 'hello', true],
    ['RE: Re: re: hello', 'hello', true],
    ['Fw: hello', 'hello', true],
    ['FWD:hello', 'hello', true],
    ['Re[2]: hello', 'hello', true],
    ['Re [list]: hello', 'hello', true],
    ['[list] Re: hello', 'hello', true],
    ['[a][b] Fwd: hello', 'hello', true],
    ['Re: [list] Fwd: hello (fwd)', 'hello', true],
    ['hello (fwd) (FWD)', 'hello', true],
    ['hello(fwd)', 'hello', true],
    // A blob alone is no reply; it goes only when something is left behind it.
    ['[list] hello', 'hello', false],
    ['[list]', '[list]', false],
    ['[a] [b]', '[b]', false],
    ['re: Re: [x] [y] hello', 'hello', true],
    ['[fwd: hello]', 'hello', true],
    ['Re: [fwd: Re: hello]', 'hello', true],
    ['[Fwd: [list] hello]', 'hello', true],
    ['[fwd: hello (fwd)]', 'hello', true],
    // Step 1: tabs and runs of blanks become one space; the ends are trimmed.
    ['  hello \t  world  ', 'hello world', false],
    // Not a subj-refwd: no colon, or letters after "re".
    ['Rex: hello', 'Rex: hello', false],
    ['Fwd hello', 'Fwd hello', false],
    ['Re:', '', true],
    ['Re: ', '', true],
    ['', '', false],
    [null, '', false],
  ];
  for (const [input, text, reply] of cases) assert.deepEqual(baseSubject(input), { text, replyOrForward: reply }, String(input));
});

test('RFC 5051 i;unicode-casemap: titlecase then NFKD, compared as UTF-8 octets', () => {
  assert.equal(collationKey('hello'), collationKey('HeLLo'));
  assert.equal(collationKey('café'), collationKey('CAFÉ'));
  // Precomposed and decomposed forms are one string after NFKD.
  assert.equal(collationKey('caf\u00e9'), collationKey('cafe\u0301'));
  // The digraph dž titlecases to Dž, as does DŽ (not to the uppercase DŽ).
  assert.equal(collationKey('\u01c6'), collationKey('\u01c4'));
  // Compatibility forms: the fullwidth A is A.
  assert.equal(collationKey('\uff21'), collationKey('a'));
  // Octet order: é is E + U+0301 (CC 81), after "EZ"; a supplementary character (F0 ...) sorts after
  // U+E000 (EE ...) although its first UTF-16 code unit (D801) is below E000.
  assert.ok(collationKey('éa') > collationKey('ez'));
  assert.ok(collationKey('\u{10400}') > collationKey('\ue000'));
  // ß has no simple titlecase: it stays ß, unlike SS.
  assert.notEqual(collationKey('ß'), collationKey('ss'));
});

test('RFC 5256 §2.2 sent date: RFC 5322 dates with zones in UTC, obsolete forms, unparsable is null', () => {
  assert.equal(parseDateHeader('Mon, 2 Nov 2026 23:00:00 -0500'), Date.UTC(2026, 10, 3, 4, 0, 0));
  assert.equal(parseDateHeader('3 Nov 2026 10:00 +0100'), Date.UTC(2026, 10, 3, 9, 0, 0));
  assert.equal(parseDateHeader('Tue, 03 Nov 26 10:00:00 EST'), Date.UTC(2026, 10, 3, 15, 0, 0));
  assert.equal(parseDateHeader('Tue, 3 Nov 1998 10:00:00 GMT (comment)'), Date.UTC(1998, 10, 3, 10, 0, 0));
  assert.equal(parseDateHeader('not a date'), null);
  assert.equal(parseDateHeader('32 Nov 2026 10:00:00 +0000'), null);
});

test('the sent date read from header bytes (THREAD reads every message) is the one read from the text', () => {
  const values = [
    ' Mon, 2 Nov 2026 23:00:00 -0500',
    '2 NOV 2026 23:00:00 +0130\r\n',
    'Mon, 2 Nov 2026 23:00:00 -0500 ',
    'Mon, 2 Nov 2026 23:00:00 -0500\u00a0',
    'Mon, 2 Nov 2026 23:00:00 -0500 (EST)',
    'Mon, 2 Nov 2026 23:00 -0500',
    'Mon, 2 Nov 2026 23:00:00 +05',
    'Mon, 2 Nox 2026 23:00:00 +0000',
    'Mon, 2\u00c0Nov 2026 23:00:00 +0000',
    'Mon, 31 Feb 2026 24:00:00 +0000',
    '12 Dec 99 1:2:3 PST',
    'Tue, 3 Nov 1998 10:00:00 GMT',
    '',
    ' ',
    '2 Nov',
  ];
  for (const v of values) {
    const bytes = Buffer.from(`Date:${v}\r\nX: 1`, 'latin1');
    assert.equal(parseDateBytes(bytes, 5, 5 + v.length), parseDateHeader(v), JSON.stringify(v));
  }
});

/**
 * Five messages (UIDs 10..50) whose keys the expectations below are worked
 * out from:
 *
 * | seq | base subject | From local / display | To   | Cc | sent date (UTC)           | INTERNALDATE   |
 * |-----|--------------|----------------------|------|----|---------------------------|----------------|
 * | 1   | beta (Re:)   | zed / Aaron          | b    | c1 | 3 Nov 10:00               | 5 Nov          |
 * | 2   | alpha        | amy / amy@x.org      | ann  |    | 3 Nov 04:00 (23:00 -0500) | 1 Nov          |
 * | 3   | Alpha        | emile / Émile (2047) |      |    | none → 2 Nov 12:00        | 2 Nov 12:00    |
 * | 4   | Béta (2047)  | bob / bob@x.org      |      |    | 3 Nov 10:00               | 4 Nov          |
 * | 5   | (none)       | (none)               |      |    | unparsable → 30 Oct       | 30 Oct         |
 */
const RAWS = [
  'From: Aaron <zed@x.org>\r\nTo: b@x.org\r\nCc: Carl <c1@x.org>\r\nSubject: Re: beta\r\nDate: Tue, 3 Nov 2026 10:00:00 +0000\r\n\r\none\r\n',
  'From: amy@x.org\r\nTo: Ann <ann@x.org>\r\nSubject: alpha\r\nDate: Mon, 2 Nov 2026 23:00:00 -0500\r\n\r\ntwo two\r\n',
  'From: =?UTF-8?Q?=C3=89mile?= <emile@x.org>\r\nSubject: [list] Fwd: Alpha (fwd)\r\n\r\nthree three three\r\n',
  'From: bob@x.org\r\nSubject: =?UTF-8?Q?B=C3=A9ta?=\r\nDate: 3 Nov 2026 10:00 +0000\r\n\r\nfour\r\n',
  'X-Nothing: here\r\nDate: not a date\r\n\r\nfive five five five five five five\r\n',
];
const INTERNAL = ['05-Nov-2026 10:00:00 +0000', '01-Nov-2026 10:00:00 +0000', '02-Nov-2026 12:00:00 +0000', '04-Nov-2026 10:00:00 +0000', '30-Oct-2026 10:00:00 +0000'];

function storage(): never {
  return { INBOX: { messages: RAWS.map((raw, i) => ({ raw, uid: 10 * (i + 1), internaldate: INTERNAL[i], flags: i === 1 ? ['\\Flagged'] : [] })) } } as never;
}

async function session(plugins: string[] = ['SORT']): Promise<{ c: RawClient; server: Awaited<ReturnType<typeof startServer>>['server'] }> {
  const { server, port } = await startServer({ plugins, storage: storage() });
  const c = await rawSession(port);
  c.write('S1 SELECT INBOX\r\n');
  await c.until('S1');
  return { c, server };
}

const run = async (c: RawClient, tag: string, command: string): Promise<string[]> => {
  c.write(`${tag} ${command}\r\n`);
  return c.until(tag);
};

test('SORT by each key answers `* SORT` in the order the RFC rules give, ties in mailbox order', async () => {
  const { c, server } = await session();
  try {
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 SORT SORT=DISPLAY', 'T2 OK Capability completed']);
    const expect: [string, string][] = [
      // "" < ALPHA (2 then 3: equal after case mapping) < BETA < BÉTA (É is E + U+0301, octets CC 81 > "T").
      ['(SUBJECT)', '5 2 3 1 4'],
      // REVERSE turns the key order round, but equal keys stay in mailbox order.
      ['(REVERSE SUBJECT)', '4 1 2 3 5'],
      ['(ARRIVAL)', '5 2 3 4 1'],
      // 1 and 4 have the same sent date: mailbox order.
      ['(DATE)', '5 3 2 1 4'],
      ['(REVERSE DATE)', '1 4 2 3 5'],
      ['(FROM)', '5 2 4 3 1'],
      ['(TO)', '3 4 5 2 1'],
      ['(CC)', '2 3 4 5 1'],
      ['(SUBJECT REVERSE DATE)', '5 2 3 1 4'],
      ['(SUBJECT REVERSE ARRIVAL)', '5 3 2 1 4'],
      // RFC 5957: display name, else the address: AARON < AMY@X.ORG < BOB@X.ORG < ÉMILE; none first.
      ['(DISPLAYFROM)', '5 1 2 4 3'],
      // To: ANN < B@X.ORG; none (3, 4, 5) first.
      ['(DISPLAYTO)', '3 4 5 2 1'],
      ['(reverse displayfrom)', '3 4 2 1 5'],
    ];
    for (const [criteria, order] of expect) {
      assert.deepEqual(await run(c, 'A1', `SORT ${criteria} UTF-8 ALL`), [`* SORT ${order}`, 'A1 OK Sort completed'], criteria);
    }
    // SIZE: RFC822.SIZE, here the length of each (CRLF) source.
    const bySize = RAWS.map((r, i) => ({ seq: i + 1, size: Buffer.byteLength(r) })).sort((a, b) => a.size - b.size || a.seq - b.seq);
    assert.deepEqual(await run(c, 'A2', 'SORT (SIZE) US-ASCII ALL'), [`* SORT ${bySize.map((x) => x.seq).join(' ')}`, 'A2 OK Sort completed']);
    // UID SORT answers UIDs.
    assert.deepEqual(await run(c, 'A3', 'UID SORT (SUBJECT) UTF-8 ALL'), ['* SORT 50 20 30 10 40', 'A3 OK Sort completed']);
    // The search part is SEARCH's: keys, sets, UID sets, flags, OR/NOT; no match is a bare `* SORT`.
    assert.deepEqual(await run(c, 'A4', 'SORT (ARRIVAL) UTF-8 FROM bob'), ['* SORT 4', 'A4 OK Sort completed']);
    assert.deepEqual(await run(c, 'A5', 'SORT (REVERSE ARRIVAL) UTF-8 2:4 NOT FLAGGED'), ['* SORT 4 3', 'A5 OK Sort completed']);
    assert.deepEqual(await run(c, 'A6', 'UID SORT (DATE) utf-8 OR UID 10 SUBJECT alpha'), ['* SORT 30 20 10', 'A6 OK Sort completed']);
    assert.deepEqual(await run(c, 'A7', 'SORT (SUBJECT) "UTF-8" DRAFT'), ['* SORT', 'A7 OK Sort completed']);
    // RFC 5256 §4 example shape: SORT (SUBJECT) UTF-8 SINCE date.
    assert.deepEqual(await run(c, 'A8', 'SORT (SUBJECT) UTF-8 SINCE 2-Nov-2026'), ['* SORT 3 1 4', 'A8 OK Sort completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5256 §3 / RFC 5957 §3: the first address of a list that starts with a group is the group start, sorted by its name', async () => {
  // The ENVELOPE of `To: a: xx@xx.org, yy@yy.org;` starts with (NIL NIL "a" NIL): addr-mailbox holds the
  // group name, addr-host is NIL. FROM/TO/CC sort on that addr-mailbox; the display sort value of RFC 5957
  // §3 is the decoded name, else mailbox@host when both are non-NIL, else the mailbox alone. `To: d` has
  // the host MISSING_DOMAIN, so it sorts as "d@MISSING_DOMAIN".
  const tos = ['foo bar <a@b.c>', 'b@c.d', 'd', '=?iso-8859-1?q?foo_aar?= <e@f.g>', '=?iso-8859-1?q?foo_car?= <f@g.h>', 'a: xx@xx.org, yy@yy.org;', 'z: aa@aa.org, bb@bb.org;', 'empty:;', 'd@a.b'];
  const messages = tos.map((to, i) => ({ raw: `From: ${to}\r\nTo: ${to}\r\nCc: ${to}\r\nSubject: m${i + 1}\r\n\r\nx\r\n` }));
  const { server, port } = await startServer({ plugins: ['SORT'], storage: { INBOX: { messages } } as never });
  const c = await rawSession(port);
  try {
    await run(c, 'S1', 'SELECT INBOX');
    // The reference answer (Dovecot's) for messages 1 to 8.
    assert.deepEqual(await run(c, 'A1', 'SORT (DISPLAYTO) UTF-8 1:8'), ['* SORT 6 2 3 8 4 1 5 7', 'A1 OK Sort completed']);
    // a, b@c.d, d@a.b < d@missing_domain, empty, foo aar, foo bar, foo car, z.
    assert.deepEqual(await run(c, 'A2', 'SORT (DISPLAYFROM) UTF-8 ALL'), ['* SORT 6 2 9 3 8 4 1 5 7', 'A2 OK Sort completed']);
    // addr-mailbox: a (1, 6 tie in mailbox order), b, d (3, 9), e, empty, f, z.
    for (const key of ['FROM', 'TO', 'CC']) {
      assert.deepEqual(await run(c, 'A3', `SORT (${key}) UTF-8 ALL`), ['* SORT 1 6 2 3 9 4 8 5 7', 'A3 OK Sort completed'], key);
    }
    c.close();
  } finally {
    await server.stop();
  }
});

test('SORT errors: BAD for bad syntax and unknown keys, NO [BADCHARSET], and the session goes on', async () => {
  const { c, server } = await session();
  try {
    for (const bad of [
      'SORT',
      'SORT (SUBJECT)',
      'SORT (SUBJECT) UTF-8',
      'SORT SUBJECT UTF-8 ALL',
      'SORT () UTF-8 ALL',
      'SORT (FOO) UTF-8 ALL',
      'SORT (REVERSE) UTF-8 ALL',
      'SORT (REVERSE REVERSE DATE) UTF-8 ALL',
      'SORT (SUBJECT) UTF-8 NOSUCHKEY',
      'SORT (SUBJECT DATE UTF-8 ALL',
      // Without ESEARCH there are no result options.
      'SORT RETURN (MIN) (SUBJECT) UTF-8 ALL',
      'UID SORT (SUBJECT)UTF-8 ALL',
    ]) {
      assert.match((await run(c, 'B1', bad)).at(-1)!, /^B1 BAD /, bad);
    }
    assert.deepEqual(await run(c, 'B2', 'SORT (SUBJECT) X-NO-SUCH-CHARSET ALL'), ['B2 NO [BADCHARSET (US-ASCII UTF-8)] Unsupported charset X-NO-SUCH-CHARSET']);
    assert.deepEqual(await run(c, 'B3', 'NOOP'), ['B3 OK NOOP completed']);
    // SORT needs a selected mailbox.
    assert.match((await run(c, 'B4', 'UNSELECT')).at(-1)!, /^B4 (OK|BAD)/);
    c.write('B5 CLOSE\r\n');
    await c.until('B5');
    assert.match((await run(c, 'B6', 'SORT (SUBJECT) UTF-8 ALL')).at(-1)!, /^B6 BAD /);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5267 §3 ESORT: SORT RETURN answers ESEARCH, MIN/MAX first and last in sort order, ALL in sort order', async () => {
  const { c, server } = await session(['ESEARCH', 'SORT']);
  try {
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 ESEARCH SORT SORT=DISPLAY ESORT', 'T2 OK Capability completed']);
    // DATE order is 5 3 2 1 4.
    assert.deepEqual(await run(c, 'C1', 'SORT RETURN (MIN MAX COUNT) (DATE) UTF-8 ALL'), ['* ESEARCH (TAG "C1") MIN 5 MAX 4 COUNT 5', 'C1 OK Sort completed']);
    // ARRIVAL order 5 2 3 4 1: the run 2 3 4 is a range, read in order.
    assert.deepEqual(await run(c, 'C2', 'SORT RETURN (ALL) (ARRIVAL) UTF-8 ALL'), ['* ESEARCH (TAG "C2") ALL 5,2:4,1', 'C2 OK Sort completed']);
    assert.deepEqual(await run(c, 'C3', 'UID SORT RETURN (ALL MIN) (SUBJECT) UTF-8 ALL'), ['* ESEARCH (TAG "C3") UID MIN 50 ALL 50,20,30,10,40', 'C3 OK Sort completed']);
    // RETURN () means ALL; no match still answers, with COUNT 0 only.
    assert.deepEqual(await run(c, 'C4', 'SORT RETURN () (REVERSE SUBJECT) UTF-8 ALL'), ['* ESEARCH (TAG "C4") ALL 4,1:3,5', 'C4 OK Sort completed']);
    assert.deepEqual(await run(c, 'C5', 'SORT RETURN (MIN COUNT) (SUBJECT) UTF-8 DRAFT'), ['* ESEARCH (TAG "C5") COUNT 0', 'C5 OK Sort completed']);
    assert.match((await run(c, 'C6', 'SORT RETURN (FIRST) (SUBJECT) UTF-8 ALL')).at(-1)!, /^C6 BAD /);
    // Without RETURN the answer stays `* SORT`.
    assert.deepEqual(await run(c, 'C7', 'SORT (DATE) UTF-8 ALL'), ['* SORT 5 3 2 1 4', 'C7 OK Sort completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('a kept sort order follows the mailbox: after an expunge and an append SORT answers the new sequence numbers', async () => {
  const { c, server } = await session();
  try {
    assert.deepEqual(await run(c, 'D1', 'SORT (SUBJECT) UTF-8 ALL'), ['* SORT 5 2 3 1 4', 'D1 OK Sort completed']);
    // Expunge UID 20 (seq 2) from this session, then another message arrives.
    assert.deepEqual((await run(c, 'D2', 'UID STORE 20 +FLAGS.SILENT (\\Deleted)')).at(-1), 'D2 OK Store completed');
    assert.deepEqual(await run(c, 'D3', 'EXPUNGE'), ['* 2 EXPUNGE', 'D3 OK Expunge completed']);
    assert.deepEqual(await run(c, 'D4', 'SORT (SUBJECT) UTF-8 ALL'), ['* SORT 4 2 1 3', 'D4 OK Sort completed']);
    server.control.addMessage('INBOX', { raw: 'Subject: Re: aardvark\r\nDate: 1 Jan 2020 00:00 +0000\r\n\r\nsix\r\n' });
    assert.deepEqual((await run(c, 'D5', 'NOOP')).slice(0, 1), ['* 5 EXISTS']);
    assert.deepEqual(await run(c, 'D5', 'SORT (SUBJECT) UTF-8 ALL'), ['* SORT 4 5 2 1 3', 'D5 OK Sort completed']);
    assert.deepEqual(await run(c, 'D6', 'SORT (DATE) UTF-8 ALL'), ['* SORT 5 4 2 1 3', 'D6 OK Sort completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('a repeated UID SORT / UID THREAD answers new UIDs after the UIDs were renumbered (no kept answer goes stale), and a copy sorts like its original', async () => {
  const { server, port } = await startServer({ plugins: ['SORT', 'THREAD'], storage: storage() });
  try {
    let c = await rawSession(port);
    await run(c, 'R0', 'SELECT INBOX');
    assert.deepEqual(await run(c, 'R1', 'UID SORT (SUBJECT) UTF-8 ALL'), ['* SORT 50 20 30 10 40', 'R1 OK Sort completed']);
    assert.deepEqual(await run(c, 'R2', 'UID SORT (SUBJECT) UTF-8 ALL'), ['* SORT 50 20 30 10 40', 'R2 OK Sort completed']);
    assert.deepEqual(await run(c, 'R3', 'UID THREAD ORDEREDSUBJECT UTF-8 ALL'), ['* THREAD (50)(30 20)(10)(40)', 'R3 OK Thread completed']);
    c.close();
    // Same messages, same sequence numbers, new UIDs 1..5 (renumber keeps the order).
    server.control.resetUidValidity('INBOX', { uids: 'renumber' });
    c = await rawSession(port);
    await run(c, 'R4', 'SELECT INBOX');
    assert.deepEqual(await run(c, 'R5', 'UID SORT (SUBJECT) UTF-8 ALL'), ['* SORT 5 2 3 1 4', 'R5 OK Sort completed']);
    assert.deepEqual(await run(c, 'R6', 'UID THREAD ORDEREDSUBJECT UTF-8 ALL'), ['* THREAD (5)(3 2)(1)(4)', 'R6 OK Thread completed']);
    // A copy shares its original's bytes (and the values kept for them): it sorts where the original does.
    assert.equal((await run(c, 'R7', 'CREATE Copies')).at(-1), 'R7 OK Create completed');
    assert.match((await run(c, 'R8', 'COPY 1:5 Copies')).at(-1)!, /^R8 OK /);
    await run(c, 'R9', 'SELECT Copies');
    assert.deepEqual(await run(c, 'R10', 'SORT (SUBJECT) UTF-8 ALL'), ['* SORT 5 2 3 1 4', 'R10 OK Sort completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('a script rule can name SORT and UID THREAD (commands registered through the extension interface)', async () => {
  const { server, port } = await startServer({ plugins: ['SORT', 'THREAD'], storage: storage() });
  try {
    server.script.add({ on: 'command', command: 'SORT', times: 1, send: '$TAG NO [UNAVAILABLE] Try again later\r\n' });
    server.script.add({ on: 'command', command: 'UID THREAD', times: 1, send: '$TAG NO [UNAVAILABLE] Not now\r\n' });
    const c = await rawSession(port);
    await run(c, 'S1', 'SELECT INBOX');
    assert.deepEqual(await run(c, 'E1', 'SORT (SUBJECT) UTF-8 ALL'), ['E1 NO [UNAVAILABLE] Try again later']);
    assert.deepEqual(await run(c, 'E2', 'SORT (SUBJECT) UTF-8 ALL'), ['* SORT 5 2 3 1 4', 'E2 OK Sort completed']);
    assert.deepEqual(await run(c, 'E3', 'UID THREAD REFERENCES UTF-8 ALL'), ['E3 NO [UNAVAILABLE] Not now']);
    // ALPHA: 3 (2 Nov, no Date: INTERNALDATE) before 2 (3 Nov 04:00 UTC).
    assert.deepEqual(await run(c, 'E4', 'UID THREAD ORDEREDSUBJECT UTF-8 ALL'), ['* THREAD (50)(30 20)(10)(40)', 'E4 OK Thread completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 7162 §3.1.5: with CONDSTORE, a SORT whose criteria use MODSEQ ends with (MODSEQ n), the highest of the matches', async () => {
  const { c, server } = await session(['CONDSTORE', 'SORT']);
  try {
    const modseqs = server.control.listMessages('INBOX').map((m) => m.modseq);
    const lines = await run(c, 'M1', 'SORT (REVERSE ARRIVAL) UTF-8 MODSEQ 1');
    assert.deepEqual(lines, [`* SORT 1 4 3 2 5 (MODSEQ ${Math.max(...modseqs)})`, 'M1 OK Sort completed']);
    // Without MODSEQ in the criteria, no item.
    assert.deepEqual(await run(c, 'M2', 'SORT (ARRIVAL) UTF-8 ALL'), ['* SORT 5 2 3 4 1', 'M2 OK Sort completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('SEARCHRES with SORT: `$` in the search part, and SORT RETURN (SAVE) keeps the matches', async () => {
  const { c, server } = await session(['SEARCHRES', 'SORT']);
  try {
    assert.deepEqual(await run(c, 'R1', 'SEARCH RETURN (SAVE) SUBJECT alpha'), ['R1 OK Search completed']);
    assert.deepEqual(await run(c, 'R2', 'SORT (REVERSE ARRIVAL) UTF-8 $'), ['* SORT 3 2', 'R2 OK Sort completed']);
    assert.deepEqual(await run(c, 'R3', 'SORT RETURN (SAVE) (DATE) UTF-8 FROM x.org'), ['R3 OK Sort completed']);
    assert.deepEqual(await run(c, 'R4', 'UID SEARCH $'), ['* SEARCH 10 20 30 40', 'R4 OK Search completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

const python = spawnSync('python3', ['--version']).status === 0;

test('Python imaplib: sort() and thread() (its own SORT/THREAD API) read the answers', { skip: !python && 'python3 not found' }, async () => {
  const { server, port } = await startServer({ plugins: ['SORT', 'THREAD'], storage: storage() });
  try {
    const script = `
import imaplib
m = imaplib.IMAP4('127.0.0.1', ${port})
m.login('testuser', 'testpass')
assert 'SORT' in m.capabilities and 'THREAD=REFERENCES' in m.capabilities, m.capabilities
m.select('INBOX')
print(m.sort('(SUBJECT)', 'UTF-8', 'ALL')[1][0].decode())
print(m.uid('SORT', '(REVERSE DATE)', 'UTF-8', 'ALL')[1][0].decode())
print(m.thread('ORDEREDSUBJECT', 'UTF-8', 'ALL')[1][0].decode())
m.logout()
`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile('python3', ['-c', script], { timeout: 10000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
    );
    // ALPHA: 3 (2 Nov) before 2 (3 Nov 04:00); threads by first date: 5, 3, 1, 4.
    assert.deepEqual(out.trim().split('\n'), ['5 2 3 1 4', '10 40 20 30 50', '(5)(3 2)(1)(4)']);
  } finally {
    await server.stop();
  }
});

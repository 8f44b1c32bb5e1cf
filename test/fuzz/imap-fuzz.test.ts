/**
 * The IMAP fuzzer (test/fuzz/): a seeded run of 20,000 generated inputs
 * against a real listening server, plus checks that its oracles (the
 * response checker and the shadow framer) catch what they must.
 * `npm run bench -- fuzz` runs a long one.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runFuzz } from './driver.js';
import { ShadowFramer } from './framing.js';
import { Generator, serialize } from './generate.js';
import { ResponseError, ResponseSplitter, parseResponse, type ParsedResponse } from './response-check.js';
import { rawSession, startServer } from '../helpers/server.js';
import { CommandReader, LiteralSegment } from '../../src/imap/wire/reader.js';
import { Prng } from '../../src/util/prng.js';

/** Frames `chunks` with a CommandReader configured like a session's and lists what it delivered. */
function frame(chunks: Buffer[]): string[] {
  const events: string[] = [];
  const reader: CommandReader = new CommandReader({
    maxLineLength: 200,
    maxCommandBytes: 5000,
    maxLiterals: 5,
    hooks: {
      onCommand: (segments) => {
        events.push('C ' + segments.map((x) => (x instanceof LiteralSegment ? `<${x.binary ? '~' : ''}${x.data.toString('latin1')}>` : x.toString('latin1'))).join(''));
        reader.next('command');
      },
      onLine: (line) => events.push('L ' + line.toString('latin1')),
      onReject: (r) => events.push(`R ${r.tag} ${r.command} ${r.response} ${r.code ?? ''} ${r.text} ${r.fatal}`),
      sendContinuation: () => events.push('+'),
      checkLiteral: (info) => (info.size > 1000 ? { ok: false, response: 'NO', code: 'TOOBIG', text: 'too big' } : { ok: true }),
    },
  });
  for (const c of chunks) reader.push(c);
  events.push(`end in progress=${reader.inProgress}`);
  return events;
}

/** Splits and parses server output given as latin1 text. */
function responses(text: string): ParsedResponse[] {
  const out: ParsedResponse[] = [];
  new ResponseSplitter().push(Buffer.from(text, 'latin1'), (r) => out.push(parseResponse(r)));
  return out;
}

describe('fuzz oracle: response checker', () => {
  test('accepts the responses of RFC 3501 §8 and extension responses', () => {
    const ok = [
      '* OK [CAPABILITY IMAP4rev1 IDLE] Rookery ready\r\n',
      '+ OK\r\n',
      '+ \r\n',
      '* 172 EXISTS\r\n',
      '* 22 EXPUNGE\r\n',
      '* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft kw)\r\n',
      '* OK [PERMANENTFLAGS (\\Deleted \\Seen \\*)] Limited\r\n',
      '* OK [UIDVALIDITY 3857529045] UIDs valid\r\n',
      '* 12 FETCH (FLAGS (\\Seen) INTERNALDATE "17-Jul-1996 02:44:25 -0700" RFC822.SIZE 4286 UID 7 BODY[HEADER.FIELDS (SUBJECT)] {12}\r\nSubject: x\r\n)\r\n',
      '* 1 FETCH (BODYSTRUCTURE (("text" "plain" NIL NIL NIL "7bit" 3 1)("text" "html" NIL NIL NIL "7bit" 3 1) "alternative"))\r\n',
      '* LIST (\\Noselect) "/" ~/Mail/foo\r\n',
      '* SEARCH 2 84 882\r\n',
      '* SEARCH\r\n',
      '* STATUS blurdybloop (MESSAGES 231 UIDNEXT 44292)\r\n',
      '* NAMESPACE (("" "/")) NIL NIL\r\n',
      '* ID ("name" "x")\r\n',
      'A142 OK [READ-WRITE] SELECT completed\r\n',
      'a.1 NO [TRYCREATE] No such mailbox\r\n',
      'A2 OK [COPYUID 38505 304,319:320 3956:3958] Done\r\n',
      // Extension responses a plugin may bring.
      '* VANISHED (EARLIER) 300:310,405,411\r\n',
      '* SEARCH 2 5 (MODSEQ 917162500)\r\n',
      '* 1 FETCH (BINARY[1] ~{3}\r\na\0b UID 4)\r\n',
      '* LIST (\\HasNoChildren) "/" Sent ("CHILDINFO" ("SUBSCRIBED"))\r\n',
      '* STATUS INBOX (APPENDLIMIT NIL HIGHESTMODSEQ 7011231777)\r\n',
      '* QUOTA "" (STORAGE 10 512)\r\n',
      '* ESEARCH (TAG "A282") MIN 2 COUNT 3\r\n',
      '* SORT 2 3 1\r\n',
      '* SORT\r\n',
      '* THREAD (2)(3 6 (4 23)(44 7 96))\r\n',
      '* THREAD ((3)(5))\r\n',
      '* THREAD\r\n',
    ];
    for (const line of ok) assert.doesNotThrow(() => responses(line), line);
    const [fetch] = responses(ok[8]!);
    assert.equal(fetch!.fetch!.get('UID')!.t, 'num');
    assert.deepEqual(responses('* SEARCH 2 84 882\r\n')[0]!.search, [2, 84, 882]);
  });

  test('quoted UTF-8 (RFC 6855) passes only for a session that enabled UTF8=ACCEPT, and only when well-formed', () => {
    const parse = (text: string, utf8: boolean): ParsedResponse[] => {
      const out: ParsedResponse[] = [];
      new ResponseSplitter().push(Buffer.from(text, 'utf8'), (r) => out.push(parseResponse(r, { utf8 })));
      return out;
    };
    assert.doesNotThrow(() => parse('* LIST () "/" "Käse"\r\n', true));
    assert.doesNotThrow(() => parse('* STATUS "日本語" (MAILBOXID (F1))\r\n', true));
    assert.throws(() => parse('* LIST () "/" "Käse"\r\n', false), /invalid byte 0xc3 in quoted string/);
    const broken: ParsedResponse[] = [];
    const framed = new ResponseSplitter();
    assert.throws(() => framed.push(Buffer.from('* LIST () "/" "bad\xff"\r\n', 'latin1'), (r) => broken.push(parseResponse(r, { utf8: true }))), /malformed UTF-8/);
  });

  test('rejects malformed responses', () => {
    const bad = [
      ['* 3 FETCH (UID 4 FLAGS (\\Seen)\r\n', /expected \)/],
      ['A1 OK\r\n', /expected SP/],
      ['A1 MAYBE done\r\n', /tagged status/],
      ['* 0 EXPUNGE\r\n', /EXPUNGE 0/],
      ['* 1 FETCH (BODY[] {5}\r\nab\0de)\r\n', /NUL in a literal/],
      ['* OK caf\xe9\r\n', /response text/],
      ['* FLAGS (\\Seen\r\n', /expected \)/],
      ['* SEARCH 1 0\r\n', /non-zero/],
      ['* SORT 1 (2)\r\n', /./],
      ['* THREAD (1) (2)\r\n', /./],
      ['* THREAD 1 2\r\n', /thread list/],
      ['* WHAT 1\r\n', /unknown untagged/],
      ['* 1 FETCH (FLAGS (\\*))\r\n', /outside PERMANENTFLAGS/],
      ['* LIST () "//" INBOX\r\n', /delimiter/],
      ['* OK [UIDNEXT 0] x\r\n', /non-zero/],
      ['* 1 FETCH (INTERNALDATE "yesterday")\r\n', /INTERNALDATE/],
      ['* BYE bye\n', /bare LF/],
      ['A1 OK [READ-WRITE]\r\n', /missing text/],
      ['* CAPABILITY IDLE\r\n', /IMAP4rev1/],
      ['+OK\r\n', /expected SP/],
    ] as const;
    for (const [text, why] of bad) {
      assert.throws(() => responses(text), (err: unknown) => err instanceof ResponseError && why.test(err.message), JSON.stringify(text));
    }
  });

  test('UTF-8 in quoted strings only once the session enabled IMAP4rev2 or UTF8=ACCEPT (RFC 9051 QUOTED-CHAR, RFC 6855), and only well-formed', () => {
    const parse = (bytes: Buffer, utf8: boolean): ParsedResponse[] => {
      const out: ParsedResponse[] = [];
      new ResponseSplitter().push(bytes, (r) => out.push(parseResponse(r, { utf8 })));
      return out;
    };
    const name = Buffer.from('* LIST () "/" "Entwürfe"\r\n', 'utf8');
    assert.equal(parse(name, true).length, 1);
    assert.throws(() => parse(name, false), (err: unknown) => err instanceof ResponseError && /quoted string/.test(err.message));
    const broken = Buffer.concat([Buffer.from('* LIST () "/" "a'), Buffer.from([0xc3, 0x28]), Buffer.from('"\r\n')]);
    assert.throws(() => parse(broken, true), (err: unknown) => err instanceof ResponseError && /malformed UTF-8/.test(err.message));
  });

  test('rejects a quoted string with CR, LF or NUL (RFC 3501 §9 QUOTED-CHAR), and 8-bit before UTF8=ACCEPT; the literal of the same bytes passes', () => {
    // The answer: BINARY[5]<10> of "abcdefg\rhijkl\r\nmno\npqrstuvqxyz", quoted.
    const bad = [
      ['* 1 FETCH (BINARY[5]<10> "jkl\r\nmno\r\n")\r\n', /quoted string not closed before CRLF/],
      ['* 1 FETCH (BINARY[5]<10> "jkl\r\nmno\np")\r\n', /quoted string not closed before CRLF|bare LF/],
      ['* 1 FETCH (BODY[1] "a\rb")\r\n', /bare CR/],
      ['* 1 FETCH (BINARY[1] "a\0b")\r\n', /invalid byte 0x0 in quoted string \(NUL\)/],
      ['* METADATA "INBOX" (/private/comment "line {2}\r\nab")\r\n', /invalid byte 0xd in quoted string \(CR\)/],
      ['* 1 FETCH (PREVIEW "caf\xe9")\r\n', /invalid byte 0xe9 in quoted string \(8-bit\)/],
      ['* ACL INBOX "a\xffb" lr\r\n', /invalid byte 0xff in quoted string \(8-bit\)/],
    ] as const;
    for (const [text, why] of bad) {
      assert.throws(() => responses(text), (err: unknown) => err instanceof ResponseError && why.test(err.message), JSON.stringify(text));
    }
    const fine = responses('* 1 FETCH (BINARY[5]<10> {10}\r\njkl\r\nmno\np BINARY[1] ~{3}\r\na\0b PREVIEW {4}\r\ncaf\xe9)\r\n');
    assert.deepEqual(fine[0]!.fetch!.get('BINARY[5]<10>'), { t: 'str', v: Buffer.from('jkl\r\nmno\np') });
    assert.deepEqual(fine[0]!.fetch!.get('BINARY[1]'), { t: 'str', v: Buffer.from('a\0b') });
  });

  test('counts literal bytes exactly, across chunk boundaries', () => {
    const text = Buffer.from('* 1 FETCH (BODY[] {7}\r\nab\r\n)cd UID 5)\r\nT1 OK done\r\n', 'latin1');
    const got: string[] = [];
    const splitter = new ResponseSplitter();
    for (let i = 0; i < text.length; i++) splitter.push(text.subarray(i, i + 1), (r) => got.push(parseResponse(r).type));
    assert.deepEqual(got, ['FETCH', 'OK']);
    assert.ok(splitter.atBoundary);
  });

  test('a status text ending in {n} is text, not a literal (the server echoes names)', () => {
    const got = responses("A1 NO [NONEXISTENT] Mailbox doesn't exist: {3}\r\n* 1 EXISTS\r\n");
    assert.deepEqual(got.map((r) => r.type), ['NO', 'EXISTS']);
  });
});

describe('fuzz oracle: shadow framer', () => {
  test('follows lines and literals and completes a pending command', () => {
    const f = new ShadowFramer({ maxLiteral: 1000 });
    f.feed(Buffer.from('A1 NOOP\r\nA2 LOGIN {3}\r\nab'));
    assert.equal(f.literalLeft, 1);
    assert.equal(f.completion(100)!.toString('latin1'), 'x\r\n');
    assert.ok(f.atLineStart);
    f.feed(Buffer.from('A3 APPEND x {5+}\r\n12'));
    assert.equal(f.completion(100)!.toString('latin1'), 'xxx\r\n');
    f.feed(Buffer.from('A4 X {2000}\r\n'));
    assert.ok(f.atLineStart, 'a synchronizing literal above every limit is refused: no data follows');
    f.feed(Buffer.from('A5 X {2000+}\r\n'));
    assert.equal(f.completion(100), null, 'too much to fill: reconnect');
    f.reset();
    f.feed(Buffer.from('A6 X {99999999999999999999+}\r\n'));
    assert.equal(f.completion(100), null, 'an unusable non-synchronizing size ends the connection');
  });

  test('a synchronizing literal on a line over the server\'s limit is refused with it; what follows is read as lines (a probe timeout found by the fuzzer)', async () => {
    const f = new ShadowFramer({ maxLiteral: 1_000_000, maxLine: 8192 });
    // The shape of the batch the fuzzer dumped: an overlong line announcing {29}, then bytes that, read as
    // lines (the server refused the literal: BAD, no "+"), announce a non-synchronizing literal of their own.
    const batch = `F1${'A'.repeat(8300)} {29}\r\n(\tUNSUBSCRIBE "x\\"y"\r\nF2{100+}\r\n${'B'.repeat(40)}`;
    f.feed(Buffer.from(batch, 'latin1'));
    assert.equal(f.literalLeft, 60, 'the {100+} literal is the one pending, 60 bytes still owed');
    assert.equal(f.ambiguous, false);
    const completion = f.completion(1000)!;
    assert.equal(completion.length, 62);
    // The real server reads it so: the probe after the completion is answered.
    const { server, port } = await startServer({ maxLineLength: 8192 });
    try {
      const c = await rawSession(port);
      c.write(Buffer.concat([Buffer.from(batch, 'latin1'), completion, Buffer.from('P1 NOOP\r\n')]));
      const lines = await c.until('P1');
      assert.equal(lines.at(-1), 'P1 OK NOOP completed');
      assert.ok(lines.some((l) => /^(\*|F1) BAD .*too long/.test(l)), lines.join('\n'));
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('data taken for an accepted synchronizing literal that would announce a literal if refused makes the batch ambiguous', () => {
    const f = new ShadowFramer({ maxLiteral: 1_000_000, maxLine: 8192 });
    f.feed(Buffer.from('A1 LOGIN {19}\r\nx\r\nA2 X {5'));
    assert.equal(f.ambiguous, false, 'no announcement yet (split across writes)');
    f.feed(Buffer.from('+}\r\n12345'));
    assert.equal(f.ambiguous, true);
    f.clearAmbiguity();
    f.feed(Buffer.from('\r\nA3 APPEND x {3+}\r\n{1}\r\n'));
    assert.equal(f.ambiguous, false, 'a non-synchronizing literal is never refused: its data is data');
    // After AUTHENTICATE the server reads SASL lines; how many depends on the mechanism and its outcome (an
    // XOAUTH2 failure asks for one more), so a literal announced on the next lines may be no literal to it.
    const g = new ShadowFramer({ maxLiteral: 1_000_000, maxLine: 8192 });
    g.feed(Buffer.from('A1 AUTHENTICATE XOAUTH2\r\ndXNlcj10\r\nA2 XFUZZ {16+}\r\nD {2000000+}\r\n \r\n'));
    assert.equal(g.ambiguous, true);
    g.clearAmbiguity();
    g.feed(Buffer.from('A3 NOOP\r\nA4 X\r\nA5 Y\r\nA6 Z\r\nA7 APPEND x {3+}\r\nabc\r\n'));
    assert.equal(g.ambiguous, false, 'three lines after the last line-mode command: commands again');
  });

  test('generated inputs replay from the seed', () => {
    const a = new Generator(42, { maxLineLength: 100 });
    const b = new Generator(42, { maxLineLength: 100 });
    for (let i = 0; i < 200; i++) assert.deepEqual(a.input('selected'), b.input('selected'));
    assert.equal(serialize(['A ', { lit: Buffer.from('xy'), sync: false }, ' ', { lit: Buffer.from('z'), sync: true, announce: '9', binary: true }]).toString(), 'A {2+}\r\nxy ~{9}\r\nz');
  });
});

describe('fuzz: the command reader', () => {
  test('frames 3,000 generated inputs the same whatever the chunk boundaries', () => {
    const gen = new Generator(7, { maxLineLength: 200 });
    const prng = new Prng(8);
    for (let i = 0; i < 3000; i++) {
      const states = ['notAuthenticated', 'authenticated', 'selected'] as const;
      const input = Buffer.concat(Array.from({ length: 1 + prng.below(4) }, () => gen.input(states[prng.below(3)]!)));
      const whole = frame([input]);
      const chunks: Buffer[] = [];
      for (let at = 0; at < input.length; ) {
        const n = 1 + prng.below(prng.below(2) ? 3 : 64);
        chunks.push(input.subarray(at, at + n));
        at += n;
      }
      assert.deepEqual(frame(chunks), whole, JSON.stringify(input.toString('latin1')).slice(0, 500));
    }
  });
});

describe('fuzz run', () => {
  test('20,000 seeded inputs: no finding (errors, SERVERBUG, malformed responses, stalls, store problems)', async () => {
    const report = await runFuzz({ seed: 20261124, inputs: 20_000 });
    const findings = report.findings.map((f) => `${f.kind} (x${f.count}): ${f.message}\n  input: ${JSON.stringify(f.input ?? '').slice(0, 2000)}`);
    assert.deepEqual(findings, []);
    assert.equal(report.inputs, 20_000);
    // The inputs reach the commands: every kind of answer shows up.
    for (const status of ['OK', 'NO', 'BAD']) assert.ok((report.statuses[status] ?? 0) > 100, `${status}: ${report.statuses[status]}`);
    // Every state gets its share of inputs.
    for (const [state, n] of Object.entries(report.states)) assert.ok(n > 1500, `${state}: ${n} inputs`);
    assert.ok(report.responses > report.inputs / 2);
  });

  // A fuzz finding (fixed in the store): RENAME INBOX handed the very Message objects that sessions with
  // INBOX selected still showed to the new mailbox and renumbered their UIDs in place; the counters went
  // negative and STATUS answered NO [SERVERBUG].
  test('RENAME INBOX while another session has INBOX selected', async () => {
    const { server, port } = await startServer({
      storage: { INBOX: { messages: [{ raw: 'Subject: a\r\n\r\nx\r\n', uid: 5 }, { raw: 'Subject: b\r\n\r\ny\r\n', uid: 6 }] }, '': {} },
    });
    try {
      const a = await rawSession(port);
      const b = await rawSession(port);
      await a.command('SELECT INBOX');
      await b.command('RENAME INBOX Moved');
      const noop = await a.command('NOOP');
      assert.deepEqual(noop.filter((l) => l.endsWith('EXPUNGE')), ['* 2 EXPUNGE', '* 1 EXPUNGE'], 'INBOX is empty now');
      await a.command('UID STORE 5 +FLAGS (\\Seen)');
      const boxes = Object.fromEntries(server.control.listMailboxes().map((m) => [m.path, m.unseen]));
      assert.deepEqual(boxes, { INBOX: 0, Moved: 2 });
      assert.deepEqual(server.control.listMessages('Moved').map((m) => m.uid), [1, 2]);
      const status = await a.command('STATUS Moved (MESSAGES UNSEEN)');
      assert.equal(status[0], '* STATUS "Moved" (MESSAGES 2 UNSEEN 2)');
      a.close();
      b.close();
    } finally {
      await server.stop();
    }
  });
});

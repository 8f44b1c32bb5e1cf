/**
 * BINARY (RFC 3516, RFC 9051 §6.4.5) over real sockets: FETCH BINARY /
 * BINARY.PEEK / BINARY.SIZE of base64, quoted-printable and identity parts,
 * literal8 exactly when the decoded bytes hold NUL (checked byte for byte
 * on a raw socket), partial FETCH, \Seen (and the ACL `s` right), UNKNOWN-CTE,
 * the section rules, APPEND with literal8 and what it refuses, and
 * imapflow's download() using BINARY once the server offers it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ImapFlow } from 'imapflow';
import type { RawClient } from '../helpers/raw-client.js';
import { rawSession, startServer } from '../helpers/server.js';

const BYTES = Buffer.from([0, 1, 2, 3, 0xff, 13, 10, 0]);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A multipart message with one part of each kind the tests need. */
const MIXED = [
  'From: Alice <alice@example.com>',
  'To: Bob <bob@example.com>',
  'Subject: parts',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'caf=C3=A9 with a soft =',
  'break, and=0Aa bare LF',
  '--b1',
  'Content-Type: application/octet-stream',
  'Content-Transfer-Encoding: base64',
  '',
  BYTES.toString('base64'),
  '--b1',
  'Content-Type: image/png',
  'Content-Transfer-Encoding: BASE64',
  '',
  PNG.toString('base64'),
  '--b1',
  'Content-Type: message/rfc822',
  '',
  'Subject: inner',
  '',
  'inner body',
  '--b1',
  'Content-Type: text/plain',
  'Content-Transfer-Encoding: x-uuencode',
  '',
  'begin 644 x',
  '--b1--',
  '',
].join('\r\n');

/** MIXED without its part in an unknown encoding. */
const KNOWN = MIXED.replace('--b1\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\nbegin 644 x\r\n', '');

/** A single-part base64 text message with LF-only line ends inside the encoding. */
const SINGLE = ['Subject: single', 'MIME-Version: 1.0', 'Content-Type: text/plain', 'Content-Transfer-Encoding: base64', '', Buffer.from('one\ntwo\n').toString('base64'), ''].join('\r\n');

async function selected(plugins: string[], messages: string[] = [MIXED]): Promise<{ c: RawClient; stop: () => Promise<void>; server: Awaited<ReturnType<typeof startServer>>['server'] }> {
  const { server, port } = await startServer({ plugins });
  for (const raw of messages) server.control.addMessage('INBOX', { raw });
  const c = await rawSession(port);
  const lines = await c.command('SELECT INBOX');
  assert.match(lines[lines.length - 1]!, /OK \[READ-WRITE\]/);
  return { c, server, stop: () => server.stop() };
}

const bin = (s: string): Buffer => Buffer.from(s, 'latin1');

test('CAPABILITY lists BINARY only when the plugin is loaded; without it BINARY items are BAD', async () => {
  const on = await selected(['BINARY']);
  try {
    assert.deepEqual(await on.c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 BINARY', 'T3 OK Capability completed']);
  } finally {
    on.c.close();
    await on.stop();
  }
  const off = await selected([]);
  try {
    assert.doesNotMatch((await off.c.command('CAPABILITY'))[0]!, /BINARY/);
    assert.match((await off.c.command('FETCH 1 BINARY.PEEK[1]')).at(-1)!, /^T4 BAD Unknown fetch attribute BINARY\.PEEK/);
    assert.match((await off.c.command('FETCH 1 (FLAGS BINARY.PEEK)')).at(-1)!, /^T5 BAD Unknown fetch attribute BINARY\.PEEK/);
    assert.match((await off.c.command('FETCH 1 BINARY.SIZE[1]')).at(-1)!, /^T6 BAD/);
    assert.equal((await off.c.command('NOOP')).at(-1), 'T7 OK NOOP completed');
  } finally {
    off.c.close();
    await off.stop();
  }
});

test('RFC 3516 §4.2/4.3: BINARY.PEEK removes base64 and quoted-printable; BINARY.SIZE is the length of the same bytes', async () => {
  const { c, stop } = await selected(['BINARY']);
  try {
    // Quoted-printable text: =XX decoded, the soft line break removed, =0A a bare LF: the decoded octets exactly
    // (§4.3's CRLF rule is about line ends as stored, which =0A is not).
    const text = bin(Buffer.from('café with a soft break, and\na bare LF', 'utf8').toString('latin1'));
    assert.deepEqual(await c.command('FETCH 1 (BINARY.SIZE[1] BINARY.PEEK[1])'), [
      `* 1 FETCH (BINARY.SIZE[1] ${text.length} BINARY[1] {${text.length}}\r\n${text.toString('latin1')})`,
      'T3 OK Fetch completed',
    ]);
    // base64 without NUL in the decoded bytes: an ordinary literal (§4.3 SHOULD), not literal8.
    assert.deepEqual(await c.command('FETCH 1 (BINARY.PEEK[3] BINARY.SIZE[3])'), [
      `* 1 FETCH (BINARY[3] {8}\r\n${PNG.toString('latin1')} BINARY.SIZE[3] 8)`,
      'T4 OK Fetch completed',
    ]);
    // Each BINARY.SIZE equals the length of the BINARY answer for the same part.
    for (const part of ['1', '2', '3', '4']) {
      const size = Number(/BINARY\.SIZE\[[\d.]*\] (\d+)/.exec((await c.command(`FETCH 1 BINARY.SIZE[${part}]`))[0]!)![1]);
      const answer = (await c.command(`FETCH 1 BINARY.PEEK[${part}]`))[0]!;
      const m = /BINARY\[[\d.]*\] ~?\{(\d+)\}\r\n/.exec(answer)!;
      assert.equal(Number(m[1]), size, `part ${part}`);
    }
  } finally {
    c.close();
    await stop();
  }
});

test('RFC 3516 §4.3: decoded bytes with NUL go out as literal8 ~{n} (the exact bytes on the socket)', async () => {
  const { server, port } = await startServer({ plugins: ['BINARY'] });
  server.control.addMessage('INBOX', { raw: MIXED });
  const c = await rawSession(port);
  try {
    await c.command('EXAMINE INBOX');
    c.write('B1 FETCH 1 BINARY.PEEK[2]\r\n');
    const expected = Buffer.concat([bin('* 1 FETCH (BINARY[2] ~{8}\r\n'), BYTES, bin(')\r\nB1 OK Fetch completed\r\n')]);
    // Read the raw bytes: a line reader would not show the framing of a literal8.
    let got = Buffer.alloc(0);
    const deadline = Date.now() + 5000;
    while (got.length < expected.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      got = Buffer.concat([got, bin(c.pending())]);
    }
    assert.deepEqual(got, expected);
  } finally {
    c.close();
    await server.stop();
  }
});

test('partial BINARY[part]<offset.length> counts in the decoded bytes and is answered as BINARY[part]<offset>', async () => {
  const { c, stop } = await selected(['BINARY']);
  try {
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[2]<1.3>'), ['* 1 FETCH (BINARY[2]<1> {3}\r\n\x01\x02\x03)', 'T3 OK Fetch completed']);
    // A window holding a NUL is literal8 on its own.
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[2]<6.10>'), ['* 1 FETCH (BINARY[2]<6> ~{2}\r\n\n\x00)', 'T4 OK Fetch completed']);
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[2]<100.5>'), ['* 1 FETCH (BINARY[2]<100> {0}\r\n)', 'T5 OK Fetch completed']);
    assert.match((await c.command('FETCH 1 BINARY.SIZE[2]<0.1>')).at(-1)!, /^T6 BAD/);
    assert.match((await c.command('FETCH 1 BINARY.PEEK[2]<0.0>')).at(-1)!, /^T7 BAD Invalid partial/);
  } finally {
    c.close();
    await stop();
  }
});

test('BINARY sets \\Seen (and reports FLAGS), BINARY.PEEK and BINARY.SIZE do not, EXAMINE never does', async () => {
  const { c, server, stop } = await selected(['BINARY']);
  const seen = (): boolean => server.control.listMessages('INBOX')[0]!.flags.includes('\\Seen');
  try {
    await c.command('FETCH 1 (BINARY.PEEK[3] BINARY.SIZE[3])');
    assert.equal(seen(), false);
    await c.command('EXAMINE INBOX');
    await c.command('FETCH 1 BINARY[3]');
    assert.equal(seen(), false);
    await c.command('SELECT INBOX');
    const lines = await c.command('FETCH 1 BINARY[3]');
    assert.equal(lines.at(-1), 'T7 OK Fetch completed');
    assert.ok(lines[0]!.startsWith(`* 1 FETCH (BINARY[3] {8}\r\n${PNG.toString('latin1')} FLAGS (\\Seen`), lines[0]);
    assert.equal(seen(), true);
  } finally {
    c.close();
    await stop();
  }
});

test('RFC 4314 §4: without the s right BINARY reads without setting \\Seen', async () => {
  const { c, server, stop } = await selected(['BINARY', 'ACL']);
  try {
    // A mailbox without an ACL grants anyone everything: take `s` from both entries.
    server.extension('ACL')!.setAcl('INBOX', 'anyone', 'lrwitekxa');
    server.extension('ACL')!.setAcl('INBOX', 'testuser', 'lrwitekxa');
    await c.command('SELECT INBOX');
    const lines = await c.command('FETCH 1 BINARY[3]');
    assert.equal(lines.at(-1), 'T4 OK Fetch completed');
    assert.doesNotMatch(lines[0]!, /FLAGS/);
    assert.equal(server.control.listMessages('INBOX')[0]!.flags.includes('\\Seen'), false);
  } finally {
    c.close();
    await stop();
  }
});

test('RFC 3516 §4.3: an encoding the server cannot decode fails the FETCH with NO [UNKNOWN-CTE]; the session goes on', async () => {
  const { c, stop } = await selected(['BINARY']);
  try {
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[5]'), ['T3 NO [UNKNOWN-CTE] Unknown Content-Transfer-Encoding x-uuencode']);
    assert.deepEqual(await c.command('FETCH 1 BINARY.SIZE[5]'), ['T4 NO [UNKNOWN-CTE] Unknown Content-Transfer-Encoding x-uuencode']);
    // BODY[5] is not affected: it sends the part as stored.
    assert.deepEqual(await c.command('FETCH 1 BODY.PEEK[5]'), ['* 1 FETCH (BODY[5] {11}\r\nbegin 644 x)', 'T5 OK Fetch completed']);
    assert.equal((await c.command('NOOP')).at(-1), 'T6 OK NOOP completed');
  } finally {
    c.close();
    await stop();
  }
});

test('sections: only part numbers; [] is the whole message, a message/rfc822 part and a missing part as BODY has them', async () => {
  const { c, stop } = await selected(['BINARY'], [MIXED, SINGLE, KNOWN]);
  try {
    for (const bad of ['BINARY.PEEK[1.MIME]', 'BINARY.PEEK[TEXT]', 'BINARY.PEEK[HEADER]', 'BINARY.PEEK', 'BINARY.SIZE', 'BINARY.PEEK[0]', 'BINARY[1', 'BINARY.PEEK<0.1>']) {
      assert.match((await c.command(`FETCH 1 ${bad}`)).at(-1)!, /^T\d+ BAD/, bad);
    }
    // A part in an unknown encoding inside fails the whole message's BINARY[] (as in Dovecot).
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[]'), ['T11 NO [UNKNOWN-CTE] Unknown Content-Transfer-Encoding x-uuencode']);
    assert.deepEqual(await c.command('FETCH 1 BINARY.SIZE[]'), ['T12 NO [UNKNOWN-CTE] Unknown Content-Transfer-Encoding x-uuencode']);
    // BINARY[] of a multipart message: every base64/quoted-printable part decoded, its header saying `binary`.
    // NUL inside: literal8.
    const binaryForm = KNOWN.replace('Content-Transfer-Encoding: quoted-printable\r\n\r\ncaf=C3=A9 with a soft =\r\nbreak, and=0Aa bare LF', 'Content-Transfer-Encoding: binary\r\n\r\ncaf\xc3\xa9 with a soft break, and\na bare LF')
      .replace(`Content-Transfer-Encoding: base64\r\n\r\n${BYTES.toString('base64')}`, `Content-Transfer-Encoding: binary\r\n\r\n${BYTES.toString('latin1')}`)
      .replace(`Content-Transfer-Encoding: BASE64\r\n\r\n${PNG.toString('base64')}`, `Content-Transfer-Encoding: binary\r\n\r\n${PNG.toString('latin1')}`);
    assert.deepEqual(await c.command('FETCH 3 (BINARY.PEEK[] BINARY.SIZE[])'), [
      `* 3 FETCH (BINARY[] ~{${binaryForm.length}}\r\n${binaryForm} BINARY.SIZE[] ${binaryForm.length})`,
      'T13 OK Fetch completed',
    ]);
    // The message/rfc822 part: the encapsulated message as BODY[4] has it.
    const inner = 'Subject: inner\r\n\r\ninner body';
    assert.equal((await c.command('FETCH 1 BODY.PEEK[4]'))[0], `* 1 FETCH (BODY[4] {${inner.length}}\r\n${inner})`);
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[4]'), [`* 1 FETCH (BINARY[4] {${inner.length}}\r\n${inner})`, 'T15 OK Fetch completed']);
    // A part that does not exist is empty, as in BODY[9].
    assert.deepEqual(await c.command('FETCH 1 (BINARY.PEEK[9] BINARY.SIZE[9])'), ['* 1 FETCH (BINARY[9] {0}\r\n BINARY.SIZE[9] 0)', 'T16 OK Fetch completed']);
    // A single-part base64 message: [1] and [] decode its body, the LF-only line ends it encodes kept
    // (they are its content, not how the server stores it); [] keeps the header, its
    // Content-Transfer-Encoding saying what the bytes now are.
    assert.deepEqual(await c.command('FETCH 2 BINARY.PEEK[1]'), ['* 2 FETCH (BINARY[1] {8}\r\none\ntwo\n)', 'T17 OK Fetch completed']);
    const header = 'Subject: single\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: binary\r\n\r\n';
    const whole = `${header}one\ntwo\n`;
    assert.deepEqual(await c.command('FETCH 2 (BINARY.PEEK[] BINARY.SIZE[])'), [`* 2 FETCH (BINARY[] {${whole.length}}\r\n${whole} BINARY.SIZE[] ${whole.length})`, 'T18 OK Fetch completed']);
  } finally {
    c.close();
    await stop();
  }
});

test('APPEND with literal8 ~{n}: the NUL part is stored in base64 (RFC 3516 §4.4, §6); BINARY[] and BINARY[part] give the bytes back as sent', async () => {
  const { server, port } = await startServer({ plugins: ['BINARY', 'LITERAL+'] });
  const c = await rawSession(port);
  try {
    const part = Buffer.from([0x41, 0, 0x42, 0, 0]);
    const message = Buffer.concat([
      bin('Subject: nul\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=q\r\n\r\n--q\r\nContent-Type: text/plain\r\n\r\nhi\r\n--q\r\n'),
      bin('Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\n'),
      part,
      bin('\r\n--q--\r\n'),
    ]);
    c.write(`A1 APPEND INBOX ~{${message.length}}\r\n`);
    assert.equal(await c.line(), '+ OK');
    c.write(Buffer.concat([message, bin('\r\n')]));
    assert.match(await c.line(), /^A1 OK/);
    // RFC 3516 §4.4/§6: stored with the NUL part in base64 (lossless), the rest as sent.
    const stored = message
      .toString('latin1')
      .replace(`Content-Transfer-Encoding: binary\r\n\r\n${part.toString('latin1')}`, `Content-Transfer-Encoding: base64\r\n\r\n${part.toString('base64')}`);
    assert.equal(server.store.get('INBOX')!.messages[0]!.raw.toString('latin1'), stored);
    await c.command('EXAMINE INBOX');
    // BINARY[] gives back the message as sent, byte for byte, as literal8.
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[]'), [`* 1 FETCH (BINARY[] ~{${message.length}}\r\n${message.toString('latin1')})`, 'T3 OK Fetch completed']);
    assert.deepEqual(await c.command('FETCH 1 (BINARY.PEEK[2] BINARY.SIZE[2])'), [`* 1 FETCH (BINARY[2] ~{5}\r\n${part.toString('latin1')} BINARY.SIZE[2] 5)`, 'T4 OK Fetch completed']);
    // BODY[] and BODYSTRUCTURE show the base64 form: a plain literal cannot carry NUL (CHAR8).
    assert.deepEqual(await c.command('FETCH 1 BODY.PEEK[]'), [`* 1 FETCH (BODY[] {${stored.length}}\r\n${stored})`, 'T5 OK Fetch completed']);
    assert.match((await c.command('FETCH 1 BODYSTRUCTURE'))[0]!, /\("application" "octet-stream" NIL NIL NIL "base64" 8 /i);
    // The non-synchronizing form ~{n+} (RFC 7888 with RFC 3516).
    c.write(Buffer.concat([bin('A2 APPEND INBOX (\\Seen) ~{17+}\r\nSubject: s\r\n\r\n'), Buffer.from([0x61, 0, 0x62]), bin('\r\n')]));
    const lines = await c.until('A2');
    assert.match(lines.at(-1)!, /^A2 OK/);
    // Not a MIME message: it becomes one, so the new Content-Transfer-Encoding counts.
    assert.equal(server.store.get('INBOX')!.messages[1]!.raw.toString('latin1'), 'Subject: s\r\nMIME-Version: 1.0\r\nContent-Transfer-Encoding: base64\r\n\r\nYQBi');
    assert.deepEqual(await c.command('FETCH 2 BINARY.PEEK[1]'), ['* 2 FETCH (BINARY[1] ~{3}\r\na\x00b)', 'T7 OK Fetch completed']);
  } finally {
    c.close();
    await server.stop();
  }
});

test('APPEND: NUL in an ordinary literal is BAD (CHAR8 has no NUL); literal8 is BAD without BINARY and outside the grammar', async () => {
  const withBinary = await startServer({ plugins: ['BINARY', 'LITERAL+'] });
  const without = await startServer({ plugins: ['LITERAL+'] });
  try {
    const c = await rawSession(withBinary.port);
    c.write(Buffer.concat([bin('A1 APPEND INBOX {3+}\r\n'), Buffer.from([0x61, 0, 0x62]), bin('\r\n')]));
    assert.match(await c.line(), /^A1 BAD NUL in a literal/);
    // Literal8 where the grammar has a string (a mailbox name) is BAD even with BINARY.
    c.write('A2 SELECT ~{5+}\r\nINBOX\r\n');
    assert.equal(await c.line(), 'A2 BAD Binary literal not allowed here');
    assert.equal(withBinary.server.control.listMessages('INBOX').length, 0);
    assert.equal((await c.command('NOOP')).at(-1), 'T2 OK NOOP completed');
    c.close();
    const d = await rawSession(without.port);
    d.write('A1 APPEND INBOX ~{3+}\r\nabc\r\n');
    assert.equal(await d.line(), 'A1 BAD Binary literal not allowed here');
    assert.equal(without.server.control.listMessages('INBOX').length, 0);
    assert.equal((await d.command('NOOP')).at(-1), 'T2 OK NOOP completed');
    d.close();
  } finally {
    await withBinary.server.stop();
    await without.server.stop();
  }
});

test('imapflow 2.1.2 uses BINARY.PEEK for download({ binary: true }) once BINARY is offered, and appends NUL data as literal8', async () => {
  const { server, port } = await startServer({ plugins: ['BINARY', 'LITERAL+'] });
  server.control.addMessage('INBOX', { raw: MIXED });
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.mailboxOpen('INBOX');
    // download() hands its options to fetchOne, which reads `binary` (not in imapflow's DownloadOptions type).
    const { content } = await client.download('1', '2', { binary: true } as object);
    assert.ok(content);
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(chunk as Buffer);
    assert.deepEqual(Buffer.concat(chunks), BYTES);
    const fetched = await client.fetchOne('1', { bodyParts: ['3'] }, { binary: true });
    assert.ok(fetched);
    assert.deepEqual(fetched.bodyParts?.get('3'), PNG);
    assert.ok(fetched.binaryParts?.has('3'), 'imapflow recorded part 3 as received through BINARY');
    // imapflow picks literal8 for content with NUL when the server offers BINARY.
    const nul = Buffer.from('Subject: z\r\n\r\nA\0B\r\n', 'latin1');
    await client.append('INBOX', nul);
    const back = await client.fetchOne('2', { bodyParts: ['1'] }, { binary: true });
    assert.ok(back);
    assert.deepEqual(back.bodyParts?.get('1'), Buffer.from('A\0B\r\n', 'latin1'));
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

test('script rules see BINARY FETCHes: a rule matching the command text shapes the answer, literal8 bytes intact', async () => {
  const { server, port } = await startServer({ plugins: ['BINARY'] });
  server.control.addMessage('INBOX', { raw: MIXED });
  const c = await rawSession(port);
  try {
    await c.command('EXAMINE INBOX');
    // Only a FETCH naming BINARY.PEEK matches; its answer goes out in 5-byte chunks.
    server.script.add({ on: 'command', command: 'FETCH', match: 'BINARY\\.PEEK\\[2\\]', run: true, chunk: 5, chunkDelay: 'tick' });
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[2]'), [`* 1 FETCH (BINARY[2] ~{8}\r\n${BYTES.toString('latin1')})`, 'T3 OK Fetch completed']);
    server.script.add({ on: 'command', command: 'FETCH', match: 'BINARY\\.SIZE', send: '$TAG NO [UNKNOWN-CTE] scripted\r\n' });
    assert.deepEqual(await c.command('FETCH 1 BINARY.SIZE[2]'), ['T4 NO [UNKNOWN-CTE] scripted']);
    assert.deepEqual(await c.command('FETCH 1 BINARY.SIZE[3]'), ['T5 NO [UNKNOWN-CTE] scripted']);
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[3]'), [`* 1 FETCH (BINARY[3] {8}\r\n${PNG.toString('latin1')})`, 'T6 OK Fetch completed']);
  } finally {
    c.close();
    await server.stop();
  }
});

/** Issue 29's part: 30 octets with a bare CR, a CRLF and a bare LF. */
const THIRTY = bin('abcdefg\rhijkl\r\nmno\npqrstuvqxyz');

/** A message whose part `n` (1-based, n >= 2) is `body` in `encoding`, the others short text parts. */
function partMessage(n: number, type: string, encoding: string, body: string): string {
  let raw = 'Subject: exact\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="p"\r\n\r\n';
  for (let i = 1; i < n; i++) raw += `--p\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`;
  return `${raw}--p\r\nContent-Type: ${type}\r\nContent-Transfer-Encoding: ${encoding}\r\n\r\n${body}\r\n--p--\r\n`;
}

test('issue 29, RFC 3516 §4.2: BINARY gives the decoded octets exactly (bare CR, bare LF kept in a text part); SIZE and partials count them', async () => {
  const raw = partMessage(5, 'text/plain; charset=us-ascii', 'base64', THIRTY.toString('base64'));
  const { c, stop } = await selected(['all'], [raw]);
  try {
    const l = (s: string): string => `{${s.length}}\r\n${s}`;
    const all = THIRTY.toString('latin1');
    assert.deepEqual(await c.command('FETCH 1 BINARY.SIZE[5]'), ['* 1 FETCH (BINARY.SIZE[5] 30)', 'T3 OK Fetch completed']);
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[5]'), [`* 1 FETCH (BINARY[5] ${l(all)})`, 'T4 OK Fetch completed']);
    // The window of issue 29, as a literal (CR and LF cannot be quoted), with the bare LF as it is.
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[5]<10.10>'), [`* 1 FETCH (BINARY[5]<10> ${l('jkl\r\nmno\np')})`, 'T5 OK Fetch completed']);
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[5]<25.100>'), [`* 1 FETCH (BINARY[5]<25> ${l('vqxyz')})`, 'T6 OK Fetch completed']);
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[5]<30.1>'), ['* 1 FETCH (BINARY[5]<30> {0}\r\n)', 'T7 OK Fetch completed']);
    // BINARY (not PEEK) gives the same bytes and sets \Seen.
    const lines = await c.command('FETCH 1 BINARY[5]<0.8>');
    assert.ok(lines[0]!.startsWith(`* 1 FETCH (BINARY[5]<0> ${l('abcdefg\r')} FLAGS (\\Seen`), lines[0]);
    // BODY[5] is still the encoded part as stored.
    assert.deepEqual(await c.command('FETCH 1 BODY.PEEK[5]'), [`* 1 FETCH (BODY[5] ${l(THIRTY.toString('base64'))})`, 'T9 OK Fetch completed']);
  } finally {
    c.close();
    await stop();
  }
});

test('RFC 2045 §6.8: base64 ignores every character outside its alphabet (blanks, junk, base64url - and _), "=" ends the data, a short last quantum keeps its whole octets', async () => {
  const cases: [string, string][] = [
    ['YWJj ZGVm\t\r\n!Z2hp*aWpr\r\n~~bG1u.', 'abcdefghiijklmn'],
    ['YW%Jj\r\nZG!Vm', 'abcdef'],
    ['YW-Jj_ZGVm', 'abcdef'],
    ['YQ==\r\nYmM=', 'a'],
    ['YWJjZA', 'abcd'],
    ['YWJjZGU', 'abcde'],
    ['YWJjZ', 'abc'],
    ['', ''],
  ];
  const messages = cases.map(([body]) => partMessage(2, 'application/octet-stream', 'base64', body));
  const { c, stop } = await selected(['BINARY'], messages);
  try {
    for (let i = 0; i < cases.length; i++) {
      const want = cases[i]![1];
      const lines = await c.command(`FETCH ${i + 1} (BINARY.SIZE[2] BINARY.PEEK[2])`);
      assert.equal(lines[0], `* ${i + 1} FETCH (BINARY.SIZE[2] ${want.length} BINARY[2] {${want.length}}\r\n${want})`, JSON.stringify(cases[i]![0]));
    }
  } finally {
    c.close();
    await stop();
  }
});

test('RFC 2045 §6.7: quoted-printable soft breaks (blanks after "=" too) vanish, hard breaks are CRLF, =0D/=0A are bare octets, bad escapes stay as written', async () => {
  const cases: [string, string, string][] = [
    // soft breaks, with and without blanks after the "="; trailing blanks of a line dropped (rule 3)
    ['text/plain', 'abc=\r\ndef= \t\r\nghi  \r\nend', 'abcdefghi\r\nend'],
    // encoded CR and LF are content: kept bare in a text part
    ['text/plain', 'a=0Db=0Ac=0D=0Ad', 'a\rb\nc\r\nd'],
    // lower-case hex read as hex (a robust decoder may); a malformed "=" kept with what follows
    ['text/plain; charset=utf-8', 'caf=c3=a9 =ZZ x=4', 'caf\xc3\xa9 =ZZ x=4'],
    // a hard line break in an octet-stream is CRLF too: it is a line break of the encoded text
    ['application/octet-stream', 'x=00y\r\nz=FF', 'x\x00y\r\nz\xff'],
  ];
  const messages = cases.map(([type, body]) => partMessage(2, type, 'quoted-printable', body));
  // Stored with bare LF line ends: served as CRLF, so the hard break decodes to CRLF and the soft one vanishes.
  messages.push(partMessage(2, 'text/plain', 'quoted-printable', 'one=\ntwo\nthree').replace(/\r\n/g, '\n'));
  cases.push(['text/plain', '', 'onetwo\r\nthree']);
  const { c, stop } = await selected(['BINARY'], messages);
  try {
    for (let i = 0; i < cases.length; i++) {
      const want = cases[i]![2];
      const literal = want.includes('\x00') ? '~' : '';
      const lines = await c.command(`FETCH ${i + 1} (BINARY.SIZE[2] BINARY.PEEK[2])`);
      assert.equal(lines[0], `* ${i + 1} FETCH (BINARY.SIZE[2] ${want.length} BINARY[2] ${literal}{${want.length}}\r\n${want})`, JSON.stringify(cases[i]![1]));
    }
  } finally {
    c.close();
    await stop();
  }
});

test('RFC 3516 §4.3: an unknown encoding fails BINARY, its partial forms and BINARY.SIZE with NO [UNKNOWN-CTE], and so does the whole message and any multipart holding it', async () => {
  const nested =
    'Subject: nested\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="o"\r\n\r\n--o\r\nContent-Type: text/plain\r\n\r\nfirst\r\n' +
    '--o\r\nContent-Type: multipart/alternative; boundary="i"\r\n\r\n--i\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\naGk=\r\n' +
    '--i\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: x-gzip64\r\n\r\nH4sI\r\n--i--\r\n--o--\r\n';
  const { c, stop } = await selected(['BINARY'], [nested]);
  try {
    const no = 'NO [UNKNOWN-CTE] Unknown Content-Transfer-Encoding x-gzip64';
    let tag = 3;
    for (const item of ['BINARY.PEEK[2.2]', 'BINARY.PEEK[2.2]<0.2>', 'BINARY[2.2]<1.1>', 'BINARY.SIZE[2.2]', 'BINARY.PEEK[2]', 'BINARY.SIZE[2]', 'BINARY.PEEK[]', 'BINARY.SIZE[]']) {
      assert.deepEqual(await c.command(`FETCH 1 ${item}`), [`T${tag++} ${no}`], item);
    }
    // One failing item fails the whole FETCH: nothing of the others is sent.
    assert.deepEqual(await c.command('FETCH 1 (BINARY.PEEK[1] BINARY.PEEK[2.2])'), [`T${tag++} ${no}`]);
    // The decodable parts beside it are unaffected, BINARY.SIZE included.
    assert.deepEqual(await c.command('FETCH 1 (BINARY.SIZE[2.1] BINARY.PEEK[2.1] BINARY.PEEK[1])'), [
      '* 1 FETCH (BINARY.SIZE[2.1] 2 BINARY[2.1] {2}\r\nhi BINARY[1] {5}\r\nfirst)',
      `T${tag++} OK Fetch completed`,
    ]);
    assert.equal((await c.command('NOOP')).at(-1), `T${tag++} OK NOOP completed`);
  } finally {
    c.close();
    await stop();
  }
});

test('BINARY[] says binary at the end of each decoded part\'s header; a malformed encoding value is unknown to BINARY (7bit to BODYSTRUCTURE); "token;" is the token; an empty body stays as it is', async () => {
  const abc = Buffer.from('abc').toString('base64');
  const raw =
    'Subject: forms\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="f"\r\n\r\n' +
    `--f\r\nContent-Transfer-Encoding: base64\r\nContent-Type: text/plain\r\nContent-ID: <x@y>\r\n\r\n${abc}\r\n` +
    `--f\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64; x=y\r\n\r\n${abc}\r\n` +
    '--f\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n\r\n' +
    '--f--\r\n';
  const bad = 'Subject: bad\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: bad value\r\n\r\nhello\r\n';
  const digest =
    'Subject: digest\r\nMIME-Version: 1.0\r\nContent-Type: multipart/digest; boundary="d"\r\n\r\n--d\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\nSubject: in\r\n\r\nbody\r\n--d--\r\n';
  const { c, stop } = await selected(['BINARY'], [raw, bad, digest]);
  try {
    const whole =
      'Subject: forms\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="f"\r\n\r\n' +
      '--f\r\nContent-Type: text/plain\r\nContent-ID: <x@y>\r\nContent-Transfer-Encoding: binary\r\n\r\nabc\r\n' +
      '--f\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: binary\r\n\r\nabc\r\n' +
      '--f\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n\r\n' +
      '--f--\r\n';
    assert.deepEqual(await c.command('FETCH 1 BINARY.PEEK[]'), [`* 1 FETCH (BINARY[] {${whole.length}}\r\n${whole})`, 'T3 OK Fetch completed']);
    assert.deepEqual(await c.command('FETCH 1 (BINARY.PEEK[2] BINARY.SIZE[3])'), ['* 1 FETCH (BINARY[2] {3}\r\nabc BINARY.SIZE[3] 0)', 'T4 OK Fetch completed']);
    assert.deepEqual(await c.command('FETCH 2 BINARY.PEEK[1]'), ['T5 NO [UNKNOWN-CTE] Unknown Content-Transfer-Encoding bad value']);
    assert.match((await c.command('FETCH 2 BODYSTRUCTURE'))[0]!, /"7bit" 7 1 /);
    // a message/rfc822 part (multipart/digest's default) in an unknown encoding fails as a leaf would
    assert.deepEqual(await c.command('FETCH 3 BINARY.PEEK[1]'), ['T7 NO [UNKNOWN-CTE] Unknown Content-Transfer-Encoding x-uuencode']);
    assert.deepEqual(await c.command('FETCH 3 BINARY.SIZE[]'), ['T8 NO [UNKNOWN-CTE] Unknown Content-Transfer-Encoding x-uuencode']);
  } finally {
    c.close();
    await stop();
  }
});

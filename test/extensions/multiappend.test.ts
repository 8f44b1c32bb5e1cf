/**
 * MULTIAPPEND (RFC 3502) over real sockets: the RFC's example with a
 * continuation per synchronizing literal, LITERAL+, APPENDUID with a UID
 * set, the zero-length cancel, and atomicity (QUOTA, APPENDLIMIT, a bad
 * date in a later message): nothing stored, no EXISTS to another session.
 * Python's imaplib drives one through its literal callback.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { RawClient } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

// RFC 3502 §6.3.11 example messages (line breaks as CRLF).
const FIRST = [
  'Date: Mon, 7 Feb 1994 21:52:25 -0800 (PST)',
  'From: Fred Foobar <foobar@Blurdybloop.example.COM>',
  'Subject: afternoon meeting',
  'To: mooch@owatagu.siam.edu.example',
  'Message-Id: <B27397-0100000@Blurdybloop.example.COM>',
  'MIME-Version: 1.0',
  'Content-Type: TEXT/PLAIN; CHARSET=US-ASCII',
  '',
  'Hello Joe, do you think we can meet at 3:30 tomorrow?',
  '',
].join('\r\n');
const SECOND = [
  'Date: Mon, 7 Feb 1994 22:43:04 -0800 (PST)',
  'From: Joe Mooch <mooch@OWATAGU.siam.EDU.example>',
  'Subject: Re: afternoon meeting',
  'To: foobar@blurdybloop.example.com',
  'Message-Id: <a0434793874930@OWATAGU.siam.EDU.example>',
  'MIME-Version: 1.0',
  'Content-Type: TEXT/PLAIN; CHARSET=US-ASCII',
  '',
  '3:30 is fine with me.',
  '',
].join('\r\n');

/** Reads lines until the tagged one; the untagged ones in between are returned too. */
const until = (c: RawClient, tag: string): Promise<string[]> => c.until(tag);

test('RFC 3502 example: two messages, a continuation for each literal, APPENDUID with the UID set', async () => {
  const { server, port } = await startServer({ plugins: ['MULTIAPPEND', 'UIDPLUS'] });
  try {
    server.control.createMailbox('saved-messages');
    const other = await rawSession(port);
    await other.command('SELECT saved-messages');
    const c = await rawSession(port);
    assert.match((await c.command('CAPABILITY'))[0]!, /^\* CAPABILITY IMAP4rev1 UIDPLUS MULTIAPPEND$/);
    c.write(`A003 APPEND saved-messages (\\Seen) {${FIRST.length}}\r\n`);
    assert.match(await c.line(), /^\+ /);
    c.write(`${FIRST} (\\Seen) " 1-Jul-2002 22:35:00 -0700" {${SECOND.length}}\r\n`);
    assert.match(await c.line(), /^\+ /);
    c.write(`${SECOND}\r\n`);
    const uidvalidity = server.control.getMailbox('saved-messages').uidvalidity;
    assert.deepEqual(await until(c, 'A003'), [`A003 OK [APPENDUID ${uidvalidity} 1:2] Append completed`]);
    const stored = server.control.listMessages('saved-messages', { raw: true });
    assert.equal(stored.length, 2);
    assert.deepEqual(stored.map((m) => m.flags), [['\\Seen'], ['\\Seen']]);
    assert.equal(stored[1]!.internaldate, '01-Jul-2002 22:35:00 -0700');
    // The other session learns of both messages in one EXISTS.
    const noop = await other.command('NOOP');
    assert.deepEqual(noop.filter((l) => /EXISTS/.test(l)), ['* 2 EXISTS']);
    c.close();
    other.close();
  } finally {
    await server.stop();
  }
});

test('LITERAL+: the messages follow without continuations; flags and dates per message', async () => {
  const { server, port } = await startServer({ plugins: ['MULTIAPPEND', 'LITERAL+'] });
  try {
    const c = await rawSession(port);
    const a = mail('one');
    const b = mail('two');
    const d = mail('three');
    c.write(`A1 APPEND INBOX {${a.length}+}\r\n${a} (\\Flagged) {${b.length}+}\r\n${b} "17-Jul-1996 02:44:25 -0700" {${d.length}+}\r\n${d}\r\n`);
    assert.deepEqual(await until(c, 'A1'), ['A1 OK Append completed']);
    const stored = server.control.listMessages('INBOX');
    assert.deepEqual(stored.map((m) => m.flags), [[], ['\\Flagged'], []]);
    assert.equal(stored[2]!.internaldate, '17-Jul-1996 02:44:25 -0700');
    c.close();
  } finally {
    await server.stop();
  }
});

test('without MULTIAPPEND a second message is BAD and nothing is appended', async () => {
  const { server, port } = await startServer({ plugins: ['LITERAL+'] });
  try {
    const c = await rawSession(port);
    const a = mail('one');
    c.write(`A1 APPEND INBOX {${a.length}+}\r\n${a} {${a.length}+}\r\n${a}\r\n`);
    assert.match((await until(c, 'A1'))[0]!, /^A1 BAD /);
    assert.equal(server.control.listMessages('INBOX').length, 0);
    assert.deepEqual(await c.command('NOOP'), ['T2 OK NOOP completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 3502: a zero-length message literal is NO and cancels the whole APPEND', async () => {
  const { server, port } = await startServer({ plugins: ['MULTIAPPEND'] });
  try {
    const c = await rawSession(port);
    const a = mail('kept back');
    c.write(`A1 APPEND INBOX {${a.length}}\r\n`);
    assert.match(await c.line(), /^\+ /);
    c.write(`${a} {0}\r\n`);
    // The empty literal is accepted, then the client ends the command with an empty line.
    assert.match(await c.line(), /^\+ /);
    c.write('\r\n');
    assert.match((await until(c, 'A1'))[0]!, /^A1 NO /);
    assert.equal(server.control.listMessages('INBOX').length, 0);
    // A single empty message is refused too.
    c.write('A2 APPEND INBOX {0}\r\n');
    assert.match(await c.line(), /^\+ /);
    c.write('\r\n');
    assert.match((await until(c, 'A2'))[0]!, /^A2 NO /);
    assert.equal(server.control.listMessages('INBOX').length, 0);
    c.close();
  } finally {
    await server.stop();
  }
});

test('atomic under QUOTA: the 2nd message over the limit stores nothing and sends no EXISTS elsewhere', async () => {
  const { server, port } = await startServer({ plugins: ['MULTIAPPEND', 'QUOTA', 'LITERAL+'], pluginOptions: { QUOTA: { MESSAGE: 2 } } });
  try {
    server.control.addMessage('INBOX', { raw: mail('existing') });
    const other = await rawSession(port);
    await other.command('SELECT INBOX');
    const appends: number[] = [];
    server.store.onChange((change) => {
      if (change.kind === 'append') appends.push(change.messages.length);
    });
    const c = await rawSession(port);
    const a = mail('fits');
    const b = mail('one too many');
    c.write(`A1 APPEND INBOX {${a.length}+}\r\n${a} {${b.length}+}\r\n${b}\r\n`);
    assert.match((await until(c, 'A1'))[0]!, /^A1 NO \[OVERQUOTA\] /);
    assert.equal(server.control.listMessages('INBOX').length, 1);
    assert.deepEqual(appends, []);
    assert.deepEqual(await other.command('NOOP'), ['T3 OK NOOP completed']);
    // One message still fits.
    c.write(`A2 APPEND INBOX {${a.length}+}\r\n${a}\r\n`);
    assert.match((await until(c, 'A2'))[0]!, /^A2 OK /);
    c.close();
    other.close();
  } finally {
    await server.stop();
  }
});

test('atomic under QUOTA STORAGE: messages that fit one by one but not together are refused', async () => {
  const { server, port } = await startServer({ plugins: ['MULTIAPPEND', 'QUOTA', 'LITERAL+'], pluginOptions: { QUOTA: { STORAGE: 1 } } });
  try {
    const c = await rawSession(port);
    const a = mail('half', 'x'.repeat(500));
    assert.ok(a.length < 1024 && 2 * a.length > 1024);
    c.write(`A1 APPEND INBOX {${a.length}+}\r\n${a} {${a.length}+}\r\n${a}\r\n`);
    assert.match((await until(c, 'A1'))[0]!, /^A1 NO \[OVERQUOTA\] /);
    assert.equal(server.control.listMessages('INBOX').length, 0);
    c.close();
  } finally {
    await server.stop();
  }
});

test('atomic under APPENDLIMIT: the 2nd literal refused before its bytes; the 1st is not stored', async () => {
  const { server, port } = await startServer({ plugins: ['MULTIAPPEND', 'APPENDLIMIT'], pluginOptions: { APPENDLIMIT: { limit: 300 } } });
  try {
    const other = await rawSession(port);
    await other.command('SELECT INBOX');
    const c = await rawSession(port);
    const a = mail('small');
    c.write(`A1 APPEND INBOX {${a.length}}\r\n`);
    assert.match(await c.line(), /^\+ /);
    c.write(`${a} {301}\r\n`);
    // No continuation for the too-large literal: the tagged NO instead.
    assert.match(await c.line(), /^A1 NO \[TOOBIG\] /);
    assert.equal(server.control.listMessages('INBOX').length, 0);
    assert.deepEqual(await other.command('NOOP'), ['T3 OK NOOP completed']);
    assert.deepEqual(await c.command('NOOP'), ['T2 OK NOOP completed']);
    c.close();
    other.close();
  } finally {
    await server.stop();
  }
});

test('a malformed date or flag in a later message is BAD and nothing is appended', async () => {
  const { server, port } = await startServer({ plugins: ['MULTIAPPEND', 'LITERAL+'] });
  try {
    const c = await rawSession(port);
    const a = mail('one');
    c.write(`A1 APPEND INBOX {${a.length}+}\r\n${a} "31-Feb-2020 25:00:00 +0000" {${a.length}+}\r\n${a}\r\n`);
    assert.match((await until(c, 'A1'))[0]!, /^A1 BAD /);
    c.write(`A2 APPEND INBOX {${a.length}+}\r\n${a} (\\Recent) {${a.length}+}\r\n${a}\r\n`);
    assert.match((await until(c, 'A2'))[0]!, /^A2 BAD /);
    // A message without its literal.
    c.write(`A3 APPEND INBOX {${a.length}+}\r\n${a} (\\Seen)\r\n`);
    assert.match((await until(c, 'A3'))[0]!, /^A3 BAD /);
    assert.equal(server.control.listMessages('INBOX').length, 0);
    c.close();
  } finally {
    await server.stop();
  }
});

test('a missing target mailbox is NO [TRYCREATE] after all literals were read', async () => {
  const { server, port } = await startServer({ plugins: ['MULTIAPPEND', 'LITERAL+'] });
  try {
    const c = await rawSession(port);
    const a = mail('one');
    c.write(`A1 APPEND Nowhere {${a.length}+}\r\n${a} {${a.length}+}\r\n${a}\r\n`);
    assert.match((await until(c, 'A1'))[0]!, /^A1 NO \[TRYCREATE\] /);
    assert.deepEqual(await c.command('NOOP'), ['T2 OK NOOP completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

const PYTHON = process.env.PYTHON ?? 'python3';
const pythonMissing = spawnSync(PYTHON, ['--version']).status !== 0 && !process.env.CI ? `${PYTHON} not installed` : false;

// imaplib sends one literal per continuation through a callable `literal`; each answer
// ends with the next message's marker, so one APPEND carries several messages.
const IMAPLIB_MULTIAPPEND = `
import imaplib, sys
M = imaplib.IMAP4(sys.argv[1], int(sys.argv[2]))
M.login('testuser', 'testpass')
assert 'MULTIAPPEND' in M.capabilities, M.capabilities
msgs = [m.encode() for m in sys.argv[3:]]
class Messages:
    sent = 0
    # imaplib takes a bound method as a literal source, called at every continuation.
    def next(self, _continuation):
        data = msgs[self.sent]
        self.sent += 1
        if self.sent < len(msgs):
            data += b' (\\\\Seen) {%d}' % len(msgs[self.sent])
        return data
M.literal = Messages().next
typ, data = M._simple_command('APPEND', 'INBOX', '{%d}' % len(msgs[0]))
print(typ, M.untagged_responses.get('APPENDUID', [b''])[0].decode() if 'APPENDUID' in M.untagged_responses else '')
M.logout()
`;

test('Python imaplib appends three messages in one MULTIAPPEND', { skip: pythonMissing, timeout: 20_000 }, async () => {
  const { server, port } = await startServer({ plugins: 'all' });
  try {
    const child = spawn(PYTHON, ['-c', IMAPLIB_MULTIAPPEND, '127.0.0.1', String(port), mail('py1'), mail('py2'), mail('py3')]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, err);
    const uidvalidity = server.control.getMailbox('INBOX').uidvalidity;
    assert.equal(out.trim(), `OK ${uidvalidity} 1:3`);
    const stored = server.control.listMessages('INBOX', { raw: true });
    assert.deepEqual(stored.map((m) => m.flags), [[], ['\\Seen'], ['\\Seen']]);
    assert.match(Buffer.from(stored[2]!.raw!, 'base64').toString(), /Subject: py3/);
  } finally {
    await server.stop();
  }
});

test('with BINARY: literal8 messages in a MULTIAPPEND, each through the appendData rewrite', async () => {
  const { server, port } = await startServer({ plugins: ['MULTIAPPEND', 'BINARY', 'LITERAL+'] });
  try {
    const c = await rawSession(port);
    const text = mail('text');
    const nul = 'Subject: nul\r\nContent-Type: application/octet-stream\r\n\r\na\0b\r\n';
    c.write(`A1 APPEND INBOX ~{${nul.length}+}\r\n${nul} {${text.length}+}\r\n${text}\r\n`);
    assert.deepEqual(await until(c, 'A1'), ['A1 OK Append completed']);
    const raws = server.control.listMessages('INBOX', { raw: true }).map((m) => Buffer.from(m.raw!, 'base64').toString('latin1'));
    assert.equal(raws.length, 2);
    // RFC 3516 §4.4: the NUL-holding part is kept losslessly, not as raw NUL.
    assert.ok(!raws[0]!.includes('\0'));
    assert.equal(raws[1], text);
    c.close();
  } finally {
    await server.stop();
  }
});

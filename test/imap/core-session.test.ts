/**
 * Issue 9, session side: what a strict, state-tracking client checks.
 * Large responses are built without argument spreading, a new keyword is
 * announced in FLAGS before the FETCH that carries it, nothing but the
 * tagged OK follows `* BYE`, and a disconnected session leaves the
 * listing at once.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { afterEach, describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

let server: Server | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 30));

describe('responses over unbounded lists', () => {
  test('SEARCH ALL over 150,000 messages answers every number in one SEARCH line', async () => {
    const count = 150_000;
    const started = await startServer({ storage: { INBOX: {} } });
    server = started.server;
    const raw = 'Subject: x\r\n\r\nx\r\n';
    for (let i = 0; i < count; i++) server.control.addMessage('INBOX', { raw });
    const c = await rawSession(started.port);
    await c.command('SELECT INBOX', 20_000);
    const lines = await c.command('UID SEARCH ALL', 20_000);
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, /^T\d+ OK /);
    const numbers = lines[0]!.split(' ').slice(2).map(Number);
    assert.equal(lines[0]!.slice(0, 9), '* SEARCH ');
    assert.equal(numbers.length, count);
    assert.ok(numbers.every((n, i) => n === i + 1), 'UIDs 1..n in order');
    c.close();
  });
});

describe('keywords announced in FLAGS (RFC 3501 §7.2.6)', () => {
  const base = '* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft';

  test('a keyword new to the mailbox: FLAGS and PERMANENTFLAGS before the FETCH, in the storing session too', async () => {
    const started = await startServer({ storage: { INBOX: { messages: [mail('one'), mail('two')] } } });
    server = started.server;
    const a = await rawSession(started.port);
    const b = await rawSession(started.port);
    const selectA = await a.command('SELECT INBOX');
    assert.ok(selectA.includes(`${base})`), selectA.join('\n'));
    await b.command('SELECT INBOX');
    assert.deepEqual(await a.command('STORE 1 +FLAGS ($Forwarded)'), [
      `${base} $Forwarded)`,
      '* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen $Forwarded \\*)] Flags permitted.',
      '* 1 FETCH (FLAGS ($Forwarded))',
      'T3 OK Store completed',
    ]);
    assert.deepEqual(await b.command('NOOP'), [
      `${base} $Forwarded)`,
      '* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen $Forwarded \\*)] Flags permitted.',
      '* 1 FETCH (FLAGS ($Forwarded))',
      'T3 OK NOOP completed',
    ]);
    // Known now: a second message with it needs no new FLAGS.
    assert.deepEqual(await a.command('STORE 2 +FLAGS.SILENT ($Forwarded)'), ['T4 OK Store completed']);
    assert.deepEqual(await b.command('NOOP'), ['* 2 FETCH (FLAGS ($Forwarded))', 'T4 OK NOOP completed']);
    a.close();
    b.close();
  });

  test('.SILENT still announces the new keyword; a control-API change and a new message with a keyword announce it before EXISTS', async () => {
    const started = await startServer({ storage: { INBOX: { messages: [mail('one')] } } });
    server = started.server;
    const a = await rawSession(started.port);
    await a.command('EXAMINE INBOX');
    const b = await rawSession(started.port);
    await b.command('SELECT INBOX');
    assert.deepEqual(await b.command('STORE 1 +FLAGS.SILENT (Work)'), [
      `${base} Work)`,
      '* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen Work \\*)] Flags permitted.',
      'T3 OK Store completed',
    ]);
    // A read-only session learns the keyword too, with an empty PERMANENTFLAGS.
    assert.deepEqual(await a.command('NOOP'), [
      `${base} Work)`,
      '* OK [PERMANENTFLAGS ()] Read-only mailbox.',
      '* 1 FETCH (FLAGS (Work))',
      'T3 OK NOOP completed',
    ]);
    server.control.addMessage('INBOX', { raw: mail('two'), flags: ['Later'] });
    await settle();
    assert.deepEqual(await b.command('NOOP'), [
      `${base} Work Later)`,
      '* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen Work Later \\*)] Flags permitted.',
      '* 2 EXISTS',
      '* 1 RECENT',
      'T4 OK NOOP completed',
    ]);
    a.close();
    b.close();
  });
});

describe('LOGOUT', () => {
  test('nothing but the tagged OK follows * BYE, though another session changed the mailbox', async () => {
    const started = await startServer({ storage: { INBOX: { messages: [mail('one')] } } });
    server = started.server;
    const a = await rawSession(started.port);
    await a.command('SELECT INBOX');
    server.control.addMessage('INBOX', { raw: mail('two') });
    server.control.setFlags('INBOX', { uids: [1], flags: ['\\Flagged'] });
    await settle();
    assert.deepEqual(await a.command('LOGOUT'), ['* BYE Logging out', 'T3 OK Logout completed']);
    await a.closedByServer();
  });

  test('the server closes the connection after LOGOUT even when the client keeps its side open', async () => {
    const started = await startServer({});
    server = started.server;
    const closes: number[] = [];
    server.on('session', (e) => {
      if (e.type === 'close') closes.push(e.session.session);
    });
    // A client socket that stays open after the server's FIN (allowHalfOpen).
    const socket = net.connect({ port: started.port, host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    const ended = new Promise<void>((r) => socket.once('end', () => r()));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.write('a1 LOGOUT\r\n');
    await ended;
    assert.match(received, /\* BYE .*\r\na1 OK .*\r\n$/);
    // The server must not wait for our FIN: its session is closed although we never ended.
    for (let i = 0; i < 150 && closes.length === 0; i++) await settle();
    assert.equal(closes.length, 1, 'close event while the client still holds its socket open');
    assert.deepEqual(server.control.sessions(), []);
    socket.destroy();
    await closed;
  });
});

describe('disconnect through the control API', () => {
  test('the session is gone from listSessions as soon as disconnect returns', async () => {
    const started = await startServer({});
    server = started.server;
    const a = await rawSession(started.port);
    const [info] = server.control.sessions();
    assert.ok(info);
    server.control.disconnect(info.session);
    assert.deepEqual(server.control.sessions(), []);
    assert.equal(await a.line(), '* BYE Disconnected by the server');
    await a.closedByServer();
  });
});

describe('NUL in served literals', () => {
  test('a message holding NUL is served as a literal with 0x80 in its place (CHAR8 has no NUL; Dovecot does the same)', async () => {
    const raw = Buffer.from('Subject: nul\r\n\r\na\0b\r\n', 'latin1');
    const started = await startServer({ storage: { INBOX: {} } });
    server = started.server;
    server.control.addMessage('INBOX', { raw: raw.toString('base64'), encoding: 'base64' });
    const c = await rawSession(started.port);
    await c.command('SELECT INBOX');
    const lines = await c.command('FETCH 1 BODY.PEEK[TEXT]');
    assert.equal(lines[0], '* 1 FETCH (BODY[TEXT] {5}\r\na\x80b\r\n)');
    // The store keeps the bytes as they came.
    const stored = server.control.getMessage('INBOX', 1) as { raw: string; encoding?: string };
    assert.deepEqual(Buffer.from(stored.raw, stored.encoding === 'base64' ? 'base64' : 'latin1'), raw);
    c.close();
  });
});

describe('response text (RFC 3501 §9 resp-text is 7-bit TEXT-CHAR)', () => {
  test('an echoed 8-bit charset name goes out as ?, and text that ends like a literal marker gets a full stop', async () => {
    const started = await startServer({ storage: { INBOX: { messages: [mail('one')] } } });
    server = started.server;
    const c = await rawSession(started.port);
    await c.command('SELECT INBOX');
    c.write(Buffer.concat([Buffer.from('A9 SEARCH CHARSET {8+}\r\nX-BOG'), Buffer.from([0xc3, 0x9a]), Buffer.from('S ALL\r\n')]));
    const line = await c.line();
    assert.match(line, /^A9 NO \[BADCHARSET \(US-ASCII UTF-8\)\] Unsupported charset X-BOG\?+S$/);
    assert.deepEqual(await c.command('SELECT "x{3}"'), ["T3 NO [NONEXISTENT] Mailbox doesn't exist: x{3}."]);
    c.close();
  });
});

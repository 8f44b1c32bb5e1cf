/**
 * The POP3 listener's wiring and limits: the command line and the
 * environment, the timers (login timeout, autologout), the connection
 * caps, a graceful shutdown, UTF8/LANG (RFC 6856), transcripts, provider
 * behaviour (pop3.behaviour), and option errors.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createServer } from '../../src/index.js';
import { spawn } from 'node:child_process';
import { CLI, startCli } from '../helpers/cli.js';
import { loggedIn, startPop3, WireClient } from './pop3-test.js';

test('rookery --pop3-port (and ROOKERY_POP3_STLS) starts the listener: reported at start-up and in --ready-json', { timeout: 20_000 }, async () => {
  const prose = await startCli(['--port', '0', '--pop3-port', '0'], { ROOKERY_POP3_STLS: 'true' });
  try {
    await new Promise((r) => setTimeout(r, 200));
    const m = /POP3 listening on 127\.0\.0\.1:(\d+) \(STLS offered\)/.exec(prose.output());
    assert.ok(m, prose.output());
    const c = await WireClient.connect(Number(m[1]));
    assert.match((await c.line())!, /^\+OK Rookery POP3 server ready </);
    await c.command('CAPA');
    assert.match((await c.multi()).toString(), /\r\nSTLS\r\n/);
    c.close();
  } finally {
    prose.child.kill('SIGTERM');
  }
  const child = spawn(process.execPath, [CLI, '--port', '0', '--pop3-port', '0', '--pop3-secure', '--ready-json']);
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.once('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    const ready = JSON.parse(line) as { pop3: { host: string; port: number; secure: boolean; stls: boolean } };
    assert.deepEqual({ ...ready.pop3, port: 0 }, { host: '127.0.0.1', port: 0, secure: true, stls: false });
    assert.ok(ready.pop3.port > 0);
  } finally {
    child.kill('SIGTERM');
  }
});

test('no login within loginTimeout ends the connection; pop3.idleTimeout autologs out without deleting; maxUnauthenticated refuses with -ERR [SYS/TEMP]', { timeout: 20_000 }, async () => {
  const { server, pop3 } = await startPop3({ loginTimeout: 200, maxUnauthenticated: 1, storage: { INBOX: { messages: ['A: 1\r\n\r\n'] } } }, { idleTimeout: 300 });
  try {
    const waiting = await WireClient.connect(pop3);
    await waiting.line();
    const refused = await WireClient.connect(pop3);
    assert.equal(await refused.line(), '-ERR [SYS/TEMP] Too many connections waiting to log in (limit 1)');
    await refused.closed();
    assert.equal(await waiting.line(), '-ERR No login within 0.2 seconds');
    await waiting.closed();
    waiting.close();
    await server.waitFor('session', (e) => e.type === 'close', { since: 0 });
    const c = await loggedIn(pop3);
    await c.command('DELE 1');
    assert.equal(await c.line(2000), '-ERR Autologout: idle for 300 ms');
    await c.closed();
    assert.equal(server.control.listMessages('INBOX').length, 1, 'an autologout is not UPDATE');
  } finally {
    await server.stop();
  }
});

test('a graceful stop tells a POP3 client -ERR [SYS/TEMP] and deletes nothing; its transcript holds both directions', { timeout: 20_000 }, async () => {
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: ['A: 1\r\n\r\n'] } } });
  const c = await loggedIn(pop3);
  await c.command('DELE 1');
  const id = server.control.sessions()[0]!.session;
  const stopped = server.shutdown(true);
  assert.equal(await c.line(), '-ERR [SYS/TEMP] Server shutting down');
  await c.closed();
  await stopped;
  assert.equal(server.control.listMessages('INBOX').length, 1);
  const text = server.transcript(id)!.text();
  assert.match(text, /DELE 1/);
  assert.match(text, /\+OK Message 1 deleted/);
});

test('UTF8 (RFC 6856): accepted in AUTHORIZATION, shown in enabled, refused after login; LANG lists English', async () => {
  const { server, pop3 } = await startPop3({ users: { 'jörg': { password: 'pässword' } } });
  try {
    const c = await WireClient.connect(pop3);
    await c.line();
    assert.equal(await c.command('UTF8'), '+OK UTF8 enabled');
    assert.equal(await c.command('LANG'), '+OK Language listing follows');
    assert.equal((await c.multi()).toString(), 'en English\r\n.\r\n');
    assert.equal(await c.command('LANG *'), '+OK en Language is English');
    assert.match((await c.command('LANG fr'))!, /^-ERR /);
    c.send(Buffer.from('USER jörg\r\n', 'utf8'));
    assert.equal(await c.line(), '+OK Send PASS');
    c.send(Buffer.from('PASS pässword\r\n', 'utf8'));
    assert.match((await c.line())!, /^\+OK Logged in/);
    assert.deepEqual(server.control.sessions()[0]!.enabled, ['UTF8']);
    assert.match((await c.command('UTF8'))!, /^-ERR /);
    c.close();
  } finally {
    await server.stop();
  }
});

test('pop3.behaviour: a user prefix is stripped before the check; deleteAction keep, read and archive at QUIT', async () => {
  for (const [action, check] of [
    ['keep', (s: ReturnType<typeof createServer>) => assert.equal(s.control.listMessages('INBOX').length, 2)],
    ['read', (s: ReturnType<typeof createServer>) => assert.deepEqual(s.control.listMessages('INBOX').map((m) => m.flags), [['\\Seen'], []])],
    ['archive', (s: ReturnType<typeof createServer>) => {
      assert.deepEqual(s.control.listMessages('INBOX').map((m) => m.uid), [2]);
      assert.equal(s.control.listMessages('Old').length, 1);
    }],
  ] as const) {
    const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: ['A: 1\r\n\r\n', 'A: 2\r\n\r\n'] } } }, { behaviour: { userPrefixes: ['recent:'], deleteAction: action, archiveMailbox: 'Old' } });
    try {
      const c = await loggedIn(pop3, 'recent:testuser');
      assert.equal(server.control.sessions()[0]!.user, 'testuser');
      await c.command('DELE 1');
      assert.match((await c.command('QUIT'))!, /^\+OK /);
      await c.closed();
      check(server);
    } finally {
      await server.stop();
    }
  }
});

test('bad pop3 options are refused with what is expected', () => {
  assert.throws(() => createServer({ pop3: { port: 0, secure: true, stls: true } }), /pop3\.stls: cannot go with pop3\.secure/);
  assert.throws(() => createServer({ pop3: { port: 0, expire: -1 } as never }), /pop3\.expire: expected "NEVER" or a number of days/);
  assert.throws(() => createServer({ pop3: { port: 0, maxLineLength: 100 } }), /pop3\.maxLineLength: expected an integer >= 255/);
  assert.throws(() => createServer({ pop3: { port: 0, behaviour: { deleteAction: 'shred' } } as never }), /pop3\.behaviour\.deleteAction: expected one of delete, keep, read, archive/);
  assert.throws(() => createServer({ pop3: { prot: 110 } as never }), /pop3\.prot/);
});

test('POP3 transcripts keep PASS passwords and AUTH exchanges out (***); the rest byte for byte', async () => {
  const { server, pop3 } = await startPop3();
  try {
    const c = await WireClient.connect(pop3);
    await c.line();
    await c.command('USER testuser');
    await c.command('PASS wrong-secret');
    c.send('AUTH PLAIN\r\n');
    assert.equal(await c.line(), '+ ');
    assert.match((await c.command(Buffer.from('\0testuser\0testpass').toString('base64')))!, /^\+OK /);
    assert.equal(await c.command('STAT'), '+OK 0 0');
    const id = server.control.sessions()[0]!.session;
    const text = server.transcript(id)!.text();
    assert.ok(!text.includes('wrong-secret') && !text.includes(Buffer.from('\0testuser\0testpass').toString('base64')), text);
    assert.match(text, /PASS \*\*\*/);
    assert.match(text, /USER testuser/);
    assert.match(text, /STAT/);
    c.close();
  } finally {
    await server.stop();
  }
});

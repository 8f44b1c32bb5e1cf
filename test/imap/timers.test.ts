/**
 * Server-clock timers (issue 14): autologout per state, the longest IDLE and
 * a scheduled BYE. With a pinned `now` nothing fires until the clock is moved
 * (`advanceClock`, POST /v1/clock), and then exactly at the deadline.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { execFile, spawnSync } from 'node:child_process';
import { ImapFlow } from 'imapflow';
import { createServer } from '../../src/index.js';
import { rawSession, startServer } from '../helpers/server.js';

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
const PYTHON = process.env.PYTHON ?? 'python3';
const noPython = spawnSync(PYTHON, ['--version']).status === 0 || process.env.CI ? false : `${PYTHON} not installed`;
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('autologout on a pinned clock: nothing at deadline - 1 ms, BYE at the deadline', async () => {
  const { server, port } = await startServer({ now: T0, autologout: { authenticated: 60_000 } });
  const raw = await rawSession(port);
  try {
    server.advanceClock(59_999);
    await pause(100);
    assert.equal(raw.pending(), '');
    assert.equal(server.control.sessions().length, 1);
    server.control.advanceClock({ advance: 1 });
    assert.equal(await raw.line(), '* BYE Autologout; idle for too long');
    await raw.closedByServer();
  } finally {
    raw.close();
    await server.stop();
  }
});

test('autologout counts from the client\u2019s last input and follows the state', async () => {
  const { server, port } = await startServer({ now: T0, autologout: { notAuthenticated: 10_000, authenticated: 0, selected: 30_000, text: 'Disconnected for inactivity.' } });
  const raw = await rawSession(port, false);
  try {
    server.advanceClock(9_000);
    await raw.command('LOGIN testuser testpass');
    // Authenticated has no limit.
    server.advanceClock(1_000_000);
    await pause(50);
    assert.equal(raw.pending(), '');
    await raw.command('SELECT INBOX');
    server.advanceClock(20_000);
    await raw.command('NOOP'); // input: counts from here
    server.advanceClock(29_999);
    await pause(50);
    assert.equal(raw.pending(), '');
    server.advanceClock(1);
    assert.equal(await raw.line(), '* BYE Disconnected for inactivity.');
  } finally {
    raw.close();
    await server.stop();
  }
});

test('autologout in real time with the default clock; imapflow sees close and a reconnect works', { timeout: 20_000 }, async () => {
  const { server, port } = await startServer({ autologout: 1000 });
  const make = (): ImapFlow => new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
  const first = make();
  first.on('error', () => undefined);
  try {
    await first.connect();
    const closed = new Promise<void>((resolve) => first.once('close', () => resolve()));
    const t0 = Date.now();
    await closed;
    assert.ok(Date.now() - t0 >= 900);
    assert.equal(first.usable, false);
    // The recipe: a client that reconnects after the autologout BYE.
    const second = make();
    await second.connect();
    const status = await second.status('INBOX', { messages: true });
    assert.equal((status as { messages?: number }).messages, 0);
    await second.logout();
  } finally {
    first.close();
    await server.stop();
  }
});

test('autologout: Python imaplib\u2019s next command raises IMAP4.abort with the BYE text', { skip: noPython, timeout: 20_000 }, async () => {
  const { server, port } = await startServer({ now: T0, autologout: { authenticated: 600_000 } });
  const loggedIn = server.waitFor('session', { type: 'login' }, { timeout: 10_000 });
  const script = `import imaplib, sys
M = imaplib.IMAP4('127.0.0.1', ${port})
M.login('testuser', 'testpass')
print('in', flush=True)
sys.stdin.readline()
try:
    M.noop()
    print('answered')
except imaplib.IMAP4.abort as e:
    print('abort', e)`;
  const child = execFile(PYTHON, ['-c', script], { timeout: 15_000 });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await loggedIn;
    const closed = server.waitFor('session', { type: 'close' }, { timeout: 5000 });
    server.advanceClock(600_000);
    await closed;
    child.stdin!.end('go\n');
    await exited;
    assert.match(out, /^in\nabort .*Autologout; idle for too long/m);
  } finally {
    child.kill();
    await server.stop();
  }
});

test('maxIdle: an IDLE longer than the limit gets BYE at the server-clock deadline; autologout.idle applies inside IDLE', async () => {
  const { server, port } = await startServer({ now: T0, plugins: ['IDLE'], maxIdle: { ms: 29 * 60_000, text: 'IDLE timeout' }, autologout: { selected: 60_000, idle: 40 * 60_000 } });
  const raw = await rawSession(port);
  try {
    await raw.command('SELECT INBOX');
    raw.write('i1 IDLE\r\n');
    assert.equal(await raw.line(), '+ idling');
    // The selected limit (1 min) does not apply inside IDLE; its own (40 min) and maxIdle (29 min) do.
    server.advanceClock(28 * 60_000);
    await pause(50);
    assert.equal(raw.pending(), '');
    server.advanceClock(60_000);
    assert.equal(await raw.line(), '* BYE IDLE timeout');
  } finally {
    raw.close();
    await server.stop();
  }
});

test('maxIdle: imapflow, idling on its own, is told BYE and closes', { timeout: 20_000 }, async () => {
  const { server, port } = await startServer({ plugins: ['IDLE'], maxIdle: 400 });
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.mailboxOpen('INBOX');
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    const idling = server.waitFor('session', { type: 'waiting', command: 'IDLE' }, { timeout: 5000 });
    void client.idle().catch(() => undefined);
    await idling;
    await closed;
    assert.equal(client.usable, false);
  } finally {
    client.close();
    await server.stop();
  }
});

test('byeAt: every session gets BYE when the server clock reaches the time (REST POST /v1/clock moves it)', async () => {
  const server = createServer({ port: 0, now: T0, byeAt: { at: '2030-01-01T13:00:00Z', text: 'Maintenance window' }, rest: { port: 0 } });
  const { imap, rest } = await server.start();
  const a = await rawSession(imap.port);
  const b = await rawSession(imap.port, false);
  const base = `http://127.0.0.1:${rest!.port}`;
  try {
    const clock = (await (await fetch(`${base}/v1/clock`)).json()) as { now: number; iso: string };
    assert.deepEqual(clock, { now: T0, iso: '2030-01-01T12:00:00.000Z' });
    const moved = await fetch(`${base}/v1/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance: 3_599_999 }) });
    assert.equal(moved.status, 200);
    assert.equal(((await moved.json()) as { now: number }).now, T0 + 3_599_999);
    await pause(50);
    assert.equal(a.pending() + b.pending(), '');
    await fetch(`${base}/v1/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance: 1 }) });
    assert.equal(await a.line(), '* BYE Maintenance window');
    assert.equal(await b.line(), '* BYE Maintenance window');
    // A new connection after the time is told at once.
    const c = await rawSession(imap.port, false).catch(() => null);
    assert.ok(c === null || (await c.line()) === '* BYE Maintenance window');
    c?.close();

    const bad = await fetch(`${base}/v1/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance: -5 }) });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: { message: string } }).error.message, /advance/);
  } finally {
    a.close();
    b.close();
    await server.stop();
  }
});

test('an XOAUTH2 token\u2019s sessionTimeout follows advanceClock too: BYE without waiting for a command', { timeout: 20_000 }, async () => {
  const { server, port } = await startServer({
    now: T0,
    plugins: ['AUTH=XOAUTH2'],
    users: { testuser: { xoauth2: { accessToken: 'tok', sessionTimeout: 3_600_000 } } },
  });
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', accessToken: 'tok' }, logger: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    server.advanceClock(3_599_999);
    await pause(50);
    assert.equal(client.usable, true);
    const bye = server.waitFor('session', { type: 'close' }, { timeout: 5000 });
    server.advanceClock(1);
    await closed;
    await bye;
  } finally {
    client.close();
    await server.stop();
  }
});

test('POST /v1/clock/bye schedules BYE at run time, to one session or every one; bad bodies name the field', async () => {
  const server = createServer({ port: 0, now: T0, rest: { port: 0 } });
  const { imap, rest } = await server.start();
  const a = await rawSession(imap.port);
  const b = await rawSession(imap.port);
  const base = `http://127.0.0.1:${rest!.port}`;
  const post = (body: unknown): Promise<Response> => fetch(`${base}/v1/clock/bye`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  try {
    const one = await post({ in: 60_000, text: 'Only you', session: 2 });
    assert.equal(one.status, 201);
    assert.deepEqual(await one.json(), { at: T0 + 60_000, iso: '2030-01-01T12:01:00.000Z', text: 'Only you', session: 2 });
    assert.equal((await post({ at: '2030-01-01T12:02:00Z', text: 'Everyone' })).status, 201);
    server.advanceClock(60_000);
    assert.equal(await b.line(), '* BYE Only you');
    await pause(50);
    assert.equal(a.pending(), '');
    server.advanceClock(60_000);
    assert.equal(await a.line(), '* BYE Everyone');
    for (const [body, field] of [
      [{ at: 'tomorrow' }, 'at'],
      [{ in: -1 }, 'in'],
      [{ in: 5, at: T0 }, 'at'],
      [{ in: 5, text: 'a\r\nb' }, 'text'],
      [{ in: 5, session: 0 }, 'session'],
    ] as const) {
      const res = await post(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(((await res.json()) as { error: { message: string } }).error.message, new RegExp(`^${field}: `));
    }
    assert.equal((await post({ in: 5, session: 99 })).status, 404);
  } finally {
    a.close();
    b.close();
    await server.stop();
  }
});

test('timer options are validated with the field named', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ autologout: -1 }, /^autologout: expected/m],
    [{ autologout: { selcted: 5 } }, /^autologout\.selcted: unknown key/m],
    [{ autologout: { idle: 'x' } }, /^autologout\.idle: expected/m],
    [{ maxIdle: { ms: 0 } }, /^maxIdle\.ms: expected/m],
    [{ byeAt: '2030-01-01 12:00' }, /^byeAt: expected/m],
    [{ byeAt: { at: 'soon' } }, /^byeAt\.at: expected/m],
    [{ byeAt: { at: T0, text: 'a\r\nb' } }, /^byeAt\.text: expected/m],
    [{ faults: { bandwidth: -3 } }, /^faults\.bandwidth: expected/m],
    [{ faults: { stall: true } }, /^faults\.stall: unknown key/m],
  ];
  for (const [options, message] of cases) assert.throws(() => createServer(options), (err: Error) => message.test(err.message), JSON.stringify(options));
});

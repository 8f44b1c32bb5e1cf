/**
 * Issue 31, item 1: a flood of one port must not take the descriptors the
 * other port needs to answer. The server runs in a child process whose
 * descriptor limit is lowered to 256 (`ulimit -n 256`); the caps it starts
 * with (IMAP 5000, REST 1000 by default) are far above that. Flooded with
 * half-open REST requests, IMAP still greets, logs in and refuses its own
 * flood with BYE, and REST refuses its extra connections with 503; flooded
 * over IMAP, REST still answers.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connectionCaps, descriptorMargin } from '../../src/session/descriptors.js';

const LIMIT = 256;
const FLOOD = 400;

let child: ChildProcess;
let ports: { imap: number; rest: number };

before(async () => {
  const script = fileURLToPath(new URL('./descriptor-server.js', import.meta.url));
  child = spawn('bash', ['-c', `ulimit -n ${LIMIT}; exec "$0" "$1" "$2"`, process.execPath, script, JSON.stringify({})], { stdio: ['pipe', 'pipe', 'inherit'] });
  ports = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('\n')) resolve(JSON.parse(text.slice(0, text.indexOf('\n'))) as { imap: number; rest: number });
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
  });
});

after(() => {
  child.stdin!.end();
  child.kill();
});

function connect(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    socket.once('connect', () => resolve(socket));
    socket.once('error', () => resolve(socket));
  });
}

/** What the server sent on `socket` within `ms` (or until it closed). */
function received(socket: net.Socket, ms: number, until?: RegExp): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const done = (): void => {
      clearTimeout(timer);
      resolve(text);
    };
    const timer = setTimeout(done, ms);
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (until?.test(text)) done();
    });
    socket.once('close', done);
  });
}

/** Opens `n` connections at once, each sending `first`, and keeps them; the answers seen within `ms` are counted by `pattern`. */
async function flood(port: number, n: number, first: string, pattern: RegExp, ms = 1500): Promise<{ sockets: net.Socket[]; texts: string[]; matched: number; silent: number }> {
  const sockets = await Promise.all(Array.from({ length: n }, () => connect(port)));
  const seen = sockets.map((s) => {
    if (first !== '' && !s.destroyed) s.write(first);
    return received(s, ms, pattern);
  });
  const texts = await Promise.all(seen);
  return { sockets, texts, matched: texts.filter((t) => pattern.test(t)).length, silent: texts.filter((t) => t === '').length };
}

async function imapLogin(port: number): Promise<string> {
  const s = await connect(port);
  const greeting = await received(s, 3000, /\r\n/);
  s.write('a LOGIN testuser testpass\r\n');
  const reply = await received(s, 3000, /a (OK|NO|BAD)[^\r]*\r\n/);
  s.destroy();
  return greeting + reply;
}

async function restHealth(port: number): Promise<{ status: number; body: string }> {
  const s = await connect(port);
  s.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  const text = await received(s, 3000);
  s.destroy();
  return { status: Number(text.slice(9, 12)) || 0, body: text.slice(text.indexOf('\r\n\r\n') + 4) };
}

describe(`descriptors under ulimit -n ${LIMIT}`, () => {
  test('the caps in force fit the limit and health says so', async () => {
    const health = await restHealth(ports.rest);
    assert.equal(health.status, 200, health.body);
    const { connections } = JSON.parse(health.body) as { connections: { descriptorLimit: number; lowered: boolean; reserve: number; imap: { max: number }; rest: { max: number } } };
    assert.equal(connections.descriptorLimit, LIMIT);
    assert.equal(connections.lowered, true);
    assert.ok(connections.imap.max + connections.rest.max + connections.reserve <= LIMIT, JSON.stringify(connections));
  });

  test(`${FLOOD} half-open REST requests: extra ones get 503, and IMAP still greets, logs in and says BYE at its own cap`, { timeout: 60_000 }, async () => {
    const rest = await flood(ports.rest, FLOOD, 'GET /v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\n', /^HTTP\/1\.1 503 /);
    try {
      const login = await imapLogin(ports.imap);
      assert.match(login, /^\* OK/, 'IMAP greets while REST is full');
      assert.match(login, /a OK/, 'and a login works');
      assert.ok(rest.matched > 0, 'connections over the REST cap are answered 503');
      const imap = await flood(ports.imap, FLOOD, '', /\* (OK|BYE)/);
      try {
        assert.equal(imap.silent, 0, 'every IMAP connection is answered, greeting or BYE');
        assert.ok(imap.texts.some((t) => /^\* BYE \[UNAVAILABLE\] Too many connections/.test(t)), 'past its cap IMAP says BYE');
      } finally {
        for (const s of imap.sockets) s.destroy();
      }
    } finally {
      for (const s of rest.sockets) s.destroy();
    }
  });

  test(`${FLOOD} idle IMAP connections: extra ones get BYE, and REST still answers`, { timeout: 60_000 }, async () => {
    await new Promise((r) => setTimeout(r, 300));
    const imap = await flood(ports.imap, FLOOD, '', /\* BYE \[UNAVAILABLE\]/);
    try {
      const health = await restHealth(ports.rest);
      assert.equal(health.status, 200, 'REST answers while IMAP is full');
      assert.ok(imap.matched > 0, 'connections over the IMAP cap get BYE');
      const { connections } = JSON.parse(health.body) as { connections: { imap: { open: number; max: number } } };
      assert.equal(connections.imap.open, connections.imap.max);
    } finally {
      for (const s of imap.sockets) s.destroy();
    }
  });
});

describe('connectionCaps (how the caps are lowered)', () => {
  const state = (limit: number | null, open = 20): { limit: number | null; open: () => number } => ({ limit, open: () => open });

  test('far below the limit, or with the limit unknown, the caps stay as given', () => {
    assert.deepEqual(connectionCaps({ imap: 5000, rest: 1000, smtp: null }, state(20_000)), { descriptorLimit: 20_000, reserve: 256 + 64, lowered: false, imap: 5000, rest: 1000, smtp: null, pop3: null });
    assert.equal(connectionCaps({ imap: 5000, rest: 1000, smtp: 5000 }, state(null)).lowered, false);
  });

  test('over the limit they shrink in proportion, leaving the descriptors open now and the margin', () => {
    const caps = connectionCaps({ imap: 5000, rest: 1000, smtp: 5000 }, state(1024, 40));
    assert.equal(caps.lowered, true);
    assert.equal(caps.reserve, 40 + descriptorMargin(1024));
    assert.ok(caps.imap + caps.rest! + caps.smtp! + caps.reserve <= 1024, JSON.stringify(caps));
    assert.equal(caps.imap, caps.smtp);
    assert.ok(caps.imap > 4 * caps.rest!);
    // Never below one connection each, even with almost nothing left.
    const tiny = connectionCaps({ imap: 10, rest: 10, smtp: null }, state(40, 30));
    assert.ok(tiny.imap >= 1 && tiny.rest! >= 1);
  });
});

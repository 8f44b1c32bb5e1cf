/**
 * Issue 31, items 1-3: the REST port's own limits, over real sockets.
 * - rest.maxConnections: requests whose headers never end count against
 *   it; one connection more gets a minimal 503 with the error object.
 * - rest.requestTimeout and rest.bodyTimeout: a body sent too slowly, or
 *   one that stops, is answered 408 TIMEOUT (the error object), not held
 *   for Node's default of 300 s.
 * - rest.maxBodyBytesInFlight: bodies in flight across requests share one
 *   budget; one that does not fit waits unread, then gets 503 LIMIT.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { startRest } from '../rest/helpers.js';

interface Answer {
  status: number;
  headers: string;
  body: { error?: { code: string; message: string } } & Record<string, unknown>;
  closed: boolean;
}

/** Opens a connection and resolves once it is connected. */
async function open(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** The first HTTP answer on `socket` (Content-Length framed), and whether the server closed afterwards. */
function answer(socket: net.Socket, ms = 5000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    const timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms: ${JSON.stringify(data.toString('latin1'))}`)), ms);
    const parse = (closed: boolean): void => {
      const text = data.toString('latin1');
      const at = text.indexOf('\r\n\r\n');
      if (at < 0) {
        if (closed) {
          clearTimeout(timer);
          reject(new Error(`closed without an answer: ${JSON.stringify(text)}`));
        }
        return;
      }
      const headers = text.slice(0, at);
      const length = Number(/content-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
      if (data.length < at + 4 + length) return;
      const isClose = /connection: *close/i.test(headers);
      if (isClose && !closed) return;
      clearTimeout(timer);
      resolve({
        status: Number(headers.slice(9, 12)),
        headers,
        body: JSON.parse(data.subarray(at + 4, at + 4 + length).toString('utf8') || 'null'),
        closed,
      });
    };
    socket.on('data', (d: Buffer) => {
      data = Buffer.concat([data, d]);
      parse(false);
    });
    socket.once('close', () => parse(true));
  });
}

const halfOpen = 'GET /v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\n';

/** A JSON body of exactly `size` octets for POST /v1/users. */
function userBody(name: string, size: number): string {
  const head = `{"name":"${name}","password":"`;
  const tail = '"}';
  return head + 'p'.repeat(size - head.length - tail.length) + tail;
}

const post = (size: number, extra = ''): string =>
  `POST /v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n${extra}\r\n`;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('rest.maxConnections', () => {
  test('half-open requests count against the cap; one more gets a minimal 503 LIMIT and is closed; a freed slot serves again', async () => {
    const r = await startRest({ rest: { port: 0, maxConnections: 3 } });
    const held: net.Socket[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const s = await open(r.restPort);
        s.write(halfOpen);
        held.push(s);
      }
      await sleep(50);
      const over = await open(r.restPort);
      over.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      const refused = await answer(over);
      assert.equal(refused.status, 503);
      assert.equal(refused.closed, true);
      assert.match(refused.headers, /Retry-After: 1/);
      assert.match(refused.headers, /Content-Type: application\/json/);
      assert.equal(refused.body.error?.code, 'LIMIT');
      assert.match(refused.body.error?.message ?? '', /rest\.maxConnections/);
      // fetch sees the same.
      assert.equal((await fetch(`${r.base}/v1/health`)).status, 503);
      held.pop()!.destroy();
      await sleep(50);
      const health = await fetch(`${r.base}/v1/health`);
      assert.equal(health.status, 200);
      const body = (await health.json()) as { connections: { rest: { open: number; max: number } } };
      assert.equal(body.connections.rest.max, 3);
      assert.ok(body.connections.rest.open >= 2 && body.connections.rest.open <= 3, JSON.stringify(body.connections));
    } finally {
      for (const s of held) s.destroy();
      await r.server.stop();
    }
  });
});

describe('rest.requestTimeout and rest.bodyTimeout', () => {
  test('a body that trickles in slower than requestTimeout allows is answered 408 TIMEOUT with the error object', async () => {
    const r = await startRest({ rest: { port: 0, requestTimeout: 600, headersTimeout: 600, bodyTimeout: 0 } });
    const s = await open(r.restPort);
    try {
      const body = userBody('slow', 200);
      s.write(post(body.length));
      const reply = answer(s, 5000);
      let i = 0;
      const drip = setInterval(() => {
        if (i < body.length && !s.destroyed) s.write(body[i++]!);
      }, 50);
      const started = Date.now();
      const got = await reply.finally(() => clearInterval(drip));
      assert.equal(got.status, 408);
      assert.equal(got.body.error?.code, 'TIMEOUT');
      assert.match(got.body.error?.message ?? '', /requestTimeout/);
      assert.ok(Date.now() - started < 3000, 'answered soon after the request timeout');
      assert.equal(r.server.control.listUsers().some((u) => u.name === 'slow'), false);
    } finally {
      s.destroy();
      await r.server.stop();
    }
  });

  test('a body that stops is answered 408 TIMEOUT after bodyTimeout, and the server serves on', async () => {
    const r = await startRest({ rest: { port: 0, bodyTimeout: 300 } });
    const s = await open(r.restPort);
    try {
      const body = userBody('stalled', 100);
      s.write(post(body.length) + body.slice(0, 40));
      const started = Date.now();
      const got = await answer(s, 5000);
      assert.equal(got.status, 408);
      assert.equal(got.body.error?.code, 'TIMEOUT');
      assert.match(got.body.error?.message ?? '', /rest\.bodyTimeout/);
      assert.ok(Date.now() - started < 2500);
      assert.equal((await fetch(`${r.base}/v1/health`)).status, 200);
    } finally {
      s.destroy();
      await r.server.stop();
    }
  });
});

describe('rest.maxBodyBytesInFlight', () => {
  test('a body that does not fit waits unread while another is in flight, and goes on when that one is done', async () => {
    const r = await startRest({ rest: { port: 0, maxBodyBytesInFlight: 1000, bodyTimeout: 5000 } });
    const a = await open(r.restPort);
    const b = await open(r.restPort);
    try {
      const bodyA = userBody('first', 800);
      const bodyB = userBody('second', 800);
      a.write(post(bodyA.length) + bodyA.slice(0, 400));
      await sleep(100);
      b.write(post(bodyB.length) + bodyB);
      const replyB = answer(b);
      await sleep(300);
      const health = (await (await fetch(`${r.base}/v1/health`)).json()) as { connections: { restBodyBytesInFlight: number; restBodiesWaiting: number } };
      assert.equal(health.connections.restBodyBytesInFlight, 800);
      assert.equal(health.connections.restBodiesWaiting, 1);
      assert.equal(r.server.control.listUsers().some((u) => u.name === 'second'), false, 'the second waits');
      const replyA = answer(a);
      a.write(bodyA.slice(400));
      assert.equal((await replyA).status, 201);
      assert.equal((await replyB).status, 201);
      assert.deepEqual(r.server.control.listUsers().map((u) => u.name).sort(), ['first', 'second', 'testuser']);
    } finally {
      a.destroy();
      b.destroy();
      await r.server.stop();
    }
  });

  test('one that waits longer than bodyTimeout gets 503 LIMIT with Retry-After; a chunked body over the budget gets it at once', async () => {
    const r = await startRest({ rest: { port: 0, maxBodyBytesInFlight: 1000, bodyTimeout: 400 } });
    const a = await open(r.restPort);
    const b = await open(r.restPort);
    const c = await open(r.restPort);
    try {
      const bodyA = userBody('holder', 800);
      a.write(post(bodyA.length) + bodyA.slice(0, 100));
      // Keeps the first body alive (bodyTimeout) while the second waits out its turn.
      let i = 100;
      const drip = setInterval(() => {
        if (i < 700) a.write(bodyA[i++]!);
      }, 50);
      await sleep(50);
      const bodyB = userBody('waiter', 800);
      b.write(post(bodyB.length) + bodyB);
      const started = Date.now();
      const refused = await answer(b);
      assert.equal(refused.status, 503);
      assert.equal(refused.body.error?.code, 'LIMIT');
      assert.match(refused.body.error?.message ?? '', /rest\.maxBodyBytesInFlight/);
      assert.match(refused.headers, /Retry-After: 1/);
      assert.ok(Date.now() - started >= 300, 'it waited first');
      const chunk = userBody('chunked', 500);
      c.write(`POST /v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      const chunked = await answer(c);
      assert.equal(chunked.status, 503);
      assert.equal(chunked.body.error?.code, 'LIMIT');
      clearInterval(drip);
      const replyA = answer(a);
      a.write(bodyA.slice(i));
      assert.equal((await replyA).status, 201);
      assert.deepEqual(r.server.control.listUsers().map((u) => u.name).sort(), ['holder', 'testuser']);
      const health = (await (await fetch(`${r.base}/v1/health`)).json()) as { connections: { restBodyBytesInFlight: number } };
      assert.equal(health.connections.restBodyBytesInFlight, 0, 'every hold was given back');
    } finally {
      a.destroy();
      b.destroy();
      c.destroy();
      await r.server.stop();
    }
  });

  test('a body larger than the whole budget is let in when it is alone', async () => {
    const r = await startRest({ rest: { port: 0, maxBodyBytesInFlight: 100 } });
    try {
      const res = await fetch(`${r.base}/v1/users`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: userBody('alone', 5000) });
      assert.equal(res.status, 201);
    } finally {
      await r.server.stop();
    }
  });
});

/**
 * Issue 18 items 9 and 10: malformed HTTP and Host headers, over raw
 * sockets. Every error is an HTTP/1.1 answer with the spec's JSON error
 * object and `Connection: close`; a Host that is not `uri-host [":" port]`
 * is 400 (RFC 7230 §5.4).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createServer } from '../../src/index.js';
import { RestServer } from '../../src/rest/rest.js';
import { request, startRest, type Rest } from '../rest/helpers.js';

interface RawReply {
  status: number;
  headers: Map<string, string[]>;
  body: string;
  json: { error?: { code: string; message: string } } | undefined;
  closed: boolean;
}

/** Parses the first answer in `text`, or undefined while it is incomplete. */
function parseReply(text: string, closed: boolean): RawReply | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  let body = text.slice(end + 4);
  const length = headers.get('content-length')?.[0];
  if (length !== undefined) {
    if (body.length < Number(length)) return undefined;
    body = body.slice(0, Number(length));
  } else if (!closed) return undefined;
  let json: RawReply['json'];
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  const m = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine!);
  if (!m) throw new Error(`bad status line: ${statusLine}`);
  return { status: Number(m[1]), headers, body, json, closed };
}

/**
 * Sends raw bytes and parses the first answer: as soon as it is complete,
 * or, when it says `Connection: close`, once the server has closed (or `ms` pass).
 */
export function raw(port: number, data: string | Buffer, ms = 5000): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const timer = setTimeout(() => socket.destroy(), ms);
    const check = (closed: boolean): void => {
      if (done) return;
      const text = Buffer.concat(chunks).toString('latin1');
      let reply: RawReply | undefined;
      try {
        reply = parseReply(text, closed);
      } catch (err) {
        done = true;
        reject(err as Error);
        return;
      }
      if (reply && (closed || reply.headers.get('connection')?.[0] !== 'close')) {
        done = true;
        clearTimeout(timer);
        socket.destroy();
        resolve(reply);
      } else if (closed) {
        done = true;
        reject(new Error(`no complete HTTP answer: ${JSON.stringify(text)}`));
      }
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      check(false);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      check(true);
    });
    socket.write(data);
  });
}

function assertError(reply: RawReply, status: number, code: string, what: string, message?: RegExp): void {
  assert.equal(reply.status, status, `${what}: ${reply.status} ${reply.body}`);
  assert.match(reply.headers.get('content-type')?.[0] ?? '', /^application\/json/, what);
  assert.equal(reply.headers.get('cache-control')?.[0], 'no-store', what);
  assert.ok(reply.json?.error, `${what}: no error object in ${JSON.stringify(reply.body)}`);
  assert.deepEqual(Object.keys(reply.json), ['error'], what);
  assert.deepEqual(Object.keys(reply.json.error).sort(), ['code', 'message'], what);
  assert.equal(reply.json.error.code, code, `${what}: ${reply.body}`);
  assert.equal(typeof reply.json.error.message, 'string');
  if (message) assert.match(reply.json.error.message, message, what);
}

describe('malformed HTTP gets the spec error object', () => {
  let r: Rest;
  before(async () => {
    r = await startRest();
  });
  after(async () => {
    await r.server.stop();
  });

  const H = 'Host: localhost\r\n';
  const cases: [string, string, RegExp][] = [
    ['unknown method', `FOO /v1/users HTTP/1.1\r\n${H}\r\n`, /method/],
    ['lowercase method', `get /v1/users HTTP/1.1\r\n${H}\r\n`, /method/],
    ['duplicate Content-Length', `POST /v1/users HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}`, /Content-Length/],
    ['Content-Length with Transfer-Encoding', `POST /v1/users HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, /Transfer-Encoding|Content-Length/],
    ['headers over 16 KiB', `GET /v1/users HTTP/1.1\r\n${H}X-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, /larger than 16384/],
    ['control character in a header', `GET /v1/users HTTP/1.1\r\nHost: local\x01host\r\n\r\n`, /Malformed/],
    ['bad request line', `GET\r\n\r\n`, /Malformed/],
    ['TLS bytes on the plain port', '\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n', /Malformed/],
    ['HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', /HTTP\/2/],
    ['bad chunk size', `POST /v1/users HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, /Malformed/],
  ];
  for (const [what, data, message] of cases) {
    test(what, async () => {
      const reply = await raw(r.restPort, data);
      assertError(reply, 400, 'INVALID', what, message);
      assert.equal(reply.headers.get('connection')?.[0], 'close', what);
      assert.ok(reply.closed, `${what}: connection left open`);
    });
  }

  test('missing Host on HTTP/1.1 is 400; HTTP/1.0 without Host is the loopback rule (401)', async () => {
    assertError(await raw(r.restPort, 'GET /v1/users HTTP/1.1\r\n\r\n'), 400, 'INVALID', 'no Host', /Missing Host/);
    assertError(await raw(r.restPort, 'GET /v1/users HTTP/1.0\r\n\r\n'), 401, 'UNAUTHORIZED', 'HTTP/1.0', /loopback/);
    const ok = await raw(r.restPort, 'GET /v1/users HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n');
    assert.equal(ok.status, 200);
  });

  test('CONNECT gets an answer, not a silent close', async () => {
    const reply = await raw(r.restPort, `CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n`);
    assertError(reply, 401, 'UNAUTHORIZED', 'CONNECT to a foreign host');
    const local = await raw(r.restPort, `CONNECT localhost:443 HTTP/1.1\r\n${H}\r\n`);
    assertError(local, 404, 'NOTFOUND', 'CONNECT authority');
    const path = await raw(r.restPort, `CONNECT /v1/users HTTP/1.1\r\n${H}\r\n`);
    assertError(path, 405, 'METHOD', 'CONNECT path');
    assert.equal(path.headers.get('allow')?.[0], 'GET, POST');
  });

  test('an error after a pipelined good request follows its answer', async () => {
    const data = `GET /v1/users HTTP/1.1\r\n${H}\r\nget /v1/users HTTP/1.1\r\n${H}\r\n`;
    const socket = net.connect(r.restPort, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.write(data);
    await new Promise((resolve) => socket.on('close', resolve));
    const text = Buffer.concat(chunks).toString('latin1');
    const answers = text.match(/HTTP\/1\.1 \d{3}/g);
    assert.deepEqual(answers, ['HTTP/1.1 200', 'HTTP/1.1 400'], text);
    assert.match(text, /\{"error":\{"code":"INVALID"/);
  });

  test('a malformed request pipelined behind one whose answer is still being computed waits for that answer', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = await startRest({
      plugins: [{ name: 'XSLOW', routes: [{ method: 'POST', path: '/v1/slow', summary: 'slow', status: 201, response: { type: 'object' }, handle: () => gate.then(() => ({ slow: true })) }] }],
    });
    try {
      const socket = net.connect(slow.restPort, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.write(`POST /v1/slow HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}get /v1/users HTTP/1.1\r\n${H}\r\n`);
      setTimeout(release, 50);
      await new Promise((resolve) => socket.on('close', resolve));
      const text = Buffer.concat(chunks).toString('latin1');
      assert.deepEqual(text.match(/HTTP\/1\.1 \d{3}/g), ['HTTP/1.1 201', 'HTTP/1.1 400'], text);
      assert.match(text, /\{"slow":true\}HTTP\/1\.1 400/);
    } finally {
      await slow.server.stop();
    }
  });

  test('the server keeps serving afterwards', async () => {
    const res = await request(r.restPort, 'GET', '/v1/users');
    assert.equal(res.status, 200);
  });
});

describe('stop() always ends', () => {
  test('with a CONNECT socket whose client neither reads nor closes, and nothing else keeping the process alive', async () => {
    const r = await startRest();
    const socket = net.connect(r.restPort, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`CONNECT /v1/users HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nabcde`);
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    // The client socket must not be what keeps the event loop running while the server stops.
    socket.unref();
    await r.server.stop();
    socket.destroy();
  });
});

describe('slow headers', () => {
  test('a client that never finishes its headers gets 408 TIMEOUT and is closed', async () => {
    const server = createServer({});
    const rest = new RestServer(server, { port: 0, host: '127.0.0.1', token: null, headersTimeout: 300 });
    const { port } = await rest.listen();
    try {
      const reply = await raw(port, `GET /v1/users HTTP/1.1\r\nHost: localhost\r\nX-Slow: `, 10_000);
      assertError(reply, 408, 'TIMEOUT', 'slow headers', /not received in time/);
      assert.equal(reply.headers.get('connection')?.[0], 'close');
    } finally {
      await rest.close(false);
      await server.stop();
    }
  });
});

describe('strict Host (RFC 7230 §5.4)', () => {
  let r: Rest;
  let withToken: Rest;
  before(async () => {
    r = await startRest();
    withToken = await startRest({ rest: { token: 't0k' } });
  });
  after(async () => {
    await r.server.stop();
    await withToken.server.stop();
  });

  const bad = (port: number): string[] => [
    '[::1]evil.example',
    `localhost:${port}@evil.example`,
    'localhost:evil',
    `127.0.0.1:${port}/evil`,
    'local\thost',
    'localhost:80:80',
    '[::1',
    '[evil.example]',
    '[::1]:8x',
    'localhost, evil.example',
    'user@localhost',
    'local host',
    '[fe80::1%25eth0]',
  ];

  test('invalid Host values are 400 INVALID, with or without a token', async () => {
    for (const rest of [r, withToken]) {
      for (const host of bad(rest.restPort)) {
        const reply = await raw(rest.restPort, `GET /v1/users HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer t0k\r\n\r\n`);
        assertError(reply, 400, 'INVALID', JSON.stringify(host), /Host/);
      }
    }
  });

  test('more than one Host header is 400, even when both are the same', async () => {
    for (const hosts of [['localhost', 'evil.example'], ['localhost', 'localhost'], ['evil.example', 'localhost']]) {
      const reply = await raw(r.restPort, `GET /v1/users HTTP/1.1\r\n${hosts.map((h) => `Host: ${h}\r\n`).join('')}\r\n`);
      assertError(reply, 400, 'INVALID', hosts.join(' + '), /more than one Host/i);
    }
  });

  test('valid loopback Host values pass; valid foreign ones are 401', async () => {
    const port = r.restPort;
    for (const host of ['localhost', `localhost:${port}`, 'LOCALHOST', '127.0.0.1', `127.1.2.3:${port}`, '[::1]', `[::1]:${port}`, 'api.localhost', 'localhost:']) {
      const reply = await raw(port, `GET /v1/users HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      assert.equal(reply.status, 200, `${host}: ${reply.body}`);
    }
    // Surrounding spaces and tabs are optional whitespace (RFC 7230 §3.2), not part of the value.
    for (const host of [' localhost', 'localhost \t']) {
      const reply = await raw(port, `GET /v1/users HTTP/1.1\r\nHost:${host}\r\nConnection: close\r\n\r\n`);
      assert.equal(reply.status, 200, `${JSON.stringify(host)}: ${reply.body}`);
    }
    for (const host of ['evil.example', `evil.example:${port}`, '10.0.0.1', '[::2]', 'localhost.evil.example', '']) {
      const reply = await raw(port, `GET /v1/users HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      assertError(reply, 401, 'UNAUTHORIZED', JSON.stringify(host), /loopback/);
      assert.equal(reply.headers.get('www-authenticate')?.[0], 'Bearer');
    }
  });

  test('an absolute-form target is judged by its own authority', async () => {
    const port = r.restPort;
    const ok = await raw(port, `GET http://localhost:${port}/v1/users HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    assert.equal(ok.status, 200, ok.body);
    assertError(await raw(port, `GET http://evil.example/v1/users HTTP/1.1\r\nHost: localhost\r\n\r\n`), 401, 'UNAUTHORIZED', 'foreign authority');
    assertError(await raw(port, `GET http://x@localhost/v1/users HTTP/1.1\r\nHost: localhost\r\n\r\n`), 400, 'INVALID', 'userinfo');
  });
});

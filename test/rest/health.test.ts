/**
 * Issue 19, item 3: GET /v1/health, the ready signal over REST. Behind the
 * token like every route; answers the listeners, the version and every limit
 * in force; described in the OpenAPI document with a full response schema;
 * agrees with the command's --ready-json line.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import { createServer, ServiceError } from '../../src/index.js';
import { BUILTIN_ROUTES } from '../../src/rest/routes.js';
import type { RouteContext } from '../../src/rest/route.js';
import { request, startRest } from './helpers.js';

const PACKAGE_VERSION = (JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as { version: string }).version;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (res: Response): Promise<any> => res.json();

const LIMITS = {
  maxLineLength: 4000,
  maxLiteralBeforeLogin: 3000,
  maxLiteral: 5_000_000,
  maxCommandBeforeLogin: 6000,
  maxConnections: 50,
  maxUnauthenticated: 7,
  loginTimeout: 11_000,
  idleTimeout: 1_200_000,
  maxOutputBuffer: 2_000_000,
  shutdownTimeout: 900,
};

const REST_LIMITS = { maxConnections: 40, headersTimeout: 4000, requestTimeout: 5000, bodyTimeout: 3000, maxBodyBytesInFlight: 2_000_000 };

describe('GET /v1/health', () => {
  test('answers the listeners, the version and every limit option with its value', async () => {
    const r = await startRest({ ...LIMITS, maxStoreBytes: 1_000_000, maxMessages: 77, rest: { port: 0, maxEventStreams: 9, maxStreamBuffer: 65536, ...REST_LIMITS } });
    try {
      const res = await fetch(`${r.base}/v1/health`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const { connections, store, ...body } = await json(res);
      assert.equal(connections.rest.max, 40);
      assert.equal(connections.imap.max, 50);
      assert.ok(connections.rest.open >= 1, 'this request is on an open REST connection');
      assert.deepEqual(store, { messages: 0, bytes: 0, maxMessages: 77, maxStoreBytes: 1_000_000, full: false });
      assert.deepEqual(body, {
        ok: true,
        version: PACKAGE_VERSION,
        imap: { host: '127.0.0.1', port: r.imapPort, secure: false },
        rest: { host: '127.0.0.1', port: r.restPort },
        smtp: null,
        pop3: null,
        limits: { ...LIMITS, maxStoreBytes: 1_000_000, maxMessages: 77, rest: { maxEventStreams: 9, maxStreamBuffer: 65536, ...REST_LIMITS } },
      });
    } finally {
      await r.server.stop();
    }
  });

  test('defaults are reported as the values in force, and every limit key of the options is there', async () => {
    const r = await startRest();
    try {
      const body = await json(await fetch(`${r.base}/v1/health`));
      const o = r.server.options as unknown as Record<string, unknown>;
      for (const key of Object.keys(LIMITS)) assert.equal(body.limits[key], o[key], key);
      assert.deepEqual(body.limits.rest, {
        maxEventStreams: 100,
        maxStreamBuffer: 1024 * 1024,
        maxConnections: 1000,
        headersTimeout: 20_000,
        requestTimeout: 30_000,
        bodyTimeout: 10_000,
        maxBodyBytesInFlight: 128 * 1024 * 1024,
      });
      assert.equal(body.limits.maxStoreBytes, null);
      assert.equal(body.limits.maxMessages, null);
      assert.deepEqual(Object.keys(body.limits).sort(), [...Object.keys(LIMITS), 'rest', 'maxStoreBytes', 'maxMessages'].sort());
    } finally {
      await r.server.stop();
    }
  });

  test('is behind the token like every route, and the loopback Host rule applies without one', async () => {
    const token = 'health-t0ken';
    const r = await startRest({ rest: { port: 0, token } });
    try {
      const missing = await fetch(`${r.base}/v1/health`);
      assert.equal(missing.status, 401);
      assert.equal(missing.headers.get('www-authenticate'), 'Bearer');
      assert.deepEqual(await missing.json(), { error: { code: 'UNAUTHORIZED', message: 'Missing or wrong bearer token' } });
      const wrong = await fetch(`${r.base}/v1/health`, { headers: { Authorization: `Bearer ${token}x` } });
      assert.equal(wrong.status, 401);
      const ok = await fetch(`${r.base}/v1/health`, { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200);
      assert.equal((await json(ok)).ok, true);
    } finally {
      await r.server.stop();
    }
    const open = await startRest();
    try {
      const rebound = await request(open.restPort, 'GET', '/v1/health', { headers: { Host: 'evil.example' } });
      assert.equal(rebound.status, 401);
      assert.equal(rebound.json.error.code, 'UNAUTHORIZED');
      const post = await request(open.restPort, 'POST', '/v1/health', { json: {} });
      assert.equal(post.status, 405);
      assert.equal(post.headers.allow, 'GET');
    } finally {
      await open.server.stop();
    }
  });

  test('reports implicit TLS on the IMAP listener', async () => {
    const r = await startRest({ secure: true });
    try {
      const body = await json(await fetch(`${r.base}/v1/health`));
      assert.deepEqual(body.imap, { host: '127.0.0.1', port: r.imapPort, secure: true });
    } finally {
      await r.server.stop();
    }
  });

  test('a server whose IMAP listener is closed (stopping) is not up: CANNOT', () => {
    const route = BUILTIN_ROUTES.find((x) => x.path === '/v1/health' && x.method === 'GET')!;
    const server = createServer();
    assert.throws(
      () => route.handle({ server, params: {}, query: new URLSearchParams(), body: {}, req: { socket: {} }, res: {} } as unknown as RouteContext),
      (err: unknown) => err instanceof ServiceError && err.code === 'CANNOT' && /stopping/.test(err.message),
    );
  });

  test('the OpenAPI document describes it with a full response schema that the answer matches', async () => {
    const r = await startRest({ plugins: 'all' });
    try {
      const doc = await json(await fetch(`${r.base}/v1/openapi.json`));
      const op = doc.paths['/v1/health']?.get;
      assert.ok(op, 'GET /v1/health is in the document');
      assert.equal(op.requestBody, undefined);
      assert.deepEqual(op.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Health' });
      assert.ok(op.responses['401'], '401 is declared');
      const schema = doc.components.schemas.Health;
      assert.deepEqual([...schema.required].sort(), ['connections', 'imap', 'limits', 'ok', 'pop3', 'rest', 'smtp', 'store', 'version']);
      const limitKeys = [...Object.keys(LIMITS), 'rest', 'maxStoreBytes', 'maxMessages'].sort();
      assert.deepEqual(Object.keys(schema.properties.limits.properties).sort(), limitKeys);
      assert.deepEqual([...schema.properties.limits.required].sort(), limitKeys);
      assert.deepEqual(schema.properties.limits.properties.rest.required, ['maxEventStreams', 'maxStreamBuffer', ...Object.keys(REST_LIMITS)]);
      assert.deepEqual([...schema.properties.store.required].sort(), ['bytes', 'full', 'maxMessages', 'maxStoreBytes', 'messages']);
      const ajv = new Ajv2020.default({ allErrors: true, strict: true });
      const validate = ajv.compile(schema);
      const body: Record<string, unknown> = await json(await fetch(`${r.base}/v1/health`));
      assert.ok(validate(body), JSON.stringify(validate.errors));
      const { limits: _limits, ...withoutLimits } = body;
      assert.ok(!validate(withoutLimits), 'a health answer without limits must not match');
      assert.ok(!validate({ ...body, smtp: { port: 25 } }), 'smtp is null or a whole listener address');
      assert.ok(validate({ ...body, smtp: { host: '127.0.0.1', port: 25, secure: false } }), 'smtp may be the SMTP listener');
    } finally {
      await r.server.stop();
    }
  });

  test('agrees with the command\'s --ready-json line', { timeout: 20_000 }, async () => {
    const cli = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
    const child = spawn(process.execPath, [cli, '--ready-json', '--port', '0', '--rest-port', '0', '--max-connections', '33']);
    try {
      let out = '';
      const ready = await new Promise<{ version: string; imap: unknown; rest: { host: string; port: number; url: string }; smtp: null }>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!));
        });
        child.once('exit', () => reject(new Error(`exited early: ${out}`)));
      });
      const health = await json(await fetch(`${ready.rest.url}/health`));
      assert.equal(health.ok, true);
      assert.equal(health.version, ready.version);
      assert.deepEqual(health.imap, ready.imap);
      assert.deepEqual(health.rest, { host: ready.rest.host, port: ready.rest.port });
      assert.equal(health.smtp, ready.smtp);
      assert.equal(health.pop3, null);
      assert.equal(health.limits.maxConnections, 33);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    }
  });
});

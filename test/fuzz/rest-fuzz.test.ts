/**
 * A short, seeded REST fuzz run (issue 9) against a real listening server
 * with every plugin loaded: random methods, targets, headers, bodies (deep
 * nesting, `__proto__` keys, bad JSON, wrong content types, huge numbers,
 * misspelt and unknown keys at any depth, rule commands no one defines)
 * and framing. Every answer must follow the spec's error rules (see
 * rest-fuzz-core.ts), and the server must work normally afterwards. The long
 * run is `npm run bench -- fuzz-rest`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createServer } from '../../src/index.js';
import type { Storage } from '../../src/options/types.js';
import { rawSession } from '../helpers/server.js';
import { request, startRest } from '../rest/helpers.js';
import { BUILTIN_FUZZ_ROUTES, fuzzRest, routesFromOpenApi, storeProblems, type Finding } from './rest-fuzz-core.js';

const SEED = Number(process.env.REST_FUZZ_SEED ?? 18);
const REQUESTS = Number(process.env.REST_FUZZ_REQUESTS ?? 5000);

function describeFindings(findings: Finding[]): string {
  const byProblem = new Map<string, Finding[]>();
  for (const f of findings) {
    const key = f.problem.replace(/\d+/g, 'N').slice(0, 80);
    byProblem.set(key, [...(byProblem.get(key) ?? []), f]);
  }
  return [...byProblem.values()]
    .map((list) => {
      const f = list[0]!;
      return `${list.length} x ${f.problem}\n  replay: seed ${f.seed} index ${f.index}\n  request: ${f.request}\n  response: ${JSON.stringify(f.response)}`;
    })
    .join('\n');
}

test(`REST fuzz: ${REQUESTS} requests, seed ${SEED}`, async () => {
  const storage: Storage = {
    INBOX: { messages: ['Subject: one\r\n\r\n1\r\n', { raw: 'Subject: two\r\n\r\n2\r\n', flags: ['\\Seen'] }, 'Subject: three\r\n\r\n3\r\n'] },
    '': { folders: { Archive: { folders: { '2024': {} } }, Sent: { 'special-use': '\\Sent' }, Trash: {} } },
  };
  const r = await startRest({ plugins: 'all', storage });
  try {
    // An IMAP session for the session routes to find.
    const imap = await rawSession(r.imapPort);
    // Every route the server has, plugin routes included, from its OpenAPI document.
    const routes = routesFromOpenApi((await request(r.restPort, 'GET', '/v1/openapi.json')).json);
    assert.ok(routes.length >= BUILTIN_FUZZ_ROUTES.length);
    const result = await fuzzRest({ port: r.restPort, seed: SEED, requests: REQUESTS, concurrency: 6, routes });
    imap.close();
    assert.equal(result.findings.length, 0, `findings:\n${describeFindings(result.findings)}`);
    // Something of everything was exercised.
    for (const status of [200, 201, 400, 401, 404, 405, 415]) assert.ok((result.statuses.get(status) ?? 0) > 0, `no ${status} answers: ${[...result.statuses].join(' ')}`);
    // Typos and unknown keys (also nested, also in script rules) reached their routes whole, and none was accepted.
    assert.ok(result.typos >= 100, `only ${result.typos} requests with a typo reached their route`);

    // The store is consistent and a snapshot rebuilds it.
    assert.deepEqual(storeProblems(r.server, (s) => createServer({ storage: s as Storage, plugins: 'all' })), []);

    // The server still works: REST, and IMAP after a reset (the run may have changed passwords and added rules).
    assert.equal((await request(r.restPort, 'DELETE', '/v1/script/rules')).status, 200);
    assert.equal((await request(r.restPort, 'POST', '/v1/reset', { json: {} })).status, 200);
    const users = await request(r.restPort, 'GET', '/v1/users');
    assert.equal(users.status, 200);
    const created = await request(r.restPort, 'POST', '/v1/mailboxes', { json: { path: 'After/Fuzz' } });
    assert.equal(created.status, 201, created.text);
    const c = await rawSession(r.imapPort);
    const select = await c.command('SELECT INBOX');
    assert.match(select.at(-1)!, /OK/);
    assert.ok(select.includes('* 3 EXISTS'), select.join('\n'));
    c.close();
  } finally {
    await r.server.stop();
  }
});

test('REST fuzz with a token: 1000 requests', async () => {
  const token = 'fuzz-t0ken';
  const r = await startRest({ plugins: 'all', rest: { token } });
  try {
    const result = await fuzzRest({ port: r.restPort, seed: SEED + 1, requests: 1000, concurrency: 6, token });
    assert.equal(result.findings.length, 0, `findings:\n${describeFindings(result.findings)}`);
    for (const status of [200, 400, 401, 404]) assert.ok((result.statuses.get(status) ?? 0) > 0, `no ${status} answers: ${[...result.statuses].join(' ')}`);
    assert.deepEqual(storeProblems(r.server, (s) => createServer({ storage: s as Storage, plugins: 'all' })), []);
    const ok = await request(r.restPort, 'GET', '/v1/users', { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(ok.status, 200);
  } finally {
    await r.server.stop();
  }
});

test('REST fuzz under tight REST limits (issue 31): 1500 requests with stopping and crawling bodies', async () => {
  // More workers than connections, a body budget of a few bodies and a short body timeout:
  // 503 LIMIT and 408 TIMEOUT answers are part of the run, each the error object.
  const r = await startRest({ plugins: 'all', rest: { maxConnections: 4, maxBodyBytesInFlight: 4096, bodyTimeout: 300, requestTimeout: 2000, headersTimeout: 1000 } });
  try {
    const result = await fuzzRest({ port: r.restPort, seed: SEED + 2, requests: 1500, concurrency: 8, limits: true, timeoutMs: 6000 });
    assert.equal(result.findings.length, 0, `findings:\n${describeFindings(result.findings)}`);
    for (const status of [200, 400, 408, 503]) assert.ok((result.statuses.get(status) ?? 0) > 0, `no ${status} answers: ${[...result.statuses].join(' ')}`);
    assert.deepEqual(storeProblems(r.server, (s) => createServer({ storage: s as Storage, plugins: 'all' })), []);
    // Every connection and every body's hold is given back.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const health = await request(r.restPort, 'GET', '/v1/health');
    assert.equal(health.status, 200);
    assert.equal(health.json.connections.restBodyBytesInFlight, 0);
    assert.equal(health.json.connections.restBodiesWaiting, 0);
    assert.equal(health.json.connections.rest.open, 1);
  } finally {
    await r.server.stop();
  }
});

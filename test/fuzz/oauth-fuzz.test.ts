/**
 * A short, seeded run of the OAuth endpoints' fuzzer (oauth-fuzz-core.ts):
 * form-encoded and JSON bodies, good, near and junk values, against a real
 * server. Every answer must keep OAuth's error rules, and the server must
 * work normally afterwards. The long run is `npm run bench -- fuzz-rest`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startOAuth, postForm } from '../oauth/helpers.js';
import { fuzzOAuth } from './oauth-fuzz-core.js';

const SEED = Number(process.env.OAUTH_FUZZ_SEED ?? 35);
const REQUESTS = Number(process.env.OAUTH_FUZZ_REQUESTS ?? 2000);

test(`OAuth endpoints fuzz: ${REQUESTS} requests, seed ${SEED}`, { timeout: 120_000 }, async () => {
  const { server, base } = await startOAuth();
  try {
    const result = await fuzzOAuth(base, SEED, REQUESTS, 4);
    const shown = result.findings.slice(0, 10).map((f) => `${f.problem}\n  replay: seed ${f.seed} index ${f.index}\n  request: ${f.request}\n  response: ${f.response}`);
    assert.equal(result.findings.length, 0, shown.join('\n'));
    for (const status of [200, 302, 400, 401, 404, 405]) assert.ok((result.statuses.get(status) ?? 0) > 0, `no ${status} answers: ${[...result.statuses].join(' ')}`);
    // Still serving: a plain client credentials request works.
    const ok = await postForm(`${base}/oauth/token`, { grant_type: 'client_credentials' }, ['testclient', 'testsecret']);
    assert.equal(ok.status, 200);
  } finally {
    await server.stop();
  }
});

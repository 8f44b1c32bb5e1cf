/**
 * Faults of the token service, from the three places a test sets them:
 * the `oauth.faults` option, `on: "oauth"` script rules, and POST
 * /v1/oauth/faults. curl is the client for the token endpoint, so what is
 * checked is what goes over the wire.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { postForm, rest, startOAuth } from './helpers.js';

const curlSkip = spawnSync('curl', ['--version']).status === 0 || process.env.CI ? false : 'curl not installed';

/** curl -i against the token endpoint: the status line, headers and body as curl saw them. */
function curl(args: string[]): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) =>
    execFile('curl', ['-s', '-i', ...args], { timeout: 15_000 }, (err, stdout) => {
      if (err) return reject(err);
      const [head, ...rest] = stdout.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head!)?.[1]), headers: head!, body: rest.join('\r\n\r\n') });
    }),
  );
}

test('curl: client credentials with Basic and in the body; RFC 6749 §5.2 errors with their statuses', { skip: curlSkip, timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth();
  try {
    const ok = await curl(['-u', 'testclient:testsecret', '-d', 'grant_type=client_credentials', `${base}/oauth/token`]);
    assert.equal(ok.status, 200);
    assert.match(ok.headers, /Cache-Control: no-store/i);
    assert.match(ok.headers, /Pragma: no-cache/i);
    assert.equal(JSON.parse(ok.body).token_type, 'Bearer');
    const post = await curl(['-d', 'grant_type=client_credentials&client_id=testclient&client_secret=testsecret', `${base}/oauth/token`]);
    assert.equal(post.status, 200);
    const wrong = await curl(['-u', 'testclient:nope', '-d', 'grant_type=client_credentials', `${base}/oauth/token`]);
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers, /WWW-Authenticate: Basic/i);
    assert.equal(JSON.parse(wrong.body).error, 'invalid_client');
    const unknownGrant = await curl(['-u', 'testclient:testsecret', '-d', 'grant_type=password&username=a&password=b', `${base}/oauth/token`]);
    assert.equal(unknownGrant.status, 400);
    assert.equal(JSON.parse(unknownGrant.body).error, 'unsupported_grant_type');
    const twice = await curl(['-u', 'testclient:testsecret', '-d', 'grant_type=client_credentials&grant_type=client_credentials', `${base}/oauth/token`]);
    assert.equal(JSON.parse(twice.body).error, 'invalid_request');
    const scope = await curl(['-u', 'testclient:testsecret', '-d', 'grant_type=client_credentials&scope=no.such.scope', `${base}/oauth/token`]);
    assert.equal(JSON.parse(scope.body).error, 'invalid_scope');
    // A GET is not how the token endpoint is used (RFC 6749 §3.2: POST).
    const get = await curl([`${base}/oauth/token`]);
    assert.equal(get.status, 405);
    assert.match(get.headers, /Allow: POST/);
  } finally {
    await server.stop();
  }
});

test('the oauth.faults option: invalid_grant once on refresh, then the refresh works', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth({ oauth: { faults: [{ command: 'refresh_token', send: 'invalid_grant', times: 1 }] } });
  try {
    const t = server.control.oauth.issue('testuser', { client: 'testclient' });
    const first = await postForm(`${base}/oauth/token`, { grant_type: 'refresh_token', refresh_token: String(t.refresh_token) }, ['testclient', 'testsecret']);
    assert.equal(first.status, 400);
    assert.equal(first.json.error, 'invalid_grant');
    const second = await postForm(`${base}/oauth/token`, { grant_type: 'refresh_token', refresh_token: String(t.refresh_token) }, ['testclient', 'testsecret']);
    assert.equal(second.status, 200, second.text);
  } finally {
    await server.stop();
  }
});

test('script rules on: "oauth": temporarily_unavailable (503, Retry-After), server_error (500), http_500 (HTML), slow answers', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth();
  const cc = () => postForm(`${base}/oauth/token`, { grant_type: 'client_credentials' }, ['testclient', 'testsecret']);
  try {
    server.script.add({ on: 'oauth', command: 'token', send: 'temporarily_unavailable', times: 1 });
    const busy = await cc();
    assert.equal(busy.status, 503);
    assert.equal(busy.headers.get('retry-after'), '1');
    assert.equal(busy.json.error, 'temporarily_unavailable');
    server.script.add({ on: 'oauth', command: 'client_credentials', send: 'server_error', times: 1 });
    const broken = await cc();
    assert.equal(broken.status, 500);
    assert.equal(broken.json.error, 'server_error');
    server.script.add({ on: 'oauth', send: 'http_500', times: 1 });
    const html = await cc();
    assert.equal(html.status, 500);
    assert.match(html.headers.get('content-type') ?? '', /text\/html/);
    server.script.add({ on: 'oauth', command: 'token', delay: 300, times: 1 });
    const t0 = performance.now();
    const slow = await cc();
    assert.equal(slow.status, 200);
    assert.ok(performance.now() - t0 >= 290, 'the answer was held back');
    // A rule of an endpoint that does not exist is refused with a suggestion.
    assert.throws(() => server.script.add({ on: 'oauth', command: 'tokn', send: 'invalid_grant' }), /did you mean "token"/);
    assert.throws(() => server.script.add({ on: 'oauth', send: 'invalid_grnt' }), /did you mean "invalid_grant"/);
  } finally {
    await server.stop();
  }
});

test('POST /v1/oauth/faults: a refresh without a new refresh token, and a refresh token revoked behind the back', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth();
  const refresh = (token: string) => postForm(`${base}/oauth/token`, { grant_type: 'refresh_token', refresh_token: token }, ['testclient', 'testsecret']);
  try {
    const t = server.control.oauth.issue('testuser', { client: 'testclient' });
    const added = await rest(base, 'POST', '/v1/oauth/faults', { command: 'refresh_token', send: 'no_refresh_token', times: 1 });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    const kept = await refresh(String(t.refresh_token));
    assert.equal(kept.status, 200);
    assert.equal(kept.json.refresh_token, undefined);
    // The old refresh token stays good (the client must keep it).
    const next = await refresh(String(t.refresh_token));
    assert.equal(next.status, 200);
    assert.ok(next.json.refresh_token);
    await rest(base, 'POST', '/v1/oauth/faults', [{ command: 'refresh_token', send: 'revoke_refresh_token', times: 1 }]);
    const since = server.lastEventId();
    const gone = await refresh(String(next.json.refresh_token));
    assert.equal(gone.status, 400);
    assert.equal(gone.json.error, 'invalid_grant');
    const revoked = await server.waitFor('oauth', { type: 'revoked' }, { since, timeout: 1000 });
    assert.match(String(revoked.data.reason), /behind the client's back/);
    const bad = await rest(base, 'POST', '/v1/oauth/faults', { command: 'refresh_token', send: 'nope' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'INVALID');
  } finally {
    await server.stop();
  }
});

test('device flow: polling faster than the interval is slow_down, and the interval grows by 5 s (RFC 8628 §3.5)', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth({ oauth: { approval: 'manual', deviceInterval: 5 } });
  try {
    const d = await postForm(`${base}/oauth/device_authorization`, { client_id: 'testpublic' });
    const poll = () => postForm(`${base}/oauth/token`, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: String(d.json.device_code), client_id: 'testpublic' });
    assert.equal((await poll()).json.error, 'authorization_pending');
    const fast = await poll();
    assert.equal(fast.json.error, 'slow_down');
    assert.match(String(fast.json.error_description), /10 seconds/);
    // Denied by the user: access_denied.
    server.control.oauth.settleDevice(String(d.json.user_code), { decision: 'deny' });
    assert.equal((await poll()).json.error, 'access_denied');
    // The fault: slow_down on the first poll of a new device code.
    const d2 = await postForm(`${base}/oauth/device_authorization`, { client_id: 'testpublic' });
    server.script.add({ on: 'oauth', command: 'device_code', send: 'slow_down', times: 1 });
    const first = await postForm(`${base}/oauth/token`, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: String(d2.json.device_code), client_id: 'testpublic' });
    assert.equal(first.json.error, 'slow_down');
  } finally {
    await server.stop();
  }
});

test('authorization decisions: deny, fewer scopes, wait until approved over REST', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth();
  const authorize = (scope: string) =>
    fetch(`${base}/oauth/authorize?response_type=code&client_id=testclient&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/cb')}&scope=${encodeURIComponent(scope)}&state=s1`, { redirect: 'manual' });
  const exchange = async (location: string) => {
    const code = new URL(location).searchParams.get('code')!;
    return postForm(`${base}/oauth/token`, { grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:9/cb' }, ['testclient', 'testsecret']);
  };
  try {
    await rest(base, 'POST', '/v1/oauth/decisions', { decision: 'deny' });
    const denied = new URL((await authorize('https://mail.google.com/')).headers.get('location')!);
    assert.equal(denied.searchParams.get('error'), 'access_denied');
    assert.equal(denied.searchParams.get('state'), 's1');
    assert.equal(denied.searchParams.get('iss'), base);

    await rest(base, 'POST', '/v1/oauth/decisions', { decision: 'approve', scope: ['openid'] });
    const fewer = await exchange((await authorize('https://mail.google.com/ openid')).headers.get('location')!);
    assert.equal(fewer.json.scope, 'openid');
    const check = server.oauth.check('testuser', String(fewer.json.access_token), 'XOAUTH2');
    assert.equal(check.ok ? 'accepted' : check.reason, 'scope');

    await rest(base, 'POST', '/v1/oauth/decisions', { decision: 'wait' });
    const waiting = authorize('https://mail.google.com/');
    let pending: { id: number }[] = [];
    for (let i = 0; i < 50 && pending.length === 0; i++) {
      pending = (await rest(base, 'GET', '/v1/oauth/pending')).json;
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(pending.length, 1);
    assert.equal((await rest(base, 'POST', `/v1/oauth/pending/${pending[0]!.id}`, { decision: 'approve' })).status, 200);
    const approved = await exchange((await waiting).headers.get('location')!);
    assert.equal(approved.status, 200);

    // An unregistered redirect URI is shown, never redirected to (RFC 6749 §4.1.2.1).
    const evil = await fetch(`${base}/oauth/authorize?response_type=code&client_id=testclient&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`, { redirect: 'manual' });
    assert.equal(evil.status, 400);
    assert.equal(evil.headers.get('location'), null);
    // A public client without PKCE is refused (RFC 8252 §8.1), by redirect.
    const noPkce = await fetch(`${base}/oauth/authorize?response_type=code&client_id=testpublic&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/cb')}`, { redirect: 'manual' });
    assert.equal(new URL(noPkce.headers.get('location')!).searchParams.get('error'), 'invalid_request');
  } finally {
    await server.stop();
  }
});

test('a refresh race: two refreshes with one refresh token, one wins and the reuse revokes the grant', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth();
  try {
    const t = server.control.oauth.issue('testuser', { client: 'testclient' });
    const refresh = () => postForm(`${base}/oauth/token`, { grant_type: 'refresh_token', refresh_token: String(t.refresh_token) }, ['testclient', 'testsecret']);
    const answers = await Promise.all([refresh(), refresh()]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 400]);
    const winner = answers.find((a) => a.status === 200)!;
    assert.equal(answers.find((a) => a.status === 400)!.json.error, 'invalid_grant');
    // The winner's tokens went with the grant: a client that lost the race must start over.
    const check = server.oauth.check('testuser', String(winner.json.access_token), 'XOAUTH2');
    assert.equal(check.ok ? 'accepted' : check.reason, 'revoked');
    assert.equal(server.control.oauth.grants().find((g) => g.id === t.grant)?.revoked, true);
  } finally {
    await server.stop();
  }
});

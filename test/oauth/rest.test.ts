/**
 * The /v1/oauth routes keep the REST spec's conventions (bearer token,
 * error object, unknown fields refused with a suggestion, 415 without JSON,
 * 404 NONEXISTENT, OpenAPI), while the OAuth endpoints keep OAuth's (no
 * REST token asked, RFC 6749 §5.2 errors). Both on one listener.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { postForm, startOAuth } from './helpers.js';
import { request } from '../rest/helpers.js';
import { createServer } from '../../src/index.js';

const TOKEN = 'rest-secret';

async function call(base: string, method: string, path: string, body?: unknown, token: string | null = TOKEN, type = 'application/json') {
  const headers: Record<string, string> = {};
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined || method === 'POST') headers['Content-Type'] = type;
  const res = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text === '' ? null : JSON.parse(text) };
}

test('/v1/oauth follows the REST spec; /oauth/* needs no REST token and answers OAuth errors', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth({ rest: { port: 0, token: TOKEN } });
  try {
    const denied = await call(base, 'GET', '/v1/oauth', undefined, null);
    assert.equal(denied.status, 401);
    assert.equal(denied.json.error.code, 'UNAUTHORIZED');
    assert.equal(denied.headers.get('www-authenticate'), 'Bearer');
    // An OAuth client has no REST token, and needs none.
    const meta = await fetch(`${base}/.well-known/oauth-authorization-server`);
    assert.equal(meta.status, 200);
    const cc = await postForm(`${base}/oauth/token`, { grant_type: 'client_credentials' }, ['testclient', 'testsecret']);
    assert.equal(cc.status, 200);
    const missing = await postForm(`${base}/oauth/token`, {}, ['testclient', 'testsecret']);
    assert.deepEqual(Object.keys(missing.json).sort(), ['error', 'error_description']);
    assert.equal(missing.json.error, 'invalid_request');

    const info = await call(base, 'GET', '/v1/oauth');
    assert.equal(info.status, 200);
    assert.equal(info.json.issuer, base);
    assert.equal(info.json.grants, 1);

    const typo = await call(base, 'PUT', '/v1/oauth/settings', { rotaton: false });
    assert.equal(typo.status, 400);
    assert.equal(typo.json.error.code, 'INVALID');
    assert.match(typo.json.error.message, /did you mean "rotation"/);
    const changed = await call(base, 'PUT', '/v1/oauth/settings', { rotation: false, accessTokenLifetime: 60_000 });
    assert.equal(changed.json.rotation, false);
    assert.equal(changed.json.accessTokenLifetime, 60_000);

    const added = await call(base, 'POST', '/v1/oauth/clients', { id: 'mobile', redirectUris: ['http://127.0.0.1/cb'] });
    assert.equal(added.status, 201);
    const again = await call(base, 'POST', '/v1/oauth/clients', { id: 'mobile' });
    assert.equal(again.status, 409);
    assert.equal(again.json.error.code, 'ALREADYEXISTS');
    const clients = await call(base, 'GET', '/v1/oauth/clients');
    assert.ok(clients.json.every((c: Record<string, unknown>) => !('secret' in c)), 'secrets are never listed');
    assert.deepEqual(clients.json.find((c: { id: string }) => c.id === 'mobile'), { id: 'mobile', public: true, redirectUris: ['http://127.0.0.1/cb'], grants: ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'], scopes: null });
    const badUri = await call(base, 'POST', '/v1/oauth/clients', { id: 'x', redirectUris: ['http://127.0.0.1/cb#frag'] });
    assert.equal(badUri.status, 400);

    assert.equal((await call(base, 'DELETE', '/v1/oauth/grants/999')).json.error.code, 'NONEXISTENT');
    assert.equal((await call(base, 'DELETE', '/v1/oauth/clients/nobody')).status, 404);
    assert.equal((await call(base, 'POST', '/v1/oauth/pending/5', { decision: 'approve' })).status, 404);
    assert.equal((await call(base, 'POST', '/v1/oauth/tokens', { user: 'nobody' })).status, 404);
    assert.equal((await call(base, 'POST', '/v1/oauth/tokens', 'user=testuser', TOKEN, 'application/x-www-form-urlencoded')).status, 415);
    assert.equal((await call(base, 'GET', '/v1/oauth/tokens')).status, 405);

    const issued = await call(base, 'POST', '/v1/oauth/tokens', { user: 'testuser' });
    assert.equal(issued.status, 201);
    assert.equal(issued.json.expires_in, 60);
    assert.equal(issued.json.refresh_token !== undefined, true);
    assert.deepEqual((await call(base, 'POST', '/v1/oauth/revoke', { token: issued.json.refresh_token })).json, { revoked: true });
    assert.deepEqual((await call(base, 'POST', '/v1/oauth/revoke', { token: issued.json.refresh_token })).json, { revoked: false });

    const doc = (await call(base, 'GET', '/v1/openapi.json')).json;
    for (const path of ['/v1/oauth', '/v1/oauth/settings', '/v1/oauth/clients', '/v1/oauth/grants/{id}', '/v1/oauth/tokens', '/v1/oauth/faults', '/v1/oauth/device']) {
      assert.ok(doc.paths[path], path);
    }
    assert.ok(server.eventTypes().includes('oauth'));
  } finally {
    await server.stop();
  }
});

test('without a REST token the OAuth endpoints keep the loopback Host rule; reset forgets tokens', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth();
  try {
    // A page on another host name (DNS rebinding) cannot reach them.
    const res = await request(Number(new URL(base).port), 'GET', '/.well-known/openid-configuration', { headers: { Host: 'evil.example' } });
    assert.equal(res.status, 401);
    assert.equal(res.json.error.code, 'UNAUTHORIZED');
    const t = server.control.oauth.issue('testuser');
    assert.equal(server.oauth.check('testuser', t.access_token, 'XOAUTH2').ok, true);
    server.control.reset();
    const after = server.oauth.check('testuser', t.access_token, 'XOAUTH2');
    assert.equal(after.ok ? 'accepted' : after.reason, 'unknown');
    // The sequence starts again: the same first token as after start.
    assert.equal(server.control.oauth.issue('testuser').access_token, t.access_token);
  } finally {
    await server.stop();
  }
});

test('oauth options are checked: unknown keys, bad clients, unknown users', () => {
  assert.throws(() => startOAuthSync({ oauth: { rotaton: true } }), /oauth\.rotaton: unknown key; did you mean "rotation"\?/);
  assert.throws(() => startOAuthSync({ oauth: { clients: [{ id: 'a:b' }] } }), /oauth\.clients\[0\]\.id/);
  assert.throws(() => startOAuthSync({ oauth: { user: 'nobody' } }), /oauth\.user/);
  assert.throws(() => startOAuthSync({ oauth: { faults: [{ on: 'command' }] } }), /oauth\.faults\[0\]/);
  assert.throws(() => startOAuthSync({ oauth: { style: 'gmial' } }), /did you mean "gmail"/);
});

function startOAuthSync(options: Record<string, unknown>): void {
  createServer(options as never);
}

test('oauth.port: the OAuth endpoints on a port of their own, the issuer theirs; the REST token stays the API\'s', { timeout: 20_000 }, async () => {
  const server = createServer({ port: 0, rest: { port: 0, token: TOKEN }, oauth: { port: 0 } });
  const { rest } = await server.start();
  try {
    const own = server.oauthAddress()!;
    const base = `http://127.0.0.1:${own.port}`;
    assert.notEqual(own.port, rest!.port);
    const meta = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
    assert.equal(meta.issuer, base);
    assert.equal(meta.token_endpoint, `${base}/oauth/token`);
    const cc = await postForm(`${base}/oauth/token`, { grant_type: 'client_credentials' }, ['testclient', 'testsecret']);
    assert.equal(cc.status, 200);
    // Nothing of the REST API there.
    const api = await fetch(`${base}/v1/users`);
    assert.equal(api.status, 404);
    assert.equal(((await api.json()) as Record<string, string>).error, 'invalid_request');
  } finally {
    await server.stop();
  }
  assert.equal(server.oauthAddress(), null);
  assert.throws(() => createServer({ oauth: { host: '127.0.0.1' } }), /oauth\.host: needs oauth\.port/);
});

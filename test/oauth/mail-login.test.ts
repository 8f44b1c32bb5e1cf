/**
 * Mail logins ask the token service: imapflow logging in with an issued
 * access token, the token expiring during IDLE (the server clock moved),
 * and the client's re-login with a refreshed token; refusals as each
 * provider style gives them (RFC 7628 §3.2.2 for OAUTHBEARER, Gmail's
 * XOAUTH2 challenge, Exchange Online's bare NO), session ends at the
 * deadline or at the next command, revocation ending a session, scope and
 * user checks, clock skew, and repeatable tokens from scriptSeed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ImapFlow } from 'imapflow';
import type { ServerOptions } from '../../src/options/types.js';
import { RawClient } from '../helpers/raw-client.js';
import { postForm, rest, startOAuth } from './helpers.js';

const PINNED = Date.UTC(2026, 0, 5, 9, 0, 0);
const TOKEN_PLUGINS = ['AUTH=XOAUTH2', 'AUTH=OAUTHBEARER', 'SASL-IR', 'IDLE'];
const xoauth2 = (user: string, token: string): string => Buffer.from(`user=${user}\x01auth=Bearer ${token}\x01\x01`).toString('base64');
const oauthbearer = (user: string, token: string): string => Buffer.from(`n,a=${user},\x01host=127.0.0.1\x01port=143\x01auth=Bearer ${token}\x01\x01`).toString('base64');

async function start(oauth: ServerOptions['oauth'] = {}, extra: ServerOptions = {}) {
  return startOAuth({ now: PINNED, plugins: TOKEN_PLUGINS, ...extra, oauth });
}

async function raw(port: number): Promise<RawClient> {
  const c = await RawClient.connect(port);
  await c.line();
  return c;
}

test('imapflow: login with an issued token, the token expires during IDLE, re-login with a refreshed token', { timeout: 30_000 }, async () => {
  const { server, base, imapPort } = await start();
  try {
    const issued = (await rest(base, 'POST', '/v1/oauth/tokens', { user: 'testuser', client: 'testclient' })).json;
    const first = new ImapFlow({ host: '127.0.0.1', port: imapPort, secure: false, auth: { user: 'testuser', accessToken: issued.access_token }, logger: false });
    first.on('error', () => undefined);
    await first.connect();
    await first.mailboxOpen('INBOX');
    const closed = new Promise<void>((resolve) => first.once('close', () => resolve()));
    const since = server.lastEventId();
    const idle = first.idle().catch(() => undefined);
    await server.waitUntil({ session: server.control.sessions()[0]!.session, idling: true }, { timeout: 5000 });
    // One hour later on the server clock: the session ends in IDLE, as Gmail ends it at the token's end.
    server.control.advanceClock({ advance: 3_600_000 });
    await closed;
    await idle;
    const expired = await server.waitFor('oauth', { type: 'expired' }, { since, timeout: 2000 });
    assert.equal(expired.data.user, 'testuser');
    assert.equal(expired.data.client, 'testclient');

    // The old token no longer opens the mailbox ...
    const stale = new ImapFlow({ host: '127.0.0.1', port: imapPort, secure: false, auth: { user: 'testuser', accessToken: issued.access_token }, logger: false });
    stale.on('error', () => undefined);
    await assert.rejects(stale.connect(), (err: Error & { authenticationFailed?: boolean }) => err.authenticationFailed === true);
    stale.close();
    // ... the client refreshes at the token endpoint and logs in again.
    const refreshed = await postForm(`${base}/oauth/token`, { grant_type: 'refresh_token', refresh_token: issued.refresh_token }, ['testclient', 'testsecret']);
    assert.equal(refreshed.status, 200, refreshed.text);
    const again = new ImapFlow({ host: '127.0.0.1', port: imapPort, secure: false, auth: { user: 'testuser', accessToken: String(refreshed.json.access_token) }, logger: false });
    again.on('error', () => undefined);
    await again.connect();
    assert.equal((await again.mailboxOpen('INBOX')).path, 'INBOX');
    await again.logout();
  } finally {
    await server.stop();
  }
});

test('rfc style: OAUTHBEARER refused with the RFC 7628 §3.2.2 JSON challenge, the client answers %x01, then NO', async () => {
  const { server, base, imapPort } = await start();
  try {
    const c = await raw(imapPort);
    c.write(`a AUTHENTICATE OAUTHBEARER ${oauthbearer('testuser', 'not-a-token')}\r\n`);
    const challenge = /^\+ (\S+)$/.exec(await c.line());
    assert.ok(challenge);
    assert.deepEqual(JSON.parse(Buffer.from(challenge[1]!, 'base64').toString()), {
      status: 'invalid_token', scope: 'https://mail.google.com/', 'openid-configuration': `${base}/.well-known/openid-configuration`,
    });
    c.write('AQ==\r\n');
    assert.equal(await c.line(), 'a NO [AUTHENTICATIONFAILED] Invalid credentials (Failure)');
    // A token without the mail scope: insufficient_scope (RFC 6750 §3.1).
    const narrow = server.control.oauth.issue('testuser', { scope: ['openid'] });
    c.write(`b AUTHENTICATE OAUTHBEARER ${oauthbearer('testuser', narrow.access_token)}\r\n`);
    assert.equal(JSON.parse(Buffer.from((await c.line()).slice(2), 'base64').toString()).status, 'insufficient_scope');
    c.write('AQ==\r\n');
    assert.match(await c.line(), /^b NO /);
    // Another user's token: refused as well.
    const bobs = server.control.oauth.issue('testuser');
    server.control.addUser({ name: "bob", password: "x" });
    c.write(`c AUTHENTICATE OAUTHBEARER ${oauthbearer('bob', bobs.access_token)}\r\n`);
    assert.match(await c.line(), /^\+ /);
    c.write('AQ==\r\n');
    assert.match(await c.line(), /^c NO \[AUTHENTICATIONFAILED\]/);
    const good = server.control.oauth.issue('testuser');
    c.write(`d AUTHENTICATE OAUTHBEARER ${oauthbearer('testuser', good.access_token)}\r\n`);
    assert.match(await c.line(), /^d OK /);
    c.close();
  } finally {
    await server.stop();
  }
});

test('gmail style: XOAUTH2 challenge {"status":"400",...}, then NO [AUTHENTICATIONFAILED]; BYE at the deadline in IDLE', async () => {
  const { server, imapPort } = await start({}, { preset: 'gmail', plugins: undefined });
  try {
    assert.equal(server.oauth.settings.style, 'gmail');
    const c = await raw(imapPort);
    c.write(`a AUTHENTICATE XOAUTH2 ${xoauth2('testuser', 'nope')}\r\n`);
    const line = await c.line();
    assert.deepEqual(JSON.parse(Buffer.from(line.slice(2), 'base64').toString()), { status: '400', schemes: 'Bearer', scope: 'https://mail.google.com/' });
    c.write('\r\n');
    assert.equal(await c.line(), 'a NO [AUTHENTICATIONFAILED] Invalid credentials (Failure)');
    const t = server.control.oauth.issue('testuser');
    c.write(`b AUTHENTICATE XOAUTH2 ${xoauth2('testuser', t.access_token)}\r\n`);
    assert.match(await c.line(), /^b OK /);
    await c.command('c SELECT INBOX');
    c.write('d IDLE\r\n');
    assert.match(await c.line(), /^\+ /);
    server.control.advanceClock({ advance: 3_599_999 });
    server.control.advanceClock({ advance: 1 });
    assert.equal(await c.line(), '* BYE Session expired, please login again.');
    await c.closedByServer();
  } finally {
    await server.stop();
  }
});

test('outlook style: a refused token is a bare NO; an expired one ends the session at the next command', async () => {
  const { server, imapPort } = await start({}, { preset: 'outlook', plugins: undefined });
  try {
    const c = await raw(imapPort);
    c.write(`a AUTHENTICATE XOAUTH2 ${xoauth2('testuser', 'nope')}\r\n`);
    assert.equal(await c.line(), 'a NO AUTHENTICATE failed.');
    const t = server.control.oauth.issue('testuser', { scope: ['https://outlook.office.com/IMAP.AccessAsUser.All'] });
    c.write(`b AUTHENTICATE XOAUTH2 ${xoauth2('testuser', t.access_token)}\r\n`);
    assert.match(await c.line(), /^b OK /);
    server.control.advanceClock({ advance: 3_600_000 });
    // Nothing until the client speaks ...
    await assert.rejects(c.line(300));
    c.write('c NOOP\r\n');
    assert.equal(await c.line(), '* BYE Session invalidated - AccessTokenExpired');
    await c.closedByServer();
  } finally {
    await server.stop();
  }
});

test('a revoked grant ends its mail sessions; clock skew shortens tokens for the mail server', async () => {
  const { server, base, imapPort } = await start({ clockSkew: 60_000 });
  try {
    const t = server.control.oauth.issue('testuser');
    const c = await raw(imapPort);
    c.write(`a AUTHENTICATE XOAUTH2 ${xoauth2('testuser', t.access_token)}\r\n`);
    assert.match(await c.line(), /^a OK /);
    c.write('b IDLE\r\n');
    assert.match(await c.line(), /^\+ /);
    const since = server.lastEventId();
    assert.equal((await rest(base, 'DELETE', `/v1/oauth/grants/${t.grant}`)).status, 200);
    assert.equal(await c.line(), '* BYE Access token revoked, authenticate again');
    const revoked = await server.waitFor('oauth', { type: 'revoked' }, { since, timeout: 1000 });
    assert.equal(revoked.data.grant, t.grant);

    // The mail server's clock is a minute ahead: the hour-long token ends for it after 59 minutes.
    const skewed = server.control.oauth.issue('testuser');
    assert.equal(skewed.expires_in, 3600);
    server.control.advanceClock({ advance: 59 * 60_000 });
    const check = server.oauth.check('testuser', skewed.access_token, 'XOAUTH2');
    assert.equal(check.ok ? 'accepted' : check.reason, 'expired');
  } finally {
    await server.stop();
  }
});

test('scriptSeed makes issued tokens repeatable; another seed gives others', async () => {
  const tokensOf = async (seed: number): Promise<string[]> => {
    const { server, base } = await start({}, { scriptSeed: seed });
    try {
      const a = await postForm(`${base}/oauth/token`, { grant_type: 'client_credentials' }, ['testclient', 'testsecret']);
      const b = server.control.oauth.issue('testuser');
      return [String(a.json.access_token), b.access_token, String(b.refresh_token)];
    } finally {
      await server.stop();
    }
  };
  const one = await tokensOf(7);
  assert.deepEqual(await tokensOf(7), one);
  assert.notDeepEqual(await tokensOf(8), one);
  assert.equal(new Set(one).size, 3);
});

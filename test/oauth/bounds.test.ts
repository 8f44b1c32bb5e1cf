/**
 * The token service costs bounded memory: leases of closed mail sessions
 * go, waiting authorization requests are capped (one more is refused with
 * temporarily_unavailable and Retry-After), and a request whose browser
 * goes away stops waiting.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawClient } from '../helpers/raw-client.js';
import { rest, startOAuth } from './helpers.js';

const xoauth2 = (token: string): string => Buffer.from(`user=testuser\x01auth=Bearer ${token}\x01\x01`).toString('base64');

test('leases of closed sessions do not pile up', { timeout: 60_000 }, async () => {
  const { server, imapPort } = await startOAuth({ plugins: ['AUTH=XOAUTH2', 'SASL-IR'] });
  try {
    const token = server.control.oauth.issue('testuser').access_token;
    for (let i = 0; i < 150; i++) {
      const c = await RawClient.connect(imapPort);
      await c.line();
      c.write(`a AUTHENTICATE XOAUTH2 ${xoauth2(token)}\r\n`);
      assert.match(await c.line(), /^a OK /);
      c.write('b LOGOUT\r\n');
      await c.closedByServer();
    }
    // Every lease is of a closed session; they go when the leases are looked at (at the latest when they double).
    assert.ok(server.oauth.leases.size <= 2 * 64 + 64, `${server.oauth.leases.size} leases`);
    // The server side of the last connection closes just after the client sees it close.
    for (let i = 0; i < 100 && server.control.sessions().length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    server.control.advanceClock({ advance: 1 });
    assert.equal(server.oauth.leases.size, 0);
  } finally {
    await server.stop();
  }
});

test('waiting authorization requests are capped; one whose browser leaves stops waiting', { timeout: 60_000 }, async () => {
  const { server, base } = await startOAuth({ oauth: { approval: 'manual' } });
  const url = `${base}/oauth/authorize?response_type=code&client_id=testclient&redirect_uri=${encodeURIComponent('http://127.0.0.1:9/cb')}`;
  const controllers: AbortController[] = [];
  try {
    const waiting = Array.from({ length: 100 }, () => {
      const c = new AbortController();
      controllers.push(c);
      return fetch(url, { redirect: 'manual', signal: c.signal }).catch(() => null);
    });
    for (let i = 0; i < 200 && server.control.oauth.pending().length < 100; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(server.control.oauth.pending().length, 100);
    const refused = await fetch(url, { redirect: 'manual' });
    const back = new URL(refused.headers.get('location')!);
    assert.equal(back.searchParams.get('error'), 'temporarily_unavailable');
    // The browsers go away: their requests stop waiting.
    for (const c of controllers) c.abort();
    await Promise.all(waiting);
    for (let i = 0; i < 200 && server.control.oauth.pending().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal((await rest(base, 'GET', '/v1/oauth/pending')).json.length, 0);
  } finally {
    await server.stop();
  }
});

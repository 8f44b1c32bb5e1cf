/**
 * POP3's AUTH XOAUTH2 and OAUTHBEARER ask the same token check as IMAP
 * (src/auth/tokens.ts): Python's poplib with a token from the token
 * endpoint, a refused token answered with the style's JSON challenge and
 * -ERR [AUTH], an expired one refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createServer } from '../../src/index.js';
import { python, WireClient } from '../pop3/pop3-test.js';
import { postForm } from './helpers.js';

test('POP3 AUTH XOAUTH2 with the token service: poplib logs in, a stale token gets the challenge and -ERR [AUTH]', { timeout: 30_000 }, async () => {
  const server = createServer({ port: 0, now: Date.UTC(2026, 0, 5), rest: { port: 0 }, pop3: { port: 0 } });
  const { rest, pop3 } = await server.start();
  try {
    const base = `http://127.0.0.1:${rest!.port}`;
    const t = await postForm(`${base}/oauth/token`, { grant_type: 'client_credentials' }, ['testclient', 'testsecret']);
    const token = String(t.json.access_token);
    const out = await python(
      [
        'import poplib, base64, sys',
        `p = poplib.POP3("127.0.0.1", ${pop3!.port})`,
        `auth = base64.b64encode(b"user=testuser\\x01auth=Bearer ${token}\\x01\\x01").decode()`,
        'print(p._shortcmd("AUTH XOAUTH2 " + auth).decode())',
        'print(p.stat()[0] >= 0)',
        'p.quit()',
      ].join('\n'),
    );
    assert.match(out, /^\+OK/);
    assert.match(out, /True/);

    const c = await WireClient.connect(pop3!.port);
    await c.line();
    c.socket.write(`AUTH XOAUTH2 ${Buffer.from('user=testuser\x01auth=Bearer stale\x01\x01').toString('base64')}\r\n`);
    const challenge = (await c.line()) ?? '';
    assert.deepEqual(JSON.parse(Buffer.from(challenge.slice(2), 'base64').toString()), { status: '401', schemes: 'Bearer', scope: 'https://mail.google.com/' });
    c.socket.write('\r\n');
    assert.match((await c.line()) ?? '', /^-ERR \[AUTH\]/);
    // The issued token after its hour: refused too.
    server.control.advanceClock({ advance: 3_600_000 });
    c.socket.write(`AUTH XOAUTH2 ${Buffer.from(`user=testuser\x01auth=Bearer ${token}\x01\x01`).toString('base64')}\r\n`);
    assert.match((await c.line()) ?? '', /^\+ /);
    c.socket.write('\r\n');
    assert.match((await c.line()) ?? '', /^-ERR \[AUTH\]/);
    c.close();
  } finally {
    await server.stop();
  }
});

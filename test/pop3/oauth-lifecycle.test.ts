/**
 * OAuth token lifecycles on POP3 (docs/oauth.md, docs/pop3.md): a session
 * logged in with a token of the token service ends when the token expires
 * (server clock, advanceClock) or is revoked, the way the `oauth.style`
 * provider ends sessions (src/oauth/styles.ts): at once, or in answer to
 * the next command. POP3 has no BYE: `-ERR [AUTH] ...` and the close, and
 * no UPDATE, so messages marked deleted stay. Driven with Python's poplib,
 * which waits on stdin so the test moves the clock between its commands.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, test } from 'node:test';
import { createServer, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { WireClient } from './pop3-test.js';

const PINNED = Date.UTC(2026, 0, 5, 12);
const servers: Server[] = [];
after(() => Promise.all(servers.map((s) => s.stop())));

async function start(oauth: ServerOptions['oauth'] = {}): Promise<{ server: Server; pop3: number }> {
  const server = createServer({ port: 0, now: PINNED, oauth, storage: { INBOX: { messages: ['Subject: one\r\n\r\n1\r\n', 'Subject: two\r\n\r\n2\r\n'] }, '': {} }, pop3: { port: 0 } });
  servers.push(server);
  const { pop3 } = await server.start();
  return { server, pop3: pop3!.port };
}

/**
 * A poplib session logged in with `token` over AUTH `mechanism`: each
 * `step()` runs the next Python statement and resolves with what it printed
 * (an -ERR poplib raised reads as `ERR <text>`).
 */
function poplib(port: number, user: string, token: string, mechanism: 'XOAUTH2' | 'OAUTHBEARER') {
  const auth = mechanism === 'XOAUTH2' ? `user=${user}\x01auth=Bearer ${token}\x01\x01` : `n,a=${user},\x01host=127.0.0.1\x01port=${port}\x01auth=Bearer ${token}\x01\x01`;
  const program = `import poplib, base64, sys
p = poplib.POP3('127.0.0.1', ${port}, timeout=5)
print(p._shortcmd('AUTH ${mechanism} ' + ${JSON.stringify(Buffer.from(auth).toString('base64'))}).decode(), flush=True)
for line in sys.stdin:
    try:
        print(repr(eval(line)), flush=True)
    except poplib.error_proto as e:
        a = e.args[0]
        print('ERR', a.decode() if isinstance(a, bytes) else a, flush=True)
    except (EOFError, OSError) as e:
        print('CLOSED', type(e).__name__, flush=True)
`;
  const child = spawn(process.env.PYTHON ?? 'python3', ['-c', program], { stdio: ['pipe', 'pipe', 'inherit'] });
  let buffered = '';
  const waiting: ((line: string) => void)[] = [];
  const lines: string[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      const w = waiting.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  const next = (): Promise<string> => {
    const l = lines.shift();
    return l !== undefined ? Promise.resolve(l) : new Promise((resolve) => waiting.push(resolve));
  };
  return {
    next,
    step(statement: string): Promise<string> {
      child.stdin.write(`${statement}\n`);
      return next();
    },
    end(): void {
      child.stdin.end();
      child.kill();
    },
  };
}

test('rfc style: the session ends at the token\'s expiry with -ERR [AUTH] at once; a DELE is not carried out; an expired event names the session', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await start();
  const t = server.control.oauth.issue('testuser');
  const p = poplib(pop3, 'testuser', t.access_token, 'XOAUTH2');
  try {
    assert.match(await p.next(), /^\+OK Logged in/);
    assert.equal(await p.step('p.dele(1).decode()'), "'+OK Message 1 deleted'");
    const since = server.lastEventId();
    server.control.advanceClock({ advance: 3_599_999 });
    assert.equal(await p.step('p.stat()'), `(1, ${Buffer.byteLength('Subject: two\r\n\r\n2\r\n')})`, 'a millisecond before the expiry the session goes on');
    server.control.advanceClock({ advance: 1 });
    const expired = await server.waitFor('oauth', { type: 'expired' }, { since, timeout: 2000 });
    assert.equal(expired.data.via, 'session');
    // The -ERR was sent between commands: poplib reads it as the answer to what it sends next.
    assert.equal(await p.step('p.noop()'), 'ERR -ERR [AUTH] Access token expired, authenticate again');
    assert.match(await p.step('p.noop()'), /^CLOSED|^ERR -ERR EOF/, 'closed after the answer');
    assert.equal(server.control.listMessages('INBOX').length, 2, 'no UPDATE: message 1 is still there');
  } finally {
    p.end();
  }
});

test('outlook style: nothing at the expiry; the next command gets -ERR [AUTH] Session invalidated - AccessTokenExpired and the close', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await start({ style: 'outlook' });
  const t = server.control.oauth.issue('testuser', { scope: ['https://outlook.office.com/IMAP.AccessAsUser.All'] });
  const p = poplib(pop3, 'testuser', t.access_token, 'OAUTHBEARER');
  try {
    assert.match(await p.next(), /^\+OK Logged in/);
    server.control.advanceClock({ advance: 3_600_000 });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(server.sessions.list().length, 1, 'the session stays open until the client speaks');
    assert.equal(await p.step('p.stat()'), 'ERR -ERR [AUTH] Session invalidated - AccessTokenExpired');
    assert.match(await p.step('p.noop()'), /^CLOSED|^ERR -ERR EOF/, 'closed after the answer');
  } finally {
    p.end();
  }
});

test('gmail style: a revoked grant ends the session at once; a session logged in with a password, or that QUIT first, is left alone', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await start({ style: 'gmail' });
  const t = server.control.oauth.issue('testuser');
  const p = poplib(pop3, 'testuser', t.access_token, 'XOAUTH2');
  const password = await WireClient.connect(pop3);
  try {
    assert.match(await p.next(), /^\+OK Logged in/);
    await password.line();
    await password.command('USER testuser');
    assert.match((await password.command('PASS testpass'))!, /^\+OK/);
    server.control.oauth.revokeGrant(t.grant);
    assert.equal(await p.step('p.stat()'), 'ERR -ERR [AUTH] Access revoked, please login again.');
    assert.match((await password.command('STAT'))!, /^\+OK 2 /);

    // A token whose session ended before it did: its expiry ends nothing.
    const second = server.control.oauth.issue('testuser');
    const q = poplib(pop3, 'testuser', second.access_token, 'XOAUTH2');
    assert.match(await q.next(), /^\+OK Logged in/);
    assert.match(await q.step('p.quit().decode()'), /^'\+OK Bye/);
    q.end();
    server.control.advanceClock({ advance: 3_600_000 });
    assert.match((await password.command('NOOP'))!, /^\+OK/);
  } finally {
    p.end();
    password.socket.destroy();
  }
});

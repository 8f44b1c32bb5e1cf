/**
 * Token logins: AUTHENTICATE XOAUTH2 and OAUTHBEARER with imapflow, node-imap
 * and Python's imaplib, the JSON error challenge on a bad token, and the
 * token's sessionTimeout ending the session with BYE (real clock and a
 * pinned clock moved by the test).
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import Imap from 'imap';
import { ImapFlow } from 'imapflow';
import { createServer, type ServerOptions } from '../../src/index.js';
import { rawSession, startServer } from '../helpers/server.js';

const PYTHON = process.env.PYTHON ?? 'python3';
const pythonSkip = spawnSync(PYTHON, ['--version']).status === 0 || process.env.CI ? false : `${PYTHON} not installed`;
const xoauth2 = (user: string, token: string): string => Buffer.from(`user=${user}\x01auth=Bearer ${token}\x01\x01`).toString('base64');
const USERS: ServerOptions['users'] = {
  testuser: { password: 'testpass', xoauth2: { accessToken: 'good-token' } },
  short: { xoauth2: { accessToken: 'short-token', sessionTimeout: 150 } },
};

async function imapflowLogin(port: number, accessToken: string): Promise<{ client: ImapFlow; error: Error | null }> {
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', accessToken }, logger: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return { client, error: null };
  } catch (err) {
    return { client, error: err as Error };
  }
}

test('imapflow logs in with XOAUTH2 and is refused with a wrong token', { timeout: 20_000 }, async () => {
  const { server, port } = await startServer({ users: USERS, plugins: ['AUTH=XOAUTH2'] /* brings SASL-IR, which imapflow needs */ });
  try {
    const good = await imapflowLogin(port, 'good-token');
    assert.equal(good.error, null);
    assert.ok(good.client.authenticated);
    assert.equal(server.control.sessions()[0]!.user, 'testuser');
    await good.client.logout();

    const bad = await imapflowLogin(port, 'stale-token');
    bad.client.close();
    assert.ok(bad.error);
    assert.equal((bad.error as Error & { authenticationFailed?: boolean }).authenticationFailed, true);
    // imapflow decoded the JSON error challenge the server sent before NO.
    assert.match(JSON.stringify((bad.error as Error & { oauthError?: unknown }).oauthError ?? bad.error), /401|Bearer/);
  } finally {
    await server.stop();
  }
});

test('imapflow logs in with OAUTHBEARER (the only token mechanism offered)', { timeout: 20_000 }, async () => {
  // Without AUTH=XOAUTH2 on offer, a successful token login can only have used OAUTHBEARER.
  const { server, port } = await startServer({ users: USERS, plugins: ['AUTH=OAUTHBEARER', 'SASL-IR'] });
  const commands: string[] = [];
  server.on('command', (e) => commands.push(`${e.command} ${e.status}`));
  try {
    const good = await imapflowLogin(port, 'good-token');
    assert.equal(good.error, null);
    assert.ok(commands.includes('AUTHENTICATE OK'), commands.join(', '));
    await good.client.logout();
    const bad = await imapflowLogin(port, 'nope');
    bad.client.close();
    assert.ok(bad.error);
  } finally {
    await server.stop();
  }
});

test('node-imap logs in with its xoauth2 option', { timeout: 20_000 }, async () => {
  const { server, port } = await startServer({ users: USERS, plugins: 'all' });
  try {
    const login = (token: string): Promise<string> =>
      new Promise((resolve) => {
        const imap = new Imap({ user: 'testuser', xoauth2: xoauth2('testuser', token), host: '127.0.0.1', port, tls: false });
        imap.once('ready', () => {
          imap.end();
          resolve('ready');
        });
        imap.once('error', (err: Error) => resolve(`error: ${err.message}`));
        imap.connect();
      });
    assert.equal(await login('good-token'), 'ready');
    assert.match(await login('bad-token'), /^error: .*Invalid credentials/);
  } finally {
    await server.stop();
  }
});

test('Python imaplib authenticates with XOAUTH2', { skip: pythonSkip, timeout: 20_000 }, async () => {
  const { server, port } = await startServer({ users: USERS, plugins: 'all' });
  try {
    const script = [
      'import imaplib, sys',
      'm = imaplib.IMAP4("127.0.0.1", int(sys.argv[1]))',
      'typ, _ = m.authenticate("XOAUTH2", lambda _: b"user=testuser\\x01auth=Bearer good-token\\x01\\x01")',
      'print(typ, m.state)',
      'm.logout()',
      'm = imaplib.IMAP4("127.0.0.1", int(sys.argv[1]))',
      'try:',
      '    m.authenticate("XOAUTH2", lambda _: b"user=testuser\\x01auth=Bearer wrong\\x01\\x01")',
      'except imaplib.IMAP4.error as e:',
      '    print("refused", str(e))',
    ].join('\n');
    const out = await new Promise<string>((resolve, reject) =>
      execFile(PYTHON, ['-c', script, String(port)], { timeout: 15_000 }, (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout))),
    );
    assert.match(out, /^OK AUTH\n/);
    assert.match(out, /refused .*AUTHENTICATIONFAILED/);
  } finally {
    await server.stop();
  }
});

test('raw XOAUTH2: challenge on a bad token, no mechanism without the plugin', async () => {
  const { server, port } = await startServer({ users: USERS, plugins: ['AUTH=XOAUTH2', 'SASL-IR'] });
  try {
    const c = await rawSession(port, false);
    c.write(`a AUTHENTICATE XOAUTH2 ${xoauth2('testuser', 'wrong')}\r\n`);
    const challenge = await c.line();
    const m = /^\+ ([A-Za-z0-9+/=]+)$/.exec(challenge);
    assert.ok(m, challenge);
    assert.deepEqual(JSON.parse(Buffer.from(m[1]!, 'base64').toString()), { status: '401', schemes: 'Bearer', scope: 'https://mail.google.com/' });
    c.write('\r\n');
    assert.equal(await c.line(), 'a NO [AUTHENTICATIONFAILED] Invalid credentials (Failure)');
    // The session goes on: a user without a token cannot use one, a good token works without SASL-IR too.
    c.write('b AUTHENTICATE XOAUTH2\r\n');
    assert.equal(await c.line(), '+ ');
    c.write(`${xoauth2('testuser', 'good-token')}\r\n`);
    assert.match(await c.line(), /^b OK \[CAPABILITY IMAP4rev1 .*\] Logged in$/);
    c.close();
  } finally {
    await server.stop();
  }
  const { server: plain, port: plainPort } = await startServer({ users: USERS });
  try {
    const c = await rawSession(plainPort, false);
    assert.doesNotMatch((await c.command('CAPABILITY')).join(' '), /XOAUTH2/);
    assert.match((await c.command(`AUTHENTICATE XOAUTH2 ${xoauth2('testuser', 'good-token')}`)).at(-1)!, /NO Unsupported authentication mechanism XOAUTH2/);
    c.close();
  } finally {
    await plain.stop();
  }
});

test('sessionTimeout ends a token session with BYE, also during IDLE', { timeout: 20_000 }, async () => {
  const { server, port } = await startServer({ users: USERS, plugins: 'all' });
  try {
    const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'short', accessToken: 'short-token' }, logger: false });
    client.on('error', () => undefined);
    await client.connect();
    await client.mailboxOpen('INBOX');
    const clientClosed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    const serverClosed = new Promise<string | null>((resolve) =>
      server.on('session', (e) => {
        if (e.type === 'close') resolve(e.session.user);
      }),
    );
    void client.idle().catch(() => undefined);
    try {
      await clientClosed;
    } finally {
      client.close();
    }
    assert.equal(await serverClosed, 'short');
  } finally {
    await server.stop();
  }
});

test('sessionTimeout follows a pinned server clock: BYE at the first command after the clock passes it', async () => {
  let clock = Date.UTC(2026, 0, 1);
  const server = createServer({ port: 0, now: () => clock, users: { u: { xoauth2: { accessToken: 't', sessionTimeout: 60_000 } } }, plugins: 'all' });
  const { imap } = await server.start();
  try {
    const c = await rawSession(imap.port, false);
    assert.match((await c.command(`AUTHENTICATE XOAUTH2 ${xoauth2('u', 't')}`)).at(-1)!, / OK /);
    clock += 59_999;
    assert.match((await c.command('NOOP')).at(-1)!, / OK /);
    clock += 1;
    c.write('z NOOP\r\n');
    assert.equal(await c.line(), '* BYE Access token expired, authenticate again');
    await c.closedByServer();
  } finally {
    await server.stop();
  }
});

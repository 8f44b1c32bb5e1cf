/**
 * Connection limits per user and rate limits per command class (issue 14),
 * with the providers' own refusals, and what real clients make of them.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { ImapFlow } from 'imapflow';
import Imap from 'imap';
import { createServer } from '../../src/index.js';
import { rawSession, startServer } from '../helpers/server.js';

const PYTHON = process.env.PYTHON ?? 'python3';
const noPython = spawnSync(PYTHON, ['--version']).status === 0 || process.env.CI ? false : `${PYTHON} not installed`;
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

function python(port: number, body: string): Promise<{ code: number; out: string; err: string }> {
  const script = `import imaplib\nport = ${port}\n${body}\n`;
  return new Promise((resolve) => {
    execFile(PYTHON, ['-c', script], { timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: stdout.trim(), err: stderr });
    });
  });
}

const flow = (port: number): ImapFlow => new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });

test('maxConnectionsPerUser (Gmail): the third login gets NO [ALERT]; imapflow, node-imap and imaplib report it; others may log in', { timeout: 30_000 }, async (t) => {
  const { server, port } = await startServer({ maxConnectionsPerUser: 2, users: { testuser: { password: 'testpass' }, other: { password: 'pw' } } });
  const a = await rawSession(port);
  const b = await rawSession(port);
  try {
    const raw = await rawSession(port, false);
    const lines = await raw.command('LOGIN testuser testpass');
    assert.match(lines.at(-1)!, /^\S+ NO \[ALERT\] Too many simultaneous connections\. \(Failure\)$/);
    // Still not authenticated; another user is not limited.
    assert.match((await raw.command('LOGIN other pw')).at(-1)!, /^\S+ OK/);
    raw.close();

    const client = flow(port);
    client.on('error', () => undefined);
    await assert.rejects(client.connect(), (err: Error & { responseText?: string; serverResponseCode?: string }) => {
      assert.equal(err.responseText, 'Too many simultaneous connections. (Failure)');
      assert.equal(err.serverResponseCode, 'ALERT');
      return true;
    });
    client.close();

    // node-imap: the login error carries the response code and text.
    const imap = new Imap({ user: 'testuser', password: 'testpass', host: '127.0.0.1', port, tls: false });
    const failure = await new Promise<Error & { textCode?: string; source?: string }>((resolve, reject) => {
      imap.once('ready', () => reject(new Error('logged in')));
      imap.once('error', resolve);
      imap.connect();
    });
    imap.destroy();
    assert.equal(failure.message, 'Too many simultaneous connections. (Failure)');
    assert.equal(failure.textCode, 'ALERT');
    assert.equal(failure.source, 'authentication');

    if (noPython) return t.diagnostic(String(noPython));
    const r = await python(port, `M = imaplib.IMAP4('127.0.0.1', port)
try:
    M.login('testuser', 'testpass')
    print('in')
except imaplib.IMAP4.error as e:
    print(e)`);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, "b'[ALERT] Too many simultaneous connections. (Failure)'");
  } finally {
    a.close();
    b.close();
    await server.stop();
  }
});

test('maxConnectionsPerUser: a session that has logged out frees its place', async () => {
  const { server, port } = await startServer({ maxConnectionsPerUser: { limit: 1, style: 'dovecot' } });
  const a = await rawSession(port);
  const b = await rawSession(port, false);
  try {
    assert.equal((await b.command('LOGIN testuser testpass')).at(-1)!.replace(/^\S+ /, ''), 'NO [UNAVAILABLE] Maximum number of connections from user+IP exceeded (mail_max_userip_connections=1)');
    // Logged out is enough, before its connection has closed.
    await a.command('LOGOUT');
    assert.match((await b.command('LOGIN testuser testpass')).at(-1)!, /^\S+ OK/);
  } finally {
    a.close();
    b.close();
    await server.stop();
  }
});

test('maxConnectionsPerUser (Outlook): the login succeeds, then every command is BAD "User is authenticated but not connected."', { timeout: 30_000 }, async () => {
  // The bare core: with NAMESPACE offered, imapflow's connect itself sends a command after login and fails on the BAD.
  const { server, port } = await startServer({ plugins: [], maxConnectionsPerUser: { limit: 1, style: 'outlook' } });
  const a = await rawSession(port);
  try {
    const client = flow(port);
    client.on('error', () => undefined);
    await client.connect();
    await assert.rejects(client.mailboxOpen('INBOX'), (err: Error & { responseText?: string; responseStatus?: string }) => {
      assert.equal(err.responseStatus, 'BAD');
      assert.equal(err.responseText, 'User is authenticated but not connected.');
      return true;
    });
    await client.logout();
  } finally {
    a.close();
    await server.stop();
  }
});

test('rateLimits by class on the server clock: the (max+1)th FETCH in the window is NO [LIMIT], the next window is free', async () => {
  const { server, port } = await startServer({ now: T0, rateLimits: [{ commands: ['fetch'], max: 2, per: 60_000 }], storage: { INBOX: { messages: ['Subject: a\r\n\r\nx\r\n'] } } });
  const raw = await rawSession(port);
  try {
    await raw.command('SELECT INBOX');
    assert.match((await raw.command('FETCH 1 FLAGS')).at(-1)!, /^\S+ OK/);
    assert.match((await raw.command('UID FETCH 1 FLAGS')).at(-1)!, /^\S+ OK/);
    assert.equal((await raw.command('FETCH 1 FLAGS')).at(-1)!.replace(/^\S+ /, ''), 'NO [LIMIT] Rate limit hit, try again later');
    // Other commands are not counted.
    assert.match((await raw.command('NOOP')).at(-1)!, /^\S+ OK/);
    server.advanceClock(59_999);
    assert.match((await raw.command('FETCH 1 FLAGS')).at(-1)!, /^\S+ NO \[LIMIT\]/);
    server.advanceClock(1);
    assert.match((await raw.command('FETCH 1 FLAGS')).at(-1)!, /^\S+ OK/);
  } finally {
    raw.close();
    await server.stop();
  }
});

test('rateLimits Yahoo style: BYE, then NO [LIMIT] <COMMAND> Rate limit hit., then the close; imapflow reports it', { timeout: 30_000 }, async () => {
  const { server, port } = await startServer({ now: T0, rateLimits: [{ commands: ['LIST', 'STATUS'], max: 1, per: 1000, style: 'yahoo', scope: 'user' }] });
  const raw = await rawSession(port);
  try {
    await raw.command('LIST "" "*"');
    const lines = await raw.command('STATUS INBOX (MESSAGES)');
    assert.equal(lines[0], '* BYE IMAP4rev1 Server logging out');
    assert.equal(lines.at(-1)!.replace(/^\S+ /, ''), 'NO [LIMIT] STATUS Rate limit hit.');
    await raw.closedByServer();
    // scope: user: a new session of the same user shares the window.
    const client = flow(port);
    client.on('error', () => undefined);
    await client.connect();
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    // imapflow's status() answers false for a refused STATUS; the BYE closes its connection.
    assert.equal(await client.status('INBOX', { messages: true }), false);
    await closed;
    assert.equal(client.usable, false);
  } finally {
    raw.close();
    await server.stop();
  }
});

test('throttling options are validated with the field named', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ maxConnectionsPerUser: 0 }, /^maxConnectionsPerUser: expected/m],
    [{ maxConnectionsPerUser: { limit: 2, style: 'gmial' } }, /^maxConnectionsPerUser\.style: expected one of gmail, outlook, dovecot/m],
    [{ maxConnectionsPerUser: { limit: 2, text: 'OK fine' } }, /^maxConnectionsPerUser\.text: expected/m],
    [{ rateLimits: {} }, /^rateLimits: expected an array/m],
    [{ rateLimits: [{ commands: [], max: 1, per: 1 }] }, /^rateLimits\[0\]\.commands: expected a non-empty array/m],
    [{ rateLimits: [{ commands: ['fetch'], max: 0, per: 1 }] }, /^rateLimits\[0\]\.max: expected/m],
    [{ rateLimits: [{ commands: ['fetch'], max: 100_001, per: 1 }] }, /^rateLimits\[0\]\.max: expected an integer from 1 to 100000/m],
    [{ rateLimits: [{ commands: ['fetch'], max: 1, per: 1, scope: 'ip' }] }, /^rateLimits\[0\]\.scope: expected/m],
    [{ rateLimits: [{ commands: ['fetch'], max: 1, per: 1, every: 2 }] }, /^rateLimits\[0\]\.every: unknown key/m],
  ];
  for (const [options, message] of cases) assert.throws(() => createServer(options), (err: Error) => message.test(err.message), JSON.stringify(options));
});

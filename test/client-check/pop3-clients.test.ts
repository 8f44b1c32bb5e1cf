/**
 * Issue 33 item 6 with real POP3 clients: Python's poplib and node-pop3
 * (npm) used as their documentation says produce no findings, and what
 * each does that RFCs advise against produces exactly the documented
 * finding (docs/pop3-checker.md, "What real clients get").
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, test } from 'node:test';
import Pop3Command from 'node-pop3';
import { createServer, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { PYTHON } from '../helpers/python.js';
import { mail } from '../helpers/server.js';

let server: Server | null = null;

afterEach(async () => {
  await server?.stop();
  server = null;
});

async function start(pop3: NonNullable<ServerOptions['pop3']> = {}): Promise<number> {
  server = createServer({ port: 0, pop3: { port: 0, ...pop3 } });
  const started = await server.start();
  for (let i = 1; i <= 3; i++) server.control.addMessage('INBOX', { raw: mail(`m${i}`) });
  return started.pop3!.port;
}

const rules = (): string[] => server!.control.clientFindings().map((f) => f.rule);

/** Runs a poplib script with `port` in PORT; resolves with its stdout, rejects with its stderr. */
function poplib(port: number, script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-c', script], { env: { ...process.env, PORT: String(port) } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`poplib exited ${code}: ${err}`))));
  });
}

const HAS_FETCHMAIL = spawnSync('fetchmail', ['--version']).error === undefined;

/** One fetchmail poll (USER/PASS, no keep) into a temporary directory; resolves with its verbose output. */
async function fetchmail(port: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rookery-check-fetchmail-'));
  try {
    const rc = path.join(dir, 'fetchmailrc');
    await writeFile(
      rc,
      [
        'set no bouncemail',
        `poll 127.0.0.1 with proto POP3 port ${port} auth password`,
        `  user 'testuser' there with password 'testpass' is '${os.userInfo().username}' here`,
        '  options no keep no sslcertck',
        `  mda "/bin/sh -c 'cat > /dev/null'"`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    return await new Promise((resolve) => {
      const child = spawn('fetchmail', ['-f', rc, '-i', path.join(dir, 'ids'), '--nodetach', '--nosyslog', '-N', '-v'], { env: { ...process.env, HOME: dir } });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', () => resolve(out));
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const PRELUDE = `
import os, poplib, ssl
p = poplib.POP3('127.0.0.1', int(os.environ['PORT']))
`;

describe('client checker, POP3 real clients', () => {
  test('poplib: capa, stls, capa again, user/pass, stat, list, uidl, top, retr, dele, quit: no findings', async () => {
    const port = await start({ stls: true });
    const out = await poplib(
      port,
      `${PRELUDE}
caps = p.capa()
assert 'STLS' in caps, caps
p.stls(context=ssl._create_unverified_context())
caps = p.capa()
assert 'STLS' not in caps, caps
p.user('testuser'); p.pass_('testpass')
print(p.stat()[0], len(p.list()[1]), len(p.uidl()[1]), len(p.top(1, 0)[1]) > 0, len(p.retr(2)[1]) > 0)
p.dele(1)
p.quit()
`,
    );
    assert.equal(out.trim(), '3 3 3 True True');
    assert.deepEqual(rules(), []);
    assert.equal(server!.control.listMessages('INBOX').length, 2, 'the DELE+QUIT expunged message 1');
  });

  test('poplib: user()/pass_() in clear text while the server offers STLS is pop3-plaintext-credentials', async () => {
    const port = await start({ stls: true });
    await poplib(port, `${PRELUDE}\np.user('testuser'); p.pass_('testpass'); p.stat(); p.quit()\n`);
    assert.deepEqual(rules(), ['pop3-plaintext-credentials']);
    assert.equal(server!.control.clientFindings()[0]!.command, 'PASS');
  });

  test('poplib: uidl() and top() without capa() are pop3-capa-not-checked (poplib never asks CAPA itself)', async () => {
    const port = await start();
    await poplib(port, `${PRELUDE}\np.user('testuser'); p.pass_('testpass'); p.uidl(); p.top(1, 0); p.quit()\n`);
    assert.deepEqual(rules(), ['pop3-capa-not-checked', 'pop3-capa-not-checked']);
    assert.deepEqual(server!.control.clientFindings().map((f) => f.command), ['UIDL', 'TOP']);
  });

  test('poplib: apop() against the greeting timestamp: no findings', async () => {
    const port = await start({ apop: true });
    await poplib(port, `${PRELUDE}\np.apop('testuser', 'testpass'); p.stat(); p.quit()\n`);
    assert.deepEqual(rules(), []);
  });

  test('fetchmail: CAPA, STLS, CAPA again, USER/PASS, UIDL, TOP, DELE, QUIT: no findings', { skip: HAS_FETCHMAIL ? false : 'fetchmail not installed', timeout: 60_000 }, async () => {
    const port = await start({ stls: true });
    const out = await fetchmail(port);
    assert.match(out, /POP3> STLS[\s\S]*POP3> CAPA[\s\S]*POP3> UIDL[\s\S]*POP3> QUIT/);
    assert.deepEqual(rules(), []);
    assert.equal(server!.control.listMessages('INBOX').length, 0, 'fetched and deleted');
  });

  test('node-pop3: STAT, LIST, RETR, DELE, QUIT: no findings', async () => {
    const port = await start();
    const pop = new Pop3Command({ user: 'testuser', password: 'testpass', host: '127.0.0.1', port });
    assert.match(await pop.STAT(), /^3 /);
    assert.equal((await pop.LIST()).length, 3);
    assert.match(await pop.RETR(1), /Subject: m1/);
    await pop.DELE(1);
    await pop.QUIT();
    assert.deepEqual(rules(), []);
    assert.equal(server!.control.listMessages('INBOX').length, 2);
  });

  test('node-pop3: UIDL and TOP are pop3-capa-not-checked (the library never sends CAPA)', async () => {
    const port = await start();
    const pop = new Pop3Command({ user: 'testuser', password: 'testpass', host: '127.0.0.1', port });
    assert.equal((await pop.UIDL()).length, 3);
    assert.match(await pop.TOP(1, 0), /Subject: m1/);
    await pop.QUIT();
    assert.deepEqual(rules(), ['pop3-capa-not-checked', 'pop3-capa-not-checked']);
  });
});

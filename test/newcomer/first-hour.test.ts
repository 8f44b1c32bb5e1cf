/**
 * Issue 19: the traps a new user hits in the first hour, over the real
 * surface (the `rookery` command and IMAP sockets): the ready signal,
 * errors that name the setting and the fix, settings that would silently do
 * nothing, a one-rule script file, the wire log, stale event data.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createServer } from '../../src/index.js';
import { CLI, exited } from '../helpers/cli.js';
import { RawClient } from '../helpers/raw-client.js';
import { collect, rawSession, startServer } from '../helpers/server.js';

const EXAMPLES = fileURLToPath(new URL('../../../examples/', import.meta.url));

function run(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 10000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Starts the command with --ready-json; resolves with the parsed ready line. */
async function startReady(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [CLI, '--ready-json', ...args], { env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const ready = await new Promise<{ ready: boolean; imap: { host: string; port: number }; rest: { port: number; url: string } | null }>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0]!;
      if (out.includes('\n')) resolve(JSON.parse(line));
    });
    child.once('exit', () => reject(new Error(`exited early: ${out} ${err}`)));
  });
  return { child, ready, stdout: () => out, stderr: () => err };
}


test('--ready-json: one JSON line on stdout with every listener, prose and the user names on stderr', async () => {
  const { child, ready, stdout, stderr } = await startReady(['--port', '0', '--rest-port', '0']);
  try {
    assert.equal(ready.ready, true);
    assert.equal(ready.imap.host, '127.0.0.1');
    const client = await RawClient.connect(ready.imap.port);
    assert.match(await client.line(), /^\* OK /);
    client.close();
    const res = await fetch(`${ready.rest!.url}/sessions`);
    assert.equal(res.status, 200);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(stdout().trim().split('\n').length, 1, 'stdout holds only the ready line');
    assert.match(stderr(), /users: testuser/);
  } finally {
    child.kill('SIGTERM');
    await exited(child);
  }
});

test('a port in use names the listener, the flag that set it and port 0', async () => {
  const { child, ready } = await startReady(['--port', '0']);
  try {
    const second = run(['--port', String(ready.imap.port)]);
    assert.equal(second.status, 1);
    assert.match(second.stderr, /^rookery: IMAP listener: 127\.0\.0\.1:\d+ is already in use \(set by the port option, --port \/ ROOKERY_PORT\); use port 0/);
    const rest = run(['--port', '0', '--rest-port', String(ready.imap.port)]);
    assert.equal(rest.status, 1);
    assert.match(rest.stderr, /^rookery: REST listener: .* is already in use \(set by the rest\.port option, --rest-port/);
  } finally {
    child.kill('SIGTERM');
    await exited(child);
  }
});

test('--port -1 says how to write the value, not the argument parser\u2019s text', () => {
  const r = run(['--port', '-1']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^rookery: --port needs a value, e\.g\. --port 1143; a value that starts with "-" must be written --port=<value>/);
  const eq = run(['--port=-1']);
  assert.match(eq.stderr, /--port: expected a port number 0-65535, got "-1"/);
});

test('settings that would do nothing get a warning naming them; secure with starttls is an error', async () => {
  const { child, stderr } = await startReady(['--port', '0', '--rest-token', 'x'], { ROOKERY_PLUGINS: 'all' });
  try {
    await new Promise((r) => setTimeout(r, 50));
    assert.match(stderr(), /warning: environment variable ROOKERY_PLUGINS is not a rookery setting and is ignored; did you mean ROOKERY_PLUGIN\?/);
    assert.match(stderr(), /warning: a REST token or host is set but no REST port/);
  } finally {
    child.kill('SIGTERM');
    await exited(child);
  }
  const both = run(['--port', '0', '--secure', '--starttls']);
  assert.equal(both.status, 1);
  assert.match(both.stderr, /starttls: cannot go with secure/);
});

test('a --script file holding one rule object is a one-rule script', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rookery-first-hour-'));
  const file = join(dir, 'rule.json');
  writeFileSync(file, JSON.stringify({ on: 'command', command: 'NOOP', send: '$TAG NO scripted\r\n' }));
  const { child, ready } = await startReady(['--port', '0', '--script', file]);
  try {
    const c = await RawClient.connect(ready.imap.port);
    await c.line();
    assert.deepEqual(await c.command('NOOP'), ['T1 NO scripted']);
    c.close();
  } finally {
    child.kill('SIGTERM');
    await exited(child);
  }
});

test('the docs/command.md examples exist and start: --storage examples/fixtures.json, --config examples/rookery.json', async () => {
  const a = await startReady(['--port', '0', '--storage', join(EXAMPLES, 'fixtures.json')]);
  const c = await RawClient.connect(a.ready.imap.port);
  await c.line();
  await c.command('LOGIN testuser testpass');
  assert.match((await c.command('SELECT INBOX')).join('\n'), /\* 2 EXISTS/);
  c.close();
  a.child.kill('SIGTERM');
  await exited(a.child);
  const b = await startReady(['--config', join(EXAMPLES, 'rookery.json'), '--port', '0', '--rest-port', '0']);
  assert.ok(b.ready.rest);
  b.child.kill('SIGTERM');
  await exited(b.child);
  assert.match(run(['--help']).stdout, /"plugins": "all"/);
});

test('debug: every line in and out, the LOGIN password and SASL data redacted', async () => {
  const lines: string[] = [];
  const { server, port } = await startServer({ plugins: 'all', debug: (line) => lines.push(line) });
  try {
    const c = await rawSession(port, false);
    await c.command('LOGIN testuser "secret-pass"');
    c.write('A2 AUTHENTICATE PLAIN\r\n');
    await c.line();
    c.write(`${Buffer.from('\0testuser\0testpass').toString('base64')}\r\n`);
    await c.line();
    await c.command('NOOP');
    c.close();
    const log = lines.join('\n');
    assert.match(log, /^S\d+ S: \* OK \[CAPABILITY /m);
    assert.match(log, /^S\d+ C: T1 LOGIN testuser \*\*\*$/m);
    assert.match(log, /^S\d+ C: A2 AUTHENTICATE PLAIN$/m);
    assert.match(log, /^S\d+ C: \*\*\*$/m);
    assert.match(log, /^S\d+ C: T2 NOOP$/m);
    assert.match(log, /^S\d+ S: T2 OK NOOP completed$/m);
    assert.doesNotMatch(log, /secret-pass|testpass|AHRlc3R1c2VyAHRlc3RwYXNz/);
  } finally {
    await server.stop();
  }
});

test('after UNSELECT the logout and close events name no mailbox', async () => {
  const { server, port } = await startServer({ plugins: 'all' });
  try {
    const events = collect(server, 'session');
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    await c.command('UNSELECT');
    await c.command('LOGOUT');
    await c.closedByServer();
    await new Promise((r) => setTimeout(r, 30));
    const tail = events.filter((e) => e.type === 'logout' || e.type === 'close');
    assert.equal(tail.length, 2);
    for (const e of tail) assert.equal(e.session.mailbox, null, `${e.type} event`);
  } finally {
    await server.stop();
  }
});

test('createServer refuses secure together with starttls, naming both', () => {
  assert.throws(() => createServer({ secure: true, starttls: true }), /starttls: cannot go with secure/);
});

test('one rule for subscriptions: mailboxes from storage, createMailbox and REST are subscribed unless told otherwise', async () => {
  const server = createServer({ port: 0, rest: { port: 0 }, storage: { INBOX: {}, '': { folders: { Fixture: {} } } } });
  const { imap, rest } = await server.start();
  try {
    server.control.createMailbox('Control');
    server.control.createMailbox('Quiet', { subscribed: false });
    const res = await fetch(`http://127.0.0.1:${rest!.port}/v1/mailboxes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: 'Rest' }),
    });
    assert.equal(res.status, 201);
    assert.equal(((await res.json()) as { subscribed: boolean }).subscribed, true);
    const c = await rawSession(imap.port);
    const lsub = await c.command('LSUB "" *');
    const names = lsub.filter((l) => l.startsWith('* LSUB')).map((l) => l.split(' ').pop()!.replace(/"/g, ''));
    for (const name of ['Fixture', 'Control', 'Rest']) assert.ok(names.includes(name), `${name} subscribed`);
    assert.ok(!names.includes('Quiet'));
    c.close();
  } finally {
    await server.stop();
  }
});

test('one version everywhere: package.json, --version, and the ready line', async () => {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as { version: string };
  // `rookery 5.0.0 (package, node 20.20.2, linux-x64)`: the version, then the build (issue 32).
  assert.equal(/^rookery (\S+) \(package, node /.exec(run(['--version']).stdout.trim())?.[1], pkg.version);
  const { child, ready } = await startReady(['--port', '0']);
  assert.equal((ready as unknown as { version: string }).version, pkg.version);
  child.kill('SIGTERM');
  await exited(child);
});

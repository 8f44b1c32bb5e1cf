import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, exited, startCli } from '../helpers/cli.js';
import { RawClient } from '../helpers/raw-client.js';


function run(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 10000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('--help and --version', () => {
  const help = run(['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--rest-port/);
  assert.match(help.stdout, /ROOKERY_REST_PORT/);
  // The version, then how this copy was built (docs/languages.md): here the npm package run by Node.
  assert.equal(run(['--version']).stdout.trim(), `rookery 5.0.0 (package, node ${process.versions.node}, ${process.platform}-${process.arch})`);
});

test('start-up errors print one clear line and exit 1', () => {
  const typo = run(['--prot', '1']);
  assert.equal(typo.status, 1);
  assert.match(typo.stderr, /^rookery: unknown option --prot; did you mean --port\?/);
  const dir = mkdtempSync(join(tmpdir(), 'rookery-cli-'));
  writeFileSync(join(dir, 'bad.json'), '{ nope');
  const badConfig = run(['--config', join(dir, 'bad.json')]);
  assert.equal(badConfig.status, 1);
  assert.match(badConfig.stderr, /not valid JSON/);
  writeFileSync(join(dir, 'typo.json'), JSON.stringify({ storage: { INBOX: { mesages: [] } } }));
  const typoConfig = run(['--config', join(dir, 'typo.json'), '--port', '0']);
  assert.equal(typoConfig.status, 1);
  assert.match(typoConfig.stderr, /storage\.INBOX\.mesages: unknown key; did you mean "messages"\?/);
  assert.equal(badConfig.stderr.trim().split('\n').length, 1);
});

test('a port in use is one line and exit 1', async () => {
  const first = await startCli(['--port', '0']);
  try {
    const second = run(['--port', String(first.port)]);
    assert.equal(second.status, 1);
    assert.match(second.stderr, /^rookery: IMAP listener: .* is already in use/);
  } finally {
    first.child.kill('SIGTERM');
    await exited(first.child);
  }
});

test('flags over environment over config; IMAP works; SIGTERM stops gracefully with exit 0', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rookery-cli-'));
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({ port: 1, users: { carol: { password: 'fromconfig' } }, storage: { INBOX: { messages: ['Subject: configured\r\n\r\nhi\r\n'] } } }),
  );
  writeFileSync(join(dir, 'storage.json'), JSON.stringify({ INBOX: { messages: ['Subject: from storage flag\r\n\r\nhi\r\n'] } }));
  // ROOKERY_PORT overrides the config's port 1; the --storage flag overrides the config's storage.
  const { child, port } = await startCli(['--config', join(dir, 'config.json'), '--storage', join(dir, 'storage.json')], {
    ROOKERY_PORT: '0',
    ROOKERY_PLUGIN: 'IDLE,UIDPLUS',
  });
  const client = await RawClient.connect(port);
  const greeting = await client.line();
  assert.match(greeting, /IDLE/);
  assert.match(greeting, /UIDPLUS/);
  assert.match((await client.command('LOGIN carol fromconfig')).at(-1)!, /OK/);
  await client.command('SELECT INBOX');
  const fetched = await client.command('FETCH 1 BODY.PEEK[HEADER.FIELDS (SUBJECT)]');
  assert.match(fetched.join('\n'), /Subject: from storage flag/);
  child.kill('SIGTERM');
  // Graceful: the idle client is told BYE and the command exits once it is gone.
  assert.equal(await client.line(), '* BYE Server shutting down');
  await client.closedByServer();
  assert.equal(await exited(child), 0);
});

test('a second signal forces the stop: a client stuck in a command does not hold the process', async () => {
  const { child, port } = await startCli(['--port', '0', '--plugin', 'all']);
  const client = await RawClient.connect(port);
  await client.line();
  client.write('A1 AUTHENTICATE PLAIN\r\n');
  assert.equal(await client.line(), '+ ');
  child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(child.exitCode, null, 'graceful: waits for the running command');
  child.kill('SIGINT');
  assert.notEqual(await exited(child), null);
  assert.equal(await client.line(), '* BYE Server shutting down');
});

test('REST on: start-up reports its address; POST /v1/shutdown ends the command with exit 0', async () => {
  const { child, output } = await startCli(['--port', '0', '--rest-port', '0']);
  const m = /REST API listening on (http:\/\/[^\s]+\/v1)/.exec(output()) ?? (await new Promise<RegExpExecArray | null>((r) => setTimeout(() => r(/REST API listening on (http:\/\/[^\s]+\/v1)/.exec(output())), 300)));
  assert.ok(m, `no REST line in ${output()}`);
  const base = m[1]!;
  // The dashboard's URL is printed too, and serves the page.
  // Printed right after the REST line, but it may come in a later chunk of stdout.
  let dash: RegExpExecArray | null = null;
  for (let waited = 0; !(dash = /dashboard at (http:\/\/\S+\/)/.exec(output())) && waited < 3000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  assert.ok(dash, `no dashboard line in ${output()}`);
  assert.equal(`${dash[1]}v1`, base);
  assert.match(await (await fetch(dash[1]!)).text(), /<title>Rookery dashboard<\/title>/);
  const mailboxes = (await (await fetch(`${base}/mailboxes`)).json()) as { path: string }[];
  assert.deepEqual(mailboxes.map((x) => x.path), ['INBOX']);
  const res = await fetch(`${base}/shutdown`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 202);
  assert.deepEqual(await res.json(), { shutdown: true });
  assert.equal(await exited(child), 0);
});

/**
 * `rookery record` and `rookery replay` as a user runs them: record a raw
 * session against a Rookery server through the proxy, stop it with SIGTERM,
 * replay the file with another tag set.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, exited, startCli } from '../helpers/cli.js';
import { startServer } from '../helpers/server.js';
import { WireClient } from './wire-client.js';

test('rookery record writes a transcript file that rookery replay serves back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rookery-cli-record-'));
  const file = join(dir, 'bug.txt');
  const { server, port } = await startServer();
  try {
    const child = spawn(process.execPath, [CLI, 'record', '--upstream', `127.0.0.1:${port}`, '--listen', '0', '--out', file]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const proxyPort = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line: ${out}`)), 10_000);
      child.stdout.on('data', () => {
        const m = /listening on [^:]+:(\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
    });
    const c = await WireClient.connect(proxyPort);
    await c.until(/\r\n/);
    c.send('a1 LOGIN testuser testpass\r\na2 SELECT INBOX\r\n');
    await c.until(/a2 OK[^\r]*\r\n/);
    c.send('a3 LOGOUT\r\n');
    await c.closedByServer();
    for (let i = 0; i < 400 && !/session 1 closed/.test(out); i++) await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0);
    const text = readFileSync(file, 'utf8');
    assert.match(text, /^# Rookery transcript 1\n/);
    assert.match(text, /\n\d+ C: a1 LOGIN testuser \*\*\*\n/);

    const replay = await startCli(['replay', file, '--port', '0']);
    try {
      const d = await WireClient.connect(replay.port);
      assert.match(await d.until(/\r\n/), /^\* OK .*Rookery ready\r\n$/);
      d.send('b1 LOGIN testuser whatever\r\nb2 SELECT INBOX\r\n');
      const selected = await d.until(/b2 OK[^\r]*\r\n/);
      assert.match(selected, /^b1 OK [^\r]*\r\n/);
      assert.match(selected, /\* 0 EXISTS\r\n/);
      d.send('b3 LOGOUT\r\n');
      assert.match(await d.until(/b3 OK[^\r]*\r\n/), /^\* BYE/);
      await d.closedByServer();
      // Printed after the listening line the helper waited for; by now it is in.
      assert.match(replay.output(), /replaying .*bug\.txt \(1 recorded session/);
    } finally {
      replay.child.kill('SIGTERM');
      await exited(replay.child);
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rookery record and replay refuse bad arguments with a message', async () => {
  const run = (args: string[]): Promise<{ code: number | null; out: string }> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args]);
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.once('exit', (code) => resolve({ code, out }));
    });
  const noUpstream = await run(['record']);
  assert.equal(noUpstream.code, 1);
  assert.match(noUpstream.out, /--upstream host:port is required/);
  const badUpstream = await run(['record', '--upstream', 'nowhere']);
  assert.match(badUpstream.out, /--upstream: expected host:port, got "nowhere"/);
  const noFile = await run(['replay']);
  assert.match(noFile.out, /replay: name the transcript file/);
  const missing = await run(['replay', '/nonexistent/bug.txt', '--port', '0']);
  assert.equal(missing.code, 1);
  assert.match(missing.out, /script\.replay: cannot read transcript file/);
});

test('rookery --transcript-dir writes each closed session to a file; --transcripts takes on or off', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rookery-cli-transcripts-'));
  const cli = await startCli(['--port', '0', '--transcript-dir', dir]);
  try {
    const c = await WireClient.connect(cli.port);
    await c.until(/\r\n/);
    c.send('a1 LOGIN testuser testpass\r\na2 LOGOUT\r\n');
    await c.closedByServer();
    const file = join(dir, `rookery-${cli.port}-session-1.txt`);
    for (let i = 0; i < 1000 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 5));
    assert.match(readFileSync(file, 'utf8'), /\n\d+ C: a1 LOGIN testuser \*\*\*\n/);
  } finally {
    cli.child.kill('SIGTERM');
    await exited(cli.child);
    rmSync(dir, { recursive: true, force: true });
  }
  const bad = spawn(process.execPath, [CLI, '--transcripts', 'maybe', '--port', '0']);
  let out = '';
  bad.stderr.on('data', (d: Buffer) => (out += d.toString()));
  assert.equal(await exited(bad), 1);
  assert.match(out, /--transcripts: expected on or off, got "maybe"/);
});

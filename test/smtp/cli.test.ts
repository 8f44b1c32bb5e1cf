/**
 * The `rookery` command with SMTP: flags and environment start the intake,
 * start-up and --ready-json report it, and without the optional package
 * smtp-server the command prints one sentence naming it and exits 1.
 * "Without the package" is a copy of the built code in a temporary folder
 * that has no node_modules above it, so `import('smtp-server')` really
 * cannot resolve (no loader tricks).
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import nodemailer from 'nodemailer';
import { CLI, exited } from '../helpers/cli.js';

const BUILT_SRC = fileURLToPath(new URL('../../src/', import.meta.url));

test('--smtp-port (and ROOKERY_SMTP_CATCH_ALL) start the intake; --ready-json and the start-up lines report it', { timeout: 20_000 }, async () => {
  const child = spawn(process.execPath, [CLI, '--ready-json', '--port', '0', '--smtp-port', '0'], { env: { ...process.env, ROOKERY_SMTP_CATCH_ALL: '1' } });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  try {
    const ready = await new Promise<{ smtp: { host: string; port: number; secure: boolean } | null }>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!));
      });
      child.once('exit', () => reject(new Error(`exited early: ${out}${err}`)));
    });
    assert.equal(ready.smtp?.host, '127.0.0.1');
    assert.equal(ready.smtp?.secure, false);
    // The prose lines go to stderr right after the JSON line.
    const line = new RegExp(`SMTP listening on 127\\.0\\.0\\.1:${ready.smtp!.port}`);
    for (let i = 0; i < 100 && !line.test(err); i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(err, line);
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: ready.smtp!.port, ignoreTLS: true });
    const info = await transport.sendMail({ from: 'a@example.com', to: 'someone@anywhere.test', subject: 'catch-all from env', text: 'x' });
    assert.match(info.response, /^250 /);
    transport.close();
  } finally {
    child.kill('SIGTERM');
    await exited(child);
  }
});

test('SMTP settings without a port are a warning, not a silent no-op', { timeout: 20_000 }, async () => {
  const child = spawn(process.execPath, [CLI, '--port', '0', '--smtp-auth']);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    await new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (/IMAP listening/.test(out)) resolve();
      };
      child.stdout.on('data', check);
      child.once('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    assert.match(out, /warning: SMTP settings are set but no SMTP port \(--smtp-port\)/);
    assert.doesNotMatch(out, /SMTP listening/);
  } finally {
    child.kill('SIGTERM');
    await exited(child);
  }
});

test('without the package smtp-server: one sentence naming it and the install command, exit 1; in-process start() rejects and closes IMAP again', { timeout: 20_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rookery-no-smtp-'));
  try {
    await cp(BUILT_SRC, join(dir, 'src'), { recursive: true });
    // The built files are ES modules; without this the copy would load as CommonJS.
    await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
    const run = (args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
      new Promise((resolve) => {
        execFile(process.execPath, args, { cwd: dir, timeout: 15_000, env: { ...process.env, NODE_PATH: '' } }, (error, stdout, stderr) =>
          resolve({ code: error ? (error.code as number | null) : 0, stdout, stderr }),
        );
      });

    const cli = await run([join(dir, 'src', 'cli.js'), '--port', '0', '--smtp-port', '0']);
    assert.equal(cli.code, 1);
    const lines = cli.stderr.trim().split('\n');
    assert.equal(lines.length, 1, cli.stderr);
    assert.match(lines[0]!, /^rookery: SMTP intake needs the optional package smtp-server, which is not installed: run `npm install smtp-server`/);
    // Nothing else in the output: no stack trace, no listening line left standing.
    assert.doesNotMatch(cli.stdout, /listening/);

    // Without SMTP configured the package is never loaded: the same copy runs.
    await writeFile(
      join(dir, 'check.mjs'),
      `import { createServer } from './src/index.js';
       const imapOnly = createServer({ port: 0 });
       await imapOnly.start();
       await imapOnly.stop();
       const server = createServer({ port: 0, smtp: { port: 0 } });
       let message = null;
       try { await server.start(); } catch (err) { message = err.message; }
       await server.stopped;
       console.log(JSON.stringify({ message, imap: server.address() }));`,
    );
    const inProcess = await run([join(dir, 'check.mjs')]);
    assert.equal(inProcess.code, 0, inProcess.stderr);
    const result = JSON.parse(inProcess.stdout) as { message: string; imap: unknown };
    assert.match(result.message, /npm install smtp-server/);
    assert.equal(result.imap, null, 'the IMAP listener start() opened is closed again');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/**
 * Runs examples/python/rest_then_imaplib.py against the compiled `rookery`
 * command: it starts the command, delivers over REST, fetches with imaplib
 * and shuts the server down over REST.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The command as compiled next to this test (build/src/cli.js), like test/cli/cli.test.ts.
const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
// The example is not compiled: resolve it in the source tree from build/test/examples/.
const SCRIPT = fileURLToPath(new URL('../../../examples/python/rest_then_imaplib.py', import.meta.url));
const PYTHON = process.env.PYTHON ?? 'python3';
const available = spawnSync(PYTHON, ['--version']).status === 0;
const skipReason = !available && !process.env.CI ? `${PYTHON} not installed` : false;

/** Quotes one word for Python's shlex.split. */
const quote = (word: string): string => `'${word.replace(/'/g, `'"'"'`)}'`;

test('examples/python/rest_then_imaplib.py runs against the rookery command', { skip: skipReason, timeout: 60_000 }, async () => {
  const child = spawn(PYTHON, [SCRIPT], {
    env: { ...process.env, ROOKERY: `${quote(process.execPath)} ${quote(CLI)}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // The script has its own 30 s watchdog for the server; this one is for the script.
  const killer = setTimeout(() => child.kill('SIGKILL'), 45_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(killer);
  assert.equal(code, 0, `example failed (exit ${code}):\nstdout:\n${stdout}\nstderr:\n${stderr}`);
  assert.match(stdout, /^OK: delivered over REST, fetched over IMAP: 'Hello from REST' \(UID 1\)$/m);
  assert.doesNotMatch(stderr, /FAILED/);
});

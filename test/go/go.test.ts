/**
 * Runs the Go helper's own tests (go/, `go test` and `go vet`) against the
 * single executable: rookery.Start starts it, adds a message over REST, reads
 * it back with a standard-library IMAP exchange, sends one with net/smtp and
 * checks that REST errors are typed.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { seaEnvironment, seaExecutable } from '../helpers/sea.js';

// Resolved in the source tree from build/test/go/: the Go module is not compiled by tsc.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MODULE = path.join(ROOT, 'go');
const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const GO = process.env.GO ?? 'go';
const available = spawnSync(GO, ['version']).status === 0;
const skipReason = !available && !process.env.CI ? `${GO} not installed (apt-get install golang-go)` : false;

/**
 * Go's caches under build/ (HOME may be read-only in CI), and nothing
 * fetched: the module has no dependencies and must keep having none.
 */
function goEnvironment(exe: string): Record<string, string> {
  const cache = path.join(ROOT, 'build', 'go');
  mkdirSync(cache, { recursive: true });
  return seaEnvironment({
    ROOKERY_BIN: exe,
    GOPROXY: 'off',
    GOTOOLCHAIN: 'local',
    GOFLAGS: '-mod=readonly',
    GOWORK: 'off',
    GO111MODULE: 'on',
    CGO_ENABLED: '0',
    GOCACHE: path.join(cache, 'cache'),
    GOPATH: path.join(cache, 'path'),
    GOTELEMETRY: 'off',
  });
}

async function run(args: string[], env: Record<string, string>, limitMs: number): Promise<{ code: number | null; output: string }> {
  const child = spawn(GO, args, { cwd: MODULE, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(killer);
  return { code, output };
}

test('go vet and go test of the Go helper pass against the single executable', { skip: skipReason, timeout: 300_000 }, async () => {
  // Besides the single executable, the npm package's command run by this node.
  const env = { ...goEnvironment(await seaExecutable()), ROOKERY_TEST_NODE: process.execPath, ROOKERY_TEST_CLI: CLI };

  const vet = await run(['vet', './...'], env, 120_000);
  assert.equal(vet.code, 0, `go vet failed (exit ${vet.code}):\n${vet.output}`);
  const goroot = spawnSync(GO, ['env', 'GOROOT'], { env, encoding: 'utf8' }).stdout.trim();
  const fmt = spawnSync(path.join(goroot, 'bin', 'gofmt'), ['-l', '.'], { cwd: MODULE, encoding: 'utf8' });
  assert.equal(fmt.status, 0, `gofmt -l failed: ${fmt.stderr}`);
  assert.equal(fmt.stdout, '', `files gofmt would change:\n${fmt.stdout}`);

  // -v: the names of the tests that ran are asserted below, so a test that
  // stopped being run (renamed, skipped) is noticed.
  const result = await run(['test', '-count=1', '-v', '-timeout=120s', './...'], env, 150_000);
  assert.equal(result.code, 0, `go test failed (exit ${result.code}):\n${result.output}`);
  for (const name of ['TestAddOverRESTThenFetchOverIMAP', 'TestSendOverSMTP', 'TestRESTErrorsAreTyped', 'TestWithCommandRunsTheNpmPackage', 'TestAFailedTestsServerIsKeptWithRookeryKeep']) {
    assert.match(result.output, new RegExp(`^--- PASS: ${name} `, 'm'), `${name} did not pass:\n${result.output}`);
  }
  assert.doesNotMatch(result.output, /^--- SKIP/m, result.output);
  assert.match(result.output, /^ok\s+rookery\.test\/rookery\s/m);
});

/**
 * The shared build of test/helpers/sea.ts, as the language tests use it:
 * two callers at once get one build, the same path, and a file that runs.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { test } from 'node:test';
import { seaEnvironment, seaExecutable } from '../helpers/sea.js';

test('seaExecutable: one build for concurrent callers, reused after, and it runs without NODE_ variables', { skip: process.platform !== 'linux' ? 'Linux only' : false, timeout: 240_000 }, async () => {
  const [a, b] = await Promise.all([seaExecutable(), seaExecutable()]);
  assert.equal(a, b);
  const built = statSync(a).mtimeMs;
  assert.equal(await seaExecutable(), a);
  assert.equal(statSync(a).mtimeMs, built, 'a second call does not build again');
  const version = execFileSync(a, ['--version'], { env: seaEnvironment({ NODE_OPTIONS: '' }), encoding: 'utf8' });
  assert.match(version, /^rookery \d+\.\d+\.\d+ \(single executable, node /);
});

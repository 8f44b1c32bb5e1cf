/**
 * python/rookery.py as a Python user runs it: examples/python/test_with_unittest.py
 * under `python3 -m unittest`, with the module on PYTHONPATH and the
 * compiled command as ROOKERY.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PYTHON = process.env.PYTHON ?? 'python3';
const available = spawnSync(PYTHON, ['--version']).status === 0;
const quote = (word: string): string => `'${word.replace(/'/g, `'"'"'`)}'`;

test('examples/python/test_with_unittest.py passes under python3 -m unittest', { skip: !available && !process.env.CI ? `${PYTHON} not installed` : false, timeout: 90_000 }, async () => {
  const result = await new Promise<{ code: number; out: string }>((resolve) =>
    execFile(
      PYTHON,
      ['-m', 'unittest', '-v', 'test_with_unittest'],
      {
        cwd: `${ROOT}examples/python`,
        timeout: 80_000,
        env: { ...process.env, PYTHONPATH: `${ROOT}python`, ROOKERY: `${quote(process.execPath)} ${quote(CLI)}`, PYTHONDONTWRITEBYTECODE: '1' },
      },
      (error, stdout, stderr) => resolve({ code: error ? 1 : 0, out: `${stdout}\n${stderr}` }),
    ),
  );
  assert.equal(result.code, 0, result.out);
  assert.match(result.out, /^Ran 6 tests in /m, result.out);
  assert.match(result.out, /^OK$/m, result.out);
});

/**
 * rookery/testing as a user runs it: the examples in examples/testing/ are
 * copied into a fresh project whose node_modules has `rookery` (this
 * build, through the package.json `exports` entry), imapflow and vitest, and
 * run there by `node --test` and by `vitest run`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const built = fileURLToPath(new URL('../../src/', import.meta.url));
let project = '';

before(async () => {
  project = await mkdtemp(join(tmpdir(), 'rookery-testing-'));
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }));
  const pkg = join(project, 'node_modules', 'rookery');
  await mkdir(pkg, { recursive: true });
  // The package as published: its package.json, with dist/ being this build's src/.
  await copyFile(join(root, 'package.json'), join(pkg, 'package.json'));
  await symlink(built, join(pkg, 'dist'));
  for (const dep of ['imapflow', 'vitest']) await symlink(join(root, 'node_modules', dep), join(project, 'node_modules', dep));
  for (const file of ['node-test.test.mjs', 'vitest.test.mjs']) await copyFile(join(root, 'examples', 'testing', file), join(project, file));
});

after(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

function run(command: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    // Without NODE_TEST_CONTEXT: the child is a test run of its own, not a part of this one.
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    execFile(command, args, { cwd: project, timeout: 90_000, env: { ...env, NO_COLOR: '1', CI: '1' } }, (error, stdout, stderr) =>
      resolve({ code: error ? 1 : 0, out: `${stdout}\n${stderr}` }),
    );
  });
}

test('the package exports rookery/testing with its types', async () => {
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { types: string; default: string }>; files: string[] };
  assert.deepEqual(pkg.exports['./testing'], { types: './dist/testing/index.d.ts', default: './dist/testing/index.js' });
  assert.ok(pkg.files.includes('python/rookery.py'));
});

test('examples/testing/node-test.test.mjs passes under node --test', { timeout: 100_000 }, async () => {
  const { code, out } = await run(process.execPath, ['--test', '--test-reporter=tap', 'node-test.test.mjs']);
  assert.equal(code, 0, out);
  assert.match(out, /^# pass 3$/m, out);
  assert.match(out, /^# fail 0$/m, out);
});

test('examples/testing/vitest.test.mjs passes under vitest run', { timeout: 100_000 }, async () => {
  const { code, out } = await run(process.execPath, [join(project, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'vitest.test.mjs']);
  assert.equal(code, 0, out);
  assert.match(out, /Tests\s+3 passed \(3\)/, out);
});

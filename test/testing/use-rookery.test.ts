/**
 * rookery/testing as a user runs it: the examples in examples/testing/ are
 * copied into a fresh project whose node_modules has `rookery` (this
 * build, through the package.json `exports` entry), imapflow and vitest, and
 * run there by `node --test` and by `vitest run`.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { interrupt, keptLine, marksOf } from '../helpers/kept.js';

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

/** Three tests: one that passes, one that leaves a message and fails, one that passes on a new server. */
const KEEP_BODY = `
const rookery = useRookery({ plugins: 'all' });
test('first passes', async () => {
  rookery.control.addMessage('INBOX', { raw: 'Subject: one\\r\\n\\r\\n1\\r\\n' });
});
test('second fails', async () => {
  rookery.control.addMessage('INBOX', { raw: 'Subject: left behind\\r\\n\\r\\n2\\r\\n' });
  rookery.control.addMessage('INBOX', { raw: 'Subject: left behind too\\r\\n\\r\\n3\\r\\n' });
  throw new Error('the test failed on purpose');
});
test('third passes on a new server', async () => {
  if (rookery.control.listMessages('INBOX').length !== 0) throw new Error('not a fresh server');
  if (rookery.kept === null) throw new Error('no kept server');
});
`;
const KEEP_FILES = {
  'keep-node.test.mjs': `import { test } from 'node:test';\nimport { useRookery } from 'rookery/testing';\n${KEEP_BODY}`,
  'keep-vitest.test.mjs': `import { test } from 'vitest';\nimport { useRookery } from 'rookery/testing';\n${KEEP_BODY}`,
};

/**
 * Runs a file of KEEP_FILES with ROOKERY_KEEP=1 until the helper says the
 * run is over and its server stays up, checks that server over REST, then
 * stops the run (as a user's Ctrl-C would).
 */
async function checkKept(command: string[], file: string): Promise<void> {
  await writeFile(join(project, file), KEEP_FILES[file as keyof typeof KEEP_FILES]);
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const child = spawn(process.execPath, command, { cwd: project, env: { ...env, NO_COLOR: '1', CI: '1', ROOKERY_KEEP: '1' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true }); // its own group: interrupt() signals vitest's workers too
  const { line: stays } = keptLine(child, file);
  try {
    const line = await stays;
    assert.match(line, /test "second fails" failed/, line);
    const rest = /REST (http:\/\/\S+\/v1)/.exec(line)?.[1];
    const dashboard = /dashboard (http:\/\/\S+\/)/.exec(line)?.[1];
    assert.ok(rest && dashboard, line);
    // The kept server holds what the failing test left (its own two messages, not the first test's: that was reset).
    const messages = (await (await fetch(`${rest}/mailboxes/INBOX/messages`)).json()) as { uid: number }[];
    assert.equal(messages.length, 2, JSON.stringify(messages));
    const page = await fetch(dashboard);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Rookery dashboard/);
    // The test boundaries are in its event stream, with the outcome of each end.
    const marks = await marksOf(rest);
    assert.deepEqual(marks, [
      { text: 'first passes', phase: 'start', outcome: null },
      { text: 'first passes', phase: 'end', outcome: 'pass' },
      { text: 'second fails', phase: 'start', outcome: null },
      { text: 'second fails', phase: 'end', outcome: 'fail' },
    ]);
    // Ctrl-C ends the run with every process of it (vitest's workers too): nothing had to be killed after.
    assert.equal(await interrupt(child), false, 'a process of the kept run outlived Ctrl-C');
  } finally {
    await interrupt(child);
  }
}

test('ROOKERY_KEEP=1 under node --test: the failed test\'s server stays open with its state, its dashboard and its marks', { timeout: 100_000 }, async () => {
  await checkKept(['--test', '--test-reporter=tap', 'keep-node.test.mjs'], 'keep-node.test.mjs');
});

test('ROOKERY_KEEP=1 under vitest: the same', { timeout: 100_000 }, async () => {
  await checkKept([join(project, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'keep-vitest.test.mjs'], 'keep-vitest.test.mjs');
});

test('without ROOKERY_KEEP a failing file ends and keeps nothing', { timeout: 100_000 }, async () => {
  await writeFile(join(project, 'keep-node.test.mjs'), KEEP_FILES['keep-node.test.mjs'].replace("if (rookery.kept === null) throw new Error('no kept server');", "if (rookery.kept !== null) throw new Error('kept a server');"));
  const { code, out } = await run(process.execPath, ['--test', '--test-reporter=tap', 'keep-node.test.mjs']);
  assert.equal(code, 1, out);
  assert.match(out, /^# pass 2$/m, out);
  assert.match(out, /^# fail 1$/m, out);
  assert.doesNotMatch(out, /stays open/);
});

/**
 * Issue 30: `npm ci` warned `npm warn install-scripts ... esbuild@...
 * (postinstall: node install.js)`. esbuild comes with vitest (through vite);
 * its postinstall checks the platform binary that vite runs, so the project
 * approves it in package.json's `allowScripts` (npm 11.16+; npm 12 blocks
 * unapproved scripts). npm itself must find no unreviewed install script.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

test('every dependency install script is reviewed in allowScripts (npm finds none pending)', async (t) => {
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
  assert.equal(pkg.allowScripts?.esbuild, true, 'esbuild (vitest -> vite -> esbuild) is approved by name: the lockfile has no resolved URLs, so a pinned entry would never match');
  const { NODE_TEST_CONTEXT: _c, ...env } = process.env;
  const out = await new Promise<{ code: number; text: string }>((resolve) =>
    execFile('npm', ['approve-scripts', '--allow-scripts-pending', '--offline'], { cwd: root, env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? 1 : 0, text: `${stdout}${stderr}` }),
    ),
  );
  if (/Unknown command|not a valid command|ENOENT/i.test(out.text)) {
    t.skip(`this npm has no approve-scripts (npm < 11.16): ${out.text.trim().split('\n')[0]}`);
    return;
  }
  assert.equal(out.code, 0, out.text);
  assert.match(out.text, /No packages with unreviewed install scripts/);
});

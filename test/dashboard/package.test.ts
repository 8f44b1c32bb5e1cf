/**
 * The dashboard's files are plain files (not compiled into dist/), so the
 * published package must list them in package.json `files`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

test('npm pack ships every file of src/dashboard/static', async () => {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    env: { ...process.env, npm_config_loglevel: 'error' },
  });
  const packed = new Set((JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path));
  const files = await readdir(path.join(root, 'src/dashboard/static'));
  assert.ok(files.includes('index.html'));
  for (const f of files) assert.ok(packed.has(`src/dashboard/static/${f}`), `src/dashboard/static/${f} is in the package`);
});

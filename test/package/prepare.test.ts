/**
 * Issue 9 item 10: `npm i <git url>` and `npm ci` run the `prepare`
 * script, and it must leave the files package.json points at (main,
 * types, bin) in place; a git checkout has no dist/.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface PackageJson {
  main: string;
  types: string;
  bin: Record<string, string>;
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
}

test('prepare builds dist/ from a checkout without one: main, types and bin exist afterwards', async () => {
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as PackageJson;
  assert.ok(pkg.scripts.prepare, 'package.json has a prepare script');
  // The compiler must be there when npm ci / a git install runs prepare.
  assert.ok(pkg.devDependencies.typescript, 'typescript is a devDependency');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rookery-prepare-'));
  try {
    // A checkout as git has it: sources and configs, no dist/.
    for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'scripts']) {
      await cp(path.join(root, f), path.join(dir, f), { recursive: true });
    }
    await symlink(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    await promisify(execFile)('npm', ['run', 'prepare'], { cwd: dir, env: { ...process.env, npm_config_loglevel: 'error' } });
    for (const file of [pkg.main, pkg.types, ...Object.values(pkg.bin)]) {
      const s = await stat(path.join(dir, file));
      assert.ok(s.isFile() && s.size > 0, `${file} was built`);
    }
    const built = (await import(path.join(dir, pkg.main))) as typeof import('../../src/index.js');
    assert.equal(typeof built.createServer, 'function');
    // The dashboard's static files are found from dist/ as published: the sources
    // are gone but for src/dashboard/static (package.json `files`).
    await rm(path.join(dir, 'src'), { recursive: true });
    await cp(path.join(root, 'src/dashboard/static'), path.join(dir, 'src/dashboard/static'), { recursive: true });
    const server = built.createServer({ port: 0, rest: { port: 0 } });
    const { rest } = await server.start();
    try {
      const page = await fetch(`http://127.0.0.1:${rest!.port}/`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<title>Rookery dashboard<\/title>/);
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

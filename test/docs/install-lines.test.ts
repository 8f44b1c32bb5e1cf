/**
 * Issue 30 item 4: while no release is on the npm registry, no page tells a
 * reader to install `rookery` by name from it (they would get a 404, or
 * somebody else's package). RELEASING.md says whether a release is
 * published (`Published on npm: none.` or a version); until then every
 * `npm install` that names the package must name a path, a git URL or a
 * tarball. Pages: README.md, docs/*.md, examples/README.md (RELEASING.md
 * itself says what the lines become after a release).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The package names an `npm install` / `npm i` / `npm add` command line asks the registry for (flags left out). */
export function registryInstalls(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/\bnpm\s+(?:install|i|add)\b([^`#;&|\n]*)/g)) {
    for (const word of m[1]!.trim().split(/\s+/)) {
      if (!word || word.startsWith('-') || word.startsWith('<')) continue;
      // A path, a URL, a git spec or a tarball is not a registry name.
      if (/^(\.|\/|~|[a-z+]+:)|\.tgz$|\.tar\.gz$/i.test(word) || (word.includes('/') && !word.startsWith('@'))) continue;
      out.push(word);
    }
  }
  return out;
}

test('registryInstalls tells registry names from paths, URLs and tarballs', () => {
  assert.deepEqual(registryInstalls('npm install --save-dev rookery   # comment'), ['rookery']);
  assert.deepEqual(registryInstalls('npm i -D rookery@5 imapflow'), ['rookery@5', 'imapflow']);
  assert.deepEqual(registryInstalls('npm install --save-dev ./rookery-5.0.0.tgz'), []);
  assert.deepEqual(registryInstalls('npm install --save-dev git+https://example.org/x/rookery.git'), []);
  assert.deepEqual(registryInstalls('npm install --save-dev <path-or-git-url-of-this-repo>'), []);
  assert.deepEqual(registryInstalls('`npm install smtp-server`'), ['smtp-server']);
});

test('no page installs rookery from the registry while RELEASING.md says none is published', async () => {
  const releasing = await readFile(join(ROOT, 'RELEASING.md'), 'utf8');
  const status = /^Published on npm: (.+?)\.?$/m.exec(releasing);
  assert.ok(status, 'RELEASING.md has a "Published on npm: ..." line');
  if (status[1] !== 'none') return;
  const pages = ['README.md', 'examples/README.md', ...(await readdir(join(ROOT, 'docs'))).filter((n) => n.endsWith('.md')).map((n) => `docs/${n}`)];
  const found: string[] = [];
  for (const page of pages) {
    if (!existsSync(join(ROOT, page))) continue;
    (await readFile(join(ROOT, page), 'utf8')).split('\n').forEach((line, i) => {
      for (const name of registryInstalls(line)) if (/^rookery(@|$)/.test(name)) found.push(`${page}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, [], 'install lines that ask the registry for rookery, which has no release there yet');
});

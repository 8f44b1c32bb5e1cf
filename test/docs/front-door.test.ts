/**
 * Issue 30 item 3: the README is a front door, not the reference. It stays
 * short, shows the two commands first, answers the questions of the first
 * hour (install, a test in process, one from any language, a fault, a wait,
 * reset between tests), and maps every page of docs/, as docs/README.md
 * does; the reference lives in those pages.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { headingsOf, linksOf } from './markdown.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const readme = await readFile(join(ROOT, 'README.md'), 'utf8');

test('the README is at most 300 lines', () => {
  const lines = readme.split('\n').length;
  assert.ok(lines <= 300, `README.md has ${lines} lines; move reference text into docs/`);
});

test('the two commands are the first thing it shows', () => {
  const firstBlock = /^```[^\n]*\n([\s\S]*?)^```/m.exec(readme);
  assert.ok(firstBlock, 'README.md has a code block');
  assert.match(firstBlock[1]!, /^npm ci && npm start\b/m);
  assert.match(firstBlock[1]!, /^npm test\b/m);
  const firstSection = readme.search(/^## /m);
  assert.ok(firstBlock.index < firstSection, 'the commands come before the first section');
});

test('it answers the first hour: install, a test in process, any language, a fault, a wait, reset between tests', () => {
  const headings = headingsOf(readme).map((h) => h.text.toLowerCase());
  for (const topic of [/install/, /in process/, /any language|rest/, /fail on purpose|fault/, /wait/, /reset between tests/]) {
    assert.ok(headings.some((h) => topic.test(h)), `README.md has a section for ${topic}`);
  }
  // Each of those sections shows code that the docs test runs.
  const runnable = readme.match(/^```(?:js|python|sh) run\b/gm) ?? [];
  assert.ok(runnable.length >= 5, `README.md has ${runnable.length} runnable blocks`);
});

test('every page of docs/ is on the README map and in the docs index', async () => {
  const pages = (await readdir(join(ROOT, 'docs'))).filter((n) => n.endsWith('.md') && n !== 'README.md');
  const fromReadme = new Set(linksOf(readme).map((l) => l.target.replace(/#.*$/, '')));
  const index = await readFile(join(ROOT, 'docs', 'README.md'), 'utf8');
  const fromIndex = new Set(linksOf(index).map((l) => l.target.replace(/#.*$/, '')));
  assert.ok(fromReadme.has('docs/README.md'), 'the README links the docs index');
  assert.deepEqual(pages.filter((p) => !fromReadme.has(`docs/${p}`)), [], 'pages the README map leaves out');
  assert.deepEqual(pages.filter((p) => !fromIndex.has(p)), [], 'pages docs/README.md leaves out');
});

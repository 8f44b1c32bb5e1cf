import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The connection layer is shared by IMAP, POP3 and the SMTP intake (docs: design §2): it must not
// depend on one of them, directly or through what it loads.
const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** The relative modules a compiled file loads at run time (type-only imports are gone from the JS). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  // `import x from './a.js'`, `export { y } from './b.js'`, `import './c.js'`, `import('./d.js')`.
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
    found.push(resolve(dirname(file), (m[1] ?? m[2] ?? m[3])!));
  }
  return found;
}

test('nothing in src/connection/ loads src/imap/, directly or through the modules it loads', () => {
  const folder = resolve(src, 'connection');
  const start = readdirSync(folder).filter((f) => f.endsWith('.js')).map((f) => resolve(folder, f));
  assert.ok(start.length >= 3, `the connection layer's modules: ${start.join(', ')}`);
  const seen = new Map<string, string>();
  const queue = start.map((f) => [f, relative(src, f)] as const);
  for (const [file, via] of queue) {
    if (seen.has(file)) continue;
    seen.set(file, via);
    assert.ok(existsSync(file), `${via} loads a module that is not there`);
    assert.ok(!relative(src, file).startsWith('imap/'), `the connection layer loads ${relative(src, file)} (${via})`);
    for (const next of importsOf(file)) queue.push([next, `${via} -> ${relative(src, next)}`]);
  }
  // The walk follows the layer's own imports (connection.js loads the transport faults): it reads them.
  assert.ok(seen.has(resolve(src, 'script/transport.js')), [...seen.values()].join('\n'));
});

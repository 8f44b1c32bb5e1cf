import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// POP3 sits on the protocol-neutral connection layer and the store (issue 33 item 1): nothing of IMAP.
const src = fileURLToPath(new URL('../../src/', import.meta.url));

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
    found.push(resolve(dirname(file), (m[1] ?? m[2] ?? m[3])!));
  }
  return found;
}

function modulesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((f) => {
    const path = join(folder, f);
    if (statSync(path).isDirectory()) return modulesUnder(path);
    return f.endsWith('.js') ? [path] : [];
  });
}

test('nothing in src/pop3/ or src/auth/ loads src/imap/, directly or through the modules it loads', () => {
  const start = [...modulesUnder(resolve(src, 'pop3')), ...modulesUnder(resolve(src, 'auth'))];
  assert.ok(start.length >= 10, `the POP3 modules: ${start.join(', ')}`);
  const seen = new Map<string, string>();
  const queue = start.map((f) => [f, relative(src, f)] as const);
  for (const [file, via] of queue) {
    if (seen.has(file)) continue;
    seen.set(file, via);
    assert.ok(existsSync(file), `${via} loads a module that is not there`);
    assert.ok(!relative(src, file).startsWith('imap/'), `POP3 loads ${relative(src, file)} (${via})`);
    for (const next of importsOf(file)) queue.push([next, `${via} -> ${relative(src, next)}`]);
  }
  // The walk reaches the connection layer and the MIME helpers: it follows real imports.
  assert.ok(seen.has(resolve(src, 'connection/connection.js')), [...seen.values()].join('\n'));
  assert.ok(seen.has(resolve(src, 'mime/crlf.js')), [...seen.values()].join('\n'));
});

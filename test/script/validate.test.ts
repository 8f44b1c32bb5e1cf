import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, ServiceError } from '../../src/index.js';
import type { ScriptRule } from '../../src/index.js';
import { ScriptEngine } from '../../src/script/engine.js';

function invalid(fn: () => unknown, field: RegExp): void {
  assert.throws(fn, (err: unknown) => err instanceof ServiceError && err.code === 'INVALID' && field.test(err.message));
}

test('validation names the field: unknown, wrong type, contradictions', () => {
  const e = new ScriptEngine(1);
  invalid(() => e.add({ on: 'command', sned: 'x' } as unknown as ScriptRule), /sned: unknown field/);
  invalid(() => e.add({ on: 'command', times: 'two' } as unknown as ScriptRule), /times: expected an integer/);
  invalid(() => e.add({ on: 'bogus' } as unknown as ScriptRule), /on: expected one of/);
  invalid(() => e.add({ command: 'LOGIN' } as unknown as ScriptRule), /on: required/);
  invalid(() => e.add({ on: 'command', drop: true, send: 'x' }), /send: cannot be combined with drop/);
  invalid(() => e.add({ on: 'command', truncate: 3 }), /truncate: needs something to send/);
  invalid(() => e.add({ on: 'command', chance: 2 }), /chance/);
  invalid(() => e.add({ on: 'command', match: '(' }), /match/);
  invalid(() => e.add({ on: 'quiet', send: '* BYE\r\n' }), /quietFor: required/);
  invalid(() => e.add({ on: 'command', chunkDelay: 'tick' }), /chunkDelay: needs chunk/);
  assert.equal(e.rules.length, 0);
});

test('adding an array is atomic', () => {
  const e = new ScriptEngine(1);
  invalid(() => e.add([{ on: 'command', send: 'a' }, { on: 'command', drop: true, send: 'b' }]), /\[1\]\.send/);
  assert.equal(e.rules.length, 0);
  const handles = e.add([{ on: 'command', send: 'a' }, { on: 'greeting', drop: true }]);
  assert.deepEqual(
    handles.map((h) => h.id),
    [1, 2],
  );
  assert.equal(e.rules.length, 2);
  assert.equal(handles[0]!.remove(), true);
  assert.deepEqual(
    e.rules.map((r) => r.id),
    [2],
  );
  e.clear();
  assert.equal(e.rules.length, 0);
});

test('script option: array, bad rule reported, file path', async () => {
  const server = createServer({ script: [{ on: 'command', command: 'NOOP', send: '$TAG NO nope\r\n' }] });
  assert.equal(server.script.rules.length, 1);
  assert.throws(
    () => createServer({ script: [{ on: 'command', drop: true, send: 'x' }] }),
    (err: unknown) => err instanceof ServiceError && /script: \[0\]\.send/.test(err.message),
  );
  const { writeFileSync, mkdtempSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const file = join(mkdtempSync(join(tmpdir(), 'rookery-')), 'script.json');
  writeFileSync(file, JSON.stringify([{ on: 'greeting', send: '* OK hi\r\n' }]));
  assert.equal(createServer({ script: file }).script.rules.length, 1);
});

test('matching: first acting rule, nth, times, counters, $TAG', () => {
  const e = new ScriptEngine(1);
  const [a, b] = e.add([
    { on: 'command', command: 'noop', nth: 2, send: '$TAG NO second\r\n' },
    { on: 'command', match: /^\S+ NOOP/i, times: 1, send: '$TAG BAD first\r\n' },
  ]);
  const ctx = (tag: string) => ({ event: 'command' as const, session: 1, tag, command: 'NOOP', state: 'Authenticated', user: 'u', mailbox: null, text: `${tag} NOOP` });
  assert.equal(e.fire(ctx('A1'))!.send!.toString(), 'A1 BAD first\r\n');
  assert.equal(e.fire(ctx('A2'))!.send!.toString(), 'A2 NO second\r\n');
  assert.equal(e.fire(ctx('A3')), null);
  assert.equal(a!.matched, 3);
  assert.equal(a!.hits, 1);
  assert.equal(b!.matched, 2);
  assert.equal(b!.hits, 1);
  assert.deepEqual(
    e.rules.map((r) => [r.matched, r.hits]),
    [
      [3, 1],
      [2, 1],
    ],
  );
});

test('chance follows the seed; reset restarts the sequence and keeps counters', () => {
  const run = (e: ScriptEngine): boolean[] => Array.from({ length: 40 }, () => e.fire({ event: 'quiet', session: 1, tag: null, command: null, state: null, user: null, mailbox: null, text: '', quietFor: 5 }) !== null);
  const e1 = new ScriptEngine(7);
  const e2 = new ScriptEngine(7);
  e1.add({ on: 'quiet', quietFor: 5, chance: 0.3, send: 'x' });
  e2.add({ on: 'quiet', quietFor: 5, chance: 0.3, send: 'x' });
  const first = run(e1);
  assert.deepEqual(first, run(e2));
  assert.ok(first.some((x) => x) && first.some((x) => !x));
  e1.reset();
  assert.deepEqual(run(e1), first);
  assert.equal(e1.rules[0]!.matched, 80);
});

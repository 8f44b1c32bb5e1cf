/**
 * The POP3 fuzzer (test/fuzz/pop3-*.ts): its generator covers every state
 * and stays on one line, and a seeded run of a few thousand inputs against
 * a real listening server finds nothing. `npm run bench -- fuzz --protocol
 * pop3` runs a long one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rand } from './generate.js';
import { Pop3Generator, type Pop3FuzzState } from './pop3-corpus.js';
import { runPop3Fuzz } from './pop3-driver.js';

test('the POP3 generator is deterministic, one line per input, and covers every command in every state', () => {
  const states: Pop3FuzzState[] = ['authorization', 'afterUser', 'transaction', 'authContinuation'];
  const run = (seed: number): string[] => {
    const g = new Pop3Generator(new Rand(seed));
    return Array.from({ length: 4000 }, (_, i) => g.next(states[i % 4]!, '+OK ready <1.2@host>').line);
  };
  const lines = run(7);
  assert.deepEqual(run(7), lines);
  assert.notDeepEqual(run(8), lines);
  assert.equal(lines.filter((l) => l.includes('\n')).length, 0);
  const keywords = new Set(lines.map((l) => l.split(' ')[0]!.toUpperCase()));
  for (const k of ['USER', 'PASS', 'APOP', 'AUTH', 'STAT', 'LIST', 'RETR', 'DELE', 'NOOP', 'RSET', 'QUIT', 'TOP', 'UIDL', 'CAPA', 'STLS', 'UTF8', 'LANG']) assert.ok(keywords.has(k), k);
  // a valid APOP digest for the banner's timestamp is among them (RFC 1939 section 7's example form)
  assert.ok(lines.some((l) => /^APOP testuser [0-9a-f]{32}$/.test(l)));
});

test('a seeded POP3 fuzz run: every line answered, the session goes on, nothing logged or thrown', { timeout: 60_000 }, async () => {
  const report = await runPop3Fuzz({ seed: 33, inputs: 4000, connections: 3 });
  assert.deepEqual(report.findings, []);
  assert.equal(report.inputs, 4000);
  for (const [state, n] of Object.entries(report.states)) assert.ok(n > 0, `no input in ${state}`);
  assert.ok(report.upgrades > 0, 'STLS upgraded some sessions');
  assert.ok(report.quits > 0 && report.answers.continuation > 0);
});


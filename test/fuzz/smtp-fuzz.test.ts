/**
 * The SMTP fuzzer (test/fuzz/smtp-*.ts): a seeded run against real
 * listening servers finds nothing. `npm run bench -- fuzz --protocol smtp`
 * runs a long one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rand } from './generate.js';
import { SmtpGenerator } from './smtp-corpus.js';
import { runSmtpFuzz } from './smtp-driver.js';

test('the SMTP generator is deterministic, one line per input, and covers the commands', () => {
  const run = (seed: number): string[] => {
    const g = new SmtpGenerator(new Rand(seed));
    return Array.from({ length: 2000 }, (_, i) => g.next(i % 10 === 9));
  };
  const lines = run(5);
  assert.deepEqual(run(5), lines);
  assert.notDeepEqual(run(6), lines);
  assert.equal(lines.filter((l) => /[\r\n]/.test(l)).length, 0);
  const verbs = new Set(lines.map((l) => l.split(' ')[0]!.toUpperCase()));
  for (const v of ['EHLO', 'HELO', 'MAIL', 'RCPT', 'DATA', 'RSET', 'NOOP', 'VRFY', 'AUTH', 'QUIT']) assert.ok(verbs.has(v), v);
});

test('a seeded SMTP fuzz run: one reply per command, events and transcripts agree with the wire', { timeout: 90_000 }, async () => {
  const report = await runSmtpFuzz({ seed: 33, inputs: 1500, connections: 2 });
  assert.deepEqual(report.findings, []);
  assert.equal(report.inputs, 1500);
  assert.ok(report.bodies > 0 && report.sasl > 0, JSON.stringify(report));
  assert.ok(report.replies.ok > 0 && report.replies.no > 0 && report.replies.bad > 0, JSON.stringify(report.replies));
});

test('a seeded SMTP fuzz run under STARTTLS attacks played in the bridge (STARTTLS answered in plain text, the greeting rewritten)', { timeout: 90_000 }, async () => {
  for (const attacks of [['starttls-refusal', 'starttls-alert'], ['starttls-stripping']] as const) {
    const report = await runSmtpFuzz({ seed: 34, inputs: 500, connections: 2, attacks });
    assert.deepEqual(report.findings, [], attacks.join(', '));
    assert.equal(report.inputs, 500);
  }
});

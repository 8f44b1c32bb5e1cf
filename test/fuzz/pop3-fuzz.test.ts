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
import { pop3Login, startPop3Server } from '../helpers/pop3-client.js';

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


// The oracle's own checks: POP3 defects a server can be scripted to show (docs/pop3.md) are findings.
for (const [fault, kind] of [
  ['no-dot', 'no-answer'],
  ['double-dot', 'bad-answer'],
] as const) {
  test(`the fuzz oracle reports a RETR answer with pop3Fault ${fault}`, { timeout: 30_000 }, async () => {
    const report = await runPop3Fuzz({ seed: 5, inputs: 600, connections: 1, answerTimeoutMs: 300, script: [{ on: 'pop3', command: 'RETR', pop3Fault: fault }] });
    assert.ok(report.findings.some((f) => f.kind === kind), JSON.stringify(report.findings.map((f) => [f.kind, f.message])));
  });
}

// RFC 1939 section 3: "Responses may be up to 512 characters long, including the terminating CRLF."; RFC 2449
// section 4 keeps the first line of a response at 512 octets while it lets commands grow to 255.
// A client reading status lines into a 512-octet buffer must not meet a longer -ERR that echoes its argument.
test('-ERR answers that name an over-long argument stay within 512 octets', { timeout: 10_000 }, async () => {
  const { server, pop3 } = await startPop3Server();
  server.control.addMessage('INBOX', { raw: 'Subject: a\r\n\r\nx\r\n' });
  const c = await pop3Login(pop3, 'testuser', 'testpass');
  try {
    for (const line of [`DELE 1${'A'.repeat(1000)}`, `LIST ${'9'.repeat(900)}`, `LANG ${'A'.repeat(1000)}`, `TOP 1 ${'9'.repeat(600)}`, `UIDL x${'B'.repeat(1000)}`, `XYZ${'Q'.repeat(1000)}`]) {
      const answer = await c.command(line);
      assert.match(answer, /^-ERR( |$)/, line.slice(0, 8));
      assert.ok(Buffer.byteLength(answer) + 2 <= 512, `${line.slice(0, 8)}...: ${Buffer.byteLength(answer) + 2} octets`);
    }
  } finally {
    c.close();
    await server.stop();
  }
});

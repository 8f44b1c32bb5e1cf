/**
 * How compare replays a recording, between two Rookery servers (no Dovecot
 * needed): AUTHENTICATE PLAIN without an initial response gets the given
 * credentials after the `+`, a synchronizing literal waits for its `+`,
 * IDLE's DONE goes after `+ idling`; equal servers show no difference, one
 * changed answer shows exactly that command.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { writeMbox } from '../../src/fixtures/mbox.js';
import { compareServers, formatReport, generateMailbox } from '../../src/index.js';
import { parseTranscripts } from '../../src/transcript/text.js';
import { startServer } from '../helpers/server.js';

const RECORDING = `# Rookery transcript 1
# session: 1
# opened: 2026-12-01T00:00:00.000Z
0 S: * OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready
1 C: a1 AUTHENTICATE PLAIN
2 S: +\\x20
3 C: ***
4 S: a1 OK done
5 C: a2 SELECT INBOX
6 S: a2 OK [READ-WRITE] done
7 C: a3 APPEND INBOX (\\Seen) {22}
8 S: + OK
9 C: Subject: replayed\\r\\n\\r\\nx
10 S: a3 OK [APPENDUID 1 1] done
11 C: a4 IDLE
12 S: + idling
13 C: DONE
14 S: a4 OK idle done
15 C: a5 FETCH 1:* (FLAGS RFC822.SIZE)
16 S: a5 OK done
17 C: a6 LOGOUT
18 S: * BYE bye
19 S: a6 OK done
`;

const login = { user: 'testuser', password: 'testpass' };

test('equal servers: no difference, and every step of the recording reached both', { timeout: 30_000 }, async () => {
  const a = await startServer({ plugins: 'all' });
  const b = await startServer({ plugins: 'all' });
  try {
    const transcripts = parseTranscripts(RECORDING);
    const started = Date.now();
    const report = await compareServers({
      transcripts,
      reference: { host: '127.0.0.1', port: a.port, login },
      target: { host: '127.0.0.1', port: b.port, login },
      timeoutMs: 3000,
    });
    assert.deepEqual(report.differences, [], formatReport(report));
    assert.equal(report.commands, 6);
    // No step waited for the timeout: each went out when its server asked for it.
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
    for (const s of [a.server, b.server]) {
      const [m] = s.control.listMessages('INBOX', { raw: true });
      assert.equal(Buffer.from(m!.raw!, 'base64').toString(), 'Subject: replayed\r\n\r\nx');
      assert.deepEqual(m!.flags, ['\\Seen']);
    }
  } finally {
    await a.server.stop();
    await b.server.stop();
  }
});

test('a changed answer is a difference of that command only; wrong credentials make the login differ', { timeout: 30_000 }, async () => {
  const a = await startServer({ plugins: 'all' });
  const b = await startServer({ plugins: 'all', script: [{ on: 'command', command: 'FETCH', send: '$TAG NO [SERVERBUG] changed\r\n' }] });
  try {
    const report = await compareServers({
      transcripts: parseTranscripts(RECORDING),
      reference: { host: '127.0.0.1', port: a.port, login, name: 'a' },
      target: { host: '127.0.0.1', port: b.port, login, name: 'b' },
      timeoutMs: 3000,
    });
    assert.equal(report.differences.length, 1, formatReport(report));
    const d = report.differences[0]!;
    assert.equal(d.command, 'FETCH');
    assert.equal(d.index, 5);
    assert.ok(d.reference.some((l) => /^\* 1 FETCH \(FLAGS \(\\Recent \\Seen\) RFC822.SIZE 22\)$/.test(l)), d.reference.join('\n'));
    assert.deepEqual(d.target, ['a5 NO [SERVERBUG]']);
    assert.match(formatReport(report), /session 1, command 5 \(FETCH\): a5 FETCH 1:\* \(FLAGS RFC822.SIZE\)\n {2}- a {2}\* 1 FETCH/);
  } finally {
    await a.server.stop();
    await b.server.stop();
  }
  const c = await startServer({});
  const d = await startServer({});
  try {
    const report = await compareServers({
      transcripts: parseTranscripts(RECORDING),
      reference: { host: '127.0.0.1', port: c.port, login },
      target: { host: '127.0.0.1', port: d.port, login: { user: 'testuser', password: 'wrong' } },
      timeoutMs: 3000,
    });
    assert.equal(report.differences[0]?.command, 'AUTHENTICATE', formatReport(report));
    assert.match(report.differences[0]!.target.join('\n'), /^a1 NO/m);
  } finally {
    await c.server.stop();
    await d.server.stop();
  }
});

test('a recorded STARTTLS ends the replay of its session on both sides, said in the report, not a difference', { timeout: 30_000 }, async () => {
  const a = await startServer({ plugins: 'all' });
  const b = await startServer({ plugins: 'all' });
  try {
    const text = '# Rookery transcript 1\n# session: 4\n0 S: * OK ready\n1 C: a1 CAPABILITY\n2 S: a1 OK done\n3 C: a2 STARTTLS\n4 S: a2 OK go\n5 C: \\x16\\x03\\x01\\\n';
    const report = await compareServers({ transcripts: parseTranscripts(text), reference: { host: '127.0.0.1', port: a.port }, target: { host: '127.0.0.1', port: b.port }, timeoutMs: 2000 });
    assert.deepEqual(report.differences, []);
    assert.deepEqual(report.incomplete.map((i) => [i.session, i.index]), [[4, 2]]);
    assert.match(formatReport(report), /session 4: the replay stopped at command 2 on both servers \(STARTTLS cannot be replayed/);
  } finally {
    await a.server.stop();
    await b.server.stop();
  }
});

test('a redacted recording without credentials for a server is refused before anything is sent', async () => {
  const text = '# Rookery transcript 1\n# session: 1\n# credentials: redacted (***)\n0 S: * OK ready\n1 C: a1 LOGIN testuser ***\n2 S: a1 OK done\n';
  await assert.rejects(
    compareServers({ transcripts: parseTranscripts(text), reference: { host: '127.0.0.1', port: 1, login }, target: { host: '127.0.0.1', port: 1 } }),
    /credentials are redacted \(\*\*\*\): give the credentials of target \(--target-login user:password\)/,
  );
});

test('rookery compare --target --fill: an mbox goes to both servers first; equal servers exit 0', { timeout: 60_000 }, async () => {
  const cli = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
  const dir = await mkdtemp(join(tmpdir(), 'rookery-compare-fill-'));
  const a = await startServer({ plugins: 'all' });
  const b = await startServer({ plugins: 'all' });
  try {
    const mail = generateMailbox({ seed: 4, count: 8 }).messages;
    await writeFile(join(dir, 'fill.mbox'), writeMbox(mail.map((m) => ({ raw: m.raw, ms: m.internaldate.ms }))));
    await writeFile(join(dir, 't.txt'), RECORDING.replace('a5 FETCH 1:* (FLAGS RFC822.SIZE)', 'a5 FETCH 1:* (FLAGS RFC822.SIZE ENVELOPE BODYSTRUCTURE)'));
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [cli, 'compare', join(dir, 't.txt'), '--reference', `127.0.0.1:${a.port}`, '--reference-login', 'testuser:testpass', '--target', `127.0.0.1:${b.port}`, '--target-login', 'testuser:testpass', '--fill', join(dir, 'fill.mbox')], { encoding: 'utf8', timeout: 50_000 }, (e, stdout, stderr) =>
        resolve({ code: e ? Number(e.code ?? 99) : 0, stdout, stderr }),
      );
    });
    assert.equal(out.code, 0, `${out.stdout}\n${out.stderr}`);
    assert.match(out.stdout, /1 session, 6 commands; 0 differences/);
    for (const s of [a.server, b.server]) {
      const stored = s.control.listMessages('INBOX', { raw: true });
      assert.equal(stored.length, 9);
      assert.ok(Buffer.from(stored[0]!.raw!, 'base64').equals(mail[0]!.raw));
    }
  } finally {
    await a.server.stop();
    await b.server.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

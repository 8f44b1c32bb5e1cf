/**
 * `rookery compare` against a throwaway Dovecot: the traffic of real
 * clients (imapflow, node-imap, imaplib, curl, mbsync), recorded by Rookery,
 * replayed against Dovecot and against Rookery on the same mailbox
 * (generated, realistic and malformed, APPENDed to both) shows no
 * difference beyond test/compare/allow-dovecot.txt; a deliberate change in
 * Rookery's answer makes the compare fail, in-process and as the command.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareServers, createServer, formatReport, generateMailbox, MALFORMED_CASE_NAMES, parseAllowList, type FillMessage, type GenerateOptions, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import type { Transcript } from '../../src/transcript/transcript.js';
import { startDovecot, type Dovecot } from '../dovecot/dovecot.js';
// Malformed cases Dovecot refuses to store (its APPEND answers NO): left out of the fill.
import { REFUSED_BY_DOVECOT } from '../dovecot/generator.js';
import { startRecorder } from '../../src/transcript/record.js';
import { recorders } from './record-clients.js';
import { spawn } from 'node:child_process';

const ALLOW_FILE = fileURLToPath(new URL('../../../test/compare/allow-dovecot.txt', import.meta.url));
const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));


const REALISTIC: GenerateOptions = { seed: 36, count: 30, size: { min: 400, max: 6000 }, attachmentSize: { min: 100, max: 3000 } };
const MALFORMED: GenerateOptions = { seed: 36, count: MALFORMED_CASE_NAMES.length - REFUSED_BY_DOVECOT.length, profile: 'malformed', cases: MALFORMED_CASE_NAMES.filter((n) => !REFUSED_BY_DOVECOT.includes(n)) };

function fillMessages(): FillMessage[] {
  return [...generateMailbox(REALISTIC).messages, ...generateMailbox(MALFORMED).messages].map((m) => ({ raw: m.raw, flags: m.flags, internaldate: m.internaldate, label: m.case ?? m.body ?? 'message' }));
}

/**
 * The options of every Rookery here: the default plugins, without COMPRESS (a replay sends what the
 * client sent, uncompressed), and the mailbox layout of the throwaway Dovecot (separator ".", INBOX
 * not subscribed), which a compare cannot normalize away: the clients saw it.
 */
const ROOKERY = { port: 0, capabilities: { hide: ['COMPRESS=DEFLATE'] }, storage: { INBOX: { subscribed: false }, '': { separator: '.' } } } satisfies ServerOptions;

let dovecot: Dovecot | null = null;
/** Lines of allow-list rules some compare of this file used. */
const used = new Set<number>();
let dir = '';
let corpus: Transcript[] = [];
let corpusText = '';
let target: Server | null = null;
let targetPort = 0;
const skip = !process.env.CI && !(await import('../dovecot/dovecot.js')).findDovecot() ? 'dovecot not installed' : false;

before(async () => {
  if (skip) return;
  dovecot = await startDovecot();
  dir = await mkdtemp(join(tmpdir(), 'rookery-compare-'));
  // 1. The same mail on Dovecot and on an empty Rookery, through APPEND.
  target = createServer(ROOKERY);
  targetPort = (await target.start()).imap.port;
  const filled = await compareServers({
    transcripts: [],
    reference: { host: '127.0.0.1', port: dovecot!.port, name: 'dovecot', login: { user: 'testuser', password: 'pass' } },
    target: { host: '127.0.0.1', port: targetPort, name: 'rookery', login: { user: 'testuser', password: 'testpass' } },
    fill: { messages: fillMessages() },
  });
  assert.deepEqual(filled.skipped, [], 'Dovecot refused messages of the fill');
  assert.deepEqual(filled.differences, [], formatReport(filled));
  // 2. The corpus: real clients against a Rookery holding that same mailbox (the target's snapshot), recorded by it.
  const recorder = createServer({ ...ROOKERY, storage: target.control.snapshot() as ServerOptions['storage'] });
  const port = (await recorder.start()).imap.port;
  const closed: number[] = [];
  let opened = 0;
  recorder.on('session', (e) => {
    if (e.type === 'open') opened++;
    if (e.type === 'close') closed.push(e.session.session);
  });
  for (const r of recorders()) {
    if (r.missing) {
      if (process.env.CI) throw new Error(`${r.name}: ${r.missing}`);
      console.log(`# compare corpus: ${r.name} skipped, ${r.missing}`);
      continue;
    }
    await r.run(port);
  }
  // Every session the clients opened has closed (its transcript is complete) before the corpus is read.
  for (let i = 0; i < 250 && closed.length < opened; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(closed.length, opened, 'sessions of the corpus still open');
  corpus = closed.sort((a, b) => a - b).map((n) => recorder.transcript(n)!).filter((t) => t.chunks.length > 0);
  corpusText = corpus.map((t) => t.text()).join('');
  await writeFile(join(dir, 'corpus.txt'), corpusText);
  await recorder.stop();
});

after(async () => {
  await target?.stop();
  await dovecot?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the corpus holds a session of each real client, credentials redacted', { skip }, () => {
  assert.ok(corpus.length >= 5, `only ${corpus.length} sessions`);
  assert.match(corpusText, /LOGIN .*\*\*\*/);
  assert.ok(!corpusText.includes('testpass'));
});

test('compare: Rookery answers the corpus as Dovecot does, beyond the documented allow-list', { skip, timeout: 120_000 }, async () => {
  const allow = parseAllowList(readFileSync(ALLOW_FILE, 'utf8'), ALLOW_FILE);
  const report = await compareServers({
    transcripts: corpus,
    reference: { host: '127.0.0.1', port: dovecot!.port, name: 'dovecot', login: { user: 'testuser', password: 'pass' } },
    target: { host: '127.0.0.1', port: targetPort, name: 'rookery', login: { user: 'testuser', password: 'testpass' } },
    allow,
  });
  assert.equal(report.sessions, corpus.length);
  assert.ok(report.commands > 40, `${report.commands} commands`);
  assert.deepEqual(report.differences, [], formatReport(report, allow));
  console.log(`# ${formatReport(report, allow).trim().split('\n').join('\n# ')}`);
  for (const line of report.allowed.keys()) used.add(line);
});

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'compare', ...args], { timeout: 120_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      for (const m of stdout.matchAll(/^allowed \d+x by rule at line (\d+)/gm)) used.add(Number(m[1]));
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 99) : 0, stdout, stderr });
    });
  });
}

const fillFlags = (): string[] => ['--fill-generate', JSON.stringify(REALISTIC), '--fill-generate', JSON.stringify(MALFORMED)];

test('rookery compare: exit 0 on the corpus with the allow-list; exit 1 once a script rule changes one answer', { skip, timeout: 240_000 }, async () => {
  // A fresh pair each time: another Dovecot user (any name logs in) and a Rookery started by the command itself.
  const ok = await cli([join(dir, 'corpus.txt'), '--reference', `127.0.0.1:${dovecot!.port}`, '--reference-login', 'second:pass', '--allow', ALLOW_FILE, '--names', 'dovecot,rookery', ...fillFlags(), '--config', await configFile({ capabilities: ROOKERY.capabilities, storage: ROOKERY.storage })]);
  assert.equal(ok.code, 0, `${ok.stdout}\n${ok.stderr}`);
  assert.match(ok.stdout, /0 differences/);

  // The deliberate change: SEARCH finds nothing.
  const changed = await cli([
    join(dir, 'corpus.txt'), '--reference', `127.0.0.1:${dovecot!.port}`, '--reference-login', 'third:pass', '--allow', ALLOW_FILE, '--names', 'dovecot,rookery', ...fillFlags(),
    '--config', await configFile({ capabilities: ROOKERY.capabilities, storage: ROOKERY.storage, script: [{ on: 'command', command: ['SEARCH', 'UID SEARCH'], send: '* SEARCH\r\n$TAG OK SEARCH done\r\n' }] }),
  ]);
  assert.equal(changed.code, 1, `${changed.stdout}\n${changed.stderr}`);
  assert.match(changed.stdout, /\((UID )?SEARCH\)/);
  assert.match(changed.stdout, /^ {2}\+ rookery {2}\S+ SEARCH$/m);
  assert.match(changed.stdout, /^ {2}- dovecot {2}\S+ SEARCH \d/m);

  // Usage errors are exit 2, not a pass.
  const bad = await cli([join(dir, 'corpus.txt')]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--reference host:port is required/);
});

const PY_APPEND = `
import imaplib, sys, time
c = imaplib.IMAP4('127.0.0.1', int(sys.argv[1]))
c.login(sys.argv[2], 'pass')
c.select('INBOX')
c.append('INBOX', '(\\\\Flagged)', imaplib.Time2Internaldate(time.gmtime(1700000000)), b'Subject: recorded\\r\\nFrom: a@example.org\\r\\n\\r\\nbody\\r\\n')
c.noop()
c.fetch('1', '(FLAGS RFC822.SIZE ENVELOPE BODY.PEEK[TEXT])')
c.search(None, 'FLAGGED')
c.store('1', '+FLAGS', '(\\\\Seen)')
c.logout()
`;

test('a session recorded by rookery record in front of Dovecot replays against Dovecot and Rookery alike', { skip, timeout: 120_000 }, async () => {
  const recorder = await startRecorder({ upstream: { host: '127.0.0.1', port: dovecot!.port } });
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.env.PYTHON ?? 'python3', ['-c', PY_APPEND, String(recorder.address.port), 'recorded'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`imaplib through the recorder: ${err}`))));
    });
    for (let i = 0; i < 100 && recorder.sessions.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  } finally {
    await recorder.close();
  }
  assert.equal(recorder.sessions.length, 1);
  const file = join(dir, 'recorded.txt');
  await writeFile(file, recorder.sessions.map((t) => t.text()).join(''));
  assert.match(readFileSync(file, 'utf8'), /APPEND INBOX \(\\Flagged\) "14-Nov-2023 22:13:20 \+0000" \{\d+\}/);
  // Replayed for a new Dovecot user and a Rookery the command starts, both given one generated message first,
  // already \Seen, so the recorded STORE of \Seen on message 1 changes nothing (a documented difference);
  // then the recorded APPEND adds the same message to both.
  const r = await cli([file, '--reference', `127.0.0.1:${dovecot!.port}`, '--reference-login', 'replayed:pass', '--allow', ALLOW_FILE, '--fill-generate', '{"seed":1,"count":1,"flags":{"seen":1}}', '--names', 'dovecot,rookery', '--config', await configFile({ capabilities: ROOKERY.capabilities, storage: ROOKERY.storage })]);
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /1 session, \d+ commands; 0 differences/);
});

test('every rule of the allow-list is needed by a compare above (a rule nothing uses any more is removed)', { skip }, () => {
  const allow = parseAllowList(readFileSync(ALLOW_FILE, 'utf8'), ALLOW_FILE);
  assert.deepEqual(allow.filter((r) => !used.has(r.line)).map((r) => `line ${r.line}: ${r.pattern.source}`), []);
});

let configs = 0;
async function configFile(options: Record<string, unknown>): Promise<string> {
  const file = join(dir, `config-${++configs}.json`);
  await writeFile(file, JSON.stringify(options));
  return file;
}

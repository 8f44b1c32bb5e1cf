/**
 * `rookery generate`: what it writes loads back as the same mailbox the
 * function makes (mbox and JSON byte for byte, Maildir with its flags), the
 * stream to stdout equals the file, and bad flags are errors.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createServer, generateMailbox, MALFORMED_CASE_NAMES } from '../../src/index.js';
import type { Storage } from '../../src/options/types.js';

const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
let dir = '';

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rookery-generate-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function rookery(args: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr: stderr.toString() });
    });
  });
}

const stored = (storage: Storage): Buffer[] =>
  createServer({ storage }).control.listMessages('INBOX', { raw: true }).map((m) => Buffer.from(m.raw!, 'base64'));

test('mbox to a file and to stdout: the same bytes, and importing it gives the generated messages', async () => {
  const file = join(dir, 'seven.mbox');
  const written = await rookery(['generate', '--seed', '7', '--count', '40', '--out', file]);
  assert.equal(written.code, 0, written.stderr);
  assert.match(written.stderr, /wrote 40 messages/);
  const piped = await rookery(['generate', '--seed', '7', '--count', '40']);
  assert.ok(piped.stdout.equals(await readFile(file)));
  const want = generateMailbox({ seed: 7, count: 40 }).messages.map((m) => m.raw);
  assert.deepEqual(stored({ INBOX: { import: file } }), want);
});

test('JSON keeps every malformed case byte for byte (base64 where the bytes are not UTF-8), flags and dates too', async () => {
  const file = join(dir, 'malformed.json');
  const count = MALFORMED_CASE_NAMES.length;
  const r = await rookery(['generate', '--profile', 'malformed', '--seed', '3', '--count', String(count), '--format', 'json', '--out', file]);
  assert.equal(r.code, 0, r.stderr);
  const storage = JSON.parse(await readFile(file, 'utf8')) as Storage;
  const server = createServer({ storage });
  const want = generateMailbox({ seed: 3, count, profile: 'malformed' }).messages;
  const got = server.control.listMessages('INBOX', { raw: true });
  assert.equal(got.length, count);
  got.forEach((m, i) => {
    assert.ok(Buffer.from(m.raw!, 'base64').equals(want[i]!.raw), want[i]!.case!);
    assert.deepEqual(m.flags, want[i]!.flags);
  });
});

test('Maildir keeps the flags in the file names; --options and --size reach the generator', async () => {
  const maildir = join(dir, 'Maildir');
  const options = JSON.stringify({ flags: { seen: 1, flagged: 1, answered: 0, draft: 0, deleted: 0, keywordShare: 0 }, bodies: { plain: 1 } });
  const r = await rookery(['generate', '--count', '12', '--size', '3000', '--options', options, '--format', 'maildir', '--out', maildir]);
  assert.equal(r.code, 0, r.stderr);
  const server = createServer({ storage: { INBOX: { import: maildir } } });
  const got = server.control.listMessages('INBOX', { raw: true });
  assert.equal(got.length, 12);
  for (const m of got) {
    assert.deepEqual([...m.flags].sort(), ['\\Flagged', '\\Seen']);
    assert.equal(Buffer.from(m.raw!, 'base64').length, 3000);
  }
});

test('errors: unknown profile, a typo in --options, maildir without --out; --list-cases names every case', async () => {
  const bad = await rookery(['generate', '--profile', 'malformd']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /generate\.profile: expected "realistic" or "malformed", got "malformd"/);
  const typo = await rookery(['generate', '--options', '{"treads":{}}']);
  assert.equal(typo.code, 1);
  assert.match(typo.stderr, /generate\.treads: unknown key; did you mean "threads"\?/);
  const noOut = await rookery(['generate', '--format', 'maildir']);
  assert.equal(noOut.code, 1);
  assert.match(noOut.stderr, /--format maildir needs --out/);
  const list = await rookery(['generate', '--list-cases']);
  assert.equal(list.code, 0);
  const names = list.stdout.toString().trim().split('\n').map((l) => l.split(/\s+/)[0]);
  assert.deepEqual(names, [...MALFORMED_CASE_NAMES]);
});

/**
 * Real clients read a 10,000-message generated mailbox: imapflow (Node) and
 * Python's imaplib fetch every message's envelope, flags and size, and what
 * they got is checked against the generator's own manifest.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { ImapFlow } from 'imapflow';
import { generateMailbox } from '../../src/index.js';
import type { GenerateOptions } from '../../src/index.js';
import { startServer } from '../helpers/server.js';

const COUNT = 10_000;
// Small messages keep the test at a few seconds: the count is what is tested.
const OPTIONS: GenerateOptions = { seed: 36, count: COUNT, size: { min: 300, max: 2000 }, attachmentSize: { min: 100, max: 800 } };
const PYTHON = process.env.PYTHON ?? 'python3';
const hasPython = spawnSync(PYTHON, ['--version']).status === 0;

/** What the mailbox should show: sizes (all generated mail has CRLF line ends, so the served size is the stored one) and flags. */
function expected(): { sizes: number[]; seen: number; ids: string[] } {
  const { messages } = generateMailbox(OPTIONS);
  return {
    sizes: messages.map((m) => m.raw.length),
    seen: messages.filter((m) => m.flags.includes('\\Seen')).length,
    ids: messages.map((m) => `<${m.messageId}>`),
  };
}

test('imapflow fetches all 10,000 messages of a generated mailbox', { timeout: 60_000 }, async () => {
  const want = expected();
  const { server, port } = await startServer({ storage: { INBOX: { generate: OPTIONS } } });
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, disableAutoIdle: true });
  try {
    await client.connect();
    const lock = await client.getMailboxLock('INBOX');
    try {
      const sizes: number[] = [];
      let seen = 0;
      const ids: string[] = [];
      for await (const msg of client.fetch('1:*', { uid: true, flags: true, size: true, envelope: true })) {
        sizes[msg.seq - 1] = msg.size!;
        if (msg.flags!.has('\\Seen')) seen++;
        ids[msg.seq - 1] = msg.envelope!.messageId!;
      }
      assert.equal(sizes.length, COUNT);
      assert.deepEqual(sizes, want.sizes);
      assert.equal(seen, want.seen);
      assert.deepEqual(ids, want.ids);
    } finally {
      lock.release();
    }
    await client.logout();
  } finally {
    await server.stop();
  }
});

const PY = `
import imaplib, re, sys
c = imaplib.IMAP4(sys.argv[1], int(sys.argv[2]))
c.login('testuser', 'testpass')
typ, data = c.select('INBOX', readonly=True)
assert typ == 'OK', data
typ, data = c.fetch('1:*', '(UID FLAGS RFC822.SIZE BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])')
assert typ == 'OK', typ
count = 0
total = 0
seen = 0
ids = []
for item in data:
    if not isinstance(item, tuple):
        continue
    meta = item[0].decode('latin1')
    count += 1
    total += int(re.search(r'RFC822\\.SIZE (\\d+)', meta).group(1))
    if '\\\\Seen' in meta:
        seen += 1
    m = re.search(rb'<([^>]*)>', item[1])
    ids.append(m.group(1).decode() if m else '')
print(count, total, seen, ids[0], ids[-1])
c.logout()
`;

test('Python imaplib fetches all 10,000 messages of a generated mailbox', { skip: !hasPython && !process.env.CI ? `${PYTHON} not installed` : false, timeout: 60_000 }, async () => {
  const want = expected();
  const { server, port } = await startServer({ storage: { INBOX: { generate: OPTIONS } } });
  try {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(PYTHON, ['-c', PY, '127.0.0.1', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => (code === 0 ? resolve(stdout.trim()) : reject(new Error(`imaplib exited ${code}: ${stderr}`))));
    });
    const [count, total, seen, first, last] = out.split(' ');
    assert.equal(Number(count), COUNT);
    assert.equal(Number(total), want.sizes.reduce((a, b) => a + b, 0));
    assert.equal(Number(seen), want.seen);
    assert.equal(`<${first}>`, want.ids[0]);
    assert.equal(`<${last}>`, want.ids[COUNT - 1]);
  } finally {
    await server.stop();
  }
});

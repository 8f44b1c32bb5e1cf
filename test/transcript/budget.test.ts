/**
 * The server-wide transcript budget (`transcript.maxTotalBytes`): many
 * sessions that each stay under their own `maxBytes` cannot together keep
 * more than the budget, and the session that is recording keeps its newest
 * bytes. Real sockets, pipelined NOOPs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawClient } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';

test('live transcripts together stay within maxTotalBytes; the recording session keeps its newest bytes', async () => {
  const { server, port } = await startServer({ transcript: { maxBytes: 64 * 1024, maxTotalBytes: 100 * 1024 } });
  const clients: RawClient[] = [];
  try {
    for (let i = 0; i < 4; i++) {
      const c = await RawClient.connect(port);
      await c.line();
      clients.push(c);
      // About 40 KiB in and 30 KiB out per session: each alone is under maxBytes, four are over the budget.
      const noops = Array.from({ length: 1200 }, (_, n) => `S${i}N${n} NOOP\r\n`).join('');
      c.write(noops);
      await c.until(`S${i}N1199`, 20_000);
    }
    const live = server.transcripts.summaries().filter((s) => s.open);
    assert.equal(live.length, 4);
    const total = live.reduce((n, s) => n + s.bytes, 0);
    assert.ok(total <= 100 * 1024, `live transcripts keep ${total} bytes`);
    assert.ok(live.some((s) => s.droppedBytes > 0), 'something was dropped to stay within the budget');
    // The last session recorded last: its transcript ends with its last answer.
    const last = server.transcript(live[live.length - 1]!.session)!.text();
    assert.match(last, /S3N1199 OK NOOP completed/);
    // Every session still answers.
    for (const c of clients) assert.match((await c.command('NOOP')).at(-1)!, /OK/);
  } finally {
    for (const c of clients) c.close();
    await server.stop();
  }
});

test('maxTotalBytes is checked with the field named', async () => {
  await assert.rejects(async () => startServer({ transcript: { maxTotalBytes: 0 } }), /transcript\.maxTotalBytes/);
});

/**
 * Sessions that open alike share one copy of the chunks they record alike
 * (issue 20's memory per idle session): each transcript still holds exactly
 * its own session's bytes, cut into the same chunks as before, and a reader
 * that changes what it was given changes no other session's transcript.
 * Real sockets; a pinned server clock, so that consecutive chunks of one side
 * merge into one (the case where a shared chunk grows).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../helpers/server.js';
import { WireClient } from './wire-client.js';

test('sessions that open alike each record exactly their own bytes, in the same chunks', async () => {
  const { server, port } = await startServer({ now: 1_800_000_000_000, plugins: ['IDLE'] });
  const clients: WireClient[] = [];
  try {
    for (let i = 0; i < 8; i++) {
      const c = await WireClient.connect(port);
      clients.push(c);
      await c.until(/\r\n/);
      c.send('a1 LOGIN testuser testpass\r\n');
      await c.until(/a1 OK[^\r]*\r\n/);
      // One command in two writes: the client's second chunk joins the first (same side, same time).
      // Odd sessions end it differently, so a chunk shared so far stops matching the others.
      c.send('a2 SELECT IN');
      await new Promise((r) => setTimeout(r, 15));
      c.send(i % 2 === 0 ? 'BOX\r\n' : `BOX${i}\r\n`);
      await c.until(/a2 (OK|NO)[^\r]*\r\n/);
      c.send('a3 IDLE\r\n');
      await c.until(/\+[^\r]*\r\n/);
    }
    const expected = (c: WireClient, from: 'client' | 'server'): Buffer =>
      from === 'server' ? c.bytesReceived() : Buffer.from(c.bytesSent().toString('latin1').replace('testpass', '***'), 'latin1');
    for (const [i, c] of clients.entries()) {
      const t = server.transcript(i + 1)!;
      assert.ok(t.open);
      assert.deepEqual(t.bytes('client'), expected(c, 'client'), `session ${i + 1}`);
      assert.deepEqual(t.bytes('server'), expected(c, 'server'), `session ${i + 1}`);
      // One clock instant: each run of one side's bytes is one chunk.
      for (let k = 1; k < t.chunks.length; k++) assert.notEqual(t.chunks[k]!.from, t.chunks[k - 1]!.from, `session ${i + 1} chunk ${k}`);
    }
    // Sessions that did the same have the same chunks.
    const chunks = (n: number) => server.transcript(n)!.toJSON().chunks;
    assert.deepEqual(chunks(3), chunks(1));
    assert.deepEqual(chunks(7), chunks(5));
    // The even sessions selected INBOX; the odd ones a mailbox that does not exist.
    assert.match(server.transcript(5)!.text(), /a2 SELECT INBOX\r?\n/);
    assert.match(server.transcript(6)!.text(), /a2 SELECT INBOX5\r?\n/);

    // A reader that overwrites its copy leaves every other transcript as it was.
    for (const chunk of server.transcript(1)!.chunks) chunk.data.fill(0x21);
    for (const [i, c] of clients.entries()) {
      assert.deepEqual(server.transcript(i + 1)!.bytes('server'), expected(c, 'server'), `session ${i + 1} after a reader wrote`);
    }

    // Closed, they keep the same bytes.
    for (const c of clients) {
      c.send('DONE\r\na4 LOGOUT\r\n');
      await c.closedByServer();
    }
    for (let i = 0; i < 200 && server.transcripts.summaries().some((s) => s.open); i++) await new Promise((r) => setTimeout(r, 5));
    for (const [i, c] of clients.entries()) {
      const t = server.transcript(i + 1)!;
      assert.equal(t.open, false);
      assert.deepEqual(t.bytes('client'), expected(c, 'client'));
      assert.deepEqual(t.bytes('server'), expected(c, 'server'));
    }
  } finally {
    for (const c of clients) c.destroy();
    await server.stop();
  }
});

/**
 * Issue 18 item 3: event streams have bounded memory. A stream whose client
 * does not read is closed once its queued bytes pass `rest.maxStreamBuffer`
 * (the client may reconnect); streams beyond `rest.maxEventStreams` get
 * 503 with the spec's error object.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import type { RestServer } from '../../src/rest/rest.js';
import { openEvents, request, startRest } from '../rest/helpers.js';

const stats = (server: Server) => (server as unknown as { rest: RestServer }).rest.streamStats();

/** A bounded wait for a condition that the server reaches on its own (no timing assertion). */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** An event stream over a raw socket that stops reading once `: connected` has arrived. */
async function stalledStream(port: number): Promise<{ socket: net.Socket; readAll(limit: number): Promise<{ bytes: number; ended: boolean }> }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write('GET /v1/events?types=flags HTTP/1.1\r\nHost: localhost\r\n\r\n');
  let head = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (c: Buffer): void => {
      head += c.toString('latin1');
      if (head.includes(': connected')) {
        socket.off('data', onData);
        socket.pause();
        resolve();
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed early: ${head}`)));
  });
  assert.match(head, /^HTTP\/1\.1 200/);
  return {
    socket,
    /** Reads what the server still sends, until it closes or `limit` bytes have come. */
    readAll(limit: number) {
      return new Promise((resolve) => {
        let bytes = 0;
        let settled = false;
        const finish = (ended: boolean): void => {
          if (settled) return;
          settled = true;
          socket.destroy();
          resolve({ bytes, ended });
        };
        socket.on('data', (c: Buffer) => {
          bytes += c.length;
          if (bytes > limit) finish(false);
        });
        socket.once('end', () => finish(true));
        socket.once('close', () => finish(true));
        socket.resume();
      });
    },
  };
}

describe('event stream limits', () => {
  test('a stream whose client does not read is closed once its buffer passes maxStreamBuffer; readers keep theirs', async () => {
    const limit = 64 * 1024;
    const messages = Array.from({ length: 300 }, (_, i) => `Subject: m${i}\r\n\r\nbody\r\n`);
    const r = await startRest({ rest: { maxStreamBuffer: limit }, storage: { INBOX: { messages }, '': {} } });
    try {
      const stalled = await stalledStream(r.restPort);
      const reader = await openEvents(r.restPort, '/v1/events?types=flags');
      await until('two streams', () => stats(r.server).streams === 2);
      const uids = r.server.control.listMessages('INBOX').map((m) => m.uid);
      // Each flags event names 300 messages with a long keyword: about 45 KB; 700 of them are about 31 MB.
      const rounds = 700;
      let highest = 0;
      for (let i = 0; i < rounds; i++) {
        r.server.control.setFlags('INBOX', { uids, flags: [`$k${i % 2}${'x'.repeat(100)}`], mode: 'set' });
        const s = stats(r.server);
        for (const q of s.queued) highest = Math.max(highest, q);
        // One event at a time, as IMAP commands arrive: a reading client can keep up.
        await new Promise((resolve) => setImmediate(resolve));
      }
      // The server never held more than the limit plus one event for any stream.
      assert.ok(highest < limit + 64 * 1024, `queued ${highest} bytes for one stream`);
      assert.equal(stats(r.server).streams, 1, 'the stalled stream is still open');
      // What the stalled client still gets is what sat in the kernel and the limit: far from the 31 MB sent to readers.
      const rest = await stalled.readAll(16 * 1024 * 1024);
      assert.ok(rest.ended, `the stalled stream was not closed; ${rest.bytes} bytes read`);
      assert.ok(rest.bytes < 16 * 1024 * 1024, `${rest.bytes} bytes`);
      // The reading client got every event and its stream is open.
      let seen = 0;
      let at = 0;
      await until(
        `${rounds} events on the reading stream`,
        () => {
          const text = reader.text();
          for (let i = text.indexOf('event: flags', at); i >= 0; i = text.indexOf('event: flags', at)) {
            seen++;
            at = i + 1;
          }
          return seen >= rounds;
        },
        20_000,
      );
      assert.equal(seen, rounds);
      assert.equal(reader.res.readableEnded, false);
      // A client that reconnects gets a fresh stream.
      const again = await openEvents(r.restPort, '/v1/events?types=flags');
      assert.equal(again.status, 200);
      again.close();
      reader.close();
    } finally {
      await r.server.stop();
    }
  });

  test('stream N+1 beyond maxEventStreams gets 503 with the error object; a closed one frees its place', async () => {
    const r = await startRest({ rest: { maxEventStreams: 2 } });
    try {
      const a = await openEvents(r.restPort);
      const b = await openEvents(r.restPort, '/v1/events?types=mailbox');
      assert.equal(a.status, 200);
      assert.equal(b.status, 200);
      const refused = await request(r.restPort, 'GET', '/v1/events');
      assert.equal(refused.status, 503);
      assert.match(refused.headers['content-type'] ?? '', /^application\/json/);
      assert.equal(refused.headers['cache-control'], 'no-store');
      assert.deepEqual(Object.keys(refused.json), ['error']);
      assert.equal(refused.json.error.code, 'LIMIT');
      assert.match(refused.json.error.message, /maxEventStreams/);
      // Other requests are not limited.
      assert.equal((await request(r.restPort, 'GET', '/v1/users')).status, 200);
      a.close();
      await until('the closed stream to leave', () => stats(r.server).streams === 1);
      const c = await openEvents(r.restPort, '/v1/events?types=reset');
      assert.equal(c.status, 200);
      c.close();
      b.close();
    } finally {
      await r.server.stop();
    }
  });
});

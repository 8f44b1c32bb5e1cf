/**
 * The event log keeps an `append` of one message as its parts and writes
 * its JSON only when it is read (issue 20: a delivery should cost no
 * serialization). What every reader gets must be what the event's data
 * serializes to, byte for byte: a late SSE stream (`since`), a wait with
 * `since` (in-process and REST), and the byte budget of the backlog
 * (`events.backlogBytes`), which counts the JSON's bytes and the type's.
 * Mailbox names with quotes, backslashes and modified UTF-7, appends by a
 * session (a numeric origin) and appends of several messages at once (COPY,
 * kept as JSON) are all read back here.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Server } from '../../src/index.js';
import { mail, rawSession } from '../helpers/server.js';
import { openEvents, request, startRest } from './helpers.js';

/** The JSON texts of the `append` frames of an SSE text, in order. */
function appendData(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split('\n\n')) {
    if (!block.split('\n').includes('event: append')) continue;
    const line = block.split('\n').find((l) => l.startsWith('data: '));
    if (line) out.push(line.slice(6));
  }
  return out;
}

/** Every `append` event's data as JSON, serialized when the server emitted it. */
function recordAppends(server: Server): string[] {
  const seen: string[] = [];
  server.on('append', (data) => seen.push(JSON.stringify(data)));
  return seen;
}

test('appends read back from the backlog are the JSON of their data, byte for byte', { timeout: 15_000 }, async () => {
  const r = await startRest();
  try {
    const names = ['Quote"Name', 'Back\\slash', 'Caf&AOk-', 'Deep/Er/Folder'];
    for (const path of names) r.server.control.createMailbox({ path });
    const seen = recordAppends(r.server);
    const first = r.server.lastEventId();
    for (const path of ['INBOX', ...names]) r.server.control.addMessage(path, { raw: mail(`to ${path}`) });
    // A session's APPEND (origin: its session number) and COPY of two messages (one event, two UIDs).
    const c = await rawSession(r.imapPort);
    try {
      const appended = (await c.command('APPEND "Quote\\"Name" {12+}\r\nSubject: x\r\n')).join('\n');
      assert.match(appended, /OK/);
      await c.command('SELECT INBOX');
      r.server.control.addMessage('INBOX', { raw: mail('second') });
      await c.command('NOOP');
      assert.match((await c.command('COPY 1:2 "Back\\\\slash"')).join('\n'), /OK/);
    } finally {
      c.close();
    }
    assert.equal(seen.length, 1 + names.length + 3);
    assert.ok(seen.some((s) => /"origin":\d+/.test(s)), `a session's append: ${seen.join('\n')}`);
    assert.ok(seen.some((s) => /"uids":\[\d+,\d+\]/.test(s)), `a COPY of two: ${seen.join('\n')}`);

    const stream = await openEvents(r.restPort, `/v1/events?types=append&since=${first}`);
    try {
      await stream.waitFor(/uids":\[\d+,\d+\]/);
      assert.deepEqual(appendData(stream.text()), seen);
    } finally {
      stream.close();
    }

    // A wait with since gets the oldest matching one from the backlog, in-process and over REST.
    const quoted = await r.server.waitFor('append', { path: 'Quote"Name' }, { since: first, timeout: 1000 });
    assert.equal(JSON.stringify(quoted.data), seen[1]);
    const waited = await request(r.restPort, 'GET', `/v1/events/wait?types=append&since=${first}&match=${encodeURIComponent('path=Caf&AOk-')}&timeout=1000`);
    assert.equal(waited.status, 200, waited.text);
    assert.equal(JSON.stringify(waited.json.data), seen[3]);
  } finally {
    await r.server.stop();
  }
});

test('the backlog byte budget counts an append as the bytes of its JSON and its type', { timeout: 10_000 }, async () => {
  // The budget fits exactly the last three of these appends (bytes as the spec's event log counts them).
  const paths = ['INBOX', 'Quote"Name', 'Caf&AOk-', 'INBOX', 'Quote"Name'];
  const size = (path: string, uid: number): number => Buffer.byteLength(JSON.stringify({ path, uids: [uid], origin: null })) + 'append'.length;
  // UIDs: each mailbox starts at 1, so the five appends get 1, 1, 1, 2, 2.
  const uids = [1, 1, 1, 2, 2];
  const budget = size(paths[2]!, uids[2]!) + size(paths[3]!, uids[3]!) + size(paths[4]!, uids[4]!);
  for (const [slack, keptFrom] of [
    [0, 3],
    [-1, 4],
  ] as const) {
    const r = await startRest({ events: { backlog: 100, backlogBytes: budget + slack } });
    try {
      r.server.control.createMailbox({ path: 'Quote"Name', subscribed: false });
      r.server.control.createMailbox({ path: 'Caf&AOk-', subscribed: false });
      const first = r.server.lastEventId();
      paths.forEach((path, i) => {
        const added = r.server.control.addMessage(path, { raw: mail(`budget ${i}`) });
        assert.equal(added.uid, uids[i]);
      });
      const latest = await request(r.restPort, 'GET', '/v1/events/latest');
      assert.equal(latest.json.id, first + paths.length);
      // The oldest kept is the first of the appends that fit: one byte less drops one more.
      assert.equal(latest.json.oldest, first + keptFrom, `budget ${budget + slack}`);
    } finally {
      await r.server.stop();
    }
  }
});

/**
 * The event log keeps a `command` event (one per command a client sends) as
 * its parts and writes its JSON only when it is read (issue 20: a command
 * should cost no serialization). What every reader gets must be what the
 * event's data serializes to, byte for byte: a late SSE stream (`since`), a
 * wait with `since` (in-process and REST), and the byte budget of the
 * backlog (`events.backlogBytes`), which counts the JSON's bytes and the
 * type's. A user name with a quote, a backslash and bytes UTF-8 writes in
 * several bytes, a tag with `]`, a command before login (user null),
 * refused commands (BAD) and a listener that changes the data it was given
 * are all read back here.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Server } from '../../src/index.js';
import { RawClient } from '../helpers/raw-client.js';
import { openEvents, request, startRest } from './helpers.js';

/** The JSON texts of the `command` frames of an SSE text, in order. */
function commandData(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split('\n\n')) {
    if (!block.split('\n').includes('event: command')) continue;
    const line = block.split('\n').find((l) => l.startsWith('data: '));
    if (line) out.push(line.slice(6));
  }
  return out;
}

/** Every `command` event's data as JSON, serialized when the server emitted it. */
function recordCommands(server: Server): string[] {
  const seen: string[] = [];
  server.on('command', (data) => seen.push(JSON.stringify(data)));
  return seen;
}

/** A user name JSON escapes (quote, backslash) and writes in several bytes (ü, €). */
const ODD_USER = 'ü"\\x€';

/** Sends a line as bytes and reads up to the tagged answer of `tag`. */
async function send(c: RawClient, tag: string, line: Buffer | string): Promise<string[]> {
  c.write(Buffer.concat([Buffer.from(`${tag} `, 'latin1'), Buffer.isBuffer(line) ? line : Buffer.from(line, 'latin1'), Buffer.from('\r\n')]));
  return c.until(tag);
}

/**
 * Commands whose events carry every kind of string: before login (user
 * null), a refused one (BAD), the odd user logged in by a literal, a tag
 * with `]`. The client stays open: its close would add an event.
 */
async function runCommands(port: number): Promise<RawClient> {
  const c = await RawClient.connect(port);
  await c.line();
  await send(c, 'pre1', 'NOOP');
  await send(c, 'bad1', Buffer.from([0x58, 0xe9, 0x7f, 0x46]));
  const user = Buffer.from(ODD_USER, 'utf8');
  assert.match((await send(c, 'l1', Buffer.concat([Buffer.from(`LOGIN {${user.length}+}\r\n`), user, Buffer.from(' pw')]))).join('\n'), /l1 OK/);
  await send(c, 'a', 'SELECT INBOX');
  await send(c, 'x]', 'NOOP');
  await send(c, 'unk', 'XUNKNOWN');
  await send(c, 'z', 'CAPABILITY');
  return c;
}

test('commands read back from the backlog are the JSON of their data, byte for byte', { timeout: 15_000 }, async () => {
  const r = await startRest({ users: { testuser: { password: 'testpass' }, [ODD_USER]: { password: 'pw' } } });
  try {
    const seen = recordCommands(r.server);
    // A listener that changes what it was given must not change what the log keeps.
    r.server.on('command', (data) => {
      (data as { tag: string }).tag = 'changed by a listener';
    });
    const first = r.server.lastEventId();
    const c = await runCommands(r.imapPort);
    assert.equal(seen.length, 7, seen.join('\n'));
    assert.equal(JSON.parse(seen[0]!).user, null);
    assert.equal(JSON.parse(seen[1]!).status, 'BAD');
    assert.equal(JSON.parse(seen[6]!).user, ODD_USER);

    const stream = await openEvents(r.restPort, `/v1/events?types=command&since=${first}`);
    try {
      await stream.waitFor(/"tag":"unk"/);
      assert.deepEqual(commandData(stream.text()), seen);
    } finally {
      stream.close();
    }

    // A wait with since gets the oldest matching one from the backlog, in-process and over REST.
    const selected = await r.server.waitFor('command', { command: 'SELECT' }, { since: first, timeout: 1000 });
    assert.equal(JSON.stringify(selected.data), seen[3]);
    const waited = await request(r.restPort, 'GET', `/v1/events/wait?types=command&since=${first}&match=${encodeURIComponent(`user=${ODD_USER}`)}&timeout=1000`);
    assert.equal(waited.status, 200, waited.text);
    assert.equal(JSON.stringify(waited.json.data), seen[2]);
    c.close();
  } finally {
    await r.server.stop();
  }
});

test('the backlog byte budget counts a command as the bytes of its JSON and its type', { timeout: 10_000 }, async () => {
  // A first run learns each event's JSON; the budget then fits exactly the last three.
  const learn = await startRest({ users: { [ODD_USER]: { password: 'pw' } } });
  let sizes: number[];
  try {
    const seen = recordCommands(learn.server);
    (await runCommands(learn.imapPort)).close();
    sizes = seen.map((json) => Buffer.byteLength(json) + 'command'.length);
  } finally {
    await learn.server.stop();
  }
  const n = sizes.length;
  const budget = sizes[n - 1]! + sizes[n - 2]! + sizes[n - 3]!;
  for (const [slack, kept] of [
    [0, 3],
    [-1, 2],
  ] as const) {
    const r = await startRest({ users: { [ODD_USER]: { password: 'pw' } }, events: { backlog: 100, backlogBytes: budget + slack } });
    try {
      const c = await runCommands(r.imapPort);
      const latest = await request(r.restPort, 'GET', '/v1/events/latest');
      // The last three events are the last three commands: one byte less keeps one fewer.
      assert.equal(latest.json.id - latest.json.oldest + 1, kept, `budget ${budget + slack}: ${JSON.stringify(latest.json)}`);
      c.close();
    } finally {
      await r.server.stop();
    }
  }
});

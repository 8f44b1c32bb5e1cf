/**
 * The event log keeps `command` events (one per command a client sends) and
 * `session` events (connect, login, SELECT, IDLE, logout) as their parts and
 * writes their JSON only when read (issue 20: src/event-parts.ts). What every reader gets must be what the
 * event's data serializes to, byte for byte: a late SSE stream (`since`), a
 * wait with `since` (in-process and REST), and the byte budget of the
 * backlog (`events.backlogBytes`), which counts the JSON's bytes and the
 * type's. A user name with a quote, a backslash and bytes UTF-8 writes in
 * several bytes, a tag with `]`, a command before login (user null),
 * refused commands (BAD), mailbox names with a quote and modified UTF-7, an
 * ENABLEd list, IDLE's `waiting` event and a listener that changes the data
 * it was given are all read back here.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Server } from '../../src/index.js';
import { CommandEventPacker } from '../../src/event-parts.js';
import { RawClient } from '../helpers/raw-client.js';
import { openEvents, request, startRest } from './helpers.js';

/** The JSON texts of the `command` and `session` frames of an SSE text, in order. */
function eventData(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n');
    if (!lines.includes('event: command') && !lines.includes('event: session')) continue;
    const line = block.split('\n').find((l) => l.startsWith('data: '));
    if (line) out.push(line.slice(6));
  }
  return out;
}

/** Every `command` (and, with `sessions`, `session`) event's data as JSON, serialized when the server emitted it. */
function recordEvents(server: Server, sessions = false): string[] {
  const seen: string[] = [];
  server.on('command', (data) => seen.push(JSON.stringify(data)));
  if (sessions) server.on('session', (data) => seen.push(JSON.stringify(data)));
  return seen;
}

/** Mailboxes whose names JSON escapes (a quote) or that are stored in modified UTF-7. */
const BOXES = ['Quote"Box', 'Caf&AOk-'];

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
  await send(c, 'e', 'ENABLE CONDSTORE');
  await send(c, 'a', 'SELECT "Quote\\"Box"');
  await send(c, 'b', 'EXAMINE Caf&AOk-');
  c.write('i IDLE\r\n');
  assert.match(await c.line(), /^\+/);
  c.write('DONE\r\n');
  await c.until('i');
  await send(c, 'x]', 'NOOP');
  await send(c, 'unk', 'XUNKNOWN');
  await send(c, 'z', 'CAPABILITY');
  return c;
}

test('commands and session events read back from the backlog are the JSON of their data, byte for byte', { timeout: 15_000 }, async () => {
  const r = await startRest({ plugins: ['IDLE', 'ENABLE', 'CONDSTORE'], users: { testuser: { password: 'testpass' }, [ODD_USER]: { password: 'pw' } } });
  try {
    for (const path of BOXES) r.server.control.createMailbox({ path });
    const seen = recordEvents(r.server, true);
    // Listeners that change what they were given must not change what the log keeps.
    r.server.on('command', (data) => {
      data.tag = 'changed by a listener';
    });
    r.server.on('session', (data) => {
      data.session.enabled.push('CHANGED');
      data.session.user = 'changed by a listener';
    });
    const first = r.server.lastEventId();
    const c = await runCommands(r.imapPort);
    c.close();
    await r.server.waitFor('session', { type: 'close' }, { since: first, timeout: 2000 });
    const parsed = seen.map((json) => JSON.parse(json) as Record<string, unknown>);
    const commands = parsed.filter((e) => 'tag' in e);
    assert.equal(commands.length, 10, seen.join('\n'));
    assert.equal(commands[0]!.user, null);
    assert.equal(commands[1]!.status, 'BAD');
    assert.equal(commands[9]!.user, ODD_USER);
    const sessions = parsed.filter((e) => 'type' in e) as { type: string; session: { mailbox: string | null; enabled: string[] }; command?: string }[];
    assert.deepEqual(
      sessions.map((e) => e.type),
      ['open', 'login', 'select', 'unselect', 'select', 'waiting', 'close'],
    );
    assert.ok(sessions.some((e) => e.session.mailbox === 'Quote"Box' && e.session.enabled.includes('CONDSTORE')), seen.join('\n'));
    assert.ok(sessions.some((e) => e.session.mailbox === 'Caf&AOk-'), seen.join('\n'));
    assert.equal(sessions.find((e) => e.type === 'waiting')?.command, 'IDLE');

    const stream = await openEvents(r.restPort, `/v1/events?types=command,session&since=${first}`);
    try {
      await stream.waitFor(/"type":"close"/);
      assert.deepEqual(eventData(stream.text()), seen);
    } finally {
      stream.close();
    }

    // A wait with since gets the oldest matching one from the backlog, in-process and over REST.
    const selected = await r.server.waitFor('command', { command: 'SELECT' }, { since: first, timeout: 1000 });
    assert.equal(JSON.stringify(selected.data), seen[parsed.findIndex((e) => e.command === 'SELECT')]);
    const waited = await request(r.restPort, 'GET', `/v1/events/wait?types=command&since=${first}&match=${encodeURIComponent(`user=${ODD_USER}`)}&timeout=1000`);
    assert.equal(waited.status, 200, waited.text);
    assert.equal(JSON.stringify(waited.json.data), seen[parsed.findIndex((e) => e.command === 'LOGIN')]);
    const unselected = await request(r.restPort, 'GET', `/v1/events/wait?types=session&since=${first}&match=${encodeURIComponent('type=unselect')}&timeout=1000`);
    assert.equal(unselected.status, 200, unselected.text);
    assert.equal(JSON.stringify(unselected.json.data), seen[parsed.findIndex((e) => e.type === 'unselect')]);
  } finally {
    await r.server.stop();
  }
});

test('the backlog byte budget counts a command or session event as the bytes of its JSON and its type', { timeout: 15_000 }, async () => {
  const options = { plugins: ['IDLE', 'ENABLE', 'CONDSTORE'], users: { [ODD_USER]: { password: 'pw' } } };
  /** Runs the commands and closes the client; resolves once its `close` event is in. */
  const runAll = async (r: Awaited<ReturnType<typeof startRest>>): Promise<void> => {
    for (const path of BOXES) r.server.control.createMailbox({ path, subscribed: false });
    const c = await runCommands(r.imapPort);
    // Waiting from now (a small budget has already lost the older events a `since` would need).
    const closed = r.server.waitFor('session', { type: 'close' }, { timeout: 2000 });
    c.close();
    await closed;
  };
  // A first run learns each event's size; in later runs the budget fits exactly the last k events.
  const learn = await startRest(options);
  let sizes: number[];
  try {
    const seen: { type: string; json: string }[] = [];
    learn.server.on('command', (data) => seen.push({ type: 'command', json: JSON.stringify(data) }));
    learn.server.on('session', (data) => seen.push({ type: 'session', json: JSON.stringify(data) }));
    await runAll(learn);
    sizes = seen.map((e) => Buffer.byteLength(e.json) + e.type.length);
    // The last events: commands, then the session's close.
    assert.deepEqual(seen.slice(-4).map((e) => e.type), ['command', 'command', 'command', 'session']);
  } finally {
    await learn.server.stop();
  }
  for (const k of [1, 3, 9]) {
    const budget = sizes.slice(-k).reduce((a, b) => a + b, 0);
    for (const [slack, kept] of [
      [0, k],
      [-1, k - 1],
    ] as const) {
      const r = await startRest({ ...options, events: { backlog: 100, backlogBytes: budget + slack } });
      try {
        await runAll(r);
        const latest = await request(r.restPort, 'GET', '/v1/events/latest');
        // One byte less keeps one event fewer.
        const held = latest.json.oldest === null ? 0 : latest.json.id - latest.json.oldest + 1;
        assert.equal(held, kept, `last ${k} events, budget ${budget + slack}: ${JSON.stringify(latest.json)}`);
      } finally {
        await r.server.stop();
      }
    }
  }
});

test('a packed command event writes the JSON of its data and counts its bytes exactly, whatever its words', () => {
  const packer = new CommandEventPacker();
  const words = ['NOOP', 'UID FETCH', 'a"b', 'back\\slash', 'ünï', '\u0001ctl', ''];
  const users = [null, 'testuser', 'o"dd', 'ü'];
  for (const command of words) {
    for (const user of users) {
      for (const status of ['OK', 'NO', 'BAD'] as const) {
        for (const protocol of ['imap', 'pop3', 'smtp'] as const) {
          const tag = `${command}-${status}`;
          const packed = packer.pack(command, status, user, protocol);
          assert.ok(packed >= 0);
          const json = packer.parts(7, tag, packed).json();
          assert.equal(json, JSON.stringify({ session: 7, tag, command, status, user, protocol }));
          assert.equal(packer.bytes(7, tag, packed), Buffer.byteLength(json));
        }
      }
    }
  }
  // Words a peer makes up past the table's bounds are not packed (the event is kept as an object).
  assert.equal(packer.pack('X'.repeat(65), 'OK', null, 'imap'), -1);
  assert.equal(packer.pack('NOOP', 'MAYBE', null, 'imap'), -1);
});

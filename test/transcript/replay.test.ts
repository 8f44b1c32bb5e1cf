/**
 * Record and replay: imapflow's session against Rookery, recorded through
 * the `rookery record` proxy, replayed to imapflow by `script: { replay }`
 * gives imapflow the same results; a raw client with other tags gets the
 * responses retagged; a client that leaves the recording gets
 * BAD [CLIENTBUG] and a `replay` event.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ImapFlow } from 'imapflow';
import { startRecorder } from '../../src/index.js';
import { parseTranscripts } from '../../src/transcript/text.js';
import { collect, mail, startServer } from '../helpers/server.js';
import { request, startRest } from '../rest/helpers.js';
import { WireClient } from './wire-client.js';

/** What a test does with imapflow, returned as plain data to compare. */
async function session(port: number, clientDefaults = false): Promise<unknown> {
  const client = new ImapFlow({
    host: '127.0.0.1',
    port,
    secure: false,
    auth: { user: 'testuser', pass: 'testpass' },
    logger: false,
    disableAutoIdle: true,
    // With its defaults imapflow upgrades to TLS and compresses whenever the server offers to.
    ...(clientDefaults ? { tls: { rejectUnauthorized: false } } : { disableCompression: true }),
  });
  await client.connect();
  const out: Record<string, unknown> = {};
  out.capabilities = [...client.capabilities.keys()].sort();
  out.list = (await client.list()).map((m) => m.path).sort();
  const box = await client.mailboxOpen('INBOX');
  out.exists = box.exists;
  out.uidValidity = String(box.uidValidity);
  const messages: unknown[] = [];
  for await (const m of client.fetch('1:*', { uid: true, flags: true, envelope: true, source: true })) {
    messages.push({ uid: m.uid, flags: [...(m.flags ?? [])].sort(), subject: m.envelope?.subject, size: m.source?.length });
  }
  out.messages = messages;
  out.appended = await client.append('INBOX', mail('appended by imapflow'), ['\\Seen'], new Date('2026-11-02T10:00:00Z'));
  out.search = await client.search({ seen: false });
  out.flagged = await client.messageFlagsAdd('1', ['\\Flagged']);
  out.status = await client.status('INBOX', { messages: true, unseen: true, uidNext: true });
  await client.logout();
  return out;
}

test('record imapflow against Rookery, replay it to imapflow: the same results', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rookery-record-'));
  const file = join(dir, 'session.txt');
  const { server, port } = await startServer({ storage: { INBOX: { messages: [mail('first'), mail('second')] }, '': {} } });
  const recorder = await startRecorder({ upstream: { host: '127.0.0.1', port }, out: file });
  try {
    const original = await session(recorder.address.port);
    // The recorder writes a session once both connections are closed.
    for (let i = 0; i < 200 && recorder.sessions.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(recorder.sessions.length, 1);
    const text = readFileSync(file, 'utf8');
    assert.ok(!text.includes('testpass'), 'the password is redacted');
    // The default set offers AUTH=PLAIN: imapflow logs in with AUTHENTICATE, its response redacted.
    assert.match(text, /^\d+ C: \S+ AUTHENTICATE PLAIN\n\d+ S: \+\\x20\n\d+ C: \*\*\*$/m);

    const replay = await startServer({ script: { replay: file } });
    try {
      const done = replay.server.waitFor('replay', { type: 'done' }, { timeout: 10_000 });
      const deviations = collect(replay.server, 'replay');
      const replayed = await session(replay.port);
      assert.deepEqual(replayed, original);
      await done;
      assert.deepEqual(deviations.filter((e) => e.type === 'deviation'), []);
      // The replay records its own session too: the client sent what the recorded client sent.
      const own = replay.server.transcript(1)!;
      assert.equal(own.bytes('server').toString('latin1'), recorder.sessions[0]!.bytes('server').toString('latin1'));
    } finally {
      await replay.server.stop();
    }
  } finally {
    await recorder.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

const RECORDED = `# Rookery transcript 1
# session: 7
# opened: 2026-11-25T01:00:00.000Z
0 S: * OK [CAPABILITY IMAP4rev1 LITERAL+] ready
3 C: a1 LOGIN testuser ***
4 S: a1 OK LOGIN completed
5 C: a2 APPEND INBOX {11}
5 S: + Ready for literal data
6 C: hello\\r\\nab\\\\\\
6 C: c
6 S: * 1 EXISTS
6 S: a2 OK [APPENDUID 1 1] APPEND completed
7 C: a3 LOGOUT
7 S: * BYE logging out
7 S: a3 OK LOGOUT completed
`;

test('replay retags the recorded responses with the live tags, waits out a deviation with BAD [CLIENTBUG] and a replay event', async () => {
  const [t] = parseTranscripts(RECORDED);
  assert.equal(t!.bytes('client').toString('latin1'), 'a1 LOGIN testuser ***\r\na2 APPEND INBOX {11}\r\nhello\r\nab\\c\r\na3 LOGOUT\r\n');
  const { server, port } = await startServer({ script: { replay: RECORDED } });
  try {
    const events = collect(server, 'replay');
    const c = await WireClient.connect(port);
    assert.equal(await c.until(/\r\n/), '* OK [CAPABILITY IMAP4rev1 LITERAL+] ready\r\n');
    c.send('x1 LOGIN testuser anything\r\n');
    assert.equal(await c.until(/\r\n/), 'x1 OK LOGIN completed\r\n');
    c.send('x2 SELECT INBOX\r\n');
    const bad = await c.until(/\r\n/);
    assert.match(bad, /^x2 BAD \[CLIENTBUG\] Replay of recorded session 7: expected "a2 APPEND INBOX \{11\}", got "x2 SELECT INBOX"\r\n$/);
    assert.deepEqual(events[0], { type: 'deviation', session: 1, recorded: 7, expected: 'a2 APPEND INBOX {11}', received: 'x2 SELECT INBOX' });
    c.send('x3 APPEND INBOX {11}\r\n');
    assert.equal(await c.until(/\r\n/), '+ Ready for literal data\r\n');
    c.send('hello\r\nab\\c\r\n');
    assert.equal(await c.until(/x3 OK[^\r]*\r\n/), '* 1 EXISTS\r\nx3 OK [APPENDUID 1 1] APPEND completed\r\n');
    c.send('x4 LOGOUT\r\n');
    assert.equal(await c.until(/x4 OK[^\r]*\r\n/), '* BYE logging out\r\nx4 OK LOGOUT completed\r\n');
    await c.closedByServer();
    assert.equal(events.at(-1)!.type, 'done');
  } finally {
    await server.stop();
  }
});

test('a transcript pasted into Markdown (fenced, indented, trailing spaces lost) reads the same', () => {
  const pasted = '```text\n' + RECORDED.split('\n').map((l) => (l ? `    ${l.trimEnd()}` : l)).join('\n') + '```\n';
  const [a] = parseTranscripts(RECORDED);
  const [b] = parseTranscripts(pasted);
  assert.deepEqual(b!.bytes('client'), a!.bytes('client'));
  assert.deepEqual(b!.bytes('server'), a!.bytes('server'));
  assert.equal(b!.session, 7);
});

test('script.replay is checked when the server is made: a bad file or line is named', async () => {
  const { createServer } = await import('../../src/index.js');
  assert.throws(() => createServer({ script: { replay: '/nonexistent/transcript.txt' } }), /script\.replay: cannot read transcript file/);
  assert.throws(() => createServer({ script: { replay: '# Rookery transcript 1\n0 X: hello\n' } }), /script\.replay: transcript line 2: expected "<ms> C: <bytes>"/);
  assert.throws(() => createServer({ script: { replay: RECORDED, rules: [] } as never }), /script\.rules: unknown key next to replay/);
});

test('replay events reach REST waits and the session list', async () => {
  const rest = await startRest({ script: { replay: RECORDED } });
  try {
    const c = await WireClient.connect(rest.imapPort);
    await c.until(/\r\n/);
    c.send('q1 CAPABILITY\r\n');
    await c.until(/q1 BAD[^\r]*\r\n/);
    const wait = await request(rest.restPort, 'GET', '/v1/events/wait?types=replay&match=type=deviation&since=0&timeout=2000');
    assert.equal(wait.status, 200);
    assert.equal(wait.json.data.received, 'q1 CAPABILITY');
    assert.equal(wait.json.data.expected, 'a1 LOGIN testuser ***');
    const sessions = await request(rest.restPort, 'GET', '/v1/sessions');
    assert.equal(sessions.json[0].session, 1);
    const own = await request(rest.restPort, 'GET', '/v1/sessions/1/transcript?format=text');
    assert.match(own.text, /\n\d+ C: q1 CAPABILITY\n\d+ S: q1 BAD \[CLIENTBUG\]/);
    c.destroy();
  } finally {
    await rest.server.stop();
  }
});

test('a replay follows no unit larger than the recording could match: BYE [CLIENTBUG] and the connection ends', async () => {
  const { server, port } = await startServer({ script: { replay: RECORDED } });
  try {
    const events = collect(server, 'replay');
    const c = await WireClient.connect(port);
    await c.until(/\r\n/);
    c.send(`x1 LOGIN ${'a'.repeat(200_000)}`);
    assert.match(await c.until(/\r\n/), /^\* BYE \[CLIENTBUG\] Replay of recorded session 7: a line or literal longer than anything in the recording/);
    await c.closedByServer();
    assert.equal(events[0]!.type, 'deviation');
  } finally {
    await server.stop();
  }
});

test('a file with several sessions: connections get them in turn, from the first again after the last', async () => {
  const two = '# Rookery transcript 1\n# session: 1\n0 S: * OK first\n' + '# Rookery transcript 1\n# session: 2\n0 S: * OK second\n';
  const { server, port } = await startServer({ script: { replay: two } });
  try {
    const greetings: string[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await WireClient.connect(port);
      greetings.push(await c.until(/\r\n/));
      c.destroy();
    }
    assert.deepEqual(greetings, ['* OK first\r\n', '* OK second\r\n', '* OK first\r\n']);
  } finally {
    await server.stop();
  }
});

test('rookery record keeps the traffic readable: STARTTLS and COMPRESS are not offered, and refused when asked for', async () => {
  const { server, port } = await startServer({ starttls: true, plugins: ['COMPRESS', 'IDLE'], storage: { INBOX: { messages: [mail('first')] }, '': {} } });
  const recorder = await startRecorder({ upstream: { host: '127.0.0.1', port } });
  try {
    // imapflow with its defaults, which would upgrade and compress.
    const original = await session(recorder.address.port, true);
    for (let i = 0; i < 200 && recorder.sessions.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    const text = recorder.sessions[0]!.text();
    assert.doesNotMatch(text, /STARTTLS|COMPRESS=/);
    assert.deepEqual((original as { capabilities: string[] }).capabilities.filter((c) => /STARTTLS|COMPRESS/.test(c)), []);
    const replay = await startServer({ script: { replay: text } });
    try {
      const deviations = collect(replay.server, 'replay');
      assert.deepEqual(await session(replay.port, true), original);
      assert.deepEqual(deviations.filter((e) => e.type === 'deviation'), []);
    } finally {
      await replay.server.stop();
    }
    // A client that asks anyway gets NO from the proxy, and the command never reaches the server.
    const c = await WireClient.connect(recorder.address.port);
    await c.until(/\r\n/);
    c.send('r1 STARTTLS\r\n');
    assert.match(await c.until(/\r\n/), /^r1 NO \[CANNOT\] STARTTLS is off while rookery record records this connection\r\n$/);
    c.send('r2 NOOP\r\n');
    assert.match(await c.until(/\r\n/), /^r2 OK/);
    c.destroy();
  } finally {
    await recorder.close();
    await server.stop();
  }
});

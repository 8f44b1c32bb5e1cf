/**
 * Transcripts: what a raw client sent and received, byte for byte, is what
 * the server's transcript holds (plain, inside TLS, after COMPRESS
 * decompression), credentials redacted by default, bounded, over REST as
 * JSON and text, and written to a directory.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';
import type { Server } from '../../src/index.js';
import { parseTranscripts } from '../../src/transcript/text.js';
import { request, startRest } from '../rest/helpers.js';
import { startServer } from '../helpers/server.js';
import { WireClient } from './wire-client.js';

/** Waits until session `n` has closed and returns its transcript. */
async function closedTranscript(server: Server, n: number) {
  for (let i = 0; i < 400; i++) {
    const t = server.transcript(n);
    if (t && !t.open) return t;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`session ${n} did not close`);
}

const MESSAGE = 'Subject: hi\r\n\r\nbody line\r\nA1 OK not a response\r\n';

test('a transcript holds exactly the bytes a raw client sent and received', async () => {
  const { server, port } = await startServer({ transcript: { redact: false } });
  try {
    const c = await WireClient.connect(port);
    await c.until(/\r\n/);
    c.send('a1 LOGIN testuser "testpass"\r\n');
    await c.until(/a1 OK[^\r]*\r\n/);
    // Pipelined commands in one write, a command split over writes, a literal with CRLFs inside.
    c.send('a2 NOOP\r\na3 SELECT INBOX\r\n');
    await c.until(/a3 OK[^\r]*\r\n/);
    c.send('a4 APP');
    await new Promise((r) => setTimeout(r, 20));
    c.send(`END INBOX {${Buffer.byteLength(MESSAGE)}}\r\n`);
    await c.until(/\+[^\r]*\r\n/);
    c.send(`${MESSAGE}\r\n`);
    await c.until(/a4 OK[^\r]*\r\n/);
    c.send('a5 FETCH 1 BODY[]\r\n');
    await c.until(/a5 OK[^\r]*\r\n/);
    c.send('a6 LOGOUT\r\n');
    await c.closedByServer();
    const t = await closedTranscript(server, 1);
    assert.deepEqual(t.bytes('client'), c.bytesSent());
    assert.deepEqual(t.bytes('server'), c.bytesReceived());
    assert.equal(t.redacted, false);
    assert.equal(t.user, 'testuser');
    assert.ok(t.chunks.every((chunk, i) => i === 0 || chunk.at >= t.chunks[i - 1]!.at), 'times never go back');
    // The text form reads back to the same bytes.
    const [back] = parseTranscripts(t.text());
    assert.deepEqual(back!.bytes('client'), c.bytesSent());
    assert.deepEqual(back!.bytes('server'), c.bytesReceived());
  } finally {
    await server.stop();
  }
});

test('credentials are redacted by default: LOGIN passwords (quoted and literal), SASL-IR and continuation responses', async () => {
  const { server, port } = await startServer({ plugins: ['AUTH=PLAIN', 'SASL-IR'] });
  try {
    const plain = Buffer.from('\0testuser\0testpass').toString('base64');
    const c = await WireClient.connect(port);
    await c.until(/\r\n/);
    c.send('a1 LOGIN testuser "testpass"\r\n');
    await c.until(/a1 OK[^\r]*\r\n/);
    c.send('a2 UNAUTHENTICATE\r\n');
    await c.until(/a2 [^\r]*\r\n/);
    c.send(`a3 AUTHENTICATE PLAIN ${plain}\r\n`);
    await c.until(/a3 [^\r]*\r\n/);
    c.send('a4 LOGOUT\r\n');
    await c.closedByServer();

    const d = await WireClient.connect(port);
    await d.until(/\r\n/);
    d.send('b1 LOGIN {8}\r\n');
    await d.until(/\+[^\r]*\r\n/);
    d.send('testuser {8}\r\n');
    await d.until(/\+[^\r]*\r\n/);
    d.send('testpass\r\n');
    await d.until(/b1 OK[^\r]*\r\n/);
    d.send('b2 LOGOUT\r\n');
    await d.closedByServer();

    const e = await WireClient.connect(port);
    await e.until(/\r\n/);
    e.send('c1 AUTHENTICATE PLAIN\r\n');
    await e.until(/\+[^\r]*\r\n/);
    e.send(`${plain}\r\n`);
    await e.until(/c1 OK[^\r]*\r\n/);
    e.send('c2 AUTHENTICATE PLAIN\r\n');
    await e.until(/c2 [^\r]*\r\n/);
    e.send('c3 LOGOUT\r\n');
    await e.closedByServer();

    const first = await closedTranscript(server, 1);
    assert.equal(first.redacted, true);
    const sent1 = first.bytes('client').toString('latin1');
    assert.equal(sent1, `a1 LOGIN testuser ***\r\na2 UNAUTHENTICATE\r\na3 AUTHENTICATE PLAIN ***\r\na4 LOGOUT\r\n`);
    assert.deepEqual(first.bytes('server'), c.bytesReceived(), 'server output is never redacted');

    const second = await closedTranscript(server, 2);
    assert.equal(second.bytes('client').toString('latin1'), 'b1 LOGIN {8}\r\ntestuser ***\r\nb2 LOGOUT\r\n');

    const third = await closedTranscript(server, 3);
    const sent3 = third.bytes('client').toString('latin1');
    assert.equal(sent3, 'c1 AUTHENTICATE PLAIN\r\n***\r\nc2 AUTHENTICATE PLAIN\r\nc3 LOGOUT\r\n');
    for (const t of [first, second, third]) {
      assert.ok(!t.text().includes('testpass') && !t.text().includes(plain), 'no credential in the text form');
    }
  } finally {
    await server.stop();
  }
});

test('a synchronizing literal the server refuses is never sent: the next line is a command again, recorded as sent (RFC 3501 §7.5)', async () => {
  const { server, port } = await startServer({ maxLiteralBeforeLogin: 4 });
  try {
    const c = await WireClient.connect(port);
    await c.until(/\r\n/);
    c.send('d1 LOGIN testuser {8}\r\n');
    const refusal = await c.until(/d1 [^\r]*\r\n/);
    assert.doesNotMatch(refusal, /^\+/m, 'the literal was refused, not accepted');
    c.send('d2 NOOP\r\n');
    await c.until(/d2 OK[^\r]*\r\n/);
    c.send('d3 LOGOUT\r\n');
    await c.closedByServer();
    const t = await closedTranscript(server, 1);
    const sent = t.bytes('client').toString('latin1');
    assert.ok(sent.endsWith('d2 NOOP\r\nd3 LOGOUT\r\n'), JSON.stringify(sent));
    assert.deepEqual(t.bytes('server'), c.bytesReceived());
  } finally {
    await server.stop();
  }
});

test('inside TLS: the transcript holds the plain bytes', async () => {
  const { server, port } = await startServer({ secure: true, transcript: { redact: false } });
  try {
    const c = await WireClient.connect(port, true);
    await c.until(/\r\n/);
    c.send('t1 LOGIN testuser testpass\r\nt2 LIST "" *\r\n');
    await c.until(/t2 OK[^\r]*\r\n/);
    c.send('t3 LOGOUT\r\n');
    await c.closedByServer();
    const t = await closedTranscript(server, 1);
    assert.deepEqual(t.bytes('client'), c.bytesSent());
    assert.deepEqual(t.bytes('server'), c.bytesReceived());
  } finally {
    await server.stop();
  }
});

test('after STARTTLS: plain bytes before the upgrade, decrypted ones after, no handshake bytes', async () => {
  const { server, port } = await startServer({ starttls: true, transcript: { redact: false } });
  try {
    const c = await WireClient.connect(port);
    await c.until(/\r\n/);
    c.send('s1 STARTTLS\r\n');
    await c.until(/s1 OK[^\r]*\r\n/);
    await c.startTls();
    c.send('s2 LOGIN testuser testpass\r\ns3 NOOP\r\n');
    await c.until(/s3 OK[^\r]*\r\n/);
    c.send('s4 LOGOUT\r\n');
    await c.until(/s4 OK[^\r]*\r\n/);
    c.destroy();
    const t = await closedTranscript(server, 1);
    assert.deepEqual(t.bytes('client'), c.bytesSent());
    assert.deepEqual(t.bytes('server'), c.bytesReceived());
    assert.equal(t.bytes('client').toString('latin1'), 's1 STARTTLS\r\ns2 LOGIN testuser testpass\r\ns3 NOOP\r\ns4 LOGOUT\r\n');
  } finally {
    await server.stop();
  }
});

test('after COMPRESS DEFLATE: the transcript holds the bytes before compression and after decompression', async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'], transcript: { redact: false } });
  try {
    const c = await WireClient.connect(port);
    await c.until(/\r\n/);
    c.send('z1 LOGIN testuser testpass\r\nz2 COMPRESS DEFLATE\r\n');
    await c.until(/z2 OK[^\r]*\r\n/);
    c.layer(zlib.createInflateRaw(), zlib.createDeflateRaw());
    c.send('z3 SELECT INBOX\r\n');
    await c.until(/z3 OK[^\r]*\r\n/);
    c.send('z4 LOGOUT\r\n');
    await c.until(/z4 OK[^\r]*\r\n/);
    c.destroy();
    const t = await closedTranscript(server, 1);
    assert.deepEqual(t.bytes('client'), c.bytesSent());
    assert.deepEqual(t.bytes('server'), c.bytesReceived());
    assert.equal(t.bytes('client').toString('latin1').split('\r\n').filter(Boolean).length, 4);
  } finally {
    await server.stop();
  }
});

test('transcripts are bounded: maxBytes keeps the newest bytes, keepClosed the newest closed sessions', async () => {
  const { server, port } = await startServer({ transcript: { maxBytes: 300, keepClosed: 2 } });
  try {
    const c = await WireClient.connect(port);
    await c.until(/\r\n/);
    c.send('a1 LOGIN testuser testpass\r\n');
    await c.until(/a1 OK[^\r]*\r\n/);
    for (let i = 0; i < 20; i++) {
      c.send(`n${i} NOOP\r\n`);
      await c.until(new RegExp(`n${i} OK[^\\r]*\\r\\n`));
    }
    const live = server.transcript(1)!;
    assert.equal(live.open, true);
    const kept = live.bytes();
    assert.ok(kept.length <= 300 && kept.length > 250, `kept ${kept.length}`);
    assert.ok(live.droppedBytes > 0);
    assert.ok(kept.toString('latin1').endsWith('n19 OK NOOP completed\r\n'), kept.toString('latin1'));
    c.destroy();
    await closedTranscript(server, 1);
    for (let n = 2; n <= 3; n++) {
      const d = await WireClient.connect(port);
      await d.until(/\r\n/);
      d.destroy();
      await closedTranscript(server, n);
    }
    assert.equal(server.transcript(1), undefined, 'the oldest closed session is no longer kept');
    assert.ok(server.transcript(2) && server.transcript(3));
  } finally {
    await server.stop();
  }
});

test('transcript.dir: each closed session is written to a file named by port and session', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rookery-transcripts-'));
  const { server, port } = await startServer({ transcript: { dir } });
  try {
    const c = await WireClient.connect(port);
    await c.until(/\r\n/);
    c.send('a1 LOGIN testuser testpass\r\na2 LOGOUT\r\n');
    await c.closedByServer();
    await closedTranscript(server, 1);
    assert.deepEqual(readdirSync(dir), [`rookery-${port}-session-1.txt`]);
    const text = readFileSync(join(dir, `rookery-${port}-session-1.txt`), 'utf8');
    assert.match(text, /^# Rookery transcript 1\n# session: 1\n# user: testuser\n/);
    assert.match(text, /\n\d+ C: a1 LOGIN testuser \*\*\*\n/);
    // A later test can send its sessions elsewhere without a new server.
    const other = join(dir, 'second-test');
    server.transcripts.setDir(other);
    const d = await WireClient.connect(port);
    await d.until(/\r\n/);
    d.destroy();
    await closedTranscript(server, 2);
    assert.deepEqual(readdirSync(other), [`rookery-${port}-session-2.txt`]);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('GET /v1/sessions/{n}/transcript: JSON and text/plain, live and closed; 404 and 409 with the error shape', async () => {
  const rest = await startRest({ transcript: { redact: false } });
  try {
    const c = await WireClient.connect(rest.imapPort);
    await c.until(/\r\n/);
    c.send('a1 LOGIN testuser testpass\r\na2 SELECT INBOX\r\n');
    await c.until(/a2 OK[^\r]*\r\n/);

    const live = await request(rest.restPort, 'GET', '/v1/sessions/1/transcript');
    assert.equal(live.status, 200);
    assert.match(String(live.headers['content-type']), /^application\/json/);
    assert.equal(live.json.session, 1);
    assert.equal(live.json.open, true);
    assert.equal(live.json.user, 'testuser');
    const decode = (json: { chunks: { from: string; data: string; encoding: BufferEncoding }[] }, from: string): Buffer =>
      Buffer.concat(json.chunks.filter((k) => k.from === from).map((k) => Buffer.from(k.data, k.encoding === 'base64' ? 'base64' : 'utf8')));
    assert.deepEqual(decode(live.json, 'client'), c.bytesSent());
    assert.deepEqual(decode(live.json, 'server'), c.bytesReceived());

    const text = await request(rest.restPort, 'GET', '/v1/sessions/1/transcript', { headers: { Accept: 'text/plain' } });
    assert.equal(text.status, 200);
    assert.match(String(text.headers['content-type']), /^text\/plain/);
    assert.deepEqual(parseTranscripts(text.text)[0]!.bytes('client'), c.bytesSent());
    const preferred = await request(rest.restPort, 'GET', '/v1/sessions/1/transcript', { headers: { Accept: 'application/json;q=0.5, text/plain' } });
    assert.match(String(preferred.headers['content-type']), /^text\/plain/);
    const wildcard = await request(rest.restPort, 'GET', '/v1/sessions/1/transcript', { headers: { Accept: '*/*' } });
    assert.match(String(wildcard.headers['content-type']), /^application\/json/);
    const byQuery = await request(rest.restPort, 'GET', '/v1/sessions/1/transcript?format=text');
    assert.match(String(byQuery.headers['content-type']), /^text\/plain/);
    const badFormat = await request(rest.restPort, 'GET', '/v1/sessions/1/transcript?format=xml');
    assert.equal(badFormat.status, 400);
    assert.equal(badFormat.json.error.code, 'INVALID');

    c.send('a3 LOGOUT\r\n');
    await c.closedByServer();
    await closedTranscript(rest.server, 1);
    const closed = await request(rest.restPort, 'GET', '/v1/sessions/1/transcript');
    assert.equal(closed.status, 200);
    assert.equal(closed.json.open, false);
    assert.equal(typeof closed.json.closedAt, 'number');
    assert.deepEqual(decode(closed.json, 'server'), c.bytesReceived());

    const list = await request(rest.restPort, 'GET', '/v1/transcripts');
    assert.equal(list.status, 200);
    assert.equal(list.json.length, 1);
    assert.equal(list.json[0].session, 1);
    assert.equal(list.json[0].open, false);
    assert.equal(list.json[0].user, 'testuser');
    assert.equal(list.json[0].bytes, c.bytesSent().length + c.bytesReceived().length);

    const missing = await request(rest.restPort, 'GET', '/v1/sessions/99/transcript');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.code, 'NONEXISTENT');
  } finally {
    await rest.server.stop();
  }
  const off = await startRest({ transcript: false });
  try {
    const reply = await request(off.restPort, 'GET', '/v1/sessions/1/transcript');
    assert.equal(reply.status, 409);
    assert.equal(reply.json.error.code, 'CANNOT');
    assert.equal((await request(off.restPort, 'GET', '/v1/transcripts')).status, 409);
  } finally {
    await off.server.stop();
  }
});

test('transcript: false records nothing; keepClosed: 0 keeps no closed session', async () => {
  for (const transcript of [false, { keepClosed: 0 }] as const) {
    const { server, port } = await startServer({ transcript });
    try {
      const c = await WireClient.connect(port);
      await c.until(/\r\n/);
      if (transcript === false) assert.equal(server.transcript(1), undefined);
      else assert.equal(server.transcript(1)!.open, true);
      c.send('a1 LOGOUT\r\n');
      await c.closedByServer();
      await server.waitFor('session', { type: 'close' }, { since: 0, timeout: 2000 });
      assert.equal(server.transcript(1), undefined);
      assert.deepEqual(server.transcripts.sessions(), []);
    } finally {
      await server.stop();
    }
  }
});

test('the transcript option is validated, naming the field', async () => {
  const { createServer } = await import('../../src/index.js');
  assert.throws(() => createServer({ transcript: { maxBytes: 0 } }), /transcript\.maxBytes: expected a positive integer/);
  assert.throws(() => createServer({ transcript: { keepClosd: 3 } as never }), /transcript\.keepClosd: unknown key; did you mean "keepClosed"/);
  assert.throws(() => createServer({ transcript: 'yes' as never }), /transcript: expected a boolean or an object/);
});

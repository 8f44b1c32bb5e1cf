/**
 * POP3 record and replay over real sockets: a poplib session against
 * Rookery's POP3 listener is recorded as a transcript, served back by
 * `script: { replay }` on the POP3 listener to poplib again (the same
 * answers), and a client that sends another line gets
 * `-ERR [CLIENTBUG] expected: <recorded line>` with a `replay` event.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ReplayEvent } from '../../src/index.js';
import { collect, mail } from '../helpers/server.js';
import { python, startPop3, WireClient } from './pop3-test.js';

const SESSION = (port: number): string => `import poplib, json
p = poplib.POP3('127.0.0.1', ${port}, timeout=10)
out = {'welcome': p.getwelcome().decode()}
p.user('testuser'); p.pass_('testpass')
out['stat'] = p.stat()
out['list'] = [l.decode() for l in p.list()[1]]
msg = p.retr(1)
out['retr'] = [l.decode() for l in msg[1]]
out['octets'] = msg[2]
out['uidl'] = [l.decode() for l in p.uidl()[1]]
out['quit'] = p.quit().decode()
print(json.dumps(out))
`;

/** Records the poplib session against a live Rookery and returns its answers and the transcript text. */
async function record(): Promise<{ answers: unknown; text: string }> {
  const { server, pop3 } = await startPop3();
  try {
    server.control.addMessage('INBOX', { raw: mail('first') });
    server.control.addMessage('INBOX', { raw: mail('second') });
    const answers = JSON.parse(await python(SESSION(pop3))) as unknown;
    // The transcript is whole once the session has closed (after QUIT's +OK).
    await server.waitFor('session', (e) => e.type === 'close', { since: 0, timeout: 5000 });
    const t = server.transcript(1)!;
    return { answers, text: t.text() };
  } finally {
    await server.stop();
  }
}

test('a recorded poplib session replays to poplib on the POP3 listener: the same answers, no deviation, the password redacted', { timeout: 30_000 }, async () => {
  const { answers, text } = await record();
  assert.ok(!text.includes('testpass'), 'the PASS argument is redacted');
  assert.match(text, /^\d+ C: PASS \*\*\*$/m);
  const { server, pop3 } = await startPop3({ script: { replay: text } });
  const events = collect(server, 'replay') as ReplayEvent[];
  try {
    const done = server.waitFor('replay', { type: 'done' }, { timeout: 10_000 });
    // poplib sends another password than the recorded one: `***` matches any.
    const replayed = JSON.parse(await python(SESSION(pop3).replace("p.pass_('testpass')", "p.pass_('other secret')"))) as unknown;
    assert.deepEqual(replayed, answers);
    await done;
    assert.deepEqual(events.filter((e) => e.type === 'deviation'), []);
    const info = server.control.sessions();
    assert.ok(info.every((s) => s.protocol === 'pop3'));
  } finally {
    await server.stop();
  }
});

test('a client that deviates from the recording gets -ERR [CLIENTBUG] expected: <recorded line>; the expected line still moves the replay on', { timeout: 30_000 }, async () => {
  const { text } = await record();
  const { server, pop3 } = await startPop3({ script: { replay: text } });
  const events = collect(server, 'replay') as ReplayEvent[];
  try {
    const c = await WireClient.connect(pop3);
    assert.match(String(await c.line()), /^\+OK/);
    c.socket.write('USER mallory\r\n');
    assert.equal(await c.line(), '-ERR [CLIENTBUG] expected: USER testuser');
    assert.deepEqual(events.map((e) => [e.type, e.expected, e.received]), [['deviation', 'USER testuser', 'USER mallory']]);
    // RFC 1939 is case-insensitive for keywords, but a replay serves one client's bytes: the line must be the recorded one.
    c.socket.write('USER testuser\r\n');
    assert.match(String(await c.line()), /^\+OK/);
    c.socket.write('PASS anything\r\n');
    assert.match(String(await c.line()), /^\+OK/);
    c.socket.end();
  } finally {
    await server.stop();
  }
});

test('AUTH PLAIN with a continuation line (RFC 5034): the redacted SASL line matches another client\'s credentials on replay', { timeout: 30_000 }, async () => {
  const plain = (user: string, pass: string): string => Buffer.from(`\0${user}\0${pass}`).toString('base64');
  const rec = await startPop3();
  let text: string;
  try {
    const c = await WireClient.connect(rec.pop3);
    assert.match(String(await c.line()), /^\+OK/);
    c.socket.write('AUTH PLAIN\r\n');
    assert.equal(await c.line(), '+ ');
    c.socket.write(`${plain('testuser', 'testpass')}\r\n`);
    assert.match(String(await c.line()), /^\+OK/);
    c.socket.write('QUIT\r\n');
    assert.match(String(await c.line()), /^\+OK/);
    await rec.server.waitFor('session', (e) => e.type === 'close', { since: 0, timeout: 5000 });
    text = rec.server.transcript(1)!.text();
  } finally {
    await rec.server.stop();
  }
  assert.ok(!text.includes(plain('testuser', 'testpass')), 'the SASL response is redacted');
  const { server, pop3 } = await startPop3({ script: { replay: text } });
  const events = collect(server, 'replay') as ReplayEvent[];
  try {
    const c = await WireClient.connect(pop3);
    assert.match(String(await c.line()), /^\+OK/);
    c.socket.write('AUTH PLAIN\r\n');
    assert.equal(await c.line(), '+ ');
    c.socket.write(`${plain('someone', 'else')}\r\n`);
    assert.match(String(await c.line()), /^\+OK/);
    c.socket.write('QUIT\r\n');
    assert.match(String(await c.line()), /^\+OK/);
    // The recorded client ended with QUIT: the replay closes as the server did.
    assert.equal(await c.line(), null);
    assert.deepEqual(events.map((e) => e.type), ['done']);
  } finally {
    await server.stop();
  }
});

test('a line longer than anything in the recording (by over 64 KiB) gets -ERR [CLIENTBUG] and the connection ends: the replay holds bounded memory', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await startPop3({ script: { replay: '# Rookery transcript 1\n0 S: +OK ready\n1 C: QUIT\n2 S: +OK bye\n' } });
  const events = collect(server, 'replay') as ReplayEvent[];
  try {
    const c = await WireClient.connect(pop3);
    assert.equal(await c.line(), '+OK ready');
    c.socket.write(Buffer.alloc(128 * 1024, 0x41));
    assert.match(String(await c.line()), /^-ERR \[CLIENTBUG\] Replay of recorded session 1: a line longer than anything in the recording \(over \d+ bytes\)$/);
    assert.equal(await c.line(), null);
    assert.deepEqual(events.map((e) => e.type), ['deviation']);
  } finally {
    await server.stop();
  }
});

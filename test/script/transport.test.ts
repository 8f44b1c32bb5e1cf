/**
 * Transport faults (issue 14) as script rules and as the `faults` option,
 * each checked by what a real client reports: imapflow, node-imap, Python's
 * imaplib, and a raw socket where the bytes and timing are the point.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import * as net from 'node:net';
import { test } from 'node:test';
import { ImapFlow } from 'imapflow';
import Imap from 'imap';
import { TEST_CERTIFICATE } from '../../src/index.js';
import { RawClient } from '../helpers/raw-client.js';
import { collect, mail, rawSession, startServer } from '../helpers/server.js';

const PYTHON = process.env.PYTHON ?? 'python3';
const noPython = spawnSync(PYTHON, ['--version']).status === 0 || process.env.CI ? false : `${PYTHON} not installed`;

/** Runs a Python snippet with `port` set; resolves with its stdout (last line) and exit code. */
function python(port: number, body: string, timeoutMs = 20_000): Promise<{ code: number; out: string; err: string }> {
  const script = `import imaplib, socket, ssl, sys, time\nport = ${port}\n${body}\n`;
  return new Promise((resolve) => {
    execFile(PYTHON, ['-c', script], { timeout: timeoutMs }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: stdout.trim(), err: stderr });
    });
  });
}

const flow = (port: number, extra: Record<string, unknown> = {}): ImapFlow =>
  new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, ...extra });

test('bandwidth: imapflow gets a 60 KB message intact at about the capped rate; the script event fires', { timeout: 30_000 }, async () => {
  const body = 'x'.repeat(76) + '\r\n';
  const big = mail('big', body.repeat(780)); // about 60 KB
  const { server, port } = await startServer({ storage: { INBOX: { messages: [big] } } });
  const fired = collect(server, 'script');
  server.script.add({ on: 'command', command: 'UID FETCH', bandwidth: 100_000 });
  const client = flow(port);
  try {
    await client.connect();
    const lock = await client.getMailboxLock('INBOX');
    try {
      const started = Date.now();
      const msg = await client.fetchOne('1', { source: true }, { uid: true });
      const elapsed = Date.now() - started;
      assert.ok(msg && msg.source, 'no source');
      assert.equal(msg.source.toString('latin1'), big);
      // 60 KB at 100 KB/s: at least ~0.5 s; without the cap it takes milliseconds.
      assert.ok(elapsed >= 450, `took only ${elapsed} ms`);
    } finally {
      lock.release();
    }
    assert.equal(fired.length, 1);
    assert.equal(fired[0]!.rule.bandwidth, 100_000);
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

test('bandwidth from the greeting on, then STARTTLS over the capped link: imapflow upgrades and fetches intact', { timeout: 30_000 }, async () => {
  const body = `${'q'.repeat(76)}\r\n`.repeat(400); // about 31 KB
  const msg = mail('over tls', body);
  const { server, port } = await startServer({ starttls: true, storage: { INBOX: { messages: [msg] } } });
  server.script.add({ on: 'greeting', bandwidth: 60_000 });
  const client = flow(port, { doSTARTTLS: true, tls: { ca: [TEST_CERTIFICATE], servername: 'localhost' } });
  try {
    await client.connect();
    assert.equal(server.control.sessions()[0]!.secure, true);
    const lock = await client.getMailboxLock('INBOX');
    try {
      const started = Date.now();
      const got = await client.fetchOne('1', { source: true });
      assert.ok(got && got.source);
      assert.equal(got.source.toString('latin1'), msg);
      assert.ok(Date.now() - started >= 350, 'the TLS records were not throttled');
    } finally {
      lock.release();
    }
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

test('bandwidth under COMPRESS=DEFLATE: imapflow compresses over the capped link and reads intact', { timeout: 30_000 }, async () => {
  const words = Array.from({ length: 6000 }, (_, i) => `w${(i * 7919) % 10007}`).join(' ');
  const msg = mail('compressed', words);
  const { server, port } = await startServer({ plugins: ['COMPRESS'], storage: { INBOX: { messages: [msg] } } });
  server.script.add({ on: 'greeting', bandwidth: 40_000 });
  const client = flow(port);
  try {
    await client.connect();
    const lock = await client.getMailboxLock('INBOX');
    try {
      const got = await client.fetchOne('1', { source: true });
      assert.ok(got && got.source);
      assert.equal(got.source.toString('latin1'), msg);
    } finally {
      lock.release();
    }
    assert.equal(server.control.sessions()[0]!.compressed, true);
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

test('faults.bandwidth option: every session is capped, the greeting too', { timeout: 30_000 }, async () => {
  const { server, port } = await startServer({ faults: { bandwidth: 2000 } });
  const client = await RawClient.connect(port);
  try {
    const started = Date.now();
    const greeting = await client.line();
    assert.match(greeting, /^\* OK /);
    // The greeting with capabilities is ~150 bytes: a twentieth of a second's worth per slice.
    const lines = await client.command('CAPABILITY');
    assert.match(lines.at(-1)!, /^\S+ OK/);
    const elapsed = Date.now() - started;
    const bytes = greeting.length + lines.join('\r\n').length;
    assert.ok(elapsed >= ((bytes - 200) * 1000) / 2000, `${bytes} bytes in ${elapsed} ms`);
  } finally {
    client.close();
    await server.stop();
  }
});

test('bandwidth keeps output backpressure: a pipelined command is read only once the throttled output has drained', { timeout: 30_000 }, async () => {
  const line = `${'z'.repeat(76)}\r\n`;
  const big = `Subject: big\r\n\r\n${line.repeat(20_000)}`; // 1.56 MB
  const { server, port } = await startServer({ storage: { INBOX: { messages: [big] } } });
  server.script.add({ on: 'command', command: 'FETCH', bandwidth: 500_000 });
  const at = new Map<string, number>();
  server.on('command', (e) => at.set(e.tag, Date.now()));
  const raw = await rawSession(port);
  try {
    await raw.command('SELECT INBOX');
    raw.write('f1 FETCH 1 BODY.PEEK[]\r\nn1 NOOP\r\n');
    await raw.until('n1', 20_000);
    // The FETCH has run (its answer queued) at once; above the high-water mark (1 MiB unread) the
    // session reads nothing more, so the NOOP runs only when the throttled output is down to
    // 256 KiB: about (1.56 MB - 256 KiB) / 500 KB/s later. Without backpressure it would run at once.
    const gap = at.get('n1')! - at.get('f1')!;
    assert.ok(gap >= 2000, `NOOP ran ${gap} ms after the FETCH`);
  } finally {
    raw.close();
    await server.stop();
  }
});

test('stall: the server stops reading, so the client\u2019s writes back up; with ms it answers afterwards', { timeout: 30_000 }, async () => {
  const { server, port } = await startServer({});
  server.script.add({ on: 'command', command: 'NOOP', session: 1, stall: true });
  server.script.add({ on: 'command', command: 'NOOP', session: 2, nth: 1, stall: 800 });
  const stuck = await rawSession(port);
  const later = await rawSession(port);
  try {
    assert.match((await stuck.command('NOOP')).at(-1)!, /^\S+ OK/);
    // 64 MB into a connection nobody reads: the kernel buffers fill and Node keeps the rest.
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < 64; i++) stuck.socket.write(chunk);
    await new Promise((r) => setTimeout(r, 700));
    assert.ok(stuck.socket.writableLength > 16 * 1024 * 1024, `only ${stuck.socket.writableLength} bytes waiting`);

    assert.match((await later.command('NOOP')).at(-1)!, /^\S+ OK/);
    const started = Date.now();
    const lines = await later.command('NOOP');
    assert.match(lines.at(-1)!, /^\S+ OK/);
    assert.ok(Date.now() - started >= 700, 'answered during the stall');
  } finally {
    stuck.socket.destroy();
    later.close();
    await server.stop();
  }
});

test('stall: Python imaplib with a socket timeout reports the timeout', { skip: noPython, timeout: 30_000 }, async () => {
  const { server, port } = await startServer({});
  server.script.add({ on: 'command', command: 'NOOP', stall: true });
  try {
    const r = await python(
      port,
      `M = imaplib.IMAP4('127.0.0.1', port, timeout=1)
M.login('testuser', 'testpass')
M.noop()
try:
    M.select('INBOX')
    print('answered')
except (TimeoutError, socket.timeout) as e:
    print('timeout', type(e).__name__)`,
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^timeout /);
  } finally {
    await server.stop();
  }
});

test('halfClose: imaplib sees EOF on its next command while the server still reads and runs it', { skip: noPython, timeout: 30_000 }, async () => {
  const { server, port } = await startServer({});
  server.script.add({ on: 'command', command: 'NOOP', halfClose: true });
  const commands = collect(server, 'command');
  try {
    const r = await python(
      port,
      `M = imaplib.IMAP4('127.0.0.1', port)
M.login('testuser', 'testpass')
print(M.noop()[0])
try:
    M.select('INBOX')
    print('answered')
except imaplib.IMAP4.abort as e:
    print('abort', e)
time.sleep(0.3)`,
    );
    assert.equal(r.code, 0, r.err);
    const [noop, outcome] = r.out.split('\n');
    assert.equal(noop, 'OK');
    assert.match(outcome!, /^abort .*EOF/);
    // The server read SELECT after its FIN and ran it (its answer went nowhere).
    assert.ok(commands.some((c) => c.command === 'SELECT' && c.status === 'OK'), JSON.stringify(commands));
  } finally {
    await server.stop();
  }
});

test('halfClose: imapflow closes and reports the connection gone', { timeout: 30_000 }, async () => {
  const { server, port } = await startServer({});
  server.script.add({ on: 'command', command: 'NOOP', halfClose: true });
  const client = flow(port);
  try {
    await client.connect();
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    await client.noop();
    await closed;
    assert.equal(client.usable, false);
  } finally {
    client.close();
    await server.stop();
  }
});

test('slowClose: after LOGOUT the server\u2019s FIN comes that much later; node-imap closes on BYE without waiting', { timeout: 30_000 }, async () => {
  const { server, port } = await startServer({});
  server.script.add({ on: 'command', command: 'LOGOUT', slowClose: 700 });
  const raw = await rawSession(port);
  try {
    const lines = await raw.command('LOGOUT');
    assert.match(lines.at(-1)!, /^\S+ OK/);
    const t0 = Date.now();
    const ended = new Promise<number>((resolve) => raw.socket.once('end', () => resolve(Date.now() - t0)));
    // A client that waits for the server to close (it does not close itself).
    assert.ok((await ended) >= 600, 'FIN came early');
  } finally {
    raw.close();
  }
  // node-imap does not wait for the server's FIN: told BYE, it closes its side at once, so a slow
  // close costs it nothing and the session ends with the client's FIN.
  const imap = new Imap({ user: 'testuser', password: 'testpass', host: '127.0.0.1', port, tls: false });
  imap.on('error', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => {
      imap.once('ready', () => resolve());
      imap.once('error', reject);
      imap.connect();
    });
    const session = server.control.sessions().find((s) => s.user === 'testuser')!;
    server.script.add({ on: 'response', session: session.session, match: '^\\* BYE', slowClose: 2000 });
    const t0 = Date.now();
    const ended = new Promise<number>((resolve) => imap.once('close', () => resolve(Date.now() - t0)));
    server.control.disconnect(session.session, { text: 'Going away' });
    const sessionClosed = server.waitFor('session', { type: 'close', 'session.session': session.session }, { timeout: 5000 });
    const took = await ended;
    assert.ok(took < 1000, `node-imap waited ${took} ms`);
    await sessionClosed;
  } finally {
    imap.destroy();
    await server.stop();
  }
});

test('faults.slowClose option: a BYE from the control API closes late', { timeout: 30_000 }, async () => {
  const { server, port } = await startServer({ faults: { slowClose: 500 } });
  const raw = await rawSession(port);
  try {
    const t0 = Date.now();
    const ended = new Promise<number>((resolve) => raw.socket.once('end', () => resolve(Date.now() - t0)));
    server.control.disconnect(server.control.sessions()[0]!.session, { text: 'bye now' });
    assert.match(await raw.line(), /^\* BYE bye now/);
    assert.ok((await ended) >= 450);
  } finally {
    raw.close();
    await server.stop();
  }
});

test('tlsFailure on STARTTLS: imapflow and imaplib report the handshake failure alert', { timeout: 30_000 }, async (t) => {
  const { server, port } = await startServer({ starttls: true });
  server.script.add({ on: 'command', command: 'STARTTLS', tlsFailure: true });
  try {
    const client = flow(port, { doSTARTTLS: true, tls: { ca: [TEST_CERTIFICATE], servername: 'localhost' } });
    client.on('error', () => undefined);
    await assert.rejects(client.connect(), (err: Error & { code?: string }) => err.code === 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE');
    client.close();
    if (noPython) return t.diagnostic(String(noPython));
    const r = await python(
      port,
      `M = imaplib.IMAP4('127.0.0.1', port)
try:
    M.starttls(ssl.create_default_context())
    print('upgraded')
except ssl.SSLError as e:
    print('sslerror', e.reason)`,
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^sslerror .*HANDSHAKE_FAILURE/);
  } finally {
    await server.stop();
  }
});

test('faults.tlsFailure option with implicit TLS: imapflow\u2019s connect fails with the alert', { timeout: 30_000 }, async () => {
  const { server, port } = await startServer({ secure: true, faults: { tlsFailure: true } });
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: true, tls: { ca: [TEST_CERTIFICATE], servername: 'localhost' }, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
  client.on('error', () => undefined);
  try {
    await assert.rejects(client.connect(), (err: Error & { code?: string }) => err.code === 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE');
  } finally {
    client.close();
    await server.stop();
  }
});

test('stripStartTls: the capability is gone and the command refused; imaplib refuses, imapflow stays in plain text', { timeout: 30_000 }, async (t) => {
  const { server, port } = await startServer({ starttls: true });
  server.script.add({ on: 'greeting', stripStartTls: true });
  try {
    const raw = await RawClient.connect(port);
    const greeting = await raw.line();
    assert.match(greeting, /^\* OK \[CAPABILITY IMAP4rev1[ \]]/);
    assert.doesNotMatch(greeting, /STARTTLS/);
    assert.doesNotMatch((await raw.command('CAPABILITY')).join('\n'), /STARTTLS/);
    assert.match((await raw.command('STARTTLS')).at(-1)!, /^\S+ BAD Unknown command STARTTLS/);
    raw.close();

    // imapflow upgrades when it can; with STARTTLS stripped it logs in over plain text (the downgrade a MITM is after).
    const client = flow(port);
    await client.connect();
    const session = server.control.sessions().find((s) => s.user === 'testuser');
    assert.equal(session?.secure, false);
    await client.logout();

    if (noPython) return t.diagnostic(String(noPython));
    const r = await python(
      port,
      `M = imaplib.IMAP4('127.0.0.1', port)
try:
    M.starttls(ssl.create_default_context())
    print('upgraded')
except imaplib.IMAP4.error as e:
    print('refused', e)`,
    );
    assert.equal(r.code, 0, r.err);
    // Python 3.11: "TLS not supported by server"; older: "STARTTLS extension not supported by server."
    assert.match(r.out, /^refused .*not supported by server/);
  } finally {
    await server.stop();
  }
});

test('faults.stripStartTls option: STARTTLS is stripped for every session', async () => {
  const { server, port } = await startServer({ starttls: true, faults: { stripStartTls: true } });
  const raw = await RawClient.connect(port);
  try {
    assert.doesNotMatch(await raw.line(), /STARTTLS/);
    assert.match((await raw.command('STARTTLS')).at(-1)!, /^\S+ BAD /);
  } finally {
    raw.close();
    await server.stop();
  }
});

test('transport fields on rules of the structured rule language: a response rule by type, a command rule with literals', { timeout: 30_000 }, async () => {
  const big = mail('big', `${'b'.repeat(76)}\r\n`.repeat(780));
  const { server, port } = await startServer({ starttls: true, storage: { INBOX: { messages: [big] } } });
  server.script.add({ on: 'response', untagged: 'CAPABILITY', stripStartTls: true });
  server.script.add({ on: 'command', command: 'FETCH', literals: true, bandwidth: 100_000 });
  const raw = await RawClient.connect(port);
  try {
    await raw.line();
    const caps = await raw.command('CAPABILITY');
    assert.match(caps[0]!, /^\* CAPABILITY IMAP4rev1/);
    assert.doesNotMatch(caps.join('\n'), /STARTTLS/);
    assert.match((await raw.command('STARTTLS')).at(-1)!, /^\S+ BAD Unknown command STARTTLS/);
    await raw.command('LOGIN testuser testpass');
    await raw.command('SELECT INBOX');
    const t0 = Date.now();
    const lines = await raw.command('FETCH 1 (FLAGS BODY.PEEK[])', 20_000);
    assert.match(lines.at(-1)!, /^\S+ OK/);
    assert.ok(Date.now() - t0 >= 450, `FETCH of 60 KB took ${Date.now() - t0} ms`);
  } finally {
    raw.close();
    await server.stop();
  }
});

test('transport rule fields: validated with the field named, listed by GET /v1/script/rules', async () => {
  const { server } = await startServer({ rest: { port: 0 } });
  const base = `http://127.0.0.1:${server.restAddress()!.port}`;
  const post = (body: unknown): Promise<Response> => fetch(`${base}/v1/script/rules`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  try {
    for (const [rule, field] of [
      [{ on: 'greeting', bandwidth: -1 }, 'bandwidth'],
      [{ on: 'greeting', stall: 0 }, 'stall'],
      [{ on: 'command', halfClose: 'yes' }, 'halfClose'],
      [{ on: 'command', halfClose: true, close: true }, 'halfClose'],
      [{ on: 'command', slowClose: 1.5 }, 'slowClose'],
      [{ on: 'command', tlsFailure: 1 }, 'tlsFailure'],
      [{ on: 'smtp', stripStartTls: true }, 'stripStartTls'],
      [{ on: 'greeting', bandwith: 10 }, 'bandwith'],
    ] as const) {
      const res = await post(rule);
      assert.equal(res.status, 400, JSON.stringify(rule));
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'INVALID');
      assert.match(body.error.message, new RegExp(`^${field}: `), body.error.message);
    }
    const rule = { on: 'command', command: 'FETCH', bandwidth: 5000, stall: 100, slowClose: 10, tlsFailure: false, stripStartTls: false, halfClose: false };
    assert.equal((await post(rule)).status, 201);
    const listed = (await (await fetch(`${base}/v1/script/rules`)).json()) as { rule: Record<string, unknown> }[];
    assert.deepEqual(listed.at(-1)!.rule, rule);
  } finally {
    await server.stop();
  }
});

test('a session stalled for good still ends when the control API disconnects it', async () => {
  const { server, port } = await startServer({});
  server.script.add({ on: 'greeting', stall: true });
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('data', r));
  socket.write('a LOGIN testuser testpass\r\n');
  await new Promise((r) => setTimeout(r, 200));
  const [session] = server.control.sessions();
  // The LOGIN was never read.
  assert.equal(session!.user, null);
  const closed = server.waitFor('session', { type: 'close' }, { timeout: 5000 });
  const got: Buffer[] = [];
  socket.on('data', (d: Buffer) => got.push(d));
  server.control.disconnect(session!.session, { text: 'stalled' });
  await closed;
  assert.match(Buffer.concat(got).toString(), /^\* BYE stalled\r\n$/);
  socket.destroy();
  await server.stop();
});

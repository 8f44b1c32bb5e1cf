/**
 * The raw POP3 test client (test/helpers/pop3-client.ts) frames what a
 * server sends as RFC 1939 section 3 says, however the bytes are split:
 * a listening socket here writes fixed answers in chunks of every size,
 * so the terminator and the stuffing octets fall across chunk boundaries;
 * and it reaches Rookery over implicit TLS and through STLS.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import type tls from 'node:tls';
import { Pop3Client, pop3Login, startPop3Server, unstuff } from '../helpers/pop3-client.js';

/** RFC 1939 section 3: a line starting with "." is sent with one more "."; the answer ends with CRLF "." CRLF. */
const BODY = 'Subject: x\r\n\r\n.leading\r\n..two\r\n.\r\nlast\r\n';
const STUFFED = 'Subject: x\r\n\r\n..leading\r\n...two\r\n..\r\nlast\r\n';
const WIRE = `+OK greeting\r\n+OK 40 octets\r\n${STUFFED}.\r\n+OK\r\n.\r\n-ERR no such message\r\n+OK 1 40\r\n`;

async function serve(chunk: number): Promise<{ port: number; close: () => void }> {
  const server = net.createServer((socket) => {
    const data = Buffer.from(WIRE, 'latin1');
    let at = 0;
    const next = (): void => {
      if (at >= data.length) return;
      socket.write(data.subarray(at, at + chunk));
      at += chunk;
      setImmediate(next);
    };
    next();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

test('unstuff removes exactly one leading dot per line', () => {
  assert.equal(unstuff(Buffer.from(STUFFED)).toString('latin1'), BODY);
  assert.equal(unstuff(Buffer.from('')).toString('latin1'), '');
  assert.equal(unstuff(Buffer.from('a.b\r\n.c')).toString('latin1'), 'a.b\r\nc');
});

for (const chunk of [1, 2, 3, 5, 7, 4096]) {
  test(`multi-line answers framed the same in chunks of ${chunk} octets`, { timeout: 10_000 }, async () => {
    const s = await serve(chunk);
    const c = await Pop3Client.connect(s.port);
    try {
      assert.equal(c.greeting, '+OK greeting');
      const retr = await c.readMulti();
      assert.equal(retr.status, '+OK 40 octets');
      assert.equal(retr.raw.toString('latin1'), `${STUFFED}.\r\n`);
      assert.equal(retr.body.toString('latin1'), BODY);
      assert.equal(retr.body.length, 40);
      assert.deepEqual(retr.lines, ['Subject: x', '', '.leading', '..two', '.', 'last']);
      const empty = await c.readMulti();
      assert.deepEqual([empty.status, empty.raw.toString('latin1'), empty.lines], ['+OK', '.\r\n', []]);
      const refused = await c.readMulti();
      assert.deepEqual([refused.ok, refused.status, refused.raw.length], [false, '-ERR no such message', 0]);
      assert.equal(await c.line(), '+OK 1 40');
    } finally {
      c.close();
      s.close();
    }
  });
}

test('implicit TLS and the STLS upgrade reach a logged-in session on Rookery', { timeout: 10_000 }, async () => {
  const secure = await startPop3Server({ pop3: { secure: true } });
  const plain = await startPop3Server({ pop3: { stls: true } });
  try {
    const a = await pop3Login(secure.pop3, 'testuser', 'testpass', { tls: true });
    assert.equal((a.socket as tls.TLSSocket).encrypted, true);
    assert.match(await a.command('STAT'), /^\+OK 0 0/);
    a.close();
    const b = await Pop3Client.connect(plain.pop3);
    const { status, leftover } = await b.stls();
    assert.match(status, /^\+OK/);
    assert.equal(leftover.length, 0, 'nothing follows +OK in clear text (RFC 2595 section 4)');
    assert.equal((b.socket as tls.TLSSocket).encrypted, true);
    assert.match(await b.command('USER testuser'), /^\+OK/);
    assert.match(await b.command('PASS testpass'), /^\+OK/);
    assert.match(await b.command('STLS'), /^-ERR/, 'no second STLS');
    b.close();
  } finally {
    await secure.server.stop();
    await plain.server.stop();
  }
});

/**
 * COMPRESS=DEFLATE (RFC 4978) with real clients over real sockets:
 * imapflow (compresses by default when the server offers COMPRESS=DEFLATE;
 * `disableCompression: true` turns that off), Python's imaplib with zlib
 * around its socket (a small stdlib script), and curl (which has no
 * COMPRESS support: it must simply keep working when the server offers it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { ImapFlow } from 'imapflow';
import { TEST_CERTIFICATE } from '../../src/index.js';
import { collect, mail, startServer } from '../helpers/server.js';

function flow(port: number, extra: Record<string, unknown> = {}): ImapFlow {
  const client = new ImapFlow({
    host: '127.0.0.1',
    port,
    secure: false,
    auth: { user: 'testuser', pass: 'testpass' },
    logger: false,
    disableAutoIdle: true,
    ...extra,
  });
  client.on('error', () => undefined);
  return client;
}

test('imapflow negotiates COMPRESS=DEFLATE by default: the session is compressed: true, FETCH/APPEND/SEARCH/IDLE work through it', { timeout: 20000 }, async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS', 'IDLE', 'UIDPLUS'] });
  const commands = collect(server, 'command');
  const client = flow(port);
  try {
    const big = mail('Big', 'All work and no play makes Jack a dull boy.\r\n'.repeat(20000));
    server.control.addMessage('INBOX', { raw: big });
    await client.connect();
    assert.ok(commands.some((e) => e.command === 'COMPRESS' && e.status === 'OK'), 'imapflow sent COMPRESS DEFLATE');
    const [info] = server.control.sessions();
    assert.equal(info!.compressed, true);

    const lock = await client.getMailboxLock('INBOX');
    try {
      const selects = server.control.sessions();
      assert.equal(selects[0]!.mailbox, 'INBOX');
      const msg = await client.fetchOne('1', { source: true, envelope: true });
      assert.ok(msg);
      assert.equal(msg.envelope!.subject, 'Big');
      assert.equal(msg.source!.toString('latin1'), big);
      const appended = await client.append('INBOX', mail('Second', 'Through deflate'), ['\\Seen']);
      assert.ok(appended);
      const uids = await client.search({ subject: 'Second' }, { uid: true });
      assert.equal(Array.isArray(uids) ? uids.length : 0, 1);

      // IDLE over the compressed stream: an update from the control API reaches the client.
      const exists = new Promise<number>((resolve) => client.on('exists', (d: { count: number }) => resolve(d.count)));
      const idling = client.idle();
      await new Promise((resolve) => setTimeout(resolve, 100));
      server.control.addMessage('INBOX', { raw: mail('Third') });
      assert.equal(await exists, 3);
      await client.noop();
      await idling.catch(() => undefined);
    } finally {
      lock.release();
    }
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

test('imapflow: STARTTLS, then COMPRESS over the TLS layer (secure and compressed); a reset under both still ends the session', { timeout: 20000 }, async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'], starttls: true });
  const client = flow(port, { doSTARTTLS: true, tls: { ca: [TEST_CERTIFICATE], servername: 'localhost' } });
  try {
    server.control.addMessage('INBOX', { raw: mail('Layered', 'TLS under DEFLATE\r\n'.repeat(1000)) });
    await client.connect();
    const [info] = server.control.sessions();
    assert.equal(info!.secure, true);
    assert.equal(info!.compressed, true);
    const lock = await client.getMailboxLock('INBOX');
    try {
      const msg = await client.fetchOne('1', { source: true });
      assert.ok(msg && msg.source!.toString('latin1').includes('TLS under DEFLATE'));
    } finally {
      lock.release();
    }
    // The control API's reset goes to the TCP connection under TLS and DEFLATE.
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    server.control.disconnect(info!.session, { reset: true });
    await closed;
    assert.deepEqual(server.control.sessions(), []);
  } finally {
    client.close();
    await server.stop();
  }
});

test('imapflow with disableCompression: true stays plain (compressed: false)', { timeout: 15000 }, async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'] });
  const commands = collect(server, 'command');
  const client = flow(port, { disableCompression: true });
  try {
    await client.connect();
    assert.ok(!commands.some((e) => e.command === 'COMPRESS'));
    assert.equal(server.control.sessions()[0]!.compressed, false);
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

const PYTHON = process.env.PYTHON ?? 'python3';
const pythonSkip = spawnSync(PYTHON, ['--version']).status === 0 ? false : `${PYTHON} not installed`;

/** imaplib with zlib (raw DEFLATE, wbits -15) around its socket once COMPRESS DEFLATE is OK. */
const PYTHON_CLIENT = String.raw`
import imaplib, json, sys, zlib

imaplib.Commands['COMPRESS'] = ('AUTH', 'SELECTED')

class Compressing(imaplib.IMAP4):
    _z = False

    def compress(self):
        typ, data = self._simple_command('COMPRESS', 'DEFLATE')
        if typ == 'OK':
            self._out = zlib.compressobj(6, zlib.DEFLATED, -15)
            self._in = zlib.decompressobj(-15)
            self._buf = b''
            self._z = True
        return typ, data

    def send(self, data):
        if self._z:
            data = self._out.compress(data) + self._out.flush(zlib.Z_SYNC_FLUSH)
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise self.abort('socket closed')
        self._buf += self._in.decompress(chunk)

    def readline(self):
        if not self._z:
            return super().readline()
        while b'\n' not in self._buf:
            self._fill()
        at = self._buf.index(b'\n') + 1
        line, self._buf = self._buf[:at], self._buf[at:]
        return line

    def read(self, size):
        if not self._z:
            return super().read(size)
        while len(self._buf) < size:
            self._fill()
        data, self._buf = self._buf[:size], self._buf[size:]
        return data

host, port = sys.argv[1], int(sys.argv[2])
out = {}
m = Compressing(host, port)
m.login('testuser', 'testpass')
out['capability'] = 'COMPRESS=DEFLATE' in m.capabilities
out['compress'] = [m.compress()[0], m.compress()[0]]
typ, data = m.select('INBOX')
out['select'] = [typ, data[0].decode()]
typ, data = m.fetch('1', '(BODY.PEEK[])')
out['fetch'] = data[0][1].decode('latin1')
typ, data = m.append('INBOX', None, None, b'Subject: from python\r\n\r\nzlib\r\n')
out['append'] = typ
typ, data = m.search(None, 'SUBJECT', '"from python"')
out['search'] = data[0].decode()
out['noop'] = m.noop()[0]
out['logout'] = m.logout()[0]
print(json.dumps(out))
`;

test('Python imaplib with zlib around its socket: COMPRESS, a second one NO, SELECT/FETCH/APPEND/SEARCH compressed', { skip: pythonSkip, timeout: 30000 }, async () => {
  const body = mail('Python', 'Inflate me\r\n'.repeat(500));
  const { server, port } = await startServer({ plugins: ['COMPRESS'] });
  const sessions = collect(server, 'session');
  const commands = collect(server, 'command');
  try {
    server.control.addMessage('INBOX', { raw: body });
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn(PYTHON, ['-c', PYTHON_CLIENT, '127.0.0.1', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
      const killer = setTimeout(() => child.kill('SIGKILL'), 25000);
      child.on('close', (code) => {
        clearTimeout(killer);
        if (code === 0) resolve(out);
        else reject(new Error(`python exited ${code}: ${err}`));
      });
    });
    const result = JSON.parse(stdout) as Record<string, unknown>;
    assert.equal(result.capability, true);
    assert.deepEqual(result.compress, ['OK', 'NO']);
    assert.deepEqual(result.select, ['OK', '1']);
    assert.equal(result.fetch, body);
    assert.equal(result.append, 'OK');
    assert.equal(result.search, '2');
    assert.equal(result.noop, 'OK');
    assert.equal(result.logout, 'BYE');
    const statuses = commands.filter((e) => e.command === 'COMPRESS').map((e) => e.status);
    assert.deepEqual(statuses, ['OK', 'NO']);
    // The select event (after COMPRESS) shows the session compressed.
    const select = sessions.find((e) => e.type === 'select');
    assert.equal(select?.session.compressed, true);
  } finally {
    await server.stop();
  }
});

const curlSkip = spawnSync('curl', ['--version']).status === 0 ? false : 'curl not installed';

// curl's IMAP client has no COMPRESS support (no option for it): it cannot be driven compressed.
// What can be checked is that a server offering COMPRESS=DEFLATE keeps working for it.
test('curl (no COMPRESS support) ignores COMPRESS=DEFLATE and fetches plain', { skip: curlSkip, timeout: 20000 }, async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'] });
  try {
    const raw = mail('Curl', 'plain as ever');
    server.control.addMessage('INBOX', { raw });
    const commands = collect(server, 'command');
    const got = await new Promise<string>((resolve, reject) => {
      execFile('curl', ['-sS', '--max-time', '10', '-u', 'testuser:testpass', `imap://127.0.0.1:${port}/INBOX;UID=1`], { encoding: 'latin1' }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(stdout);
      });
    });
    assert.equal(got, raw);
    assert.ok(!commands.some((e) => e.command === 'COMPRESS'));
  } finally {
    await server.stop();
  }
});

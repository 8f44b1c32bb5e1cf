/**
 * Implicit TLS (`secure: true`, `rookery --secure`): real clients that verify
 * the built-in test certificate (imapflow, Python's imaplib.IMAP4_SSL, curl
 * over imaps://), resets and failed handshakes under TLS, and the tls option.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { ImapFlow } from 'imapflow';
import { createServer, ServiceError, TEST_CERTIFICATE } from '../../src/index.js';
import { TEST_PRIVATE_KEY } from '../../src/tls/test-certificate.js';
import { mail } from '../helpers/server.js';

const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const PYTHON = process.env.PYTHON ?? 'python3';
const needTool = (cmd: string, arg: string): string | false =>
  spawnSync(cmd, [arg]).status === 0 || process.env.CI ? false : `${cmd} not installed`;

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 15_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

async function secureServer() {
  const server = createServer({
    port: 0,
    secure: true,
    plugins: 'all',
    storage: { INBOX: { messages: [mail('over TLS', 'Encrypted hello')] } },
  });
  const { imap } = await server.start();
  return { server, port: imap.port };
}

test('imapflow verifies the built-in certificate and runs a session over TLS', { timeout: 20_000 }, async () => {
  const { server, port } = await secureServer();
  const client = new ImapFlow({
    host: '127.0.0.1',
    port,
    secure: true,
    tls: { ca: [TEST_CERTIFICATE], servername: 'localhost', rejectUnauthorized: true },
    auth: { user: 'testuser', pass: 'testpass' },
    logger: false,
  });
  try {
    await client.connect();
    const sessions = server.control.sessions();
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0]!.secure, true);
    assert.equal(sessions[0]!.remoteAddress, '127.0.0.1');
    const lock = await client.getMailboxLock('INBOX');
    try {
      const msg = await client.fetchOne('1', { envelope: true, source: true });
      assert.ok(msg);
      assert.equal(msg.envelope!.subject, 'over TLS');
      assert.match(msg.source!.toString(), /Encrypted hello/);
      // A change made while connected reaches the client through TLS too.
      const exists = new Promise<number>((resolve) => client.once('exists', (e: { count: number }) => resolve(e.count)));
      server.control.addMessage('INBOX', { raw: mail('second') });
      await client.noop();
      assert.equal(await exists, 2);
    } finally {
      lock.release();
    }
    await client.logout();
  } finally {
    await server.stop();
  }
});

test('a client that does not trust the certificate fails the handshake; the server goes on', { timeout: 20_000 }, async () => {
  const { server, port } = await secureServer();
  try {
    const untrusted = tls.connect({ host: '127.0.0.1', port, servername: 'localhost' });
    const err = await new Promise<Error>((resolve) => untrusted.once('error', resolve));
    assert.match((err as NodeJS.ErrnoException).code ?? err.message, /SELF_SIGNED|DEPTH_ZERO/);
    // Plain text to a TLS port: the session ends, nothing else is touched.
    const plain = net.connect(port, '127.0.0.1');
    plain.on('error', () => undefined);
    plain.write('a LOGIN testuser testpass\r\n');
    await new Promise((resolve) => plain.once('close', resolve));
    // A trusting client still gets a greeting afterwards.
    const good = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: TEST_CERTIFICATE });
    const greeting = await new Promise<string>((resolve, reject) => {
      good.once('data', (d: Buffer) => resolve(d.toString()));
      good.once('error', reject);
    });
    assert.match(greeting, /^\* OK \[CAPABILITY IMAP4rev1 /);
    good.destroy();
  } finally {
    await server.stop();
  }
});

test('disconnect with reset under TLS is a TCP reset', { timeout: 20_000 }, async () => {
  const { server, port } = await secureServer();
  try {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: TEST_CERTIFICATE });
    await new Promise((resolve) => socket.once('data', resolve));
    const closed = new Promise<string>((resolve) => {
      socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      socket.once('close', () => resolve('close'));
    });
    const [session] = server.control.sessions();
    server.control.disconnect(session!.session, { reset: true });
    assert.equal(await closed, 'ECONNRESET');
  } finally {
    await server.stop();
  }
});

test('Python imaplib.IMAP4_SSL and curl imaps:// verify the certificate printed by the command', { timeout: 30_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'rookery-tls-'));
  const child = spawn(process.execPath, [CLI, '--secure', '--port', '0']);
  try {
    const printed = spawnSync(process.execPath, [CLI, '--print-certificate'], { encoding: 'utf8' });
    assert.equal(printed.status, 0);
    assert.equal(printed.stdout, TEST_CERTIFICATE);
    const caFile = join(dir, 'ca.pem');
    await writeFile(caFile, printed.stdout);

    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start-up line: ${out}`)), 10_000);
      child.stdout.on('data', () => {
        const m = /IMAP listening on [^:]+:(\d+) \(implicit TLS\)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
    });

    await t.test('python', { skip: needTool(PYTHON, '--version') }, async () => {
      const script = [
        'import imaplib, ssl, sys',
        'ctx = ssl.create_default_context(cafile=sys.argv[1])',
        'm = imaplib.IMAP4_SSL("localhost", int(sys.argv[2]), ssl_context=ctx)',
        'm.login("testuser", "testpass")',
        'typ, data = m.select("INBOX")',
        'print(typ, data[0].decode(), m.sock.version())',
        'm.logout()',
      ].join('\n');
      const r = await run(PYTHON, ['-c', script, caFile, String(port)]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^OK \d+ TLSv1\.[23]\n$/);
    });

    await t.test('curl', { skip: needTool('curl', '--version') }, async () => {
      const r = await run('curl', ['-sS', '--max-time', '10', '--cacert', caFile, '-u', 'testuser:testpass', `imaps://localhost:${port}/`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /\* LIST \([^)]*\) "\/" "?INBOX"?\r\n/);
      const refused = await run('curl', ['-sS', '--max-time', '10', '-u', 'testuser:testpass', `imaps://localhost:${port}/`]);
      assert.notEqual(refused.code, 0, 'without the certificate curl must refuse the server');
    });
  } finally {
    child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
});

test('tls option: own key and certificate from files; mistakes are clear', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rookery-tls-'));
  try {
    await writeFile(join(dir, 'key.pem'), TEST_PRIVATE_KEY);
    await writeFile(join(dir, 'cert.pem'), TEST_CERTIFICATE);
    const server = createServer({ port: 0, secure: true, tls: { key: join(dir, 'key.pem'), cert: join(dir, 'cert.pem') } });
    assert.equal(server.options.tls.builtin, false);
    const { imap } = await server.start();
    const socket = tls.connect({ host: '127.0.0.1', port: imap.port, servername: 'localhost', ca: TEST_CERTIFICATE });
    const greeting = await new Promise<string>((resolve, reject) => {
      socket.once('data', (d: Buffer) => resolve(d.toString()));
      socket.once('error', reject);
    });
    assert.match(greeting, /^\* OK /);
    socket.destroy();
    await server.stop();

    const message = (fn: () => unknown): string => {
      try {
        fn();
      } catch (err) {
        assert.ok(err instanceof ServiceError);
        return err.message;
      }
      return assert.fail('expected an error');
    };
    assert.match(message(() => createServer({ secure: true, tls: { key: join(dir, 'nope.pem'), cert: join(dir, 'cert.pem') } })), /^tls\.key: cannot read ".*nope\.pem": ENOENT$/);
    assert.match(message(() => createServer({ tls: { key: TEST_PRIVATE_KEY } as never })), /^tls: give both key and cert, or neither/);
    assert.match(message(() => createServer({ secure: 'yes' as never })), /^secure: expected a boolean, got "yes"$/);
    const broken = createServer({ port: 0, secure: true, tls: { key: '-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n', cert: TEST_CERTIFICATE } });
    await assert.rejects(broken.start(), /^Error: tls: the key or certificate cannot be used/);
    await broken.stop();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

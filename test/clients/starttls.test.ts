/**
 * STARTTLS and the loginDisabled option: imapflow, Python's imaplib and curl
 * upgrade a plain connection and verify the built-in certificate; plain text
 * pipelined after STARTTLS is dropped, not run over TLS.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import tls from 'node:tls';
import { ImapFlow } from 'imapflow';
import { TEST_CERTIFICATE } from '../../src/index.js';
import { RawClient } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

const PYTHON = process.env.PYTHON ?? 'python3';
const needTool = (cmd: string): string | false => (spawnSync(cmd, ['--version']).status === 0 || process.env.CI ? false : `${cmd} not installed`);

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 15_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Reads CRLF lines from a TLS socket until one starts with `tag `. */
function readUntil(socket: tls.TLSSocket, tag: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (d: Buffer): void => {
      text += d.toString('latin1');
      const lines = text.split('\r\n');
      if (lines.some((l) => l.startsWith(`${tag} `))) {
        socket.off('data', onData);
        resolve(lines.filter((l) => l !== ''));
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

test('imapflow upgrades with STARTTLS and verifies the certificate', { timeout: 20_000 }, async () => {
  const { server, port } = await startServer({ plugins: 'all', starttls: true, storage: { INBOX: { messages: [mail('after STARTTLS')] } } });
  const client = new ImapFlow({
    host: '127.0.0.1',
    port,
    secure: false,
    doSTARTTLS: true,
    tls: { ca: [TEST_CERTIFICATE], servername: 'localhost' },
    auth: { user: 'testuser', pass: 'testpass' },
    logger: false,
  });
  try {
    await client.connect();
    assert.equal(server.control.sessions()[0]!.secure, true);
    const lock = await client.getMailboxLock('INBOX');
    try {
      const msg = await client.fetchOne('1', { envelope: true });
      assert.ok(msg);
      assert.equal(msg.envelope!.subject, 'after STARTTLS');
    } finally {
      lock.release();
    }
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

test('Python imaplib starttls() and curl --ssl-reqd', { timeout: 30_000 }, async (t) => {
  const { server, port } = await startServer({ plugins: 'all', loginDisabled: true });
  const dir = await mkdtemp(join(tmpdir(), 'rookery-starttls-'));
  try {
    const caFile = join(dir, 'ca.pem');
    await writeFile(caFile, TEST_CERTIFICATE);
    await t.test('python', { skip: needTool(PYTHON) }, async () => {
      const script = [
        'import imaplib, ssl, sys',
        'm = imaplib.IMAP4("localhost", int(sys.argv[2]))',
        'print("before", "LOGINDISABLED" in m.capabilities, "STARTTLS" in m.capabilities)',
        'try:',
        '    m.login("testuser", "testpass")',
        'except imaplib.IMAP4.error as e:',
        '    print("refused", str(e))',
        'm.starttls(ssl.create_default_context(cafile=sys.argv[1]))',
        'print("after", "LOGINDISABLED" in m.capabilities, "STARTTLS" in m.capabilities, m.sock.version())',
        'typ, _ = m.login("testuser", "testpass")',
        'print("login", typ)',
        'm.logout()',
      ].join('\n');
      const r = await run(PYTHON, ['-c', script, caFile, String(port)]);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trim().split('\n');
      assert.equal(lines[0], 'before True True');
      assert.match(lines[1]!, /^refused .*PRIVACYREQUIRED/);
      assert.match(lines[2]!, /^after False False TLSv1\.[23]$/);
      assert.equal(lines[3], 'login OK');
    });
    await t.test('curl', { skip: needTool('curl') }, async () => {
      const r = await run('curl', ['-sS', '--max-time', '10', '--ssl-reqd', '--cacert', caFile, '-u', 'testuser:testpass', `imap://localhost:${port}/`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /\* LIST \([^)]*\) "\/" "?INBOX"?\r\n/);
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
    await server.stop();
  }
});

test('plain text pipelined after STARTTLS is dropped; STARTTLS refused where it cannot work', { timeout: 20_000 }, async () => {
  // The bare core: the test compares whole capability lists.
  const { server, port } = await startServer({ plugins: [], starttls: true });
  try {
    const raw = await RawClient.connect(port);
    assert.match(await raw.line(), /^\* OK \[CAPABILITY IMAP4rev1 STARTTLS\] /);
    // An attacker's injection: LOGIN after STARTTLS in the same packet.
    raw.write('a STARTTLS\r\nb LOGIN testuser testpass\r\n');
    assert.equal(await raw.line(), 'a OK Begin TLS negotiation now');
    const secure = tls.connect({ socket: raw.socket, servername: 'localhost', ca: TEST_CERTIFICATE });
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', () => resolve());
      secure.once('error', reject);
    });
    secure.write('c CAPABILITY\r\n');
    const lines = await readUntil(secure, 'c');
    assert.deepEqual(lines, ['* CAPABILITY IMAP4rev1', 'c OK Capability completed']);
    assert.equal(server.control.sessions()[0]!.user, null, 'the injected LOGIN never ran');
    assert.equal(server.control.sessions()[0]!.secure, true);
    secure.write('d STARTTLS\r\n');
    assert.deepEqual(await readUntil(secure, 'd'), ['d BAD TLS is already active']);
    secure.destroy();

    const plain = await rawSession(port);
    assert.match((await plain.command('STARTTLS')).at(-1)!, /^T\d+ BAD /);
    plain.close();
  } finally {
    await server.stop();
  }
  const { server: without, port: p2 } = await startServer({});
  try {
    const c = await rawSession(p2, false);
    assert.match((await c.command('STARTTLS')).at(-1)!, /^T\d+ BAD Unknown command STARTTLS$/);
    c.close();
  } finally {
    await without.stop();
  }
});

/**
 * The TLS bench against real clients: every certificate profile and every
 * STARTTLS attack, played to imapflow, node-imap, Python's imaplib (with
 * and without ssl.create_default_context()), curl (--ssl-reqd and
 * --ssl), mbsync and fetchmail, each configured to use STARTTLS and trust the test CA. Each run
 * ends in the server's verdict; the matrix is frozen below (and in
 * docs/tls.md), so a client or server change that moves a verdict fails
 * here. ROOKERY_PRINT_MATRIX=1 prints the table for the docs.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createRequire } from 'node:module';
import { ImapFlow } from 'imapflow';
import { PROFILES, STARTTLS_ATTACKS, TEST_CA, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { CERT, INJ, LEAK, NOTLS, S, checkMatrix, worstVerdict, type Cell } from './matrix.js';
import { startServer } from '../helpers/server.js';

const PYTHON = process.env.PYTHON ?? 'python3';
const dir = mkdtempSync(join(tmpdir(), 'rookery-tls-matrix-'));
const CA_FILE = join(dir, 'ca.pem');
writeFileSync(CA_FILE, TEST_CA);
after(() => rmSync(dir, { recursive: true, force: true }));

const PY = `
import imaplib, ssl, sys
port, mode, ca = int(sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    m = imaplib.IMAP4('127.0.0.1', port, timeout=3)
    if mode == 'verify':
        m.starttls(ssl_context=ssl.create_default_context(cafile=ca))
    else:
        m.starttls()
    m.login('testuser', 'testpass')
    m.select('INBOX')
    m.logout()
except Exception as e:
    print(type(e).__name__, e)
`;

const NODE_IMAP = `
const Imap = require(${JSON.stringify(createRequire(import.meta.url).resolve('imap'))});
const [port, ca] = process.argv.slice(1);
const imap = new Imap({
  user: 'testuser', password: 'testpass', host: '127.0.0.1', port: Number(port), tls: false, autotls: 'always',
  tlsOptions: { ca: [require('fs').readFileSync(ca, 'utf8')], servername: 'localhost' }, connTimeout: 3000, authTimeout: 3000,
});
const done = () => process.exit(0);
setTimeout(done, 5000);
imap.once('ready', () => imap.openBox('INBOX', true, () => imap.end()));
imap.once('error', done);
imap.once('end', done);
imap.connect();
`;

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve) => execFile(cmd, args, { timeout: 6000 }, () => resolve()));
}

/** Each client, set up the way its documentation says to require STARTTLS and trust a CA (or, where named, not to). */
const CLIENTS: Record<string, (port: number) => Promise<void>> = {
  imapflow: async (port) => {
    const client = new ImapFlow({
      host: '127.0.0.1', port, secure: false, doSTARTTLS: true,
      tls: { ca: [TEST_CA], servername: 'localhost' },
      auth: { user: 'testuser', pass: 'testpass' },
      logger: false, connectionTimeout: 3000, greetingTimeout: 3000, socketTimeout: 4000,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const lock = await client.getMailboxLock('INBOX');
      lock.release();
      await client.logout();
    } catch {
      client.close();
    }
  },
  // In a process of its own: an injected untagged response crashes node-imap 0.8.19 with an exception thrown from its parser.
  'node-imap': (port) => run(process.execPath, ['-e', NODE_IMAP, String(port), CA_FILE]),
  'imaplib + create_default_context()': (port) => run(PYTHON, ['-c', PY, String(port), 'verify', CA_FILE]),
  'imaplib starttls()': (port) => run(PYTHON, ['-c', PY, String(port), 'plain', CA_FILE]),
  'curl --ssl-reqd --cacert': (port) => run('curl', ['-s', '--max-time', '4', '--ssl-reqd', '--cacert', CA_FILE, '-u', 'testuser:testpass', `imap://127.0.0.1:${port}/INBOX`]),
  'curl --ssl --cacert': (port) => run('curl', ['-s', '--max-time', '4', '--ssl', '--cacert', CA_FILE, '-u', 'testuser:testpass', `imap://127.0.0.1:${port}/INBOX`]),
  // mbsync 1.4 and fetchmail 6.4 match the host name against DNS names only, not iPAddress SANs: they connect to localhost.
  'mbsync SSLType STARTTLS': (port) => {
    const home = mkdtempSync(join(dir, 'mbsync-'));
    const rc = join(home, 'rc');
    writeFileSync(
      rc,
      `IMAPAccount a\nHost localhost\nPort ${port}\nUser testuser\nPass testpass\nSSLType STARTTLS\nCertificateFile ${CA_FILE}\nTimeout 3\n\n` +
        `IMAPStore remote\nAccount a\n\nMaildirStore local\nPath ${home}/mail/\nInbox ${home}/mail/INBOX\n\n` +
        `Channel c\nFar :remote:\nNear :local:\nPatterns INBOX\nCreate Near\nSyncState *\n`,
    );
    return run('mbsync', ['-c', rc, '-a']);
  },
  'fetchmail sslproto TLS1.2+ sslcertck': (port) => {
    const rc = join(mkdtempSync(join(dir, 'fetchmail-')), 'rc');
    writeFileSync(rc, `poll localhost service ${port} protocol IMAP timeout 3 user testuser password testpass sslproto 'TLS1.2+' sslcertck sslcertfile ${CA_FILE}\n`, { mode: 0o600 });
    return run('fetchmail', ['-f', rc, '-c', '--nosyslog']);
  },
};

const CASES: { name: string; options: ServerOptions }[] = [
  ...PROFILES.filter((p) => p !== 'valid').map((p) => ({ name: p, options: { tls: { profile: p } } })),
  ...STARTTLS_ATTACKS.map((a) => ({ name: a, options: { tls: { profile: 'valid' as const }, attacks: [a] } })),
];


/**
 * The frozen matrix: columns in the order of CLIENTS (imapflow, node-imap,
 * imaplib verifying, imaplib not verifying, curl --ssl-reqd, curl --ssl,
 * mbsync, fetchmail).
 */
const EXPECTED: Record<string, Cell[]> = {
  expired: [S, S, S, CERT, S, S, S, S],
  'not-yet-valid': [S, S, S, CERT, S, S, S, S],
  'wrong-host': [S, S, S, CERT, S, S, S, S],
  'self-signed': [S, S, S, CERT, S, S, S, S],
  'unknown-ca': [S, S, S, CERT, S, S, S, S],
  'missing-intermediate': [S, S, S, CERT, S, S, S, S],
  'weak-signature': [S, S, S, CERT, S, S, S, S],
  // OpenSSL's security level 1 (Node's default) takes RSA-1024; Debian's system OpenSSL (level 2: Python, curl) does not.
  'weak-key': [CERT, CERT, S, CERT, S, S, S, S],
  'starttls-buffering': [S, S, S, S, S, S, S, S],
  // node-imap's autotls: 'always' upgrades only when STARTTLS is advertised, and logs in anyway when it is not.
  'starttls-stripping': [S, LEAK, S, S, S, LEAK, S, S],
  'starttls-refusal': [S, S, S, S, S, LEAK, S, S],
  'starttls-no-handshake': [S, S, S, S, S, S, S, S],
  'starttls-garbage': [S, S, S, S, S, S, S, S],
  'starttls-preauth': [S, S, S, S, S, NOTLS, S, S],
  'starttls-tampering': [S, S, S, S, S, S, S, S],
  'starttls-alert': [S, S, S, S, S, S, S, S],
};
void INJ;

const servers: Server[] = [];
after(() => Promise.all(servers.map((s) => s.stop())));

/** What each verdict but `safe` said, for the message of a failure. */
const evidence: string[] = [];

async function playOnce(client: (port: number) => Promise<void>, options: ServerOptions): Promise<Cell> {
  const { server, port } = await startServer({ starttls: true, plugins: [], ...options });
  servers.push(server);
  return worstVerdict(server, () => client(port), null, evidence);
}

const missing = ['curl', PYTHON, 'mbsync', 'fetchmail'].filter((cmd) => spawnSync(cmd, ['--version']).error !== undefined);

test('every client against every profile and attack: the verdicts of docs/tls.md', { timeout: 120_000, skip: missing.length > 0 && !process.env.CI ? `${missing.join(', ')} not installed` : false }, async () => {
  await checkMatrix({ clients: CLIENTS, cases: CASES, expected: EXPECTED, playOnce, workers: 4, evidence });
});

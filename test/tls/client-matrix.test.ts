/**
 * The TLS bench against real clients: every certificate profile and every
 * STARTTLS attack, played to imapflow, node-imap, Python's imaplib (with
 * and without ssl.create_default_context()), curl (--ssl-reqd and
 * --ssl), mbsync and fetchmail, each configured to use STARTTLS and trust the test CA. Each run
 * ends in the server's verdict; the matrix is frozen below (and in
 * docs/tls.md), so a client or server change that moves a verdict fails
 * here. ROOKERY_PRINT_MATRIX=1 prints the table for the docs.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createRequire } from 'node:module';
import { ImapFlow } from 'imapflow';
import { PROFILES, STARTTLS_ATTACKS, TEST_CA, type Server, type TlsVerdict } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
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

type Cell = TlsVerdict['verdict'] | 'no verdict';
const S = 'safe';
const LEAK = 'leaked-credentials';
const CERT = 'accepted-bad-certificate';
const INJ = 'acted-on-injected-response';
const NOTLS = 'continued-without-tls';

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

/** A run whose client never connected (a timeout on a loaded machine) is played once more: it says nothing of the client. */
async function play(client: (port: number) => Promise<void>, options: ServerOptions): Promise<Cell> {
  const first = await playOnce(client, options);
  return first === 'no verdict' ? playOnce(client, options) : first;
}

async function playOnce(client: (port: number) => Promise<void>, options: ServerOptions): Promise<Cell> {
  const { server, port } = await startServer({ starttls: true, plugins: [], ...options });
  servers.push(server);
  const verdicts: TlsVerdict[] = [];
  server.on('verdict', (v) => verdicts.push(v));
  await client(port);
  // The session may still be closing when the client returns; a stop closes what is left (and so ends its verdict).
  for (let i = 0; i < 50 && verdicts.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  await server.stop();
  // A session the stop closed reports on its socket's close, which may come just after.
  for (let i = 0; i < 50 && verdicts.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  if (verdicts.length === 0) return 'no verdict';
  for (const v of verdicts) if (v.verdict !== 'safe') evidence.push(`${v.cases.join('+')}: ${v.verdict} (${v.text}; ${JSON.stringify(v.evidence)})`);
  // The worst verdict of the run: some clients reconnect after a failure.
  const order: Cell[] = [LEAK, INJ, CERT, NOTLS, S];
  return verdicts.map((v) => v.verdict).sort((a, b) => order.indexOf(a) - order.indexOf(b))[0]!;
}

const missing = ['curl', PYTHON, 'mbsync', 'fetchmail'].filter((cmd) => spawnSync(cmd, ['--version']).error !== undefined);

test('every client against every profile and attack: the verdicts of docs/tls.md', { timeout: 120_000, skip: missing.length > 0 && !process.env.CI ? `${missing.join(', ')} not installed` : false }, async () => {
  const names = Object.keys(CLIENTS);
  const jobs = CASES.flatMap((c) => names.map((n) => ({ c, n })));
  const got = new Map<string, Cell[]>(CASES.map((c) => [c.name, names.map((): Cell => 'no verdict')]));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const { c, n } = jobs[next++]!;
      got.get(c.name)![names.indexOf(n)] = await play(CLIENTS[n]!, c.options);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  if (process.env.ROOKERY_PRINT_MATRIX) {
    const rows = [`| case | ${names.join(' | ')} |`, `|---|${names.map(() => '---').join('|')}|`];
    for (const [name, cells] of got) rows.push(`| \`${name}\` | ${cells.map((c) => (c === 'safe' ? 'safe' : `**${c}**`)).join(' | ')} |`);
    console.log(rows.join('\n'));
  }
  const moved = CASES.flatMap((c) => names.filter((n, i) => got.get(c.name)![i] !== EXPECTED[c.name]![i]).map((n) => `${c.name} x ${n}: ${got.get(c.name)![names.indexOf(n)]}`));
  assert.deepEqual(moved, [], `verdicts moved:\n${moved.join('\n')}\nevidence:\n${evidence.join('\n')}`);
});

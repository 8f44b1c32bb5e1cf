/**
 * The TLS bench on POP3 STLS against real clients: every broken
 * certificate profile and every STARTTLS attack (but starttls-preauth,
 * which POP3 has no greeting for), played to Python's poplib (stls() with
 * a verifying context and without one), curl (--ssl-reqd and --ssl) and
 * fetchmail, each set up to use STLS and trust the test CA. Each run ends
 * in the server's verdict; the matrix is frozen below (and in
 * docs/tls.md), so a client or server change that moves a verdict fails
 * here. ROOKERY_PRINT_MATRIX=1 prints the table for the docs.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { PROFILES, STARTTLS_ATTACKS, TEST_CA, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { CERT, INJ, LEAK, NOTLS, S, checkMatrix, worstVerdict, type Cell } from './matrix.js';
import { startPop3 } from '../pop3/pop3-test.js';

const PYTHON = process.env.PYTHON ?? 'python3';
const dir = mkdtempSync(join(tmpdir(), 'rookery-pop3-matrix-'));
const CA_FILE = join(dir, 'ca.pem');
writeFileSync(CA_FILE, TEST_CA);
after(() => rmSync(dir, { recursive: true, force: true }));

// poplib.stls() asks CAPA first and refuses when STLS is not listed (error_proto), as its documentation says.
const PY = `
import poplib, ssl, sys
port, mode, ca = int(sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    p = poplib.POP3('127.0.0.1', port, timeout=3)
    if mode == 'verify':
        p.stls(ssl.create_default_context(cafile=ca))
    else:
        p.stls()
    p.user('testuser')
    p.pass_('testpass')
    p.stat()
    p.quit()
except Exception as e:
    print(type(e).__name__, e)
`;

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve) => execFile(cmd, args, { timeout: 6000 }, () => resolve()));
}

const CLIENTS: Record<string, (port: number) => Promise<void>> = {
  'poplib stls(create_default_context())': (port) => run(PYTHON, ['-c', PY, String(port), 'verify', CA_FILE]),
  'poplib stls()': (port) => run(PYTHON, ['-c', PY, String(port), 'plain', CA_FILE]),
  'curl --ssl-reqd --cacert': (port) => run('curl', ['-s', '--max-time', '4', '--ssl-reqd', '--cacert', CA_FILE, '-u', 'testuser:testpass', `pop3://127.0.0.1:${port}/`]),
  'curl --ssl --cacert': (port) => run('curl', ['-s', '--max-time', '4', '--ssl', '--cacert', CA_FILE, '-u', 'testuser:testpass', `pop3://127.0.0.1:${port}/`]),
  // fetchmail 6.4 matches the host name against DNS names only: it connects to localhost.
  'fetchmail sslproto TLS1.2+ sslcertck': (port) => {
    const rc = join(mkdtempSync(join(dir, 'fetchmail-')), 'rc');
    writeFileSync(rc, `poll localhost service ${port} protocol POP3 timeout 3 user testuser password testpass sslproto 'TLS1.2+' sslcertck sslcertfile ${CA_FILE}\n`, { mode: 0o600 });
    return run('fetchmail', ['-f', rc, '-c', '--nosyslog']);
  },
};

const CASES: { name: string; options: ServerOptions }[] = [
  ...PROFILES.filter((p) => p !== 'valid').map((p) => ({ name: p, options: { tls: { pop3: { profile: p } } } })),
  ...STARTTLS_ATTACKS.filter((a) => a !== 'starttls-preauth').map((a) => ({ name: a, options: { tls: { pop3: { profile: 'valid' as const } }, attacks: [a] } })),
];


/** The frozen matrix: columns in the order of CLIENTS. */
const EXPECTED: Record<string, Cell[]> = {
  // poplib.stls() without a context takes ssl._create_stdlib_context(): no verification at all.
  expired: [S, CERT, S, S, S],
  'not-yet-valid': [S, CERT, S, S, S],
  'wrong-host': [S, CERT, S, S, S],
  'self-signed': [S, CERT, S, S, S],
  'unknown-ca': [S, CERT, S, S, S],
  'missing-intermediate': [S, CERT, S, S, S],
  'weak-signature': [S, CERT, S, S, S],
  'weak-key': [S, CERT, S, S, S],
  'starttls-buffering': [S, S, S, S, S],
  // curl --ssl is "try TLS": without STLS in CAPA, or with -ERR to it, it logs in in clear text.
  'starttls-stripping': [S, S, S, LEAK, S],
  'starttls-refusal': [S, S, S, LEAK, S],
  'starttls-no-handshake': [S, S, S, S, S],
  'starttls-garbage': [S, S, S, S, S],
  // curl --ssl takes the injected CAPA (no STLS, SASL CRAM-MD5) for the server's and sends AUTH CRAM-MD5 in clear text.
  'starttls-tampering': [S, S, S, LEAK, S],
  'starttls-alert': [S, S, S, S, S],
};
void INJ;
void NOTLS;

const servers: Server[] = [];
after(() => Promise.all(servers.map((s) => s.stop())));

const evidence: string[] = [];

async function playOnce(client: (port: number) => Promise<void>, options: ServerOptions): Promise<Cell> {
  const { server, pop3 } = await startPop3({ plugins: [], ...options }, { stls: true });
  servers.push(server);
  return worstVerdict(server, () => client(pop3), 'pop3', evidence);
}

const missing = ['curl', PYTHON, 'fetchmail'].filter((cmd) => spawnSync(cmd, ['--version']).error !== undefined);

test('every POP3 client against every profile and attack over STLS: the verdicts of docs/tls.md', { timeout: 120_000, skip: missing.length > 0 && !process.env.CI ? `${missing.join(', ')} not installed` : false }, async () => {
  await checkMatrix({ clients: CLIENTS, cases: CASES, expected: EXPECTED, playOnce, workers: 3, evidence });
});

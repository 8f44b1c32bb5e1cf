/**
 * The TLS bench on SMTP STARTTLS against real clients: every broken
 * certificate profile and every STARTTLS attack (but starttls-preauth,
 * which SMTP has no greeting for), played to nodemailer (requireTLS,
 * opportunistic by default, ignoreTLS), Python's smtplib (starttls() with
 * a verifying context and without one) and curl (--ssl-reqd and --ssl),
 * each logging in and sending one message. Each run ends in the server's
 * verdict; the matrix is frozen below (and in docs/tls.md), so a client
 * or server change that moves a verdict fails here.
 * ROOKERY_PRINT_MATRIX=1 prints the table for the docs.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import nodemailer from 'nodemailer';
import { createServer, PROFILES, STARTTLS_ATTACKS, TEST_CA, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { CERT, INJ, LEAK, NOTLS, S, checkMatrix, worstVerdict, type Cell } from './matrix.js';

const PYTHON = process.env.PYTHON ?? 'python3';
const dir = mkdtempSync(join(tmpdir(), 'rookery-smtp-matrix-'));
const CA_FILE = join(dir, 'ca.pem');
writeFileSync(CA_FILE, TEST_CA);
const MAIL_FILE = join(dir, 'mail.eml');
writeFileSync(MAIL_FILE, 'From: a@client.test\r\nTo: testuser@localhost\r\nSubject: matrix\r\n\r\nbody\r\n');
after(() => rmSync(dir, { recursive: true, force: true }));

// smtplib.starttls() raises SMTPNotSupportedError when EHLO did not list STARTTLS, as its documentation says.
const PY = `
import smtplib, ssl, sys
port, mode, ca = int(sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    s = smtplib.SMTP('127.0.0.1', port, timeout=3)
    s.ehlo('python.test')
    if mode == 'verify':
        s.starttls(context=ssl.create_default_context(cafile=ca))
    else:
        s.starttls()
    s.ehlo('python.test')
    s.login('testuser', 'testpass')
    s.sendmail('a@client.test', ['testuser@localhost'], b'Subject: matrix\\r\\n\\r\\nbody\\r\\n')
    s.quit()
except Exception as e:
    print(type(e).__name__, e)
`;

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve) => execFile(cmd, args, { timeout: 6000 }, () => resolve()));
}

async function nodemailerSend(port: number, mode: { requireTLS?: boolean; ignoreTLS?: boolean }): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ...mode, tls: { ca: TEST_CA }, auth: { user: 'testuser', pass: 'testpass' }, connectionTimeout: 3000, greetingTimeout: 3000, socketTimeout: 3000 });
  try {
    await transport.sendMail({ from: 'a@client.test', to: 'testuser@localhost', subject: 'matrix', text: 'body' });
  } catch {
    // The verdict, not the client's outcome, is what the matrix records.
  } finally {
    transport.close();
  }
}

const curl = (flag: string) => (port: number) => run('curl', ['-s', '--max-time', '4', flag, '--cacert', CA_FILE, '-u', 'testuser:testpass', '--mail-from', 'a@client.test', '--mail-rcpt', 'testuser@localhost', '-T', MAIL_FILE, `smtp://127.0.0.1:${port}/`]);

const CLIENTS: Record<string, (port: number) => Promise<void>> = {
  'nodemailer requireTLS': (port) => nodemailerSend(port, { requireTLS: true }),
  'nodemailer (opportunistic)': (port) => nodemailerSend(port, {}),
  'nodemailer ignoreTLS': (port) => nodemailerSend(port, { ignoreTLS: true }),
  'smtplib starttls(create_default_context())': (port) => run(PYTHON, ['-c', PY, String(port), 'verify', CA_FILE]),
  'smtplib starttls()': (port) => run(PYTHON, ['-c', PY, String(port), 'plain', CA_FILE]),
  'curl --ssl-reqd --cacert': curl('--ssl-reqd'),
  'curl --ssl --cacert': curl('--ssl'),
};

const CASES: { name: string; options: ServerOptions }[] = [
  ...PROFILES.filter((p) => p !== 'valid').map((p) => ({ name: p, options: { tls: { smtp: { profile: p } } } })),
  ...STARTTLS_ATTACKS.filter((a) => a !== 'starttls-preauth').map((a) => ({ name: a, options: { tls: { smtp: { profile: 'valid' as const } }, attacks: [a] } })),
];


/** The frozen matrix: columns in the order of CLIENTS. */
const EXPECTED: Record<string, Cell[]> = {
  // smtplib.starttls() without a context takes ssl._create_stdlib_context(): no verification at all.
  expired: [S, S, S, S, CERT, S, S],
  'not-yet-valid': [S, S, S, S, CERT, S, S],
  'wrong-host': [S, S, S, S, CERT, S, S],
  'self-signed': [S, S, S, S, CERT, S, S],
  'unknown-ca': [S, S, S, S, CERT, S, S],
  'missing-intermediate': [S, S, S, S, CERT, S, S],
  'weak-signature': [S, S, S, S, CERT, S, S],
  // Node's OpenSSL (security level 1) takes a 1024-bit RSA key signed by a trusted CA; Python's and curl's refuse it.
  'weak-key': [CERT, CERT, S, S, CERT, S, S],
  'starttls-buffering': [S, S, S, S, S, S, S],
  // Opportunistic nodemailer, ignoreTLS (which never asks) and curl --ssl log in in clear text when EHLO lists no STARTTLS.
  'starttls-stripping': [S, LEAK, LEAK, S, S, S, LEAK],
  // Only curl --ssl goes on after 454; nodemailer gives up even when opportunistic.
  'starttls-refusal': [S, S, S, S, S, S, LEAK],
  'starttls-no-handshake': [S, S, S, S, S, S, S],
  'starttls-garbage': [S, S, S, S, S, S, S],
  // The injected EHLO answer (no STARTTLS, AUTH CRAM-MD5) is taken for the server's: curl --ssl even sends AUTH CRAM-MD5.
  'starttls-tampering': [S, LEAK, LEAK, S, S, S, LEAK],
  'starttls-alert': [S, S, S, S, S, S, S],
};
void INJ;
void NOTLS;

const servers: Server[] = [];
after(() => Promise.all(servers.map((s) => s.stop())));

const evidence: string[] = [];

async function playOnce(client: (port: number) => Promise<void>, options: ServerOptions): Promise<Cell> {
  const server = createServer({ port: 0, plugins: [], ...options, smtp: { port: 0, starttls: true, auth: true } });
  const addresses = await server.start();
  servers.push(server);
  return worstVerdict(server, () => client(addresses.smtp!.port), 'smtp', evidence);
}

const missing = ['curl', PYTHON].filter((cmd) => spawnSync(cmd, ['--version']).error !== undefined);

test('every SMTP client against every profile and attack over STARTTLS: the verdicts of docs/tls.md', { timeout: 180_000, skip: missing.length > 0 && !process.env.CI ? `${missing.join(', ')} not installed` : false }, async () => {
  await checkMatrix({ clients: CLIENTS, cases: CASES, expected: EXPECTED, playOnce, workers: 3, evidence });
});

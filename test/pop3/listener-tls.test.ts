/**
 * The POP3 listener on the TLS bench (docs/tls.md): implicit TLS and STLS
 * served from `tls.pop3` (profile, SNI, versions, ALPN id `pop3`, client
 * certificates), checked with validating clients (Python's poplib with
 * the test CA, curl --cacert, Node tls), and SASL EXTERNAL over POP3 AUTH
 * (RFC 4422 Appendix A, RFC 5034).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { after, describe, test } from 'node:test';
import { TEST_CA, type Server } from '../../src/index.js';
import type { Pop3Options, ServerOptions } from '../../src/options/types.js';
import { python, startPop3 } from './pop3-test.js';

const dir = mkdtempSync(join(tmpdir(), 'rookery-pop3tls-'));
const caFile = join(dir, 'ca.pem');
writeFileSync(caFile, TEST_CA);

const servers: Server[] = [];
after(() => Promise.all(servers.map((s) => s.stop())));

async function start(options: ServerOptions, pop3: Pop3Options = { secure: true }): Promise<{ server: Server; pop3: number; imap: number }> {
  const started = await startPop3({ plugins: [], ...options }, pop3);
  servers.push(started.server);
  return started;
}

/** What poplib says when it validates against the test CA: 'ok' or the SSL error's verify message. */
const POPLIB_OUTCOME = (port: number, stls: boolean): string => `import poplib, ssl, json
ctx = ssl.create_default_context(cafile=${JSON.stringify(caFile)})
try:
    ${stls ? `p = poplib.POP3('127.0.0.1', ${port}, timeout=10); p.stls(ctx)` : `p = poplib.POP3_SSL('127.0.0.1', ${port}, context=ctx, timeout=10)`}
    p.user('testuser'); p.pass_('testpass'); p.quit(); print('ok')
except ssl.SSLCertVerificationError as e:
    print(e.verify_message)
`;

/** RFC 5280 §6.1.3 and RFC 6125 §6 as OpenSSL words them: what each flaw makes poplib refuse. */
const EXPECTED = {
  valid: 'ok',
  expired: 'certificate has expired',
  'wrong-host': /IP address mismatch|Hostname mismatch/,
  'self-signed': 'self-signed certificate',
  'unknown-ca': 'self-signed certificate in certificate chain',
} as const;

describe('poplib validating against the test CA: tls.pop3.profile', () => {
  for (const [profile, expected] of Object.entries(EXPECTED)) {
    test(`POP3S ${profile}: ${String(expected)}`, { timeout: 30_000 }, async () => {
      // The IMAP listener keeps another profile: the POP3 one is its own.
      const { pop3 } = await start({ tls: { profile: 'expired', pop3: { profile: profile as keyof typeof EXPECTED } } });
      const out = (await python(POPLIB_OUTCOME(pop3, false))).trim();
      if (typeof expected === 'string') assert.equal(out, expected);
      else assert.match(out, expected);
    });
  }
  test('STLS serves the same profile: valid passes, expired fails', { timeout: 30_000 }, async () => {
    const good = await start({ tls: { pop3: { profile: 'valid' } } }, { stls: true });
    assert.equal((await python(POPLIB_OUTCOME(good.pop3, true))).trim(), 'ok');
    const bad = await start({ tls: { pop3: { profile: 'expired' } } }, { stls: true });
    assert.equal((await python(POPLIB_OUTCOME(bad.pop3, true))).trim(), 'certificate has expired');
  });
});

function curl(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile('curl', ['-s', '--max-time', '10', ...args], (error, stdout) => resolve({ code: error ? Number((error as { code?: number }).code ?? -1) : 0, stdout }));
  });
}

test('curl pop3s:// with --cacert: valid lists the maildrop, expired is exit 60; curl --ssl-reqd over STLS validates too', { timeout: 30_000 }, async () => {
  const ok = await start({ tls: { pop3: { profile: 'valid' } }, storage: { INBOX: { messages: ['Subject: a\r\n\r\nhello\r\n'] }, '': {} } });
  const listed = await curl(['--cacert', caFile, '-u', 'testuser:testpass', `pop3s://127.0.0.1:${ok.pop3}/`]);
  assert.equal(listed.code, 0);
  assert.match(listed.stdout, /^1 \d+\r?\n$/);
  const expired = await start({ tls: { pop3: { profile: 'expired' } } });
  assert.equal((await curl(['--cacert', caFile, '-u', 'testuser:testpass', `pop3s://127.0.0.1:${expired.pop3}/`])).code, 60, 'CURLE_PEER_FAILED_VERIFICATION');
  const stls = await start({ tls: { pop3: { profile: 'valid' } } }, { stls: true });
  assert.equal((await curl(['--ssl-reqd', '--cacert', caFile, '-u', 'testuser:testpass', `pop3://127.0.0.1:${stls.pop3}/`])).code, 0);
});

function handshake(port: number, options: tls.ConnectionOptions): Promise<{ ok: true; socket: tls.TLSSocket } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    const socket = tls.connect({ port, host: '127.0.0.1', ca: [TEST_CA], ...options });
    socket.once('secureConnect', () => {
      // A refused ALPN ends the connection right after the handshake: wait for the greeting to tell.
      socket.once('data', () => resolve({ ok: true, socket }));
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, error: err.code ?? err.message }));
    socket.once('close', () => resolve({ ok: false, error: 'closed' }));
  });
}

test('SNI picks the profile per server name; versions and ALPN `pop3` come from tls.pop3', { timeout: 30_000 }, async () => {
  const sni = await start({ tls: { pop3: { profile: 'expired', certificates: { 'mail.test': 'valid' }, hosts: ['mail.test'] } } });
  const named = await handshake(sni.pop3, { servername: 'mail.test' });
  assert.ok(named.ok);
  named.socket.destroy();
  const other = await handshake(sni.pop3, { servername: 'localhost' });
  assert.deepEqual(other, { ok: false, error: 'CERT_HAS_EXPIRED' });

  const versions = await start({ tls: { pop3: { profile: 'valid', minVersion: 'TLSv1.3' } } });
  const old = await handshake(versions.pop3, { servername: 'localhost', maxVersion: 'TLSv1.2' });
  assert.equal(old.ok, false);
  const current = await handshake(versions.pop3, { servername: 'localhost' });
  assert.ok(current.ok);
  assert.equal(current.socket.getProtocol(), 'TLSv1.3');
  current.socket.destroy();

  const alpn = await start({ tls: { pop3: { profile: 'valid', alpn: 'require' } } });
  const pop3 = await handshake(alpn.pop3, { servername: 'localhost', ALPNProtocols: ['pop3'] });
  assert.ok(pop3.ok, 'RFC 7301: the IANA id of POP3 is accepted');
  assert.equal(pop3.socket.alpnProtocol, 'pop3');
  pop3.socket.destroy();
  assert.equal((await handshake(alpn.pop3, { servername: 'localhost', ALPNProtocols: ['imap'] })).ok, false, 'another id: no_application_protocol');
  assert.equal((await handshake(alpn.pop3, { servername: 'localhost' })).ok, false, 'no id at all: refused');

  const refuse = await start({ tls: { pop3: { profile: 'valid', alpn: 'refuse' } } });
  assert.equal((await handshake(refuse.pop3, { servername: 'localhost', ALPNProtocols: ['pop3'] })).ok, false);
  const none = await handshake(refuse.pop3, { servername: 'localhost' });
  assert.ok(none.ok, 'refuse: a client that offers no id connects');
  none.socket.destroy();
});

describe('SASL EXTERNAL over POP3 AUTH (RFC 4422 Appendix A): tls.pop3.requestCert', () => {
  const program = (port: number, stls: boolean, cert: { key: string; cert: string } | null, authz: string): string => {
    const files = cert ? (writeFileSync(join(dir, 'c.pem'), cert.cert), writeFileSync(join(dir, 'k.pem'), cert.key), true) : false;
    return `import poplib, ssl, json, base64
ctx = ssl.create_default_context(cafile=${JSON.stringify(caFile)})
${files ? `ctx.load_cert_chain(${JSON.stringify(join(dir, 'c.pem'))}, ${JSON.stringify(join(dir, 'k.pem'))})` : ''}
${stls ? `p = poplib.POP3('127.0.0.1', ${port}, timeout=10); before = p.capa().get('SASL', []); p.stls(ctx)` : `before = None; p = poplib.POP3_SSL('127.0.0.1', ${port}, context=ctx, timeout=10)`}
r = {'before': before, 'sasl': p.capa().get('SASL', [])}
try:
    r['auth'] = p._shortcmd('AUTH EXTERNAL ${authz === '' ? '=' : Buffer.from(authz).toString('base64')}').decode()
    r['stat'] = list(p.stat())
    r['after'] = p.capa().get('SASL', [])
except poplib.error_proto as e:
    r['auth'] = e.args[0].decode()
p.quit()
print(json.dumps(r))
`;
  };

  test('a certificate naming a user: CAPA lists EXTERNAL after the handshake only, AUTH EXTERNAL = logs in (implicit TLS and STLS)', { timeout: 30_000 }, async () => {
    const { server, pop3 } = await start({ tls: { pop3: { profile: 'valid', requestCert: true } } }, { secure: true });
    const r = JSON.parse(await python(program(pop3, false, server.tls.clientCertificate('testuser'), ''))) as Record<string, unknown>;
    assert.ok((r.sasl as string[]).includes('EXTERNAL'));
    assert.match(r.auth as string, /^\+OK Logged in/);
    assert.deepEqual(r.stat, [0, 0]);
    assert.ok(!(r.after as string[]).includes('EXTERNAL'), 'not offered after login');

    const s = await start({ tls: { pop3: { profile: 'valid', requestCert: true } } }, { stls: true });
    const t = JSON.parse(await python(program(s.pop3, true, s.server.tls.clientCertificate('testuser'), 'testuser'))) as Record<string, unknown>;
    assert.ok(!(t.before as string[]).includes('EXTERNAL'), 'no certificate before STLS');
    assert.ok((t.sasl as string[]).includes('EXTERNAL'));
    assert.match(t.auth as string, /^\+OK Logged in/, 'the authorization identity may be the certificate\'s own user');
  });

  test('no certificate, another identity, a user that does not exist, requestCert off: EXTERNAL not offered and -ERR [AUTH]', { timeout: 30_000 }, async () => {
    const { server, pop3 } = await start({ tls: { pop3: { profile: 'valid', requestCert: true } } }, { secure: true });
    const none = JSON.parse(await python(program(pop3, false, null, ''))) as Record<string, unknown>;
    assert.ok(!(none.sasl as string[]).includes('EXTERNAL'));
    assert.match(none.auth as string, /^-ERR \[AUTH\] No client certificate/);
    const other = JSON.parse(await python(program(pop3, false, server.tls.clientCertificate('testuser'), 'someone'))) as Record<string, unknown>;
    assert.match(other.auth as string, /^-ERR \[AUTH\] The certificate names testuser/);
    const ghost = JSON.parse(await python(program(pop3, false, server.tls.clientCertificate('ghost'), ''))) as Record<string, unknown>;
    assert.ok(!(ghost.sasl as string[]).includes('EXTERNAL'), 'a certificate that names no user is no way in');
    assert.match(ghost.auth as string, /^-ERR \[AUTH\]/);
    const off = await start({ tls: { profile: 'valid' } }, { secure: true });
    const plain = JSON.parse(await python(program(off.pop3, false, off.server.tls.clientCertificate('testuser'), ''))) as Record<string, unknown>;
    assert.ok(!(plain.sasl as string[]).includes('EXTERNAL'), 'without requestCert the server never asked for it');
  });
});

function fetchmail(port: number, name: string): Promise<{ code: number; stdout: string }> {
  const rc = join(dir, `fetchmailrc-${name}`);
  // fetchmail 6.4 matches DNS names only (not iPAddress SANs): localhost. `-c` counts without fetching.
  writeFileSync(rc, `poll localhost service ${port} protocol POP3 timeout 3 user testuser password testpass ssl sslproto 'TLS1.2+' sslcertck sslcertfile ${caFile}\n`, { mode: 0o600 });
  return new Promise((resolve) => {
    execFile('fetchmail', ['-f', rc, '-c', '--nosyslog'], { timeout: 10_000 }, (error, stdout) => resolve({ code: error ? Number((error as { code?: number }).code ?? -1) : 0, stdout }));
  });
}

test('fetchmail ssl sslcertck over POP3S: valid counts the message, expired and wrong-host are refused (exit 2, a socket error)', { timeout: 40_000 }, async () => {
  const storage = { INBOX: { messages: ['Subject: a\r\n\r\nx\r\n'] }, '': {} };
  const good = await start({ tls: { pop3: { profile: 'valid' } }, storage });
  const counted = await fetchmail(good.pop3, 'valid');
  assert.equal(counted.code, 0);
  assert.match(counted.stdout, /^1 message for testuser at localhost/);
  for (const profile of ['expired', 'wrong-host'] as const) {
    const bad = await start({ tls: { pop3: { profile } }, storage });
    assert.equal((await fetchmail(bad.pop3, profile)).code, 2, profile);
  }
});

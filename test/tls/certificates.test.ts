/**
 * The test CA and the certificate profiles (docs/tls.md), checked with
 * Node's TLS client as a client that validates the way RFC 5280 §6 and RFC
 * 7817 §3 say: every broken profile fails with the error its flaw makes,
 * `valid` passes, SNI picks a certificate per server name, and the
 * listener settings (client certificates and SASL EXTERNAL, versions,
 * ALPN) act on real handshakes.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { createServer, PROFILES, TEST_CA, TEST_CERTIFICATE, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { CLI } from '../helpers/cli.js';
import { startServer } from '../helpers/server.js';
import { tlsConnect } from './tls-lines.js';

const servers: Server[] = [];
after(() => Promise.all(servers.map((s) => s.stop())));

async function secure(options: ServerOptions): Promise<{ server: Server; port: number }> {
  const started = await startServer({ secure: true, plugins: [], ...options });
  servers.push(started.server);
  return started;
}

/** The error code a validating client meets on `profile`, or 'ok'. */
async function outcome(port: number, servername = 'localhost', extra = {}): Promise<string> {
  try {
    const c = await tlsConnect(port, { ca: [TEST_CA], servername, ...extra });
    c.socket.destroy();
    return 'ok';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}

/** RFC 5280 §6.1.3 (validity, signature, issuer), RFC 7817 §3 (host name): what each flaw must make a client say. */
const EXPECTED: Record<(typeof PROFILES)[number], string> = {
  valid: 'ok',
  expired: 'CERT_HAS_EXPIRED',
  'not-yet-valid': 'CERT_NOT_YET_VALID',
  'wrong-host': 'ERR_TLS_CERT_ALTNAME_INVALID',
  'self-signed': 'DEPTH_ZERO_SELF_SIGNED_CERT',
  'unknown-ca': 'SELF_SIGNED_CERT_IN_CHAIN',
  'missing-intermediate': 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  // OpenSSL 3 at Node's default security level 1: SHA-1 signatures are refused...
  'weak-signature': 'UNSPECIFIED',
  // ...but an RSA key of 1024 bits is 80 bits of security, which level 1 still accepts (docs/tls.md).
  'weak-key': 'ok',
};

describe('certificate profiles against a validating client (Node tls, ca: TEST_CA)', () => {
  for (const profile of PROFILES) {
    test(`${profile}: ${EXPECTED[profile]}`, async () => {
      const { port } = await secure({ tls: { profile } });
      assert.equal(await outcome(port), EXPECTED[profile]);
    });
  }

  test('weak-key is refused at security level 2 (what Debian\'s system OpenSSL and Python use)', async () => {
    const { port } = await secure({ tls: { profile: 'weak-key' } });
    await assert.rejects(tlsConnect(port, { ca: [TEST_CA], ciphers: 'DEFAULT:@SECLEVEL=2' }), /EE certificate key too weak/);
  });

  test('valid carries localhost, 127.0.0.1, ::1 and the hosts asked, and is signed by TEST_CA', async () => {
    const { port } = await secure({ tls: { profile: 'valid', hosts: ['imap.example.test', '192.0.2.7'] } });
    const c = await tlsConnect(port, { ca: [TEST_CA], servername: 'imap.example.test' });
    const peer = new X509Certificate(c.socket.getPeerX509Certificate()!.raw);
    c.socket.destroy();
    assert.equal(peer.subjectAltName, 'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:imap.example.test, IP Address:192.0.2.7');
    assert.ok(peer.verify(new X509Certificate(TEST_CA).publicKey));
    assert.ok(peer.checkHost('imap.example.test'));
    assert.ok(peer.checkIP('::1'));
    assert.equal(peer.ca, false);
    assert.ok(Date.parse(peer.validFrom) < Date.now() && Date.now() < Date.parse(peer.validTo));
  });

  test('an IPv6 client sees ::1 as valid (RFC 5280 §4.2.1.6 iPAddress of 16 octets)', async () => {
    const server = createServer({ port: 0, host: '::1', secure: true, plugins: [], tls: { profile: 'valid' } });
    servers.push(server);
    const { imap } = await server.start();
    assert.equal(await outcome(imap.port, '', { host: '::1', servername: undefined }), 'ok');
  });
});

describe('SNI and listeners', () => {
  test('a certificate per server name: valid for one, wrong-host for another, the profile for the rest', async () => {
    const { port } = await secure({ tls: { profile: 'expired', certificates: { 'imap.example.test': 'valid', 'evil.test': 'wrong-host' } } });
    assert.equal(await outcome(port, 'imap.example.test'), 'ok');
    assert.equal(await outcome(port, 'evil.test'), 'ERR_TLS_CERT_ALTNAME_INVALID');
    assert.equal(await outcome(port, 'localhost'), 'CERT_HAS_EXPIRED');
  });

  test('tls.imap overrides the shared keys for the IMAP listener only', async () => {
    const server = createServer({ port: 0, secure: true, plugins: [], tls: { profile: 'valid', imap: { profile: 'self-signed' } } });
    servers.push(server);
    const { imap } = await server.start();
    assert.equal(await outcome(imap.port), 'DEPTH_ZERO_SELF_SIGNED_CERT');
    assert.equal(server.tlsFor('smtp').settings.profile, 'valid');
  });

  test('without a profile the key/cert option (or TEST_CERTIFICATE) is served as before', async () => {
    const { port } = await secure({});
    assert.equal(await outcome(port, 'localhost', { ca: [TEST_CERTIFICATE] }), 'ok');
  });

  test('freshCa: a new CA per server; TEST_CA no longer validates it, server.tlsCa() does', async () => {
    const { server, port } = await secure({ tls: { profile: 'valid', freshCa: true } });
    assert.notEqual(server.tlsCa(), TEST_CA);
    assert.equal(await outcome(port), 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    assert.equal(await outcome(port, 'localhost', { ca: [server.tlsCa()] }), 'ok');
  });

  test('a wrong profile name is an option error that lists the profiles', () => {
    assert.throws(() => createServer({ tls: { profile: 'expird' as never } }), /tls\.profile: expected a certificate profile \(valid, expired, not-yet-valid/);
    assert.throws(() => createServer({ tls: { certificates: { 'a.test': 'nope' as never } } }), /tls\.certificates\["a\.test"\]: expected a certificate profile/);
    assert.throws(() => createServer({ tls: { imap: { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.2' } } }), /tls\.imap\.minVersion: is above maxVersion/);
  });
});

describe('client certificates and SASL EXTERNAL (RFC 4422 Appendix A)', () => {
  test('a certificate minted for a user logs that user in with AUTHENTICATE EXTERNAL', async () => {
    const { server, port } = await secure({ plugins: ['AUTH=EXTERNAL'], tls: { profile: 'valid', requestCert: true }, users: { alice: { password: 'x' } } });
    const { key, cert } = server.tls.clientCertificate('alice');
    const c = await tlsConnect(port, { ca: [TEST_CA], key, cert });
    await c.until('*');
    // Offered once the handshake has shown the certificate (the implicit-TLS greeting is written before it).
    assert.match((await c.command('a0', 'CAPABILITY'))[0]!, /AUTH=EXTERNAL/);
    // RFC 4422 A.1: an empty message asks for the identity the certificate gives.
    c.socket.write('a1 AUTHENTICATE EXTERNAL\r\n');
    assert.deepEqual(await c.until('+'), ['+ ']);
    c.socket.write('\r\n');
    assert.match((await c.until('a1')).at(-1)!, /^a1 OK .*Logged in/);
    assert.equal(server.control.sessions()[0]!.user, 'alice');
    c.socket.destroy();
  });

  test('another authorization identity, no certificate, or a certificate of another CA: NO', async () => {
    const { server, port } = await secure({ plugins: ['AUTH=EXTERNAL', 'SASL-IR'], tls: { profile: 'valid', requestCert: true }, users: { alice: { password: 'x' }, bob: { password: 'y' } } });
    const { key, cert } = server.tls.clientCertificate('alice');
    const c = await tlsConnect(port, { ca: [TEST_CA], key, cert });
    await c.until('*');
    assert.match((await c.command('a1', `AUTHENTICATE EXTERNAL ${Buffer.from('bob').toString('base64')}`)).at(-1)!, /^a1 NO \[AUTHORIZATIONFAILED\]/);
    c.socket.destroy();
    const bare = await tlsConnect(port, { ca: [TEST_CA] });
    await bare.until('*');
    assert.doesNotMatch((await bare.command('a0', 'CAPABILITY'))[0]!, /AUTH=EXTERNAL/);
    assert.match((await bare.command('a1', 'AUTHENTICATE EXTERNAL =')).at(-1)!, /^a1 NO \[AUTHENTICATIONFAILED\]/);
    bare.socket.destroy();
    const other = createServer({ tls: { freshCa: true } });
    const foreign = other.tls.clientCertificate('alice');
    const f = await tlsConnect(port, { ca: [TEST_CA], key: foreign.key, cert: foreign.cert });
    await f.until('*');
    assert.match((await f.command('a1', 'AUTHENTICATE EXTERNAL =')).at(-1)!, /^a1 NO \[AUTHENTICATIONFAILED\]/);
    f.socket.destroy();
  });
});

/** The server's alert (protocol_version, no_application_protocol), or the reset that may overtake it. */
const REFUSED = /PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL|NO_APPLICATION_PROTOCOL|ECONNRESET/;

describe('protocol versions and ALPN', () => {
  test('maxVersion TLSv1.1: a client at the default minimum (TLSv1.2) refuses; one that allows TLSv1 at level 0 connects', async () => {
    const { port } = await secure({ tls: { profile: 'valid', maxVersion: 'TLSv1.1' } });
    assert.match(await outcome(port), REFUSED);
    assert.equal(await outcome(port, 'localhost', { minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' }), 'ok');
  });

  test('minVersion TLSv1.3: a TLSv1.2-only client is refused', async () => {
    const { port } = await secure({ tls: { profile: 'valid', minVersion: 'TLSv1.3' } });
    assert.match(await outcome(port, 'localhost', { maxVersion: 'TLSv1.2' }), REFUSED);
  });

  test('alpn require: "imap" is negotiated; another id or none is refused (RFC 7301 §3.2)', async () => {
    const { port } = await secure({ tls: { profile: 'valid', alpn: 'require' } });
    const c = await tlsConnect(port, { ca: [TEST_CA], ALPNProtocols: ['imap'] });
    assert.equal(c.socket.alpnProtocol, 'imap');
    assert.match((await c.until('*'))[0]!, /^\* OK/);
    c.socket.destroy();
    assert.match(await outcome(port, 'localhost', { ALPNProtocols: ['pop3'] }), REFUSED);
    const none = await tlsConnect(port, { ca: [TEST_CA] });
    await assert.rejects(none.until('*'), /connection ended/);
  });

  test('alpn refuse: a client that offers "imap" is refused, one without ALPN connects', async () => {
    const { port } = await secure({ tls: { profile: 'valid', alpn: 'refuse' } });
    assert.match(await outcome(port, 'localhost', { ALPNProtocols: ['imap'] }), REFUSED);
    assert.equal(await outcome(port), 'ok');
  });
});

describe('the CA for clients: TEST_CA, --print-ca, GET /v1/tls/ca', () => {
  test('TEST_CA is a CA certificate valid from 2000 to 2100', () => {
    const ca = new X509Certificate(TEST_CA);
    assert.equal(ca.ca, true);
    assert.equal(ca.subject, 'O=Rookery test server\nCN=Rookery test CA');
    assert.ok(ca.verify(ca.publicKey));
    assert.equal(new Date(ca.validTo).getUTCFullYear(), 2100);
  });

  test('rookery --print-ca prints TEST_CA', async () => {
    const out = await new Promise<string>((resolve, reject) => execFile(process.execPath, [CLI, '--print-ca'], (err, stdout) => (err ? reject(err) : resolve(stdout))));
    assert.equal(out, TEST_CA);
  });

  test('REST: the CA as JSON and as PEM text, client certificates minted, attacks queued', async () => {
    const server = createServer({ port: 0, rest: { port: 0 }, tls: { freshCa: true } });
    servers.push(server);
    const { rest } = await server.start();
    const base = `http://127.0.0.1:${rest!.port}`;
    const json = (await (await fetch(`${base}/v1/tls/ca`)).json()) as { pem: string; subject: string };
    assert.equal(json.pem, server.tlsCa());
    assert.equal(json.subject, 'O=Rookery test server, CN=Rookery test CA');
    const text = await fetch(`${base}/v1/tls/ca?format=text`);
    assert.match(text.headers.get('content-type') ?? '', /text\/plain/);
    assert.equal(await text.text(), server.tlsCa());
    const minted = await fetch(`${base}/v1/tls/client-certificates`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'alice', days: 2 }) });
    assert.equal(minted.status, 201);
    const { cert } = (await minted.json()) as { cert: string };
    const x = new X509Certificate(cert);
    assert.equal(x.subject, 'CN=alice');
    assert.ok(x.verify(new X509Certificate(server.tlsCa()).publicKey));
    const bad = await fetch(`${base}/v1/tls/attacks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ attacks: ['starttls-stripping', 'starttls-refusal'] }) });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: { message: string } }).error?.message ?? '', /choose one/);
    const openapi = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    for (const path of ['/v1/tls/ca', '/v1/tls/client-certificates', '/v1/tls/verdicts', '/v1/tls/attacks']) assert.ok(openapi.paths[path], path);
  });
});

describe('the rookery command', () => {
  test('--tls-profile and --attack: a STARTTLS server that greets with PREAUTH and serves an expired certificate', async () => {
    const { startCli, exited } = await import('../helpers/cli.js');
    const { child, port } = await startCli(['--port', '0', '--starttls', '--tls-profile', 'expired', '--attack', 'starttls-alert', '--plugin', 'none']);
    try {
      const { RawClient } = await import('../helpers/raw-client.js');
      const c = await RawClient.connect(port);
      assert.match(await c.line(), /^\* OK \[ALERT\] /);
      assert.match((await c.command('STARTTLS')).at(-1)!, /^T1 OK \[ALERT\]/);
      c.socket.removeAllListeners('data');
      const { startTls } = await import('./tls-lines.js');
      await assert.rejects(startTls(c.socket, { ca: [TEST_CA] }), /certificate has expired/);
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  });

  test('a wrong --attack name is refused with the list of attacks', async () => {
    const out = await new Promise<{ code: number; err: string }>((resolve) =>
      execFile(process.execPath, [CLI, '--port', '0', '--attack', 'starttls-nope'], (err, _stdout, stderr) => resolve({ code: typeof err?.code === 'number' ? err.code : 0, err: stderr })),
    );
    assert.notEqual(out.code, 0);
    assert.match(out.err, /attacks\[0\]: expected an attack name \(starttls-buffering, starttls-stripping/);
  });
});

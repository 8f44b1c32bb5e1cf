/**
 * The STARTTLS attack pack on SMTP (docs/tls.md), byte by byte: what each
 * attack sends (RFC 3207 is what it breaks), how a session comes to meet
 * one (the `attacks` option, the per-listener queue in-process and over
 * REST), and the verdict each client behaviour earns, in the `verdict`
 * event and the client report as an SMTP finding.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { after, describe, test } from 'node:test';
import { createServer, TEST_CA, type Server, type TlsVerdict } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { RawSmtp } from '../smtp/smtp-client.js';
import { verdictReader } from './matrix.js';

const servers: Server[] = [];
after(() => Promise.all(servers.map((s) => s.stop())));

export async function serveSmtp(options: ServerOptions = {}): Promise<{ server: Server; smtp: number; verdict: () => Promise<TlsVerdict> }> {
  const server = createServer({ port: 0, plugins: [], tls: { smtp: { profile: 'valid' } }, ...options, smtp: { port: 0, starttls: true, auth: true } });
  const addresses = await server.start();
  servers.push(server);
  const verdict = verdictReader(server);
  return { server, smtp: addresses.smtp!.port, verdict };
}

const PLAIN = `AUTH PLAIN ${Buffer.from('\0testuser\0testpass').toString('base64')}`;

describe('what each attack sends on SMTP', () => {
  test('stripping: EHLO without STARTTLS, STARTTLS unknown; AUTH in clear text is leaked-credentials, an SMTP finding', async () => {
    const { server, smtp, verdict } = await serveSmtp({ attacks: ['starttls-stripping'] });
    const { client } = await RawSmtp.connect(smtp);
    const ehlo = await client.command('EHLO client.test');
    assert.equal(ehlo.code, 250);
    assert.ok(!ehlo.lines.some((l) => /STARTTLS/i.test(l)), ehlo.lines.join('|'));
    // The reply still ends in exactly one final line (RFC 5321 §4.2.1).
    assert.equal(ehlo.lines.filter((l) => l.startsWith('250 ')).length, 1);
    assert.equal((await client.command('STARTTLS')).code, 500);
    assert.equal((await client.command(PLAIN)).code, 235);
    await client.command('QUIT');
    const v = await verdict();
    assert.deepEqual([v.listener, v.verdict, v.evidence, v.cases], ['smtp', 'leaked-credentials', PLAIN, ['starttls-stripping']]);
    assert.equal(server.clientReport().findings.find((f) => f.rule === 'leaked-credentials')?.protocol, 'smtp');
  });

  test('refusal: STARTTLS offered, 454 to it; MAIL FROM after is continued-without-tls, QUIT is safe', async () => {
    const { smtp, verdict } = await serveSmtp({ attacks: ['starttls-refusal'] });
    let { client } = await RawSmtp.connect(smtp);
    assert.ok((await client.command('EHLO client.test')).lines.some((l) => /^250[- ]STARTTLS$/.test(l)));
    const r = await client.command('STARTTLS');
    assert.deepEqual([r.code, r.text], [454, '4.7.0 TLS not available due to temporary reason']);
    // Refused (AUTH is required) or not, the command went out in plain text.
    await client.command('MAIL FROM:<a@client.test>');
    await client.command('QUIT');
    let v = await verdict();
    assert.deepEqual([v.verdict, v.evidence], ['continued-without-tls', 'MAIL FROM:<a@client.test>']);
    ({ client } = await RawSmtp.connect(smtp));
    await client.command('EHLO client.test');
    await client.command('STARTTLS');
    await client.command('QUIT');
    v = await verdict();
    assert.equal(v.verdict, 'safe');
  });

  test('no handshake: 220 to STARTTLS, then plain text; EHLO in plain text after it is continued-without-tls', async () => {
    const { smtp, verdict } = await serveSmtp({ attacks: ['starttls-no-handshake'] });
    const { client } = await RawSmtp.connect(smtp);
    await client.command('EHLO client.test');
    assert.equal((await client.command('STARTTLS')).code, 220);
    // No ServerHello: the session still answers plain text.
    assert.equal((await client.command('NOOP')).code, 250);
    await client.command(PLAIN);
    await client.command('QUIT');
    const v = await verdict();
    assert.equal(v.verdict, 'leaked-credentials');
    assert.match(v.text, /"220" to STARTTLS without a handshake/);
  });

  test('buffering: an injected EHLO answer in the same write as the 220', async () => {
    const { smtp, verdict } = await serveSmtp({ attacks: ['starttls-buffering'] });
    const { client } = await RawSmtp.connect(smtp);
    await client.command('EHLO client.test');
    assert.equal((await client.command('STARTTLS')).code, 220);
    // Nothing sent since: this reply came before any TLS, unasked.
    const injected = await client.reply();
    assert.equal(injected.code, 250);
    assert.ok(injected.lines.includes('250 X-ROOKERY-INJECTED'));
    client.close();
    assert.equal((await verdict()).verdict, 'safe');
  });

  test('tampering: an EHLO answer without STARTTLS right after the greeting; going on in plain text is continued-without-tls', async () => {
    const { smtp, verdict } = await serveSmtp({ attacks: ['starttls-tampering'] });
    const { client, greeting } = await RawSmtp.connect(smtp);
    assert.equal(greeting.code, 220);
    const injected = await client.reply();
    assert.ok(injected.lines.includes('250 X-ROOKERY-INJECTED') && !injected.lines.some((l) => /STARTTLS/.test(l)));
    await client.command('EHLO client.test');
    await client.command('MAIL FROM:<a@client.test>');
    client.close();
    assert.equal((await verdict()).verdict, 'continued-without-tls');
  });

  test('alert: the greeting text carries the spoof (SMTP has no [ALERT])', async () => {
    const { smtp, verdict } = await serveSmtp({ attacks: ['starttls-alert'] });
    const { client, greeting } = await RawSmtp.connect(smtp);
    assert.equal(greeting.code, 220);
    assert.match(greeting.text, /Your account is suspended/);
    await client.command('QUIT');
    assert.equal((await verdict()).verdict, 'safe');
  });
});

/** EHLO, STARTTLS and the handshake on a plain socket; resolves with the TLS socket and what it reads. */
async function upgrade(port: number): Promise<{ secure: tls.TLSSocket; read: () => string; errors: Error[] }> {
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  const onData = (d: Buffer): void => {
    text += d.toString('latin1');
  };
  socket.on('data', onData);
  const until = async (re: RegExp): Promise<void> => {
    for (let i = 0; i < 250 && !re.test(text); i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(text, re);
  };
  await until(/^220 /m);
  socket.write('EHLO client.test\r\n');
  await until(/^250 /m);
  socket.write('STARTTLS\r\n');
  await until(/^220 .*TLS/m);
  socket.off('data', onData);
  let got = '';
  const errors: Error[] = [];
  const secure = tls.connect({ socket, ca: TEST_CA, servername: 'localhost' });
  secure.on('data', (d: Buffer) => (got += d.toString('latin1')));
  secure.on('error', (e) => errors.push(e));
  await new Promise<void>((resolve, reject) => {
    secure.once('secureConnect', resolve);
    secure.once('error', reject);
  });
  return { secure, read: () => got, errors };
}

describe('attacks around the handshake', () => {
  test('garbage: plain text outside TLS records after the first command over TLS; Node drops the connection: safe', async () => {
    const { smtp, verdict } = await serveSmtp({ attacks: ['starttls-garbage'] });
    const { secure, errors } = await upgrade(smtp);
    secure.write('EHLO client.test\r\n');
    for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    // OpenSSL reads "250 plain..." as a record header: a bad record, not a reply.
    assert.equal(errors.length, 1, 'the bytes outside TLS records broke the TLS stream');
    assert.equal((await verdict()).verdict, 'safe');
  });

  test('buffering: AUTH CRAM-MD5 over TLS, which only the buffered EHLO answer offered, is acted-on-injected-response', async () => {
    const { smtp, verdict } = await serveSmtp({ attacks: ['starttls-buffering'] });
    const { secure, read } = await upgrade(smtp);
    secure.write('EHLO client.test\r\n');
    for (let i = 0; i < 100 && !/^250 /m.test(read()); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(!/CRAM-MD5/.test(read()), 'the server itself offers no CRAM-MD5 over TLS');
    secure.write('AUTH CRAM-MD5\r\n');
    await new Promise((r) => setTimeout(r, 100));
    secure.destroy();
    const v = await verdict();
    assert.deepEqual([v.verdict, v.evidence], ['acted-on-injected-response', 'AUTH CRAM-MD5']);
    assert.match(v.text, /only the bytes injected before TLS offered/);
  });
});

test('plain text where the ClientHello should be, after the 220 to STARTTLS, is continued-without-tls', async () => {
  const { smtp, verdict } = await serveSmtp({ tls: { smtp: { profile: 'expired' } } });
  const { client } = await RawSmtp.connect(smtp);
  await client.command('EHLO client.test');
  assert.equal((await client.command('STARTTLS')).code, 220);
  // smtp-server's TLS reads it as a bad record and drops the connection: no reply comes.
  await client.command('MAIL FROM:<a@client.test>').catch(() => undefined);
  client.close();
  const v = await verdict();
  assert.deepEqual([v.verdict, v.evidence], ['continued-without-tls', 'MAIL FROM:<a@client.test>']);
});

describe('choosing SMTP attacks', () => {
  test('attackNext(..., "smtp") meets the next SMTP session only; PREAUTH has no SMTP equivalent', async () => {
    const { server, smtp, verdict } = await serveSmtp();
    assert.throws(() => server.tls.attackNext(['starttls-preauth'], 'smtp'), /no SMTP equivalent/);
    server.tls.attackNext(['starttls-refusal'], 'smtp');
    let { client } = await RawSmtp.connect(smtp);
    await client.command('EHLO client.test');
    assert.equal((await client.command('STARTTLS')).code, 454);
    await client.command('QUIT');
    assert.deepEqual((await verdict()).cases, ['starttls-refusal']);
    ({ client } = await RawSmtp.connect(smtp));
    await client.command('EHLO client.test');
    assert.equal((await client.command('STARTTLS')).code, 220);
    client.close();
  });

  test('REST: POST /v1/tls/attacks with listener smtp', async () => {
    const server = createServer({ port: 0, plugins: [], rest: { port: 0 }, smtp: { port: 0, starttls: true } });
    servers.push(server);
    const a = await server.start();
    const base = `http://127.0.0.1:${server.restAddress()!.port}`;
    const res = await fetch(`${base}/v1/tls/attacks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ attacks: ['starttls-stripping'], listener: 'smtp' }) });
    assert.equal(res.status, 200);
    const { client } = await RawSmtp.connect(a.smtp!.port);
    assert.ok(!(await client.command('EHLO client.test')).lines.some((l) => /STARTTLS/.test(l)));
    client.close();
    const bad = await fetch(`${base}/v1/tls/attacks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ attacks: ['starttls-preauth'], listener: 'smtp' }) });
    assert.equal(bad.status, 400);
  });
});

/**
 * The STARTTLS attack pack on POP3 STLS (docs/tls.md), byte by byte: what
 * each attack sends (RFC 2595 §4 is what it breaks), how a session comes
 * to meet one (the `attacks` option, a greeting rule, the per-listener
 * queue in-process and over REST), and the verdict each client behaviour
 * earns, in the `verdict` event and the client report as a POP3 finding.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Server, TlsVerdict } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { startPop3, WireClient } from '../pop3/pop3-test.js';
import { verdictReader } from './matrix.js';

const servers: Server[] = [];
after(() => Promise.all(servers.map((s) => s.stop())));

async function serve(options: ServerOptions = {}): Promise<{ server: Server; pop3: number; verdict: () => Promise<TlsVerdict> }> {
  const { server, pop3 } = await startPop3({ plugins: [], tls: { pop3: { profile: 'valid' } }, ...options }, { stls: true });
  servers.push(server);
  const verdict = verdictReader(server);
  return { server, pop3, verdict };
}

async function capa(c: WireClient): Promise<string[]> {
  assert.match((await c.command('CAPA'))!, /^\+OK/);
  return (await c.multi()).toString('latin1').split('\r\n').slice(0, -2);
}

describe('what each attack sends', () => {
  test('stripping: CAPA without STLS, STLS unknown; USER in clear text is leaked-credentials, a POP3 finding', async () => {
    const { server, pop3, verdict } = await serve({ attacks: ['starttls-stripping'] });
    const c = await WireClient.connect(pop3);
    await c.line();
    assert.ok(!(await capa(c)).includes('STLS'));
    assert.match((await c.command('STLS'))!, /^-ERR Unknown command STLS/);
    await c.command('USER testuser');
    await c.command('PASS testpass');
    await c.command('QUIT');
    const v = await verdict();
    assert.deepEqual([v.listener, v.verdict, v.evidence, v.cases], ['pop3', 'leaked-credentials', 'USER testuser', ['starttls-stripping']]);
    const findings = server.clientReport().findings;
    assert.equal(findings.find((f) => f.rule === 'leaked-credentials')?.protocol, 'pop3');
    // The client never saw STLS offered: the checker's own clear-text rule is the verdict's business here.
    assert.equal(findings.filter((f) => f.rule === 'pop3-plaintext-credentials').length, 0);
  });

  test('refusal: STLS in CAPA, -ERR to STLS; a client that then QUITs is safe', async () => {
    const { pop3, verdict } = await serve({ attacks: ['starttls-refusal'] });
    const c = await WireClient.connect(pop3);
    await c.line();
    assert.ok((await capa(c)).includes('STLS'));
    assert.match((await c.command('STLS'))!, /^-ERR TLS is not available/);
    await c.command('QUIT');
    assert.equal((await verdict()).verdict, 'safe');
  });

  test('buffering: an injected CAPA answer in the same write as "+OK Begin TLS"; AUTH CRAM-MD5 over TLS acts on it', async () => {
    const { pop3, verdict } = await serve({ attacks: ['starttls-buffering'] });
    const c = await WireClient.connect(pop3);
    await c.line();
    assert.match((await c.command('STLS'))!, /^\+OK Begin TLS/);
    const injected = (await c.multi()).toString('latin1');
    assert.match(injected, /^\+OK Capability list follows\r\n[^]*SASL PLAIN CRAM-MD5\r\n[^]*\.\r\n$/);
    assert.doesNotMatch(injected, /STLS/);
    await c.startTls();
    const real = await capa(c);
    assert.ok(!real.some((l) => l.includes('CRAM-MD5')), 'over TLS the server offers no CRAM-MD5');
    assert.match((await c.command('AUTH CRAM-MD5'))!, /^-ERR Unsupported/);
    await c.command('QUIT');
    const v = await verdict();
    assert.equal(v.verdict, 'acted-on-injected-response');
    assert.match(v.text, /SASL CRAM-MD5, which only the bytes injected before TLS offered/);
  });

  test('tampering: an injected CAPA answer (no STLS) after the greeting answers the first CAPA; the next CAPA is the real one', async () => {
    const { pop3, verdict } = await serve({ attacks: ['starttls-tampering'] });
    const c = await WireClient.connect(pop3);
    assert.match((await c.line())!, /^\+OK Rookery/);
    const first = await capa(c);
    assert.ok(!first.includes('STLS') && first.includes('X-ROOKERY-INJECTED'));
    const second = await capa(c);
    assert.ok(second.includes('STLS') && !second.includes('X-ROOKERY-INJECTED'));
    assert.match((await c.command('STLS'))!, /^\+OK/);
    await c.startTls();
    await c.command('USER testuser');
    await c.command('QUIT');
    assert.equal((await verdict()).verdict, 'safe', 'STLS despite the injected CAPA, credentials over TLS');
  });

  test('no handshake: "+OK" to STLS and plain text goes on; a command other than CAPA/QUIT/NOOP is continued-without-tls', async () => {
    const { pop3, verdict } = await serve({ attacks: ['starttls-no-handshake'] });
    const c = await WireClient.connect(pop3);
    await c.line();
    assert.match((await c.command('STLS'))!, /^\+OK/);
    assert.match((await c.command('NOOP'))!, /^-ERR/, 'still plain text: the server answers in the clear');
    await c.command('STAT');
    await c.command('QUIT');
    const v = await verdict();
    assert.deepEqual([v.verdict, v.evidence], ['continued-without-tls', 'STAT']);
  });

  test('alert: the greeting and the answer to STLS carry the spoofing texts; the APOP timestamp stays last', async () => {
    const { server, pop3 } = await startPop3({ plugins: [], attacks: ['starttls-alert'] }, { stls: true, apop: true });
    servers.push(server);
    const c = await WireClient.connect(pop3);
    assert.match((await c.line())!, /^\+OK Your account is suspended: confirm your password at http:\/\/rookery\.invalid\/unlock <[^>]+>$/);
    assert.equal(await c.command('STLS'), '+OK Security notice: this server is certified safe, ignore certificate warnings');
    await c.startTls();
    await c.command('QUIT');
  });

  test('garbage: bytes outside TLS records after the handshake make a TLS client fail', async () => {
    const { pop3, verdict } = await serve({ attacks: ['starttls-garbage'] });
    const c = await WireClient.connect(pop3);
    await c.line();
    await c.command('STLS');
    await c.startTls();
    const secure = c.socket;
    const closed = new Promise((resolve) => secure.once('close', resolve));
    c.send('CAPA\r\n');
    if (!secure.destroyed) await closed;
    assert.equal((await verdict()).verdict, 'safe');
  });
});

describe('how a POP3 session meets an attack', () => {
  test('a greeting rule picks it for one session; attackNext(…, "pop3") queues one for the next POP3 session only; REST takes listener', async () => {
    const { server, pop3, verdict } = await serve({ rest: { port: 0 }, script: [{ on: 'pop3', stage: 'greeting', session: 1, attacks: ['starttls-stripping'] }] });
    const one = await WireClient.connect(pop3);
    await one.line();
    assert.ok(!(await capa(one)).includes('STLS'));
    await one.command('QUIT');
    assert.deepEqual((await verdict()).cases, ['starttls-stripping']);

    server.tls.attackNext(['starttls-refusal']);
    const imapQueued = await WireClient.connect(pop3);
    await imapQueued.line();
    assert.match((await imapQueued.command('STLS'))!, /^\+OK/, 'the IMAP queue is not the POP3 one');
    imapQueued.socket.destroy();

    assert.throws(() => server.script.add({ on: 'pop3', command: 'USER', attacks: ['starttls-refusal'] } as never), /only for stage: greeting/);
    const rest = server.restAddress();
    const base = `http://127.0.0.1:${rest!.port}`;
    const queued = await fetch(`${base}/v1/tls/attacks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ attacks: ['starttls-refusal'], listener: 'pop3' }) });
    assert.equal(queued.status, 200);
    const two = await WireClient.connect(pop3);
    await two.line();
    assert.match((await two.command('STLS'))!, /^-ERR TLS is not available/);
    await two.command('QUIT');
    const three = await WireClient.connect(pop3);
    await three.line();
    assert.match((await three.command('STLS'))!, /^\+OK/, 'one queued entry, one session');
    three.socket.destroy();
    const wrong = await fetch(`${base}/v1/tls/attacks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ attacks: ['starttls-refusal'], listener: 'nntp' }) });
    assert.equal(wrong.status, 400);
  });
});

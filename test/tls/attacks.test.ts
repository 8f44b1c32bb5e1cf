/**
 * The STARTTLS attack pack on IMAP (docs/tls.md): for each attack, a
 * client that does what RFC 2595 §3.1, RFC 9051 §6.2.1 and RFC 8314 §4.1
 * ask ends in `safe`, and one that does not ends in the verdict the attack
 * is there to catch, with the client's own bytes as evidence. Verdicts
 * reach the client report (JSON, text, JUnit), the findings and the
 * `verdict` event; attacks can be chosen per server, per session (a
 * script rule, REST) and per profile.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import { TEST_CA, type Server, type TlsVerdict } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { renderClientReport } from '../../src/client-check/report.js';
import { RawClient } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';
import { startTls, tlsConnect } from './tls-lines.js';

const servers: Server[] = [];
after(() => Promise.all(servers.map((s) => s.stop())));

async function serve(options: ServerOptions): Promise<{ server: Server; port: number; verdict: () => Promise<TlsVerdict> }> {
  // The core alone: the capabilities the attacks inject (ID, ENABLE, ...) are then ones the server lacks.
  const { server, port } = await startServer({ starttls: true, plugins: [], tls: { profile: 'valid' }, ...options });
  servers.push(server);
  const verdict = (): Promise<TlsVerdict> => new Promise((resolve) => server.once('verdict', resolve));
  return { server, port, verdict };
}

/** Plain connection, greeting read; returns the client and the greeting line. */
async function plain(port: number): Promise<{ c: RawClient; greeting: string }> {
  const c = await RawClient.connect(port);
  return { c, greeting: await c.line() };
}

/** STARTTLS on `c`; resolves to what came back in plain text (all of it) once the tagged answer is in. */
async function askStartTls(c: RawClient, tag = 'A1'): Promise<string> {
  c.write(`${tag} STARTTLS\r\n`);
  const lines = await c.until(tag);
  await new Promise((r) => setTimeout(r, 30));
  return [...lines, c.pending()].join('\r\n');
}

/** Takes the socket of a RawClient for a TLS handshake (its data listener must go). */
function socketOf(c: RawClient): net.Socket {
  c.socket.removeAllListeners('data');
  return c.socket;
}

describe('each attack: a safe client and a vulnerable one', () => {
  test('starttls-stripping (T1): leaving is safe; LOGIN in clear text leaks the credentials', async () => {
    const { port, verdict } = await serve({ attacks: ['starttls-stripping'] });
    const { c, greeting } = await plain(port);
    assert.doesNotMatch(greeting, /STARTTLS/);
    assert.match((await c.command('CAPABILITY'))[0]!, /^\* CAPABILITY IMAP4rev1(?!.*STARTTLS)/);
    let v = verdict();
    c.close();
    assert.equal((await v).verdict, 'safe');
    const vulnerable = (await plain(port)).c;
    v = verdict();
    await vulnerable.command('LOGIN testuser testpass');
    vulnerable.close();
    const got = await v;
    assert.equal(got.verdict, 'leaked-credentials');
    assert.equal(got.evidence, 'T1 LOGIN testuser testpass');
    assert.deepEqual(got.cases, ['starttls-stripping']);
  });

  test('starttls-refusal (T3): NO to STARTTLS; AUTHENTICATE PLAIN afterwards leaks', async () => {
    const { port, verdict } = await serve({ attacks: ['starttls-refusal'] });
    const { c } = await plain(port);
    assert.match(await askStartTls(c), /A1 NO /);
    const v = verdict();
    await c.command(`AUTHENTICATE PLAIN ${Buffer.from('\0testuser\0testpass').toString('base64')}`).catch(() => []);
    c.close();
    const got = await v;
    assert.equal(got.verdict, 'leaked-credentials');
    assert.match(got.text, /AUTHENTICATE in clear text after STARTTLS was refused/);
  });

  test('starttls-no-handshake (T2): OK then plain text; a client whose handshake fails and goes on leaks', async () => {
    const { port, verdict } = await serve({ attacks: ['starttls-no-handshake'] });
    const { c } = await plain(port);
    assert.match(await askStartTls(c), /A1 OK .*\r\n\* OK Still in plain text/);
    let v = verdict();
    // A safe client's handshake fails on the plain-text "ServerHello" and it gives up.
    await assert.rejects(startTls(socketOf(c), { ca: [TEST_CA] }));
    c.close();
    assert.equal((await v).verdict, 'safe');
    const second = (await plain(port)).c;
    await askStartTls(second);
    v = verdict();
    await second.command('LOGIN testuser testpass');
    second.close();
    assert.equal((await v).verdict, 'leaked-credentials');
  });

  test('starttls-buffering: injected CAPABILITY and tagged OK in the plain-text answer; using them is acting on them', async () => {
    const { port, verdict } = await serve({ attacks: ['starttls-buffering'] });
    const { c } = await plain(port);
    const answer = await askStartTls(c, 'A1');
    // RFC 2595 §3.1's case: more bytes after the OK, in the same write.
    assert.match(answer, /A1 OK Begin TLS negotiation now\r\n\* CAPABILITY IMAP4rev1 AUTH=PLAIN ID ENABLE/);
    assert.match(answer, /A2 OK CAPABILITY completed/);
    let v = verdict();
    const safe = await startTls(socketOf(c), { ca: [TEST_CA] });
    assert.doesNotMatch((await safe.command('A2', 'CAPABILITY'))[0]!, /\bID\b/);
    await safe.command('A3', 'LOGIN testuser testpass');
    safe.socket.destroy();
    assert.equal((await v).verdict, 'safe');
    const next = (await plain(port)).c;
    await askStartTls(next, 'A1');
    v = verdict();
    const trusting = await startTls(socketOf(next), { ca: [TEST_CA] });
    // It believed the injected list: ID was never offered over TLS.
    await trusting.command('A2', 'ID NIL');
    trusting.socket.destroy();
    const got = await v;
    assert.equal(got.verdict, 'acted-on-injected-response');
    assert.equal(got.evidence, 'A2 ID NIL');
  });

  test('starttls-buffering: plain text sent after the OK instead of a ClientHello is going on without TLS', async () => {
    const { port, verdict } = await serve({ attacks: ['starttls-buffering'] });
    const { c } = await plain(port);
    await askStartTls(c);
    const v = verdict();
    c.write('A2 LOGIN testuser testpass\r\n');
    const got = await v;
    c.close();
    assert.equal(got.verdict, 'continued-without-tls');
    assert.match(got.evidence, /^OpenSSL: ERR_SSL_/);
  });

  test('starttls-preauth: PREAUTH greeting; STARTTLS is BAD; SELECT anyway is going on without TLS', async () => {
    const { port, verdict } = await serve({ attacks: ['starttls-preauth'] });
    const { c, greeting } = await plain(port);
    assert.match(greeting, /^\* PREAUTH /);
    assert.match(await askStartTls(c), /A1 BAD /);
    let v = verdict();
    c.write('A2 LOGOUT\r\n');
    await c.closedByServer();
    assert.equal((await v).verdict, 'safe');
    const next = (await plain(port)).c;
    v = verdict();
    await next.command('SELECT INBOX');
    next.close();
    const got = await v;
    assert.equal(got.verdict, 'continued-without-tls');
    assert.equal(got.evidence, 'T1 SELECT INBOX');
  });

  test('starttls-tampering: untagged responses before STARTTLS; naming the injected mailbox over TLS is acting on them', async () => {
    const { port, verdict } = await serve({ attacks: ['starttls-tampering'] });
    const c = await RawClient.connect(port);
    const head = [await c.line(), await c.line(), await c.line()];
    assert.match(head[1]!, /^\* CAPABILITY IMAP4rev1 STARTTLS ID/);
    assert.equal(head[2], '* LIST () "/" Rookery-Injected');
    await c.until('* 7 FETCH');
    await askStartTls(c);
    const v = verdict();
    const s = await startTls(socketOf(c), { ca: [TEST_CA] });
    await s.command('A2', 'LOGIN testuser testpass');
    await s.command('A3', 'STATUS Rookery-Injected (MESSAGES)');
    s.socket.destroy();
    const got = await v;
    assert.equal(got.verdict, 'acted-on-injected-response');
    assert.match(got.text, /Rookery-Injected/);
  });

  test('starttls-alert: [ALERT] in the greeting and in the STARTTLS answer; the verdict is the wire\'s (safe here)', async () => {
    const { port, verdict } = await serve({ attacks: ['starttls-alert'] });
    const { c, greeting } = await plain(port);
    assert.match(greeting, /^\* OK \[ALERT\] Your account is suspended/);
    assert.match(await askStartTls(c), /^A1 OK \[ALERT\] Security notice/);
    const v = verdict();
    const s = await startTls(socketOf(c), { ca: [TEST_CA] });
    await s.command('A2', 'LOGOUT');
    assert.equal((await v).verdict, 'safe');
  });

  test('starttls-garbage (T4): bytes outside TLS records; a client that reads past them and goes on has acted on them', async () => {
    const { port, verdict } = await serve({ attacks: ['starttls-garbage'] });
    const { c } = await plain(port);
    await askStartTls(c);
    const v = verdict();
    const s = await startTls(socketOf(c), { ca: [TEST_CA] });
    s.socket.write('A2 NOOP\r\n');
    // Node's TLS fails on the bad record and the client closes: the safe outcome.
    await assert.rejects(s.until('A2'), /connection ended/);
    s.socket.destroy();
    assert.equal((await v).verdict, 'safe');
  });
});

describe('broken profiles: accepted-bad-certificate', () => {
  test('implicit TLS, expired: a client that does not verify and sends a command accepted it; one that verifies did not', async () => {
    const { port, verdict } = await serve({ starttls: false, secure: true, tls: { profile: 'expired' } });
    let v = verdict();
    await assert.rejects(tlsConnect(port, { ca: [TEST_CA] }), /expired/);
    assert.equal((await v).verdict, 'safe');
    v = verdict();
    const c = await tlsConnect(port, { rejectUnauthorized: false });
    await c.command('A1', 'CAPABILITY');
    c.socket.destroy();
    const got = await v;
    assert.equal(got.verdict, 'accepted-bad-certificate');
    assert.deepEqual(got.cases, ['profile:expired']);
    assert.equal(got.evidence, 'profile expired; A1 CAPABILITY');
  });

  test('STARTTLS with SNI: only the server name mapped to a broken profile makes a verdict', async () => {
    const { server, port } = await serve({ tls: { profile: 'valid', certificates: { 'evil.test': 'wrong-host' } } });
    const { c } = await plain(port);
    await askStartTls(c);
    const s = await startTls(socketOf(c), { servername: 'evil.test', rejectUnauthorized: false });
    await s.command('A2', 'NOOP');
    s.socket.destroy();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(server.tls.verdicts.list().map((x) => [x.verdict, x.cases]), [['accepted-bad-certificate', ['profile:wrong-host']]]);
  });
});

describe('choosing attacks and reading verdicts', () => {
  test('a script rule picks the attack of one session; REST queues one for the next', async () => {
    const { server, port, verdict } = await serve({ script: [{ on: 'greeting', session: 2, attacks: ['starttls-preauth'] }] });
    const first = await plain(port);
    assert.match(first.greeting, /^\* OK/);
    const second = await plain(port);
    assert.match(second.greeting, /^\* PREAUTH/);
    const v = verdict();
    second.c.close();
    assert.equal((await v).session, 2);
    first.c.close();
    server.tls.attackNext(['starttls-alert']);
    assert.match((await plain(port)).greeting, /\[ALERT\]/);
    assert.throws(() => server.script.add({ on: 'command', attacks: ['starttls-preauth'] } as never), /only for on: greeting/);
  });

  test('the report carries every verdict; findings, JUnit, text and events show the vulnerable ones', async () => {
    const { server, port, verdict } = await serve({ attacks: ['starttls-stripping'], clientCheck: 'report' });
    const events: TlsVerdict[] = [];
    server.on('verdict', (e) => events.push(e));
    const safe = (await plain(port)).c;
    let v = verdict();
    safe.close();
    await v;
    const bad = (await plain(port)).c;
    v = verdict();
    await bad.command('LOGIN testuser testpass');
    bad.close();
    await v;
    const report = server.clientReport();
    assert.deepEqual(report.verdicts.map((x) => [x.session, x.verdict]), [[1, 'safe'], [2, 'leaked-credentials']]);
    assert.deepEqual(events.map((e) => e.verdict), ['safe', 'leaked-credentials']);
    const finding = report.findings.find((f) => f.rule === 'leaked-credentials')!;
    assert.equal(finding.session, 2);
    assert.match(finding.text, /evidence: "T1 LOGIN testuser testpass"/);
    assert.ok(report.rules.some((r) => r.id === 'leaked-credentials'));
    const junit = renderClientReport(report, 'junit');
    assert.match(junit, /<testcase classname="rookery\.tls\.session-1" name="starttls-stripping"><\/testcase>/);
    assert.match(junit, /<testcase classname="rookery\.tls\.session-2" name="starttls-stripping">\n {6}<failure type="leaked-credentials"/);
    assert.match(renderClientReport(report, 'text'), /S2 tls starttls-stripping: leaked-credentials/);
    assert.deepEqual(JSON.parse(renderClientReport(report, 'json')).verdicts.length, 2);
    // A reset starts the next test clean: findings and verdicts alike.
    server.control.reset();
    assert.deepEqual(server.clientReport().verdicts, []);
    assert.deepEqual(server.tls.verdicts.list(), []);
  });

  test('a command name with hyphens is read whole: X-ROOKERY-INJECTED, offered only by the injection, is acting on it', async () => {
    const { port, verdict } = await serve({ attacks: ['starttls-buffering'] });
    const { c } = await plain(port);
    await askStartTls(c);
    const v = verdict();
    const s = await startTls(socketOf(c), { ca: [TEST_CA] });
    await s.command('A2', 'X-ROOKERY-INJECTED');
    s.socket.destroy();
    assert.equal((await v).evidence, 'A2 X-ROOKERY-INJECTED');
  });

  test('implicit TLS sessions meet no STARTTLS attack (nothing to upgrade): a normal greeting, no verdict with a valid profile', async () => {
    const { server, port } = await serve({ starttls: false, secure: true, attacks: ['starttls-preauth'] });
    const c = await tlsConnect(port, { ca: [TEST_CA] });
    assert.match((await c.until('*'))[0]!, /^\* OK /);
    await c.command('A1', 'LOGOUT');
    c.socket.destroy();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(server.tls.verdicts.list(), []);
  });

  test('an unknown or conflicting attack is an option error naming the attacks', async () => {
    const { createServer } = await import('../../src/index.js');
    assert.throws(() => createServer({ attacks: ['starttls-bufering' as never] }), /attacks\[0\]: expected an attack name \(starttls-buffering,/);
    assert.throws(() => createServer({ attacks: ['starttls-stripping', 'starttls-refusal'] }), /choose one/);
  });
});

describe('what the watch reads as a command', () => {
  test('a ClientHello read as plain text is no command, even where it holds a CRLF and words (starttls-no-handshake)', async () => {
    const { IMAP_DIALECT } = await import('../../src/tls/attacks/imap-attack.js');
    // The record header and random bytes of a ClientHello, with "A1 LOGIN" by chance after a CRLF.
    assert.equal(IMAP_DIALECT.parse(Buffer.from('\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 LOGIN x\r\n', 'latin1')), null);
    assert.deepEqual(IMAP_DIALECT.parse(Buffer.from('a1 LOGIN "j\xc3\xb6rg" secret\r\n', 'latin1')), { name: 'LOGIN', credentials: true });
    assert.deepEqual(IMAP_DIALECT.parse(Buffer.from('a2 AUTHENTICATE EXTERNAL\r\n')), { name: 'AUTHENTICATE', credentials: false });
    assert.deepEqual(IMAP_DIALECT.parse(Buffer.from('a3 uid move 1 X\r\n')), { name: 'UID MOVE', credentials: false });
  });
});

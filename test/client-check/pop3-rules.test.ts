/**
 * Issue 33 item 6, the client checker for POP3 clients: every POP3 rule
 * triggered by a raw client that breaks the RFC rule it comes from, and
 * not triggered by the same exchange done right. Findings are read through
 * the control API; the server is a real listener.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { createServer, renderClientReport, type Server, type SessionEvent } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { Pop3Client } from '../helpers/pop3-client.js';
import { mail } from '../helpers/server.js';

let server: Server | null = null;

afterEach(async () => {
  await server?.stop();
  server = null;
});

async function start(options: ServerOptions = {}, pop3: NonNullable<ServerOptions['pop3']> = {}): Promise<number> {
  server = createServer({ port: 0, ...options, pop3: { port: 0, ...pop3 } });
  const started = await server.start();
  for (let i = 1; i <= 3; i++) server.control.addMessage('INBOX', { raw: mail(`m${i}`) });
  return started.pop3!.port;
}

const rules = (): string[] => server!.control.clientFindings().map((f) => f.rule);

async function loggedIn(port: number, capa = true): Promise<Pop3Client> {
  const c = await Pop3Client.connect(port);
  if (capa) assert.ok((await c.multi('CAPA')).ok);
  assert.match(await c.command('USER testuser'), /^\+OK/);
  assert.match(await c.command('PASS testpass'), /^\+OK/);
  return c;
}

/** Resolves once the server has seen a POP3 session close. */
function closedSession(): Promise<void> {
  return new Promise((resolve) => {
    const on = (e: SessionEvent): void => {
      if (e.type === 'close' && e.session.protocol === 'pop3') {
        server!.off('session', on as never);
        resolve();
      }
    };
    server!.on('session', on as never);
  });
}

describe('client checker, POP3 rules (raw socket)', () => {
  test('a well-behaved exchange has no findings', async () => {
    const port = await start();
    const c = await loggedIn(port);
    assert.ok((await c.multi('CAPA')).ok);
    assert.match(await c.command('STAT'), /^\+OK 3 /);
    assert.ok((await c.multi('LIST')).ok);
    assert.ok((await c.multi('UIDL')).ok);
    assert.ok((await c.multi('TOP 1 0')).ok);
    assert.ok((await c.multi('RETR 1')).ok);
    assert.match(await c.command('DELE 1'), /^\+OK/);
    assert.match(await c.command('RSET'), /^\+OK/);
    assert.ok((await c.multi('RETR 1')).ok, 'RSET brought message 1 back');
    assert.match(await c.command('NOOP'), /^\+OK/);
    assert.match(await c.command('QUIT'), /^\+OK/);
    await c.closedByServer();
    assert.deepEqual(server!.control.clientFindings(), []);
  });

  test('findings carry the protocol, the command number as tag, the user and the rule text', async () => {
    const port = await start();
    const c = await Pop3Client.connect(port);
    assert.match(await c.command('STAT'), /^-ERR/, 'report mode changes nothing');
    const [f] = server!.control.clientFindings();
    assert.deepEqual(
      { protocol: f!.protocol, rule: f!.rule, tag: f!.tag, command: f!.command, severity: f!.severity, user: f!.user },
      { protocol: 'pop3', rule: 'pop3-wrong-state', tag: '1', command: 'STAT', severity: 'error', user: null },
    );
    assert.match(f!.rfc, /RFC 1939 §3/);
    assert.match(f!.text, /STAT is not valid before login/);
  });

  test('pop3-plaintext-credentials: PASS in clear while STLS is offered; after STLS none', async () => {
    let port = await start({}, { stls: true });
    let c = await Pop3Client.connect(port);
    assert.match(await c.command('USER testuser'), /^\+OK/);
    assert.match(await c.command('PASS testpass'), /^\+OK/, 'a warning never refuses');
    assert.deepEqual(rules(), ['pop3-plaintext-credentials']);
    assert.match(server!.control.clientFindings()[0]!.text, /PASS sends the password in clear text although the server offers STLS/);
    await server!.stop();

    port = await start({}, { stls: true });
    c = await Pop3Client.connect(port);
    assert.ok((await c.multi('CAPA')).lines.includes('STLS'));
    assert.match((await c.stls()).status, /^\+OK/);
    assert.ok((await c.multi('CAPA')).ok);
    assert.match(await c.command('USER testuser'), /^\+OK/);
    assert.match(await c.command('PASS testpass'), /^\+OK/);
    assert.match(await c.command('QUIT'), /^\+OK/);
    assert.deepEqual(rules(), []);
  });

  test('pop3-plaintext-credentials: AUTH PLAIN and APOP in clear too; nothing without STLS on offer', async () => {
    let port = await start({}, { stls: true });
    const c = await Pop3Client.connect(port);
    assert.ok((await c.multi('CAPA')).ok);
    const plain = Buffer.from('\0testuser\0testpass').toString('base64');
    assert.match(await c.command(`AUTH PLAIN ${plain}`), /^\+OK/);
    assert.deepEqual(rules(), ['pop3-plaintext-credentials']);
    assert.match(server!.control.clientFindings()[0]!.text, /AUTH PLAIN sends the password/);
    await server!.stop();

    port = await start();
    const d = await Pop3Client.connect(port);
    assert.ok((await d.multi('CAPA')).ok);
    assert.match(await d.command(`AUTH PLAIN ${plain}`), /^\+OK/);
    assert.deepEqual(rules(), [], 'no STLS offered: clear text is all there is');
  });

  test('pop3-pipelining-not-advertised: PASS sent with USER before its answer, without CAPA; fine after CAPA lists PIPELINING', async () => {
    let port = await start();
    let c = await Pop3Client.connect(port);
    c.write('USER testuser\r\nPASS testpass\r\n');
    assert.match(await c.line(), /^\+OK/);
    assert.match(await c.line(), /^\+OK/);
    assert.match(await c.command('NOOP'), /^\+OK/);
    assert.deepEqual(rules(), ['pop3-pipelining-not-advertised']);
    const [f] = server!.control.clientFindings();
    assert.equal(f!.command, 'PASS');
    assert.match(f!.text, /before the answer to USER arrived, and the client has not asked CAPA/);
    await server!.stop();

    port = await start();
    c = await Pop3Client.connect(port);
    assert.ok((await c.multi('CAPA')).lines.includes('PIPELINING'));
    c.write('USER testuser\r\nPASS testpass\r\n');
    assert.match(await c.line(), /^\+OK/);
    assert.match(await c.line(), /^\+OK/);
    assert.deepEqual(rules(), []);
  });

  test('pop3-command-during-multiline: STAT sent while the LIST answer was coming, without PIPELINING', async () => {
    const port = await start();
    const c = await loggedIn(port, false);
    c.write('LIST\r\nSTAT\r\n');
    assert.ok((await c.readMulti()).ok);
    assert.match(await c.line(), /^\+OK 3 /);
    assert.deepEqual(rules(), ['pop3-command-during-multiline']);
    assert.match(server!.control.clientFindings()[0]!.text, /STAT was sent while the multi-line answer to LIST was still coming/);
  });

  test('pop3-command-after-quit: a line after QUIT (not run), reported once', async () => {
    const port = await start();
    const c = await loggedIn(port);
    c.write('QUIT\r\nNOOP\r\nSTAT\r\n');
    assert.match(await c.line(), /^\+OK/);
    await c.closedByServer();
    assert.deepEqual(rules(), ['pop3-command-after-quit']);
  });

  test('pop3-capa-not-checked: UIDL and TOP without CAPA; none once CAPA was asked', async () => {
    let port = await start();
    let c = await loggedIn(port, false);
    assert.ok((await c.multi('UIDL')).ok);
    assert.ok((await c.multi('TOP 1 0')).ok);
    assert.deepEqual(rules(), ['pop3-capa-not-checked', 'pop3-capa-not-checked']);
    assert.equal(server!.control.clientFindings()[0]!.severity, 'warning');
    await server!.stop();

    port = await start();
    c = await loggedIn(port, true);
    assert.ok((await c.multi('UIDL')).ok);
    assert.deepEqual(rules(), []);
  });

  test('pop3-capa-not-checked: after STLS the CAPA asked in clear text no longer counts (RFC 2595 section 4)', async () => {
    const port = await start({}, { stls: true });
    const c = await Pop3Client.connect(port);
    assert.ok((await c.multi('CAPA')).ok);
    assert.match((await c.stls()).status, /^\+OK/);
    assert.match(await c.command('USER testuser'), /^\+OK/);
    assert.match(await c.command('PASS testpass'), /^\+OK/);
    assert.ok((await c.multi('UIDL')).ok);
    assert.deepEqual(rules(), ['pop3-capa-not-checked']);
    assert.match(server!.control.clientFindings()[0]!.text, /since STLS/);
  });

  test('pop3-capability-not-advertised: AUTH with a mechanism the SASL line does not list', async () => {
    const port = await start();
    const c = await Pop3Client.connect(port);
    const capa = await c.multi('CAPA');
    assert.ok(!capa.lines.some((l) => /CRAM-MD5/.test(l)));
    assert.match(await c.command('AUTH CRAM-MD5'), /^-ERR/);
    assert.deepEqual(rules(), ['pop3-capability-not-advertised']);
    assert.match(server!.control.clientFindings()[0]!.text, /AUTH CRAM-MD5: the SASL line of the CAPA answer does not list that mechanism/);
  });

  test('pop3-capability-not-advertised: STLS that the CAPA answer did not list (the server offers none)', async () => {
    const port = await start();
    const c = await Pop3Client.connect(port);
    assert.ok(!(await c.multi('CAPA')).lines.includes('STLS'));
    assert.match(await c.command('STLS'), /^-ERR/);
    assert.deepEqual(rules(), ['pop3-capability-not-advertised']);
  });

  test('pop3-wrong-state: STAT before login, PASS without USER, USER after login, STLS after login', async () => {
    const port = await start({}, { stls: true });
    const c = await Pop3Client.connect(port);
    assert.ok((await c.multi('CAPA')).ok);
    assert.match(await c.command('STAT'), /^-ERR/);
    assert.match(await c.command('PASS testpass'), /^-ERR/);
    assert.match(await c.command('USER nosuchuser-but-any-name'), /^\+OK|^-ERR/);
    await c.command('QUIT');
    const d = await loggedIn(port);
    assert.match(await d.command('USER testuser'), /^-ERR/);
    const texts = server!.control.clientFindings().filter((f) => f.rule === 'pop3-wrong-state').map((f) => f.text);
    assert.deepEqual(texts, [
      'STAT is not valid before login (AUTHORIZATION state)',
      'PASS may only follow a USER that was answered +OK',
      'USER is not valid after login (TRANSACTION state)',
    ]);
  });

  test('pop3-apop-without-timestamp: APOP when the greeting has no timestamp; none when it has one', async () => {
    let port = await start({}, { apop: false });
    let c = await Pop3Client.connect(port);
    assert.doesNotMatch(c.greeting, /<.*>/);
    assert.match(await c.command('APOP testuser 0123456789abcdef0123456789abcdef'), /^-ERR/);
    assert.deepEqual(rules(), ['pop3-apop-without-timestamp']);
    await server!.stop();

    port = await start({}, { apop: true });
    c = await Pop3Client.connect(port);
    assert.match(c.greeting, /<.*>/);
    await c.command('APOP testuser 0123456789abcdef0123456789abcdef');
    assert.deepEqual(rules(), []);
  });

  test('pop3-line-too-long: a 300-octet command line (warning; the server still answers)', async () => {
    const port = await start();
    const c = await Pop3Client.connect(port);
    const answer = await c.command(`USER ${'a'.repeat(295)}`);
    assert.match(answer, /^(\+OK|-ERR)/);
    assert.deepEqual(rules(), ['pop3-line-too-long']);
    assert.match(server!.control.clientFindings()[0]!.text, /a command line of 302 octets/);
    const d = await Pop3Client.connect(port);
    await d.command(`USER ${'a'.repeat(248)}`);
    assert.equal(rules().length, 1, '255 octets with CRLF is within the limit');
  });

  test('pop3-bare-newline: a command ended by a bare LF', async () => {
    const port = await start();
    const c = await Pop3Client.connect(port);
    c.write('CAPA\n');
    assert.ok((await c.readMulti()).ok, 'the server reads it, as Dovecot does');
    assert.deepEqual(rules(), ['pop3-bare-newline']);
  });

  test('pop3-no-such-message: 0, above the maildrop, and a message marked deleted', async () => {
    const port = await start();
    const c = await loggedIn(port);
    assert.match((await c.multi('RETR 0')).status, /^-ERR/);
    assert.match((await c.multi('RETR 9')).status, /^-ERR/);
    assert.match(await c.command('DELE 2'), /^\+OK/);
    assert.match((await c.multi('RETR 2')).status, /^-ERR/);
    assert.match(await c.command('DELE 3'), /^\+OK/);
    const texts = server!.control.clientFindings().map((f) => `${f.rule}: ${f.text}`);
    assert.deepEqual(texts, [
      'pop3-no-such-message: message number 0; POP3 numbers messages from 1',
      'pop3-no-such-message: message 9, but the maildrop had 3 messages at login',
      'pop3-no-such-message: message 2 is marked deleted (DELE); only RSET brings it back',
    ]);
  });

  test('pop3-dele-without-quit: the client closes with messages marked; nothing after QUIT', async () => {
    let port = await start();
    let c = await loggedIn(port);
    assert.match(await c.command('DELE 1'), /^\+OK/);
    const closed = closedSession();
    c.close();
    await closed;
    assert.deepEqual(rules(), ['pop3-dele-without-quit']);
    assert.equal(server!.control.listMessages('INBOX').length, 3, 'nothing was deleted (RFC 1939 section 6)');
    await server!.stop();

    port = await start();
    c = await loggedIn(port);
    assert.match(await c.command('DELE 1'), /^\+OK/);
    assert.match(await c.command('QUIT'), /^\+OK/);
    await c.closedByServer();
    assert.deepEqual(rules(), []);
  });

  test('pop3-no-quit: off by default; on through clientCheckRules', async () => {
    let port = await start();
    let c = await loggedIn(port);
    let closed = closedSession();
    c.close();
    await closed;
    assert.deepEqual(rules(), []);
    await server!.stop();

    port = await start({ clientCheckRules: { 'pop3-no-quit': true } });
    c = await loggedIn(port);
    closed = closedSession();
    c.close();
    await closed;
    assert.deepEqual(rules(), ['pop3-no-quit']);
  });

  test('strict: an error rule answers -ERR [CLIENTBUG] and the command does not run; warnings pass', async () => {
    const port = await start({ clientCheck: 'strict' }, { stls: true });
    const c = await Pop3Client.connect(port);
    assert.equal(await c.command('STAT'), '-ERR [CLIENTBUG] pop3-wrong-state: STAT is not valid before login (AUTHORIZATION state)');
    assert.match(await c.command('USER testuser'), /^\+OK/);
    assert.match(await c.command('PASS testpass'), /^\+OK/, 'pop3-plaintext-credentials is a warning');
    c.write('DELE 1\r\nDELE 2\r\n');
    assert.match(await c.line(), /^\+OK/);
    assert.match(await c.line(), /^-ERR \[CLIENTBUG\] pop3-pipelining-not-advertised: /);
    assert.match(await c.command('QUIT'), /^\+OK/);
    await c.closedByServer();
    assert.equal(server!.control.listMessages('INBOX').length, 2, 'the refused DELE 2 did not run');
  });

  test('off: no findings at all', async () => {
    const port = await start({ clientCheck: 'off' });
    const c = await Pop3Client.connect(port);
    assert.match(await c.command('STAT'), /^-ERR/);
    assert.deepEqual(rules(), []);
  });

  test('report: a POP3 session gets the POP3 rules as JUnit test cases, named by protocol', async () => {
    const port = await start();
    const c = await Pop3Client.connect(port);
    await c.command('STAT');
    await c.command('QUIT');
    await c.closedByServer();
    const report = server!.clientReport();
    assert.deepEqual(report.protocols.pop3, report.sessions);
    const junit = renderClientReport(report, 'junit');
    const cases = junit.match(/<testcase /g) ?? [];
    assert.equal(cases.length, report.rules.filter((r) => r.protocol === 'pop3').length);
    assert.match(junit, /<testcase classname="rookery\.client\.pop3\.session-\d+" name="pop3-wrong-state">\n\s+<failure type="error"/);
    assert.doesNotMatch(junit, /name="wrong-state"/, 'no IMAP rules for a POP3 session');
    assert.match(renderClientReport(report, 'text'), /S\d+ pop3 1 STAT: error pop3-wrong-state \(RFC 1939/);
    assert.equal(JSON.parse(renderClientReport(report, 'json')).findings[0].protocol, 'pop3');
  });
});

/**
 * Issue 21: the checker's modes (report changes no byte; strict answers
 * BAD [CLIENTBUG]; off records nothing), its findings over the control API,
 * REST and the event stream, reset, the options' validation, capability
 * masking per user and per script rule, and the end-of-run report.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { createServer, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { parseClientReportTarget, renderClientReport } from '../../src/client-check/report.js';
import { RawClient, tagged } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';
import { request, startRest } from '../rest/helpers.js';

let server: Server | null = null;

afterEach(async () => {
  await server?.stop();
  server = null;
});

async function start(options: ServerOptions = {}): Promise<number> {
  const started = await startServer({ plugins: 'all', now: Date.parse('2026-01-01T00:00:00Z'), ...options });
  server = started.server;
  for (let i = 1; i <= 3; i++) server.control.addMessage('INBOX', { raw: mail(`m${i}`) });
  return started.port;
}

/**
 * A transcript that breaks several rules (literal before "+", a sequence
 * number past EXISTS, a pipelined FETCH behind NOOP, a reused tag, a
 * command during IDLE), written step by step; returns every byte received.
 */
async function misbehave(port: number): Promise<string> {
  const c = await RawClient.connect(port);
  const out: string[] = [await c.line()];
  const step = async (data: string, tag: string): Promise<void> => {
    c.write(data);
    out.push(...(await c.until(tag)));
  };
  await step('A0 LOGIN testuser testpass\r\n', 'A0');
  await step('A1 SELECT INBOX\r\n', 'A1');
  await step('A2 APPEND INBOX {5}\r\nhello\r\n', 'A2');
  await step('A3 FETCH 9 FLAGS\r\n', 'A3');
  c.write('A4 NOOP\r\nA5 FETCH 1 FLAGS\r\n');
  out.push(...(await c.until('A4')), ...(await c.until('A5')));
  c.write('A6 NOOP\r\nA6 NOOP\r\n');
  out.push(...(await c.until('A6')), ...(await c.until('A6')));
  c.write('A7 IDLE\r\n');
  out.push(await c.line());
  await step('A8 NOOP\r\n', 'A7');
  await step('A9 LOGOUT\r\n', 'A9');
  c.close();
  return out.join('\n');
}

describe('client checker modes', () => {
  test('report changes no byte of any response: the transcript is the same as with off', async () => {
    let port = await start({ clientCheck: 'off' });
    const off = await misbehave(port);
    assert.deepEqual(server!.control.clientFindings(), [], 'off records nothing');
    await server!.stop();
    port = await start({ clientCheck: 'report' });
    const report = await misbehave(port);
    assert.equal(report, off);
    assert.deepEqual(
      server!.control.clientFindings().map((f) => f.rule),
      ['literal-before-continuation', 'sequence-beyond-exists', 'ambiguous-pipelining', 'tag-reuse', 'command-during-idle'],
    );
  });

  test('strict answers the offending command BAD [CLIENTBUG] <rule>: <text>, and the session goes on', async () => {
    const port = await start({ clientCheck: 'strict' });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const fetched = await c.command('FETCH 9 FLAGS');
    assert.match(tagged(fetched), /^T\d+ BAD \[CLIENTBUG\] sequence-beyond-exists: message sequence number 9/);
    c.write('A1 APPEND INBOX {5}\r\nhello\r\n');
    const appended = await c.until('A1');
    assert.match(tagged(appended), /^A1 BAD \[CLIENTBUG\] literal-before-continuation: /);
    assert.equal(server!.control.listMessages('INBOX').length, 3, 'the refused APPEND stored nothing');
    c.write('A2 IDLE\r\n');
    await c.line();
    c.write('A3 NOOP\r\n');
    assert.match(tagged(await c.until('A2')), /^A2 BAD \[CLIENTBUG\] command-during-idle: /);
    // Warnings do not refuse: a plain LOGIN still works where STARTTLS is offered.
    assert.match(tagged(await c.command('NOOP')), /OK/);
    const moved = await c.command('MOVE 1 Archive');
    assert.doesNotMatch(tagged(moved), /CLIENTBUG/);
  });

  test('strict: a command the reader refuses takes its strict answer with it (the next command is not blamed)', async () => {
    const port = await start({ clientCheck: 'strict', capabilities: { hide: ['LITERAL+', 'LITERAL-', 'IMAP4rev2'] } });
    const c = await rawSession(port, false);
    c.write(`A1 LOGIN {70000+}\r\n${'x'.repeat(70000)} pw\r\n`);
    assert.match(tagged(await c.until('A1')), /^A1 NO \[TOOBIG\]/);
    assert.match(tagged(await c.command('NOOP')), /^T\d+ OK/);
    assert.deepEqual(server!.control.clientFindings().map((f) => f.rule), ['nonsync-literal-not-advertised']);
  });

  test('strict leaves warnings alone (plaintext-credentials)', async () => {
    const port = await start({ clientCheck: 'strict', starttls: true });
    const c = await rawSession(port, false);
    assert.match(tagged(await c.command('LOGIN testuser testpass')), /^T\d+ OK/);
    assert.deepEqual(server!.control.clientFindings().map((f) => f.rule), ['plaintext-credentials']);
  });

  test('findings: fields, session and since filters, client events, cleared by reset', async () => {
    const port = await start();
    const events: unknown[] = [];
    server!.on('client', (e) => events.push(e));
    const a = await rawSession(port);
    const b = await rawSession(port);
    await a.command('FETCH 1 FLAGS');
    await b.command('FETCH 1 FLAGS');
    const all = server!.control.clientFindings();
    assert.equal(all.length, 2);
    assert.deepEqual(Object.keys(all[0]!).sort(), ['at', 'command', 'id', 'protocol', 'rfc', 'rule', 'session', 'severity', 'tag', 'text', 'user']);
    assert.equal(all[0]!.protocol, 'imap');
    assert.equal(all[0]!.user, 'testuser');
    assert.equal(all[0]!.at, '2026-01-01T00:00:00.000Z', 'the server clock');
    assert.deepEqual(events, all);
    assert.deepEqual(server!.control.clientFindings({ session: all[1]!.session }), [all[1]]);
    assert.deepEqual(server!.control.clientFindings({ since: all[0]!.id }), [all[1]]);
    assert.throws(() => server!.control.clientFindings({ session: 0 }), /session: expected/);
    server!.control.reset();
    assert.deepEqual(server!.control.clientFindings(), []);
  });

  test('REST: GET /v1/client, GET and DELETE /v1/client/findings', async () => {
    const rest = await startRest({ plugins: 'all', capabilities: { hide: ['MOVE'] } });
    server = rest.server;
    const info = await request(rest.restPort, 'GET', '/v1/client');
    assert.equal(info.status, 200);
    assert.equal(info.json.clientCheck, 'report');
    assert.deepEqual(info.json.hide, ['MOVE']);
    assert.ok(info.json.rules.includes('tag-reuse') && !info.json.rules.includes('no-logout'));
    const c = await rawSession(rest.imapPort);
    await c.command('FETCH 1 FLAGS');
    await c.command('NOOP');
    const list = await request(rest.restPort, 'GET', '/v1/client/findings');
    assert.equal(list.status, 200);
    assert.deepEqual(list.json.map((f: { rule: string }) => f.rule), ['wrong-state']);
    const waited = await request(rest.restPort, 'GET', '/v1/events/wait?types=client&since=0&timeout=0');
    assert.equal(waited.status, 200, waited.text);
    assert.equal(waited.json.type, 'client');
    assert.equal(waited.json.data.rule, 'wrong-state');
    const none = await request(rest.restPort, 'GET', `/v1/client/findings?since=${list.json[0].id}`);
    assert.deepEqual(none.json, []);
    const bad = await request(rest.restPort, 'GET', '/v1/client/findings?session=abc');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'INVALID');
    const del = await request(rest.restPort, 'DELETE', '/v1/client/findings');
    assert.deepEqual(del.json, { deleted: 1 });
    assert.deepEqual((await request(rest.restPort, 'GET', '/v1/client/findings')).json, []);
  });

  test('options: modes, rule ids and capability names are validated with the field named', () => {
    assert.throws(() => createServer({ clientCheck: 'strcit' as never }), /clientCheck: expected one of "off", "report", "strict" \(did you mean "strict"\?\)/);
    assert.throws(() => createServer({ clientCheckRules: { 'tag-resue': true } }), /clientCheckRules\["tag-resue"\]: unknown rule; did you mean "tag-reuse"\?/);
    assert.throws(() => createServer({ capabilities: { hide: ['MO VE'] } }), /capabilities\.hide\[0\]: expected a capability name/);
    assert.throws(() => createServer({ users: { bob: { password: 'x', capabilities: { hdie: [] } as never } } }), /users\.bob\.capabilities\.hdie: unknown key; did you mean "hide"\?/);
    assert.equal(createServer({}).options.clientCheck, 'report');
  });

  test('capability masking per user: hidden once that user logs in', async () => {
    const port = await start({ users: { testuser: { password: 'testpass' }, alice: { password: 'pw', capabilities: { hide: ['IDLE'] } } } });
    const a = await rawSession(port, false);
    const login = tagged(await a.command('LOGIN alice pw'));
    assert.doesNotMatch(login, /\bIDLE\b/);
    assert.match(tagged(await a.command('IDLE')), /BAD Unknown command IDLE/);
    const t = await rawSession(port, false);
    assert.match(tagged(await t.command('LOGIN testuser testpass')), /\bIDLE\b/);
    assert.deepEqual(server!.control.clientFindings().map((f) => [f.user, f.rule]), [['alice', 'capability-not-advertised']]);
    // After UNAUTHENTICATE the next user gets its own set.
    assert.match(tagged(await a.command('UNAUTHENTICATE')), /OK/);
    assert.match(tagged(await a.command('LOGIN testuser testpass')), /\bIDLE\b/);
  });

  test('a capability list a script rule sends is what the client was told', async () => {
    const port = await start({ greetingCapabilities: false, script: [{ on: 'greeting', send: '* OK [CAPABILITY IMAP4rev1 ID AUTH=PLAIN] hi\r\n' }] });
    const c = await rawSession(port, false);
    assert.match(tagged(await c.command('ID NIL')), /OK/);
    assert.deepEqual(server!.control.clientFindings(), [], 'ID was in the list the rule sent');
    assert.match(tagged(await c.command('ENABLE CONDSTORE')), /BAD/);
    assert.deepEqual(server!.control.clientFindings().map((f) => f.rule), ['wrong-state', 'capability-not-advertised']);
  });

  test('capability masking of a SASL mechanism and of SASL-IR', async () => {
    const port = await start({ capabilities: { hide: ['AUTH=PLAIN', 'SASL-IR'] } });
    const c = await rawSession(port, false);
    const caps = (await c.command('CAPABILITY')).join('\n');
    assert.doesNotMatch(caps, /AUTH=PLAIN|SASL-IR/);
    const plain = Buffer.from('\0testuser\0testpass').toString('base64');
    assert.match(tagged(await c.command('AUTHENTICATE PLAIN')), /NO Unsupported authentication mechanism PLAIN/);
    assert.match(tagged(await c.command(`AUTHENTICATE XOAUTH2 ${plain}`)), /BAD Initial response needs SASL-IR/);
    assert.deepEqual(server!.control.clientFindings().map((f) => f.rule), ['capability-not-advertised', 'capability-not-advertised']);
  });

  test('capability masking per session from a script rule (greeting and command)', async () => {
    const port = await start({ script: [{ on: 'greeting', session: 1, hideCapabilities: ['LITERAL+'] }] });
    const first = await RawClient.connect(port);
    assert.doesNotMatch(await first.line(), /LITERAL\+/);
    const second = await RawClient.connect(port);
    assert.match(await second.line(), /LITERAL\+/);
    server!.script.add({ on: 'command', command: 'CAPABILITY', session: 2, hideCapabilities: ['ID'] });
    const caps = await second.command('CAPABILITY');
    assert.doesNotMatch(caps.join('\n'), /\bID\b/);
    assert.match(tagged(await second.command('ID NIL')), /BAD Unknown command ID/);
    assert.throws(() => server!.script.add({ on: 'quiet', quietFor: 10, hideCapabilities: ['ID'] }), /hideCapabilities: only for on: greeting or on: command/);
  });

  test('report: one JUnit test case per rule and session, JSON and text', async () => {
    const port = await start();
    const c = await rawSession(port);
    await c.command('FETCH 1 FLAGS');
    await c.command('LOGOUT');
    const report = server!.clientReport();
    assert.equal(report.mode, 'report');
    assert.equal(report.findings.length, 1);
    const junit = renderClientReport(report, 'junit');
    const cases = junit.match(/<testcase /g) ?? [];
    // An IMAP session gets a test case per IMAP rule; the POP3 rules are for POP3 sessions.
    assert.equal(cases.length, report.rules.filter((r) => r.protocol === 'imap').length * report.sessions.length);
    assert.doesNotMatch(junit, /name="pop3-/);
    assert.match(junit, /<testcase classname="rookery.client.session-\d+" name="wrong-state">\n\s+<failure type="error"/);
    assert.match(junit, /failures="1"/);
    assert.deepEqual(JSON.parse(renderClientReport(report, 'json')).findings, report.findings);
    assert.match(renderClientReport(report, 'text'), /error wrong-state \(RFC 3501 §3, §6\)/);
    assert.deepEqual(parseClientReportTarget('junit:out.xml'), { format: 'junit', file: 'out.xml' });
    assert.deepEqual(parseClientReportTarget('text'), { format: 'text', file: null });
    assert.throws(() => parseClientReportTarget('junit'), /junit:<file>/);
  });
});

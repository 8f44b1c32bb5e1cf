/**
 * Issue 21, the client checker: every rule triggered by a raw client that
 * breaks the RFC rule it comes from, and not triggered by the same exchange
 * done right. Findings are read through the control API.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { RawClient, tagged } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

let server: Server | null = null;

afterEach(async () => {
  await server?.stop();
  server = null;
});

async function start(options: ServerOptions = {}): Promise<number> {
  const started = await startServer({ plugins: 'all', ...options });
  server = started.server;
  for (let i = 1; i <= 3; i++) server.control.addMessage('INBOX', { raw: mail(`m${i}`) });
  return started.port;
}

const rules = (): string[] => server!.control.clientFindings().map((f) => f.rule);

/** Waits until the server has had time to handle what was sent (a NOOP round trip). */
async function settle(client: RawClient): Promise<void> {
  await client.command('NOOP');
}

describe('client checker rules (raw socket)', () => {
  test('a well-behaved raw exchange has no findings', async () => {
    const port = await start();
    const c = await rawSession(port, false);
    await c.command('CAPABILITY');
    await c.command('LOGIN testuser testpass');
    await c.command('SELECT INBOX');
    await c.command('FETCH 1:3 (FLAGS)');
    await c.command('STORE 1 +FLAGS (\\Seen)');
    c.write('A1 APPEND INBOX {5}\r\n');
    assert.match(await c.line(), /^\+/);
    c.write('hello\r\n');
    await c.until('A1');
    await c.command('MOVE 1 Trash');
    await c.command('LOGOUT');
    assert.deepEqual(server!.control.clientFindings(), []);
  });

  test('literal-before-continuation: literal bytes sent without waiting for "+"', async () => {
    const port = await start();
    const c = await rawSession(port);
    c.write('A1 APPEND INBOX {5}\r\nhello\r\n');
    const lines = await c.until('A1');
    assert.match(tagged(lines), /^A1 OK/, 'report mode changes nothing');
    const [f] = server!.control.clientFindings();
    assert.equal(f!.rule, 'literal-before-continuation');
    assert.equal(f!.tag, 'A1');
    assert.equal(f!.command, 'APPEND');
    assert.equal(f!.severity, 'error');
    assert.match(f!.rfc, /RFC 3501 §4\.3/);
  });

  test('nonsync-literal-not-advertised: {n+} when LITERAL+ is hidden; fine when offered', async () => {
    let port = await start();
    let c = await rawSession(port);
    c.write('A1 APPEND INBOX {5+}\r\nhello\r\n');
    await c.until('A1');
    assert.deepEqual(rules(), [], 'LITERAL+ was offered in the greeting');
    await server!.stop();
    port = await start({ capabilities: { hide: ['LITERAL+', 'LITERAL-'] } });
    c = await rawSession(port);
    c.write('A1 APPEND INBOX {5+}\r\nhello\r\n');
    await c.until('A1');
    assert.deepEqual(rules(), ['nonsync-literal-not-advertised']);
    // After ENABLE IMAP4rev2, which includes LITERAL- (RFC 9051 §4.3), a small {n+} is allowed (imapflow does this).
    await server!.stop();
    port = await start({ capabilities: { hide: ['LITERAL+'] } });
    c = await rawSession(port);
    await c.command('ENABLE IMAP4rev2');
    c.write('A1 APPEND INBOX {5+}\r\nhello\r\n');
    await c.until('A1');
    assert.deepEqual(rules(), []);
  });

  test('nonsync-literal-not-advertised: above 4096 octets with only LITERAL-', async () => {
    const port = await start({ plugins: ['LITERAL-'] });
    const c = await rawSession(port);
    c.write('A1 APPEND INBOX {10+}\r\n0123456789\r\n');
    await c.until('A1');
    assert.deepEqual(rules(), []);
    c.write(`A2 APPEND INBOX {5000+}\r\n${'x'.repeat(5000)}\r\n`);
    await c.until('A2');
    assert.deepEqual(rules(), ['nonsync-literal-not-advertised']);
  });

  test('capability-not-advertised: MOVE when hidden answers BAD as unknown and is reported', async () => {
    const port = await start({ capabilities: { hide: ['MOVE'] } });
    const c = await rawSession(port, false);
    const caps = await c.command('CAPABILITY');
    assert.doesNotMatch(caps.join('\n'), /\bMOVE\b/);
    await c.command('LOGIN testuser testpass');
    await c.command('SELECT INBOX');
    const moved = await c.command('MOVE 1 Trash');
    assert.match(tagged(moved), /^T\d+ BAD Unknown command MOVE/);
    assert.deepEqual(rules(), ['capability-not-advertised']);
    assert.match(server!.control.clientFindings()[0]!.text, /MOVE/);
  });

  test('capability-not-advertised: IDLE before any capability list was told', async () => {
    const port = await start({ greetingCapabilities: false });
    const c = await RawClient.connect(port);
    await c.line();
    // LOGIN's OK carries [CAPABILITY ...]; use a second session state: the code tells it.
    c.write('A1 LOGIN testuser testpass\r\n');
    await c.until('A1');
    assert.deepEqual(rules(), []);
    c.write('A2 IDLE\r\n');
    await c.line();
    c.write('DONE\r\n');
    await c.until('A2');
    assert.deepEqual(rules(), [], 'IDLE was in the LOGIN OK [CAPABILITY] code');
  });

  test('capability-not-advertised: a FETCH modifier and item of CONDSTORE when CONDSTORE is hidden', async () => {
    const port = await start({ capabilities: { hide: ['CONDSTORE', 'QRESYNC'] } });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    await c.command('FETCH 1 (FLAGS MODSEQ)');
    await c.command('FETCH 1 (FLAGS) (CHANGEDSINCE 1)');
    const found = server!.control.clientFindings();
    assert.deepEqual(found.map((f) => f.rule), ['capability-not-advertised', 'capability-not-advertised']);
    assert.match(found[0]!.text, /FETCH item MODSEQ needs CONDSTORE/);
    assert.match(found[1]!.text, /CHANGEDSINCE/);
  });

  test('capability-not-advertised: SEARCH keys and RETURN options, SELECT parameters, STORE modifiers, STATUS items', async () => {
    let port = await start();
    let c = await rawSession(port);
    const offered = [
      'SELECT INBOX (CONDSTORE)', 'SEARCH RETURN (MIN COUNT) SUBJECT "MODSEQ" OLDER 10', 'SEARCH MODSEQ 1',
      'STORE 1 (UNCHANGEDSINCE 99) +FLAGS (MODSEQ)', 'STATUS INBOX (MESSAGES HIGHESTMODSEQ)', 'FETCH 1 (BODY.PEEK[HEADER.FIELDS (MODSEQ X-GM-LABELS)])',
    ];
    for (const command of offered) await c.command(command);
    assert.deepEqual(rules(), [], 'all offered; atoms inside strings, sections and flag lists are not names');
    await server!.stop();
    port = await start({ capabilities: { hide: ['CONDSTORE', 'QRESYNC', 'ESEARCH', 'WITHIN', 'IMAP4rev2'] } });
    c = await rawSession(port);
    for (const command of ['SELECT INBOX (CONDSTORE)', 'SEARCH RETURN (MIN) ALL', 'SEARCH OLDER 10', 'STORE 1 (UNCHANGEDSINCE 99) +FLAGS (\\Seen)']) {
      await c.command(command);
    }
    const texts = server!.control.clientFindings().map((f) => `${f.rule}: ${f.text}`);
    assert.equal(texts.length, 4, texts.join('\n'));
    assert.match(texts[0]!, /the SELECT parameter CONDSTORE needs CONDSTORE/);
    assert.match(texts[1]!, /the SEARCH result option MIN needs ESEARCH/);
    assert.match(texts[2]!, /the SEARCH key OLDER needs WITHIN/);
    assert.match(texts[3]!, /the STORE modifier UNCHANGEDSINCE needs CONDSTORE/);
  });

  test('capability-not-advertised: after STARTTLS the old list no longer counts', async () => {
    const port = await start({ starttls: true });
    const tls = await import('node:tls');
    const c = await RawClient.connect(port);
    await c.line();
    await c.command('STARTTLS');
    const secure = tls.connect({ socket: c.socket, rejectUnauthorized: false });
    await new Promise<void>((resolve) => secure.once('secureConnect', () => resolve()));
    const s = new (RawClient as unknown as new (socket: typeof secure) => RawClient)(secure);
    assert.match(tagged(await s.command('ID NIL')), /OK/);
    assert.deepEqual(rules(), ['capability-not-advertised'], 'ID before asking CAPABILITY again after STARTTLS');
    await s.command('CAPABILITY');
    await s.command('ID NIL');
    assert.equal(rules().length, 1);
    s.close();
  });

  test('wrong-state: SELECT before login, FETCH without a mailbox', async () => {
    const port = await start();
    const c = await rawSession(port, false);
    await c.command('SELECT INBOX');
    await c.command('LOGIN testuser testpass');
    await c.command('FETCH 1 FLAGS');
    assert.deepEqual(rules(), ['wrong-state', 'wrong-state']);
  });

  test('tag-reuse: a tag sent again while its command runs; a tag with "+"', async () => {
    const port = await start();
    const c = await rawSession(port);
    c.write('A1 NOOP\r\nA1 NOOP\r\n');
    await c.until('A1');
    await c.until('A1');
    assert.deepEqual(rules(), ['tag-reuse']);
    c.write('B1 NOOP\r\n');
    await c.until('B1');
    c.write('B1 NOOP\r\n');
    await c.until('B1');
    assert.deepEqual(rules(), ['tag-reuse'], 'reusing a tag once its command is done is allowed');
    c.write('A+1 NOOP\r\n');
    await c.line();
    await settle(c);
    assert.deepEqual(rules(), ['tag-reuse', 'tag-reuse']);
    // A peer controls tags: a finding carries at most 64 characters of one.
    c.write(`${'x'.repeat(5000)}+ NOOP\r\n`);
    await c.line();
    await settle(c);
    const last = server!.control.clientFindings().at(-1)!;
    assert.equal(last.tag, `${'x'.repeat(64)}...`);
    assert.ok(last.text.length < 200);
  });

  test('command-during-idle and idle-too-long (server clock)', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const port = await start({ now: () => now });
    const c = await rawSession(port);
    c.write('A1 IDLE\r\n');
    await c.line();
    c.write('A2 NOOP\r\n');
    await c.until('A1');
    assert.deepEqual(rules(), ['command-during-idle']);
    c.write('A3 IDLE\r\n');
    await c.line();
    now += 30 * 60_000;
    c.write('DONE\r\n');
    await c.until('A3');
    assert.deepEqual(rules(), ['command-during-idle', 'idle-too-long']);
    c.write('A4 IDLE\r\n');
    await c.line();
    now += 28 * 60_000;
    c.write('DONE\r\n');
    await c.until('A4');
    assert.equal(rules().length, 2, '28 minutes is within the limit');
  });

  test('sequence-beyond-exists: numbers above EXISTS, and after EXPUNGE', async () => {
    const port = await start();
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    await c.command('FETCH 3 FLAGS');
    assert.deepEqual(rules(), []);
    await c.command('FETCH 4 FLAGS');
    assert.deepEqual(rules(), ['sequence-beyond-exists']);
    await c.command('STORE 3 +FLAGS (\\Deleted)');
    await c.command('EXPUNGE');
    await c.command('FETCH 3 FLAGS');
    assert.deepEqual(rules(), ['sequence-beyond-exists', 'sequence-beyond-exists']);
    await c.command('UID FETCH 99 FLAGS');
    await c.command('FETCH 1:* FLAGS');
    assert.equal(rules().length, 2, 'UIDs and * are not sequence numbers to check');
  });

  test('ambiguous-pipelining: FETCH sent while NOOP runs; FETCH behind FETCH is fine', async () => {
    const port = await start();
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('A1 FETCH 1 FLAGS\r\nA2 FETCH 2 FLAGS\r\n');
    await c.until('A2');
    assert.deepEqual(rules(), []);
    c.write('B1 NOOP\r\nB2 FETCH 1 FLAGS\r\n');
    await c.until('B2');
    assert.deepEqual(rules(), ['ambiguous-pipelining']);
    c.write('C1 NOOP\r\nC2 UID FETCH 1 FLAGS\r\n');
    await c.until('C2');
    assert.equal(rules().length, 1, 'UID commands do not use sequence numbers');
  });

  test('tag-reuse and ambiguous-pipelining across IDLE: only commands still in progress count', async () => {
    const port = await start();
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    // D2 sent while D1 ran: the tag D1 is free again only once D1 is answered (RFC 3501 §2.2.1).
    c.write('D1 NOOP\r\nD1 IDLE\r\n');
    await c.until('D1');
    assert.match(await c.line(), /^\+/);
    c.write('DONE\r\n');
    await c.until('D1');
    assert.deepEqual(rules(), ['tag-reuse']);
    // Answered before IDLE: reusing their tags later is fine.
    c.write('E1 NOOP\r\nE2 IDLE\r\n');
    await c.until('E1');
    assert.match(await c.line(), /^\+/);
    c.write('DONE\r\n');
    await c.until('E2');
    c.write('E1 FETCH 1 FLAGS\r\n');
    await c.until('E1');
    c.write('D1 FETCH 1 FLAGS\r\n');
    await c.until('D1');
    assert.deepEqual(rules(), ['tag-reuse']);
    // After an IDLE the checker still sees what is in progress: FETCH behind NOOP (RFC 3501 §5.5), then behind IDLE itself.
    c.write('F1 NOOP\r\nF2 FETCH 1 FLAGS\r\n');
    await c.until('F2');
    assert.deepEqual(rules(), ['tag-reuse', 'ambiguous-pipelining']);
    c.write('G1 IDLE\r\n');
    assert.match(await c.line(), /^\+/);
    c.write('DONE\r\nG2 FETCH 1 FLAGS\r\n');
    await c.until('G2');
    assert.deepEqual(rules(), ['tag-reuse', 'ambiguous-pipelining', 'ambiguous-pipelining']);
  });

  test('flag-not-permanent: STORE \\Recent; a new keyword where PERMANENTFLAGS has no \\*', async () => {
    const started = await startServer({
      plugins: 'all',
      storage: { INBOX: { permanentFlags: ['\\Seen', '\\Deleted'], messages: [mail('a'), mail('b')] } },
    });
    server = started.server;
    const c = await rawSession(started.port);
    await c.command('SELECT INBOX');
    await c.command('STORE 1 +FLAGS (\\Seen)');
    assert.deepEqual(rules(), []);
    await c.command('STORE 1 +FLAGS (\\Recent)');
    assert.deepEqual(rules(), ['flag-not-permanent']);
    server.control.setFlags('INBOX', { uids: [1], flags: [], mode: 'set' });
    const c2 = await rawSession(started.port);
    const selected = await c2.command('SELECT INBOX');
    const permanent = selected.find((l) => l.includes('PERMANENTFLAGS'));
    if (permanent?.includes('\\*')) return; // the server allows new keywords here: nothing to test
    await c2.command('STORE 1 +FLAGS (Junk)');
    assert.deepEqual(rules(), ['flag-not-permanent', 'flag-not-permanent']);
  });

  test('8bit-without-utf8: 8-bit mailbox name; fine after ENABLE UTF8=ACCEPT', async () => {
    const port = await start();
    const c = await rawSession(port);
    c.write(Buffer.concat([Buffer.from('A1 CREATE "Caf'), Buffer.from('é', 'utf8'), Buffer.from('"\r\n')]));
    await c.until('A1');
    assert.deepEqual(rules(), ['8bit-without-utf8']);
    await c.command('ENABLE UTF8=ACCEPT');
    c.write(Buffer.concat([Buffer.from('A2 CREATE "Th'), Buffer.from('é', 'utf8'), Buffer.from('"\r\n')]));
    await c.until('A2');
    assert.deepEqual(rules(), ['8bit-without-utf8']);
  });

  test('plaintext-credentials: LOGIN in clear while STARTTLS is offered (warning)', async () => {
    const port = await start({ starttls: true });
    const c = await rawSession(port, false);
    const lines = await c.command('LOGIN testuser testpass');
    assert.match(tagged(lines), /OK/);
    const found = server!.control.clientFindings();
    assert.deepEqual(found.map((f) => [f.rule, f.severity]), [['plaintext-credentials', 'warning']]);
  });

  test('line-too-long: a command line over 8192 octets (warning)', async () => {
    const port = await start();
    const c = await rawSession(port);
    await c.command(`SELECT INBOX`);
    await c.command(`FETCH ${Array.from({ length: 1500 }, () => '1').join(',')} FLAGS`);
    assert.deepEqual(rules(), []);
    await c.command(`FETCH ${Array.from({ length: 5000 }, () => '1').join(',')} FLAGS`);
    assert.deepEqual(rules(), ['line-too-long']);
  });

  test('no-logout: off by default; on with clientCheckRules', async () => {
    let port = await start();
    let c = await rawSession(port);
    c.close();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(rules(), []);
    await server!.stop();
    port = await start({ clientCheckRules: { 'no-logout': true } });
    c = await rawSession(port);
    const closed = server!.waitFor('client');
    c.close();
    const event = await closed;
    assert.equal(event.data.rule, 'no-logout');
    c = await rawSession(port);
    await c.command('LOGOUT');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(rules(), ['no-logout']);
  });
});

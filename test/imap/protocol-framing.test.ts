/**
 * Protocol tests over a raw socket: command framing, literals, limits and
 * the BAD responses of malformed or misplaced commands.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import { tagged } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

let server: Server;
let port: number;

before(async () => {
  ({ server, port } = await startServer({
    plugins: 'all',
    storage: { INBOX: { messages: [mail('one'), mail('two')] }, '': { folders: { Archive: {} } } },
  }));
});
after(async () => {
  await server.stop();
});

describe('literals', () => {
  test('synchronizing literals get "+ OK" and LOGIN with literals works', async () => {
    const c = await rawSession(port, false);
    c.write('A1 LOGIN {8}\r\n');
    assert.equal(await c.line(), '+ OK');
    c.write('testuser {8}\r\n');
    assert.equal(await c.line(), '+ OK');
    c.write('testpass\r\n');
    const lines = await c.until('A1');
    assert.match(tagged(lines), /^A1 OK \[CAPABILITY IMAP4rev1 [^\]]*\] Logged in$/);
    c.close();
  });

  test('APPEND with a synchronizing literal', async () => {
    const c = await rawSession(port);
    const msg = mail('appended-sync');
    c.write(`A2 APPEND Archive (\\Seen) {${msg.length}}\r\n`);
    assert.equal(await c.line(), '+ OK');
    c.write(msg + '\r\n');
    const lines = await c.until('A2');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^A2 OK \[APPENDUID \d+ 1\] Append completed$/);
    const fetched = await c.command('STATUS Archive (MESSAGES)');
    assert.equal(fetched[0], '* STATUS "Archive" (MESSAGES 1)');
    c.close();
  });

  test('LITERAL+ {n+} needs no continuation', async () => {
    const c = await rawSession(port, false);
    c.write('A3 LOGIN {8+}\r\ntestuser {8+}\r\ntestpass\r\n');
    const lines = await c.until('A3');
    assert.equal(lines.length, 1, 'no continuation request');
    assert.match(lines[0]!, /^A3 OK /);
    const msg = mail('appended-plus');
    c.write(`A4 APPEND Archive {${msg.length}+}\r\n${msg}\r\n`);
    const out = await c.until('A4');
    assert.equal(out.length, 1);
    assert.match(out[0]!, /^A4 OK \[APPENDUID \d+ \d+\] Append completed$/);
    c.close();
  });

  test('literal above 64 KiB before login is refused NO [TOOBIG] before its bytes; the session goes on', async () => {
    const c = await rawSession(port, false);
    c.write('A5 LOGIN {70000}\r\n');
    const line = await c.line();
    assert.match(line, /^A5 NO \[TOOBIG\] /);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(c.pending(), '', 'no continuation request after the refusal');
    const lines = await c.command('LOGIN testuser testpass');
    assert.match(tagged(lines), /^T1 OK /);
    c.close();
  });

  test('a literal of exactly 64 KiB before login is accepted', async () => {
    const c = await rawSession(port, false);
    c.write('A6 LOGIN testuser {65536}\r\n');
    assert.equal(await c.line(), '+ OK');
    c.write(Buffer.alloc(65536, 'x'));
    c.write('\r\n');
    const lines = await c.until('A6');
    assert.equal(tagged(lines), 'A6 NO [AUTHENTICATIONFAILED] Invalid credentials (Failure)');
    c.close();
  });
});

describe('limits and malformed commands', () => {
  test('a command line longer than maxLineLength gets BAD and the session goes on', async () => {
    const { server: small, port: smallPort } = await startServer({ plugins: 'all', maxLineLength: 100 });
    try {
      const c = await rawSession(smallPort);
      c.write(`L1 NOOP ${'x'.repeat(200)}\r\n`);
      const line = await c.line();
      assert.match(line, /^L1 BAD /);
      const lines = await c.command('NOOP');
      assert.deepEqual(lines, ['T2 OK NOOP completed']);
      c.close();
    } finally {
      await small.stop();
    }
  });

  test('garbage and unknown commands get BAD and the session goes on', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('FROBNICATE'), ['T2 BAD Unknown command FROBNICATE']);
    c.write('\r\n');
    const empty = await c.line();
    assert.match(empty, /^\* BAD /);
    c.write('(((\r\n');
    assert.match(await c.line(), /^\* BAD /);
    assert.deepEqual(await c.command('NOOP'), ['T3 OK NOOP completed']);
    c.close();
  });

  test('missing or extra arguments get BAD', async () => {
    const c = await rawSession(port);
    assert.match(tagged(await c.command('SELECT')), /^T2 BAD /);
    assert.match(tagged(await c.command('STATUS INBOX')), /^T3 BAD /);
    assert.match(tagged(await c.command('NOOP extra')), /^T4 BAD /);
    assert.match(tagged(await c.command('RENAME Archive')), /^T5 BAD /);
    await c.command('SELECT INBOX');
    assert.match(tagged(await c.command('FETCH 1')), /^T7 BAD /);
    assert.match(tagged(await c.command('STORE 1 +FLAGS')), /^T8 BAD /);
    assert.match(tagged(await c.command('COPY 1')), /^T9 BAD /);
    assert.deepEqual(await c.command('NOOP'), ['T10 OK NOOP completed']);
    c.close();
  });

  test('commands in the wrong state get BAD', async () => {
    const c = await rawSession(port, false);
    assert.equal(tagged(await c.command('SELECT INBOX')), 'T1 BAD SELECT needs authentication first');
    assert.equal(tagged(await c.command('FETCH 1 FLAGS')), 'T2 BAD FETCH needs authentication first');
    assert.match(tagged(await c.command('LOGIN testuser testpass')), /^T3 OK /);
    assert.equal(tagged(await c.command('FETCH 1 FLAGS')), 'T4 BAD FETCH needs a selected mailbox');
    assert.equal(tagged(await c.command('CHECK')), 'T5 BAD CHECK needs a selected mailbox');
    assert.equal(tagged(await c.command('LOGIN testuser testpass')), 'T6 BAD LOGIN is not allowed after authentication');
    assert.deepEqual(await c.command('NOOP'), ['T7 OK NOOP completed']);
    c.close();
  });

  test('invalid sequence sets and sequence numbers beyond EXISTS get BAD', async () => {
    const c = await rawSession(port);
    await c.command('EXAMINE INBOX');
    assert.equal(tagged(await c.command('FETCH 3 FLAGS')), 'T3 BAD Invalid messageset');
    assert.equal(tagged(await c.command('FETCH 1:5 FLAGS')), 'T4 BAD Invalid messageset');
    assert.match(tagged(await c.command('FETCH 0 FLAGS')), /^T5 BAD /);
    assert.match(tagged(await c.command('FETCH a:b FLAGS')), /^T6 BAD /);
    assert.match(tagged(await c.command('FETCH 1,,2 FLAGS')), /^T7 BAD /);
    // UIDs that do not exist match nothing.
    assert.deepEqual(await c.command('UID FETCH 99 FLAGS'), ['T8 OK Fetch completed']);
    assert.deepEqual(await c.command('FETCH 2:* UID'), ['* 2 FETCH (UID 2)', 'T9 OK Fetch completed']);
    c.close();
  });
});

describe('literal limits', () => {
  test('a non-synchronizing literal above the limit is skipped, then refused; the session goes on', async () => {
    const c = await rawSession(port, false);
    c.write('B1 LOGIN {70000+}\r\n');
    c.write(Buffer.alloc(70000, 'a'));
    c.write(' x\r\n');
    assert.match(await c.line(), /^B1 NO \[TOOBIG\] /);
    assert.equal(tagged(await c.command('NOOP')), 'T1 OK NOOP completed');
    c.close();
  });

  test('APPEND above maxLiteral after login is refused NO [TOOBIG] without continuation', async () => {
    const { server: small, port: smallPort } = await startServer({ plugins: 'all', maxLiteral: 100 });
    try {
      const c = await rawSession(smallPort);
      c.write('B2 APPEND INBOX {101}\r\n');
      assert.equal(await c.line(), 'B2 NO [TOOBIG] Literal too big (limit 100 octets)');
      c.write('B3 APPEND INBOX {100}\r\n');
      assert.equal(await c.line(), '+ OK');
      c.write(Buffer.alloc(100, 'b'));
      c.write('\r\n');
      assert.deepEqual(await c.until('B3'), ['B3 OK [APPENDUID 1 1] Append completed']);
      c.close();
    } finally {
      await small.stop();
    }
  });

  test('a refused literal shows in the command event with its command name', async () => {
    const events: { tag: string; command: string; status: string }[] = [];
    server.on('command', (e) => events.push({ tag: e.tag, command: e.command, status: e.status }));
    const c = await rawSession(port, false);
    c.write('B4 LOGIN {70000}\r\n');
    assert.match(await c.line(), /^B4 NO \[TOOBIG\] /);
    assert.deepEqual(events, [{ tag: 'B4', command: 'LOGIN', status: 'NO' }]);
    c.close();
  });

  test('a non-synchronizing literal of unusable size ends the connection', async () => {
    const c = await rawSession(port);
    c.write('B5 APPEND INBOX {99999999999999999999+}\r\n');
    assert.equal(await c.line(), 'B5 BAD Literal size too large');
    c.write('garbage that cannot be framed\r\n');
    await c.closedByServer();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(server.control.sessions().length, 0);
  });
});

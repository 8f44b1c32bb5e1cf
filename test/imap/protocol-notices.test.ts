/**
 * Protocol tests over a raw socket: untagged updates caused by changes
 * made elsewhere (control API), when they may be sent (RFC 3501 §7.4.1,
 * §5.2) and during IDLE (RFC 2177).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

let server: Server;
let port: number;

beforeEach(async () => {
  ({ server, port } = await startServer({
    plugins: 'all',
    storage: { INBOX: { messages: [mail('one'), mail('two'), mail('three')] } },
  }));
});
afterEach(async () => {
  await server.stop();
});

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 30));

describe('updates at command boundaries', () => {
  test('addMessage: EXISTS and RECENT at the next NOOP, not before', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    server.control.addMessage('INBOX', { raw: mail('four') });
    await settle();
    assert.equal(c.pending(), '', 'nothing unsolicited outside IDLE');
    assert.deepEqual(await c.command('NOOP'), ['* 4 EXISTS', '* 1 RECENT', 'T3 OK NOOP completed']);
    assert.deepEqual(await c.command('FETCH 4 (UID FLAGS)'), ['* 4 FETCH (UID 4 FLAGS (\\Recent))', 'T4 OK Fetch completed']);
    c.close();
  });

  test('two additions before NOOP reach two sessions: each counts every message once (RFC 3501 section 7.3.1)', async () => {
    // A first change's list is shared by the sessions that heard of it; a second one must not grow it for the others.
    const a = await rawSession(port);
    const b = await rawSession(port);
    await a.command('SELECT INBOX');
    await b.command('SELECT INBOX');
    server.control.addMessage('INBOX', { raw: mail('four') });
    server.control.addMessage('INBOX', { raw: mail('five') });
    await settle();
    const first = await a.command('NOOP');
    const second = await b.command('NOOP');
    assert.deepEqual(first.filter((l) => l.endsWith('EXISTS')), ['* 5 EXISTS'], first.join(' | '));
    assert.deepEqual(second.filter((l) => l.endsWith('EXISTS')), ['* 5 EXISTS'], second.join(' | '));
    assert.deepEqual(await b.command('FETCH 4:* (UID)'), ['* 4 FETCH (UID 4)', '* 5 FETCH (UID 5)', 'T4 OK Fetch completed']);
    a.close();
    b.close();
  });

  test('expungeMessages: EXPUNGE at NOOP, held back during FETCH which still returns the data', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(server.control.expungeMessages('INBOX', { uids: [2] }), { uids: [2] });
    const fetched = await c.command('FETCH 1:3 (UID BODY.PEEK[HEADER.FIELDS (SUBJECT)])');
    assert.deepEqual(fetched, [
      '* 1 FETCH (UID 1 BODY[HEADER.FIELDS (SUBJECT)] {16}\r\nSubject: one\r\n\r\n)',
      '* 2 FETCH (UID 2 BODY[HEADER.FIELDS (SUBJECT)] {16}\r\nSubject: two\r\n\r\n)',
      '* 3 FETCH (UID 3 BODY[HEADER.FIELDS (SUBJECT)] {18}\r\nSubject: three\r\n\r\n)',
      'T3 OK Fetch completed',
    ]);
    assert.deepEqual(await c.command('STORE 1 +FLAGS.SILENT (\\Flagged)'), ['T4 OK Store completed']);
    // SEARCH skips the expunged message but keeps the numbering (no EXPUNGE yet).
    assert.deepEqual(await c.command('SEARCH ALL'), ['* SEARCH 1 3', 'T5 OK Search completed']);
    assert.deepEqual(await c.command('NOOP'), ['* 2 EXPUNGE', 'T6 OK NOOP completed']);
    assert.deepEqual(await c.command('FETCH 1:* UID'), ['* 1 FETCH (UID 1)', '* 2 FETCH (UID 3)', 'T7 OK Fetch completed']);
    c.close();
  });

  test('setFlags: unsolicited FETCH FLAGS at the next command, after FLAGS announcing a new keyword', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    server.control.setFlags('INBOX', { uids: [1, 3], flags: ['\\Seen', '$Label'] });
    assert.deepEqual(await c.command('NOOP'), [
      '* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft $Label)',
      '* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen $Label \\*)] Flags permitted.',
      '* 1 FETCH (FLAGS (\\Seen $Label))',
      '* 3 FETCH (FLAGS (\\Seen $Label))',
      'T3 OK NOOP completed',
    ]);
    c.close();
  });

  test('multiple EXPUNGEs are sent highest first', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    server.control.expungeMessages('INBOX', { uids: [1, 3] });
    assert.deepEqual(await c.command('NOOP'), ['* 3 EXPUNGE', '* 1 EXPUNGE', 'T3 OK NOOP completed']);
    c.close();
  });
});

describe('IDLE', () => {
  test('EXISTS/RECENT, FETCH FLAGS and EXPUNGE arrive at once during IDLE', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('I1 IDLE\r\n');
    assert.equal(await c.line(), '+ idling');
    server.control.addMessage('INBOX', { raw: mail('four') });
    assert.equal(await c.line(), '* 4 EXISTS');
    assert.equal(await c.line(), '* 1 RECENT');
    server.control.setFlags('INBOX', { uids: [2], flags: ['\\Answered'] });
    assert.equal(await c.line(), '* 2 FETCH (FLAGS (\\Answered))');
    server.control.expungeMessages('INBOX', { uids: [1] });
    assert.equal(await c.line(), '* 1 EXPUNGE');
    c.write('DONE\r\n');
    assert.deepEqual(await c.until('I1'), ['I1 OK Idle completed']);
    assert.deepEqual(await c.command('NOOP'), ['T3 OK NOOP completed']);
    c.close();
  });

  test('updates pending before IDLE are sent when IDLE starts', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    server.control.addMessage('INBOX', { raw: mail('four') });
    c.write('I1 IDLE\r\n');
    assert.equal(await c.line(), '+ idling');
    assert.equal(await c.line(), '* 4 EXISTS');
    assert.equal(await c.line(), '* 1 RECENT');
    c.write('DONE\r\n');
    assert.deepEqual(await c.until('I1'), ['I1 OK Idle completed']);
    c.close();
  });
});

describe('\\Recent', () => {
  test('seeded messages are not \\Recent; a new one is \\Recent in only one of two sessions', async () => {
    const a = await rawSession(port);
    const b = await rawSession(port);
    const selA = await a.command('SELECT INBOX');
    assert.ok(selA.includes('* 0 RECENT'), selA.join('\n'));
    const selB = await b.command('SELECT INBOX');
    assert.ok(selB.includes('* 0 RECENT'), selB.join('\n'));
    server.control.addMessage('INBOX', { raw: mail('four') });
    assert.deepEqual(await a.command('NOOP'), ['* 4 EXISTS', '* 1 RECENT', 'T3 OK NOOP completed']);
    assert.deepEqual(await b.command('NOOP'), ['* 4 EXISTS', '* 0 RECENT', 'T3 OK NOOP completed']);
    assert.deepEqual(await a.command('FETCH 4 FLAGS'), ['* 4 FETCH (FLAGS (\\Recent))', 'T4 OK Fetch completed']);
    assert.deepEqual(await b.command('FETCH 4 FLAGS'), ['* 4 FETCH (FLAGS ())', 'T4 OK Fetch completed']);
    a.close();
    b.close();
  });

  test('EXAMINE does not claim \\Recent; SELECT does', async () => {
    server.control.addMessage('INBOX', { raw: mail('four') });
    const a = await rawSession(port);
    const b = await rawSession(port);
    const c = await rawSession(port);
    assert.ok((await a.command('EXAMINE INBOX')).includes('* 1 RECENT'));
    assert.ok((await b.command('SELECT INBOX')).includes('* 1 RECENT'));
    assert.ok((await c.command('SELECT INBOX')).includes('* 0 RECENT'));
    a.close();
    b.close();
    c.close();
  });
});

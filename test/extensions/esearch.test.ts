/**
 * ESEARCH (RFC 4731) over real sockets: the RFC's §3.1 examples byte for
 * byte (MIN COUNT, RETURN () as ALL with ranges), UID forms, no match,
 * option order, errors, and Python imaplib reading the ESEARCH data.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { compressSet } from '../../src/extensions/esearch/index.js';
import { rawSession, startServer, mail } from '../helpers/server.js';

/** 11 messages, UIDs 1, 3, 5, ..., 21; 2, 10 and 11 are \Flagged, 4 is the only unseen one. */
function storage(): Record<string, unknown> {
  const messages = [];
  for (let i = 1; i <= 11; i++) {
    const flags = [i === 4 ? null : '\\Seen', [2, 10, 11].includes(i) ? '\\Flagged' : null].filter((f): f is string => f !== null);
    messages.push({ raw: mail(`m${i}`, 'x', i === 3 ? 'X-From-Smith: no\r\n' : ''), flags, uid: 2 * i - 1 });
  }
  return { INBOX: { messages } };
}

test('compressSet: runs become ranges', () => {
  assert.equal(compressSet([]), '');
  assert.equal(compressSet([2, 10, 11]), '2,10:11');
  assert.equal(compressSet([1, 2, 3, 5, 7, 8]), '1:3,5,7:8');
});

test('RFC 4731 §3.1 examples: MIN COUNT, RETURN () is ALL, UID MIN MAX, MIN of UNSEEN', async () => {
  const { server, port } = await startServer({ plugins: ['ESEARCH'], storage: storage() as never });
  try {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 ESEARCH', 'T2 OK Capability completed']);
    await c.command('SELECT INBOX');
    c.write('A282 SEARCH RETURN (MIN COUNT) FLAGGED SINCE 1-Feb-1994 NOT FROM "Smith"\r\n');
    assert.deepEqual(await c.until('A282'), ['* ESEARCH (TAG "A282") MIN 2 COUNT 3', 'A282 OK Search completed']);
    c.write('A283 SEARCH RETURN () FLAGGED SINCE 1-Feb-1994 NOT FROM "Smith"\r\n');
    assert.deepEqual(await c.until('A283'), ['* ESEARCH (TAG "A283") ALL 2,10:11', 'A283 OK Search completed']);
    c.write('A284 SEARCH RETURN (MIN) UNSEEN\r\n');
    assert.deepEqual(await c.until('A284'), ['* ESEARCH (TAG "A284") MIN 4', 'A284 OK Search completed']);
    c.write('A285 UID SEARCH RETURN (MIN MAX) 1:5000\r\n');
    assert.deepEqual(await c.until('A285'), ['* ESEARCH (TAG "A285") UID MIN 1 MAX 21', 'A285 OK Search completed']);
    // UID ALL lists UIDs; the items come in the order MIN MAX ALL COUNT whatever the order asked.
    c.write('A286 UID SEARCH RETURN (count ALL max) FLAGGED\r\n');
    assert.deepEqual(await c.until('A286'), ['* ESEARCH (TAG "A286") UID MAX 21 ALL 3,19,21 COUNT 3', 'A286 OK Search completed']);
    c.write('A287 SEARCH RETURN (ALL) 1:4,6:7\r\n');
    assert.deepEqual(await c.until('A287'), ['* ESEARCH (TAG "A287") ALL 1:4,6:7', 'A287 OK Search completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 4731 §3.1: no match still answers ESEARCH, without MIN, MAX and ALL, with COUNT 0', async () => {
  const { server, port } = await startServer({ plugins: ['ESEARCH'], storage: storage() as never });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('A1 SEARCH RETURN (MIN MAX ALL COUNT) DRAFT\r\n');
    assert.deepEqual(await c.until('A1'), ['* ESEARCH (TAG "A1") COUNT 0', 'A1 OK Search completed']);
    c.write('A2 UID SEARCH RETURN () DRAFT\r\n');
    assert.deepEqual(await c.until('A2'), ['* ESEARCH (TAG "A2") UID', 'A2 OK Search completed']);
    // Without RETURN the answer is the RFC 3501 SEARCH response.
    c.write('A3 SEARCH FLAGGED\r\n');
    assert.deepEqual(await c.until('A3'), ['* SEARCH 2 10 11', 'A3 OK Search completed']);
    // Unknown result options, a missing list, RETURN after CHARSET: BAD.
    for (const bad of ['SEARCH RETURN (FIRST) ALL', 'SEARCH RETURN MIN ALL', 'SEARCH RETURN (MIN)', 'SEARCH CHARSET UTF-8 RETURN (MIN) ALL', 'SEARCH RETURN (SAVE) ALL']) {
      c.write(`B1 ${bad}\r\n`);
      assert.match((await c.until('B1')).at(-1)!, /^B1 BAD /, bad);
    }
    // CHARSET after RETURN is fine; an unknown charset is NO [BADCHARSET] without ESEARCH data.
    c.write('A4 SEARCH RETURN (COUNT) CHARSET UTF-8 FLAGGED\r\n');
    assert.deepEqual(await c.until('A4'), ['* ESEARCH (TAG "A4") COUNT 3', 'A4 OK Search completed']);
    c.write('A5 SEARCH RETURN (COUNT) CHARSET X-NOSUCH FLAGGED\r\n');
    assert.match((await c.until('A5')).join('\n'), /^A5 NO \[BADCHARSET/);
    c.close();
  } finally {
    await server.stop();
  }
});

test('without the plugin RETURN is BAD (not a search key)', async () => {
  const { server, port } = await startServer({ plugins: [], storage: storage() as never });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('A1 SEARCH RETURN (MIN) ALL\r\n');
    assert.match((await c.until('A1')).at(-1)!, /^A1 BAD /);
    c.close();
  } finally {
    await server.stop();
  }
});

const python = spawnSync('python3', ['--version']).status === 0;

test('Python imaplib: SEARCH RETURN (MIN MAX COUNT) through _simple_command, ESEARCH data read back', { skip: !python && 'python3 not found' }, async () => {
  const { server, port } = await startServer({ plugins: ['ESEARCH'], storage: storage() as never });
  try {
    const script = `
import imaplib
m = imaplib.IMAP4('127.0.0.1', ${port})
m.login('testuser', 'testpass')
assert 'ESEARCH' in m.capabilities, m.capabilities
m.select('INBOX')
typ, data = m._simple_command('SEARCH', 'RETURN', '(MIN MAX COUNT)', 'FLAGGED')
assert typ == 'OK', (typ, data)
typ, found = m._untagged_response(typ, data, 'ESEARCH')
print(found[0].decode())
typ, data = m._simple_command('UID', 'SEARCH', 'RETURN', '()', 'FLAGGED')
typ, found = m._untagged_response(typ, data, 'ESEARCH')
print(found[0].decode())
m.logout()
`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile('python3', ['-c', script], { timeout: 10000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
    );
    const lines = out.trim().split('\n');
    assert.match(lines[0]!, /^\(TAG "[A-Z]+\d+"\) MIN 2 MAX 11 COUNT 3$/);
    assert.match(lines[1]!, /^\(TAG "[A-Z]+\d+"\) UID ALL 3,19,21$/);
  } finally {
    await server.stop();
  }
});

test('RFC 4731 §3.2 with CONDSTORE: SEARCH MODSEQ adds MODSEQ n to ESEARCH, of the messages returned', async () => {
  const { server, port } = await startServer({ plugins: ['ESEARCH', 'CONDSTORE'], storage: storage() as never });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const modseq = (uid: number): number => server.control.listMessages('INBOX', { uids: [uid] })[0]!.modseq;
    // Give message 11 (UID 21) the highest MODSEQ, message 2 (UID 3) the next.
    server.control.setFlags('INBOX', { uids: [3], flags: ['$A'], mode: 'add' });
    server.control.setFlags('INBOX', { uids: [21], flags: ['$B'], mode: 'add' });
    await c.command('NOOP');
    const all = Math.max(...[3, 19, 21].map(modseq));
    c.write('A1 SEARCH RETURN (ALL) FLAGGED MODSEQ 1\r\n');
    assert.deepEqual(await c.until('A1'), [`* ESEARCH (TAG "A1") ALL 2,10:11 MODSEQ ${all}`, 'A1 OK Search completed']);
    // MIN alone: the MODSEQ of the message returned.
    c.write('A2 SEARCH RETURN (MIN) FLAGGED MODSEQ 1\r\n');
    assert.deepEqual(await c.until('A2'), [`* ESEARCH (TAG "A2") MIN 2 MODSEQ ${modseq(3)}`, 'A2 OK Search completed']);
    c.write('A3 UID SEARCH RETURN (MIN MAX) FLAGGED MODSEQ 1\r\n');
    assert.deepEqual(await c.until('A3'), [`* ESEARCH (TAG "A3") UID MIN 3 MAX 21 MODSEQ ${Math.max(modseq(3), modseq(21))}`, 'A3 OK Search completed']);
    // Without MODSEQ in the criteria, no MODSEQ.
    c.write('A4 SEARCH RETURN (COUNT) FLAGGED\r\n');
    assert.deepEqual(await c.until('A4'), ['* ESEARCH (TAG "A4") COUNT 3', 'A4 OK Search completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 4731 with RFC 9051 §9 seq-number: a number above EXISTS matches nothing, so the ESEARCH answer is empty and COUNT 0', async () => {
  const messages = Array.from({ length: 6 }, (_, i) => ({ raw: mail(`m${i + 1}`) }));
  const { server, port } = await startServer({ plugins: ['ESEARCH', 'CONDSTORE', 'SEARCHRES'], storage: { INBOX: { messages } } as never });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const run = async (command: string): Promise<string[]> => {
      c.write(`t ${command}\r\n`);
      return c.until('t');
    };
    // Issue 29: these answered `ALL 6`, `MIN 6` and `COUNT 1` on a 6-message mailbox.
    assert.deepEqual(await run('SEARCH RETURN () 1000'), ['* ESEARCH (TAG "t")', 't OK Search completed']);
    assert.deepEqual(await run('SEARCH RETURN (MIN) 1000'), ['* ESEARCH (TAG "t")', 't OK Search completed']);
    assert.deepEqual(await run('SEARCH RETURN (MAX) 1000'), ['* ESEARCH (TAG "t")', 't OK Search completed']);
    assert.deepEqual(await run('SEARCH RETURN (COUNT) 1000'), ['* ESEARCH (TAG "t") COUNT 0', 't OK Search completed']);
    assert.deepEqual(await run('SEARCH RETURN (MIN MAX ALL COUNT) 1000'), ['* ESEARCH (TAG "t") COUNT 0', 't OK Search completed']);
    assert.deepEqual(await run('UID SEARCH RETURN (MIN MAX COUNT) 7'), ['* ESEARCH (TAG "t") UID COUNT 0', 't OK Search completed']);
    assert.deepEqual(await run('SEARCH RETURN (MIN MAX ALL COUNT) 4:1000'), ['* ESEARCH (TAG "t") MIN 4 MAX 6 ALL 4:6 COUNT 3', 't OK Search completed']);
    // With CONDSTORE's MODSEQ key: no message, so no MODSEQ item either (RFC 7162 §3.1.5 gives it for returned messages).
    assert.deepEqual(await run('SEARCH RETURN (MIN MAX COUNT) MODSEQ 1 1000'), ['* ESEARCH (TAG "t") COUNT 0', 't OK Search completed']);
    // SAVE keeps the empty result: `$` then names no message (RFC 5182 §2.1).
    assert.deepEqual(await run('SEARCH RETURN (SAVE) 1000'), ['t OK Search completed']);
    assert.deepEqual(await run('FETCH $ (UID)'), ['t OK Fetch completed']);
    assert.deepEqual(await run('SEARCH $'), ['* SEARCH', 't OK Search completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

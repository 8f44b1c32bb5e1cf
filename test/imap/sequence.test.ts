import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rawSession, startServer, mail } from '../helpers/server.js';

test('sequence sets: `*` in an empty mailbox names nothing; numbers beyond EXISTS are BAD; UID ranges are lenient', async () => {
  const { server, port } = await startServer({ plugins: 'all' });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('FETCH 1:* FLAGS'), ['T3 OK Fetch completed']);
    assert.deepEqual(await c.command('FETCH * FLAGS'), ['T4 OK Fetch completed']);
    assert.match((await c.command('FETCH 1 FLAGS')).at(-1)!, /^T5 BAD /);
    for (let i = 0; i < 3; i++) server.control.addMessage('INBOX', { raw: mail(`m${i}`) });
    const noop = await c.command('NOOP');
    assert.ok(noop.includes('* 3 EXISTS'));
    const fetched = await c.command('FETCH 3:2 (UID)');
    assert.deepEqual(fetched, ['* 2 FETCH (UID 2)', '* 3 FETCH (UID 3)', 'T7 OK Fetch completed']);
    assert.deepEqual(await c.command('UID FETCH 99:* (FLAGS)'), ['* 3 FETCH (UID 3 FLAGS (\\Recent))', 'T8 OK Fetch completed']);
    assert.deepEqual(await c.command('UID FETCH 50:60 (FLAGS)'), ['T9 OK Fetch completed']);
    assert.match((await c.command('FETCH 4 FLAGS')).at(-1)!, /^T10 BAD Invalid messageset/);
    c.close();
  } finally {
    await server.stop();
  }
});

/** Tagged status of a command's answer and its untagged lines, the tag dropped. */
async function answer(c: Awaited<ReturnType<typeof rawSession>>, command: string): Promise<string[]> {
  c.write(`Q1 ${command}\r\n`);
  return (await c.until('Q1')).map((l) => l.replace(/^Q1 /, ''));
}

test('RFC 9051 §9 seq-number: in SEARCH keys a number above EXISTS matches nothing; only `*` is the last message', async () => {
  const { server, port } = await startServer({ plugins: ['SORT', 'THREAD'] });
  try {
    for (let i = 0; i < 6; i++) server.control.addMessage('INBOX', { raw: mail(`m${i}`) });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    // Issue 29: `SEARCH 1000` of a 6-message mailbox answered `* SEARCH 6`.
    assert.deepEqual(await answer(c, 'SEARCH 1000'), ['* SEARCH', 'OK Search completed']);
    assert.deepEqual(await answer(c, 'SEARCH 7'), ['* SEARCH', 'OK Search completed']);
    assert.deepEqual(await answer(c, 'SEARCH 7,2'), ['* SEARCH 2', 'OK Search completed']);
    assert.deepEqual(await answer(c, 'SEARCH NOT 1000'), ['* SEARCH 1 2 3 4 5 6', 'OK Search completed']);
    assert.deepEqual(await answer(c, 'SEARCH OR 1000 2'), ['* SEARCH 2', 'OK Search completed']);
    // A range running past EXISTS holds the messages it reaches.
    assert.deepEqual(await answer(c, 'SEARCH 5:1000'), ['* SEARCH 5 6', 'OK Search completed']);
    assert.deepEqual(await answer(c, 'SEARCH 1000:5'), ['* SEARCH 5 6', 'OK Search completed']);
    // `*` is 6, and seq-range is "all values between these two regardless of order": 1000:* is 6:1000.
    assert.deepEqual(await answer(c, 'SEARCH 1000:*'), ['* SEARCH 6', 'OK Search completed']);
    assert.deepEqual(await answer(c, 'SEARCH *'), ['* SEARCH 6', 'OK Search completed']);
    // UIDs: none above 6 exists; `1000:*` includes the highest UID (RFC 9051 §9 seq-range note).
    assert.deepEqual(await answer(c, 'UID SEARCH UID 1000'), ['* SEARCH', 'OK Search completed']);
    assert.deepEqual(await answer(c, 'UID SEARCH UID 1000:*'), ['* SEARCH 6', 'OK Search completed']);
    assert.deepEqual(await answer(c, 'UID SEARCH 4:1000'), ['* SEARCH 4 5 6', 'OK Search completed']);
    // SORT and THREAD search the same way.
    assert.deepEqual(await answer(c, 'SORT (ARRIVAL) US-ASCII 1000'), ['* SORT', 'OK Sort completed']);
    assert.deepEqual(await answer(c, 'SORT (ARRIVAL) US-ASCII 5:1000'), ['* SORT 5 6', 'OK Sort completed']);
    assert.deepEqual(await answer(c, 'THREAD REFERENCES US-ASCII 1000'), ['* THREAD', 'OK Thread completed']);
    assert.deepEqual(await answer(c, 'THREAD REFERENCES US-ASCII 5:1000'), ['* THREAD (5)(6)', 'OK Thread completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 9051 §9 seq-number: FETCH, STORE, COPY and MOVE with a number above EXISTS are BAD and change nothing; UID forms match what exists', async () => {
  const { server, port } = await startServer({ plugins: ['MOVE', 'UIDPLUS', 'CONDSTORE'] });
  try {
    for (let i = 0; i < 6; i++) server.control.addMessage('INBOX', { raw: mail(`m${i}`) });
    server.control.createMailbox('Other');
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    for (const command of [
      'FETCH 7 FLAGS',
      'FETCH 5:7 FLAGS',
      'FETCH 1000:* FLAGS',
      'FETCH 2,1000 FLAGS',
      'FETCH 1000 (FLAGS) (CHANGEDSINCE 1)',
      'STORE 5:7 +FLAGS (\\Flagged)',
      'STORE 1000 (UNCHANGEDSINCE 100) +FLAGS (\\Flagged)',
      'COPY 5:7 Other',
      'MOVE 1000 Other',
    ]) {
      assert.deepEqual(await answer(c, command), ['BAD Invalid messageset'], command);
    }
    assert.deepEqual(await answer(c, 'SEARCH FLAGGED'), ['* SEARCH', 'OK Search completed']);
    assert.equal(server.control.listMessages('Other').length, 0);
    assert.equal(server.control.listMessages('INBOX').length, 6);
    // UID sets name the messages that exist, and `n:*` the highest even when n is above it.
    assert.deepEqual(await answer(c, 'UID FETCH 1000 FLAGS'), ['OK Fetch completed']);
    assert.deepEqual(await answer(c, 'UID FETCH 1000:* (FLAGS)'), ['* 6 FETCH (UID 6 FLAGS (\\Recent))', 'OK Fetch completed']);
    assert.deepEqual(await answer(c, 'UID FETCH 1000 (FLAGS) (CHANGEDSINCE 1)'), ['OK Fetch completed']);
    assert.deepEqual(await answer(c, 'UID STORE 1000 +FLAGS (\\Flagged)'), ['OK Store completed']);
    assert.match((await answer(c, 'UID COPY 1000 Other')).at(-1)!, /^OK /);
    assert.match((await answer(c, 'UID MOVE 1000 Other')).at(-1)!, /^OK /);
    assert.deepEqual(await answer(c, 'UID EXPUNGE 1000'), ['OK Expunge completed']);
    assert.equal(server.control.listMessages('INBOX').length, 6);
    c.close();
  } finally {
    await server.stop();
  }
});

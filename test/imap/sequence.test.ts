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

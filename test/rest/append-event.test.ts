/**
 * The `append` event: messages added to a mailbox, whoever added them
 * (REST, the control API, an IMAP client's APPEND, COPY or MOVE). The
 * dashboard shows new mail from it; before it, an addition had no event.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collect, rawSession } from '../helpers/server.js';
import { openEvents, request, startRest } from './helpers.js';

const raw = 'From: a@example.com\r\nSubject: hi\r\n\r\nhello\r\n';

test('append events: REST and control API (origin null), IMAP APPEND, COPY and MOVE (origin the session), on the SSE stream with types=append', async () => {
  const s = await startRest({ plugins: ['MOVE'], storage: { INBOX: { messages: [] }, '': { separator: '/', folders: { Archive: {} } } } });
  const seen = collect(s.server, 'append');
  const stream = await openEvents(s.restPort, '/v1/events?types=append');
  try {
    await stream.waitFor(/: connected/);
    const added = await request(s.restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw } });
    assert.equal(added.status, 201);
    s.server.control.addMessage('INBOX', { raw });
    const client = await rawSession(s.imapPort);
    const session = Math.max(...s.server.control.sessions().map((x) => x.session));
    client.write(`a1 APPEND INBOX {${raw.length}+}\r\n${raw}\r\n`);
    assert.match((await client.until('a1')).at(-1)!, /^a1 OK/);
    await client.command('SELECT INBOX');
    assert.match((await client.command('UID COPY 1:2 Archive')).at(-1)!, /OK/);
    assert.match((await client.command('UID MOVE 3 Archive')).at(-1)!, /OK/);
    client.close();
    assert.deepEqual(seen, [
      { path: 'INBOX', uids: [1], origin: null },
      { path: 'INBOX', uids: [2], origin: null },
      { path: 'INBOX', uids: [3], origin: session },
      { path: 'Archive', uids: [1, 2], origin: session },
      { path: 'Archive', uids: [3], origin: session },
    ]);
    await stream.waitFor(/"path":"Archive","uids":\[3\]/);
    const frames = stream.text().split('\n\n').filter((f) => f.startsWith('event:'));
    assert.equal(frames.length, 5);
    assert.ok(frames.every((f) => f.startsWith('event: append\ndata: ')));
    assert.deepEqual(JSON.parse(frames[0]!.split('data: ')[1]!), { path: 'INBOX', uids: [1], origin: null });
  } finally {
    stream.close();
    await s.server.stop();
  }
});

test('with userMailboxes an append event says whose tree the mailbox is in', async () => {
  const s = await startRest({ userMailboxes: true, users: { testuser: { password: 'testpass' } } });
  const seen = collect(s.server, 'append');
  try {
    const client = await rawSession(s.imapPort);
    client.write(`a1 APPEND INBOX {${raw.length}+}\r\n${raw}\r\n`);
    assert.match((await client.until('a1')).at(-1)!, /^a1 OK/);
    client.close();
    assert.deepEqual(seen.map((e) => ({ path: e.path, uids: e.uids, user: e.user })), [{ path: 'INBOX', uids: [1], user: 'testuser' }]);
  } finally {
    await s.server.stop();
  }
});

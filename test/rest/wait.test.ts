/**
 * Waiting instead of sleeping: GET /v1/events/wait (a long poll over a real
 * HTTP client) and in-process `server.waitFor`, against a started server.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ServiceError } from '../../src/index.js';
import { RawClient, tagged } from '../helpers/raw-client.js';
import { request, startRest, type Rest } from './helpers.js';

async function get(r: Rest, path: string, signal?: AbortSignal): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(r.base + path, signal ? { signal } : {});
  return { status: res.status, headers: res.headers, json: await res.json() };
}

const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('GET /v1/events/wait', () => {
  test('answers the first matching event within a few ms of it', { timeout: 10_000 }, async () => {
    const r = await startRest();
    try {
      const pending = get(r, '/v1/events/wait?types=mailbox&match=type=create,path=Wanted&timeout=5000');
      // The long poll is registered when the server has read the request: on a busy machine, later than any fixed sleep.
      while (r.server.eventLog.waiting === 0) await tick(5);
      r.server.control.createMailbox({ path: 'Other' }); // a mailbox event that does not match
      await tick(20);
      const at = performance.now();
      r.server.control.createMailbox({ path: 'Wanted' });
      const reply = await pending;
      const elapsed = performance.now() - at;
      assert.equal(reply.status, 200, JSON.stringify(reply.json));
      assert.equal(reply.json.type, 'mailbox');
      assert.deepEqual(reply.json.data, { type: 'create', path: 'Wanted', oldPath: null, origin: null });
      assert.ok(Number.isSafeInteger(reply.json.id) && reply.json.id > 0);
      assert.ok(elapsed < 200, `answered ${elapsed.toFixed(1)} ms after the event`);
    } finally {
      await r.server.stop();
    }
  });

  test('408 TIMEOUT with the error object when nothing matches in time', { timeout: 10_000 }, async () => {
    const r = await startRest();
    try {
      const at = performance.now();
      const reply = await get(r, '/v1/events/wait?types=expunge&timeout=150');
      const elapsed = performance.now() - at;
      assert.equal(reply.status, 408);
      assert.equal(reply.json.error.code, 'TIMEOUT');
      assert.match(reply.json.error.message, /expunge event within 150 ms/);
      assert.ok(elapsed >= 140 && elapsed < 1000, `408 after ${elapsed.toFixed(0)} ms`);
      assert.equal(r.server.eventLog.waiting, 0);
    } finally {
      await r.server.stop();
    }
  });

  test('since: an event that came before the request still counts; one older than the backlog is 410 EXPIRED', { timeout: 10_000 }, async () => {
    const r = await startRest({ events: { backlog: 4 } });
    try {
      const mark = (await get(r, '/v1/events/latest')).json.id as number;
      const added = await request(r.restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw: 'Subject: a\r\n\r\na\r\n' } });
      assert.equal(added.status, 201);
      await request(r.restPort, 'POST', '/v1/mailboxes/INBOX/messages/flags', { json: { uids: [added.json.uid], flags: ['\\Seen'] } });
      const reply = await get(r, `/v1/events/wait?types=flags&match=messages.uid=${added.json.uid},messages.flags=%5CSeen&since=${mark}&timeout=0`);
      assert.equal(reply.status, 200, JSON.stringify(reply.json));
      assert.equal(reply.json.type, 'flags');
      assert.deepEqual(reply.json.data.messages, [{ uid: added.json.uid, flags: ['\\Seen'] }]);
      assert.ok(reply.json.id > mark);
      for (let i = 0; i < 6; i++) r.server.control.createMailbox({ path: `Box${i}` });
      const old = await get(r, `/v1/events/wait?types=flags&since=${mark}&timeout=0`);
      assert.equal(old.status, 410);
      assert.equal(old.json.error.code, 'EXPIRED');
      const future = await get(r, `/v1/events/wait?since=${r.server.lastEventId() + 1}&timeout=0`);
      assert.equal(future.status, 400);
      assert.match(future.json.error.message, /newer than the newest event id/);
    } finally {
      await r.server.stop();
    }
  });

  test('an IMAP client going idle: session waiting event matched on nested fields', { timeout: 10_000 }, async () => {
    const r = await startRest({ plugins: ['IDLE'] });
    const imap = await RawClient.connect(r.imapPort);
    try {
      await imap.line();
      assert.match(tagged(await imap.command('LOGIN testuser testpass')), /^T1 OK/);
      assert.match(tagged(await imap.command('SELECT INBOX')), /^T2 OK/);
      const session = r.server.control.sessions()[0]!.session;
      const pending = get(r, `/v1/events/wait?types=session&match=type=waiting,command=IDLE,session.session=${session},session.user=testuser&timeout=5000`);
      await tick(30);
      imap.write('T3 IDLE\r\n');
      const reply = await pending;
      assert.equal(reply.status, 200, JSON.stringify(reply.json));
      assert.equal(reply.json.data.type, 'waiting');
      assert.equal(reply.json.data.session.session, session);
    } finally {
      imap.close();
      await r.server.stop();
    }
  });

  test('strict query: unknown parameters, bad numbers, unknown types and fields are 400 INVALID', { timeout: 10_000 }, async () => {
    const r = await startRest();
    try {
      for (const [query, pattern] of [
        ['tmeout=5', /"tmeout": unknown query parameter; did you mean "timeout"\?/],
        ['timeout=abc', /timeout: expected a non-negative integer/],
        ['timeout=-1', /timeout: expected a non-negative integer/],
        ['timeout=300001', /timeout: at most 300000 ms/],
        ['timeout=1&timeout=2', /timeout: given more than once/],
        ['since=x', /since: expected a non-negative integer/],
        ['types=nope', /Unknown event type "nope"; valid types: session, command/],
        ['types=,', /types: empty list/],
        ['types=mailbox&match=pth=INBOX', /match: unknown field "pth"; did you mean "path"\?/],
        ['types=reset&match=path=INBOX', /reset events have no fields/],
        ['match=nofield', /match: expected field=value/],
        ['match=a..b=1', /is not a field name/],
      ] as const) {
        const reply = await get(r, `/v1/events/wait?${query}`);
        assert.equal(reply.status, 400, `${query}: ${JSON.stringify(reply.json)}`);
        assert.equal(reply.json.error.code, 'INVALID');
        assert.match(reply.json.error.message, pattern, query);
      }
      assert.equal(r.server.eventLog.waiting, 0);
    } finally {
      await r.server.stop();
    }
  });

  test('waits are bounded (503 LIMIT with Retry-After), and a client that goes away frees its wait', { timeout: 10_000 }, async () => {
    const r = await startRest({ events: { maxWaiters: 2 } });
    try {
      const gone = new AbortController();
      const first = get(r, '/v1/events/wait?types=reset', gone.signal).catch((err: unknown) => err);
      const second = get(r, '/v1/events/wait?types=reset');
      while (r.server.eventLog.waiting < 2) await tick(5);
      const third = await get(r, '/v1/events/wait?types=reset');
      assert.equal(third.status, 503);
      assert.equal(third.json.error.code, 'LIMIT');
      assert.equal(third.headers.get('retry-after'), '1');
      assert.match(third.json.error.message, /events\.maxWaiters/);
      gone.abort();
      assert.equal(((await first) as Error).name, 'AbortError');
      const deadline = Date.now() + 2000;
      while (r.server.eventLog.waiting > 1) {
        assert.ok(Date.now() < deadline, 'the abandoned wait is gone');
        await tick(5);
      }
      await request(r.restPort, 'POST', '/v1/reset', { json: {} });
      const answered = await second;
      assert.equal(answered.status, 200);
      assert.equal(answered.json.type, 'reset');
      assert.deepEqual(answered.json.data, {});
    } finally {
      await r.server.stop();
    }
  });

  test('state conditions: a mailbox reaching n messages, a session going idle and back', { timeout: 10_000 }, async () => {
    const r = await startRest({ plugins: ['IDLE'] });
    const imap = await RawClient.connect(r.imapPort);
    try {
      // Already true: answered at once.
      const now = await get(r, '/v1/events/wait?mailbox=INBOX&messages=0&timeout=0');
      assert.equal(now.status, 200, JSON.stringify(now.json));
      assert.deepEqual(now.json.data, { mailbox: 'INBOX', messages: 0 });
      assert.equal(now.json.type, 'state');
      // Appends make no event of their own: the store change wakes the wait.
      const two = get(r, '/v1/events/wait?mailbox=INBOX&messages=2&timeout=5000');
      await tick(30);
      await request(r.restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw: 'Subject: 1\r\n\r\n1\r\n' } });
      await tick(30);
      const at = performance.now();
      r.server.control.addMessage('INBOX', { raw: 'Subject: 2\r\n\r\n2\r\n' });
      const reached = await two;
      assert.ok(performance.now() - at < 200);
      assert.equal(reached.status, 200, JSON.stringify(reached.json));
      assert.deepEqual(reached.json.data, { mailbox: 'INBOX', messages: 2 });
      // A mailbox that does not exist yet has no messages: it times out.
      const none = await get(r, '/v1/events/wait?mailbox=Later&messages=1&timeout=50');
      assert.equal(none.status, 408);
      assert.match(none.json.error.message, /mailbox "Later" has >= 1 messages: not so within 50 ms/);

      await imap.line();
      assert.match(tagged(await imap.command('LOGIN testuser testpass')), /^T1 OK/);
      assert.match(tagged(await imap.command('SELECT INBOX')), /^T2 OK/);
      const session = r.server.control.sessions()[0]!.session;
      const idle = get(r, `/v1/events/wait?session=${session}&idling=true&timeout=5000`);
      await tick(30);
      imap.write('T3 IDLE\r\n');
      const idling = await idle;
      assert.equal(idling.status, 200, JSON.stringify(idling.json));
      assert.deepEqual(idling.json.data, { session, idling: true });
      // In-process: the same condition, and the way back.
      assert.deepEqual(await r.server.waitUntil({ session, idling: true }, { timeout: 0 }), { session, idling: true });
      const back = r.server.waitUntil({ session, idling: false }, { timeout: 5000 });
      imap.write('DONE\r\n');
      assert.deepEqual(await back, { session, idling: false });
      await assert.rejects(r.server.waitUntil({ mailbox: 'INBOX', messages: 99 }, { timeout: 20 }), (err: unknown) => err instanceof ServiceError && err.code === 'TIMEOUT');
      await assert.rejects(r.server.waitUntil({ mailbox: 'INBOX' } as never), (err: unknown) => err instanceof ServiceError && err.code === 'INVALID');
      for (const [query, pattern] of [
        ['mailbox=INBOX', /messages: required with mailbox/],
        ['messages=1', /mailbox: required with messages/],
        ['mailbox=INBOX&messages=x', /messages: expected a non-negative integer/],
        ['mailbox=INBOX&messages=1&types=mailbox', /types: not with a state condition/],
        ['mailbox=INBOX&messages=1&session=1', /one state condition/],
        ['session=0', /session number >= 1/],
        ['session=1&idling=yes', /idling: expected true or false/],
        ['idling=true', /session: required with idling/],
      ] as const) {
        const reply = await get(r, `/v1/events/wait?${query}`);
        assert.equal(reply.status, 400, `${query}: ${JSON.stringify(reply.json)}`);
        assert.match(reply.json.error.message, pattern, query);
      }
      assert.equal(r.server.eventLog.waiting, 0);
    } finally {
      imap.close();
      await r.server.stop();
    }
  });

  test('stopping the server answers pending waits with 409 CANNOT', { timeout: 10_000 }, async () => {
    const r = await startRest();
    const pending = get(r, '/v1/events/wait?types=expunge&timeout=60000');
    while (r.server.eventLog.waiting < 1) await tick(5);
    await r.server.stop();
    const reply = await pending;
    assert.equal(reply.status, 409);
    assert.equal(reply.json.error.code, 'CANNOT');
    assert.match(reply.json.error.message, /stopping/);
  });

  test('the OpenAPI document lists the route with its query and its 408', async () => {
    const r = await startRest();
    try {
      const doc = (await get(r, '/v1/openapi.json')).json;
      const op = doc.paths['/v1/events/wait'].get;
      assert.deepEqual(op.parameters.map((p: { name: string }) => p.name), ['types', 'match', 'since', 'timeout', 'mailbox', 'messages', 'user', 'session', 'idling']);
      assert.equal(op.parameters[3].schema.maximum, 300000);
      assert.ok(op.responses['408'] && op.responses['410'] && op.responses['503']);
    } finally {
      await r.server.stop();
    }
  });
});

describe('server.waitFor (in-process)', () => {
  test('resolves with the event, by predicate function or fields; since finds earlier ones', { timeout: 10_000 }, async () => {
    const r = await startRest();
    try {
      const byFunction = r.server.waitFor('mailbox', (d) => d.type === 'create' && d.path.startsWith('Pro'));
      const byFields = r.server.waitFor(['mailbox', 'expunge'], { type: 'create', path: 'Project' }, { timeout: 2000 });
      r.server.control.createMailbox({ path: 'Other' });
      r.server.control.createMailbox({ path: 'Project' });
      const a = await byFunction;
      const b = await byFields;
      assert.equal(a.type, 'mailbox');
      assert.equal(a.data.path, 'Project');
      assert.equal(a.id, b.id);
      const earlier = await r.server.waitFor('mailbox', { path: 'Other' }, { since: 0, timeout: 0 });
      assert.ok(earlier.id < a.id);
    } finally {
      await r.server.stop();
    }
  });

  test('a predicate that throws rejects that wait only, with its error', { timeout: 10_000 }, async () => {
    const r = await startRest();
    try {
      const boom = r.server.waitFor('mailbox', () => {
        throw new Error('boom');
      });
      const fine = r.server.waitFor('mailbox', { path: 'X' }, { timeout: 2000 });
      r.server.control.createMailbox({ path: 'X' });
      await assert.rejects(boom, /boom/);
      assert.equal((await fine).data.path, 'X');
      // The same from the backlog (since).
      await assert.rejects(r.server.waitFor('mailbox', () => { throw new Error('again'); }, { since: 0 }), /again/);
      assert.equal(r.server.eventLog.waiting, 0);
    } finally {
      await r.server.stop();
    }
  });

  test('rejects with ServiceError: TIMEOUT, INVALID, CANNOT when the server stops', { timeout: 10_000 }, async () => {
    const r = await startRest();
    await assert.rejects(r.server.waitFor('expunge', undefined, { timeout: 30 }), (err: unknown) => err instanceof ServiceError && err.code === 'TIMEOUT');
    await assert.rejects(r.server.waitFor('nosuch' as 'mailbox'), (err: unknown) => err instanceof ServiceError && err.code === 'INVALID' && /nosuch/.test(err.message));
    await assert.rejects(r.server.waitFor('mailbox', { pth: 'x' }), (err: unknown) => err instanceof ServiceError && /did you mean "path"/.test(err.message));
    const pending = r.server.waitFor('expunge', undefined, { timeout: 60_000 }).catch((err: unknown) => err);
    await r.server.stop();
    const err = await pending;
    assert.ok(err instanceof ServiceError && err.code === 'CANNOT', String(err));
    assert.equal(r.server.eventLog.waiting, 0);
  });
});

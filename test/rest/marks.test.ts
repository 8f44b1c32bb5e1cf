/**
 * `mark` events (docs/events.md#marks): what the test helpers post at each
 * test's start and end. Over REST with a real HTTP client, read back from a
 * real SSE stream, and in-process; the checks are those the docs name.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventSource } from 'eventsource';
import { request, startRest } from './helpers.js';

test('POST /v1/events/mark: 201 with the event id; the stream and waits carry it; in-process marks the same', async () => {
  const rest = await startRest();
  const stream = new EventSource(`${rest.base}/v1/events?types=mark`);
  try {
    const opened = new Promise<void>((resolve) => (stream.onopen = () => resolve()));
    const seen: unknown[] = [];
    const two = new Promise<void>((resolve) =>
      stream.addEventListener('mark', (e) => {
        seen.push(JSON.parse((e as { data: string }).data));
        if (seen.length === 2) resolve();
      }),
    );
    await opened;
    const posted = await request(rest.restPort, 'POST', '/v1/events/mark', { json: { text: 'sync test', phase: 'end', outcome: 'fail' } });
    assert.equal(posted.status, 201);
    assert.equal(posted.json.id, rest.server.lastEventId());
    const inProcess = rest.server.control.mark({ text: 'a note' });
    assert.equal(inProcess.id, posted.json.id + 1);
    await two;
    assert.deepEqual(seen, [
      { text: 'sync test', phase: 'end', outcome: 'fail' },
      { text: 'a note', phase: null, outcome: null },
    ]);
    const waited = await request(rest.restPort, 'GET', `/v1/events/wait?types=mark&match=outcome=fail&since=0&timeout=1000`);
    assert.equal(waited.status, 200);
    assert.equal(waited.json.data.text, 'sync test');
  } finally {
    stream.close();
    await rest.server.stop();
  }
});

test('POST /v1/events/mark refuses what the docs say it refuses, with the error object', async () => {
  const rest = await startRest();
  try {
    for (const json of [{}, { text: '' }, { text: 'x'.repeat(1025) }, { text: 't', phase: 'middle' }, { text: 't', outcome: 'pass' }, { text: 't', phase: 'start', outcome: 'fail' }, { text: 't', extra: 1 }, { text: 5 }]) {
      const res = await request(rest.restPort, 'POST', '/v1/events/mark', { json });
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(res.json.error.code, 'INVALID', JSON.stringify(json));
      assert.equal(typeof res.json.error.message, 'string');
    }
    assert.equal(rest.server.lastEventId(), 0, 'a refused mark emits nothing');
    assert.throws(() => rest.server.control.mark({ text: 't', phase: 'end', outcome: 'maybe' as 'pass' }), /outcome/);
  } finally {
    await rest.server.stop();
  }
});

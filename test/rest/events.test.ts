import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openEvents, request, startRest } from './helpers.js';

describe('REST event stream and OpenAPI', () => {
  test('SSE: connected, event from a REST call, ping, ends when the server stops', async () => {
    const r = await startRest({ rest: { pingInterval: 50 } });
    const stream = await openEvents(r.restPort, '/v1/events?types=mailbox,flags');
    assert.equal(stream.status, 200);
    assert.match(stream.res.headers['content-type']!, /^text\/event-stream/);
    for (const h of Object.keys(stream.res.headers)) assert.ok(!h.startsWith('access-control-'), h);
    await stream.waitFor(/^: connected\n/);
    const res = await request(r.restPort, 'POST', '/v1/mailboxes', { json: { path: 'Events' } });
    assert.equal(res.status, 201);
    const event = await stream.waitFor(/event: mailbox\ndata: .*\n\n/);
    const data = JSON.parse(event.split('\n')[1]!.slice('data: '.length));
    assert.deepEqual(data, { type: 'create', path: 'Events', oldPath: null, origin: null });
    await stream.waitFor(/: ping\n/);
    assert.ok(!/event: reset/.test(stream.text()));
    await r.server.stop();
    await new Promise<void>((resolve) => (stream.res.readableEnded ? resolve() : stream.res.once('end', resolve)));
  });

  test('SSE: unknown type is 400 INVALID naming it and the valid ones', async () => {
    const r = await startRest();
    try {
      const res = await request(r.restPort, 'GET', '/v1/events?types=mailbox,bogus');
      assert.equal(res.status, 400);
      assert.equal(res.json.error.code, 'INVALID');
      assert.match(res.json.error.message, /bogus/);
      assert.match(res.json.error.message, /session, command, mailbox, expunge, flags, acl, script, reset/);
      for (const empty of ['types=', 'types=,', 'types=&types=']) {
        const e = await request(r.restPort, 'GET', `/v1/events?${empty}`);
        assert.equal(e.status, 400, empty);
        assert.match(e.json.error.message, /types: empty list/);
      }
    } finally {
      await r.server.stop();
    }
  });

  test('SSE: repeated types parameters add up', async () => {
    const r = await startRest();
    try {
      const stream = await openEvents(r.restPort, '/v1/events?types=mailbox&types=reset');
      await stream.waitFor(/: connected/);
      r.server.control.createMailbox({ path: 'Repeated' });
      r.server.control.reset();
      await stream.waitFor(/event: reset\n/);
      assert.match(stream.text(), /event: mailbox\ndata: \{"type":"create","path":"Repeated"/);
      stream.close();
    } finally {
      await r.server.stop();
    }
  });

  test('POST /v1/shutdown answers 202 and stops the server', async () => {
    const r = await startRest();
    const stream = await openEvents(r.restPort);
    await stream.waitFor(/: connected/);
    const res = await request(r.restPort, 'POST', '/v1/shutdown', { json: { graceful: false } });
    assert.equal(res.status, 202);
    assert.deepEqual(res.json, { shutdown: true });
    await new Promise<void>((resolve) => (stream.res.readableEnded ? resolve() : stream.res.once('end', resolve)));
    for (let i = 0; i < 50 && r.server.address() !== null; i++) await new Promise((x) => setTimeout(x, 20));
    assert.equal(r.server.address(), null);
    await r.server.stop();
  });

  test('GET /v1/openapi.json describes the routes from the table', async () => {
    const r = await startRest();
    try {
      const res = await request(r.restPort, 'GET', '/v1/openapi.json');
      assert.equal(res.status, 200);
      const doc = res.json;
      assert.equal(doc.openapi, '3.1.0');
      assert.deepEqual(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer' });
      assert.ok(doc.components.schemas.Error);
      const paths = Object.keys(doc.paths);
      for (const p of ['/v1/snapshot', '/v1/mailboxes/{path}/messages/{uid}', '/v1/script/rules/{id}', '/v1/events', '/v1/openapi.json']) assert.ok(paths.includes(p), p);
      assert.ok(!paths.includes('/v1/quota'));
      const add = doc.paths['/v1/mailboxes/{path}/messages'].post;
      assert.ok(add.responses['201']);
      assert.ok(add.responses['415']);
      assert.deepEqual(add.requestBody.content['application/json'].schema.required, ['raw']);
      assert.equal(add.parameters[0].in, 'path');
      const ids = new Set<string>();
      for (const ops of Object.values(doc.paths) as Record<string, { operationId: string }>[]) {
        for (const op of Object.values(ops)) {
          assert.ok(!ids.has(op.operationId), op.operationId);
          ids.add(op.operationId);
        }
      }
    } finally {
      await r.server.stop();
    }
  });
});

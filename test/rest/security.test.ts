import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createServer } from '../../src/index.js';
import { request, startRest } from './helpers.js';

describe('REST security', () => {
  test('without token: loopback Host names pass, others get 401 naming loopback', async () => {
    const r = await startRest();
    try {
      for (const host of ['localhost', `localhost:${r.restPort}`, '127.0.0.1', `127.5.6.7:${r.restPort}`, '[::1]', `[::1]:${r.restPort}`]) {
        const res = await request(r.restPort, 'GET', '/v1/users', { headers: { Host: host } });
        assert.equal(res.status, 200, host);
      }
      for (const host of ['evil.example', `evil.example:${r.restPort}`, '10.0.0.1', 'localhost.evil.example']) {
        const res = await request(r.restPort, 'GET', '/v1/users', { headers: { Host: host } });
        assert.equal(res.status, 401, host);
        assert.equal(res.json.error.code, 'UNAUTHORIZED');
        assert.match(res.json.error.message, /loopback host name/);
        assert.equal(res.headers['cache-control'], 'no-store');
      }
    } finally {
      await r.server.stop();
    }
  });

  test('a target routed before is still checked for Host on every request', async () => {
    const r = await startRest();
    try {
      // The router remembers what a target routes to; the Host rules must not be remembered with it.
      for (let i = 0; i < 3; i++) assert.equal((await request(r.restPort, 'GET', '/v1/mailboxes/INBOX')).status, 200);
      const bad = await request(r.restPort, 'GET', '/v1/mailboxes/INBOX', { headers: { Host: 'bad host' } });
      assert.equal(bad.status, 400);
      assert.equal(bad.json.error.code, 'INVALID');
      const evil = await request(r.restPort, 'GET', '/v1/mailboxes/INBOX', { headers: { Host: 'evil.example' } });
      assert.equal(evil.status, 401);
      assert.equal((await request(r.restPort, 'GET', '/v1/mailboxes/INBOX')).status, 200);
    } finally {
      await r.server.stop();
    }
  });

  test('with token: Bearer required (also for events), any Host accepted', async () => {
    const r = await startRest({ rest: { token: 's3cret' } });
    try {
      const none = await request(r.restPort, 'GET', '/v1/users');
      assert.equal(none.status, 401);
      assert.equal(none.headers['www-authenticate'], 'Bearer');
      assert.equal(none.json.error.code, 'UNAUTHORIZED');
      const wrong = await request(r.restPort, 'GET', '/v1/users', { headers: { Authorization: 'Bearer s3cre' } });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.headers['www-authenticate'], 'Bearer');
      const basic = await request(r.restPort, 'GET', '/v1/users', { headers: { Authorization: 'Basic s3cret' } });
      assert.equal(basic.status, 401);
      const events = await request(r.restPort, 'GET', '/v1/events');
      assert.equal(events.status, 401);
      const nf = await request(r.restPort, 'GET', '/v1/none');
      assert.equal(nf.status, 401);
      const ok = await request(r.restPort, 'GET', '/v1/users', { headers: { Authorization: 'Bearer s3cret', Host: 'mail.example:8080' } });
      assert.equal(ok.status, 200);
    } finally {
      await r.server.stop();
    }
  });

  test('non-loopback host without token: start() rejects', async () => {
    const server = createServer({ port: 0, rest: { port: 0, host: '0.0.0.0' } });
    await assert.rejects(server.start(), /controls the whole server.*needs a token/);
    await server.stop();
    const empty = createServer({ port: 0, rest: { port: 0, host: '0.0.0.0', token: '' } });
    await assert.rejects(empty.start(), /controls the whole server.*needs a token/);
    // The IMAP listener opened first is closed again: nothing is left listening.
    assert.equal(empty.address(), null);
    const emptyLoopback = createServer({ port: 0, rest: { port: 0, token: '' } });
    await assert.rejects(emptyLoopback.start(), /needs a non-empty token/);
  });

  test('non-loopback host with a token starts', async () => {
    const server = createServer({ port: 0, rest: { port: 0, host: '0.0.0.0', token: 'abc' } });
    const { rest } = await server.start();
    assert.ok(rest && rest.port > 0);
    const res = await request(rest.port, 'GET', '/v1/sessions', { headers: { Authorization: 'Bearer abc' } });
    assert.equal(res.status, 200);
    await server.stop();
  });

  test('loopback default host; no REST without a port', async () => {
    const r = await startRest();
    assert.equal(r.server.restAddress()!.host, '127.0.0.1');
    await r.server.stop();
    const plain = createServer({ port: 0 });
    const { rest } = await plain.start();
    assert.equal(rest, null);
    await plain.stop();
  });
});

import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { mail, rawSession } from '../helpers/server.js';
import { request, startRest, type Rest } from './helpers.js';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

describe('REST endpoints', () => {
  let r: Rest;
  const call = (method: string, path: string, json?: unknown) =>
    request(r.restPort, method, path, json === undefined ? (method === 'POST' ? { headers: { 'Content-Type': 'application/json' } } : {}) : { json });
  before(async () => {
    r = await startRest();
  });
  after(async () => {
    await r.server.stop();
  });

  test('responses are JSON with Cache-Control: no-store and no CORS headers', async () => {
    const res = await call('GET', '/v1/mailboxes');
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type']!, /^application\/json/);
    assert.equal(res.headers['cache-control'], 'no-store');
    for (const h of Object.keys(res.headers)) assert.ok(!h.startsWith('access-control-'), h);
    const pre = await request(r.restPort, 'OPTIONS', '/v1/mailboxes', { headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' } });
    assert.equal(pre.status, 405);
    assert.equal(pre.json.error.code, 'METHOD');
    for (const h of Object.keys(pre.headers)) assert.ok(!h.startsWith('access-control-'), h);
  });

  test('mailboxes: create, get, list, rename, subscription, uidvalidity, delete', async () => {
    const created = await call('POST', '/v1/mailboxes', { path: 'Work/Sub', subscribed: true });
    assert.equal(created.status, 201);
    assert.equal(created.json.path, 'Work/Sub');
    assert.equal(created.json.subscribed, true);
    assert.equal((await call('POST', '/v1/mailboxes', { path: 'Work/Sub' })).json.error.code, 'ALREADYEXISTS');
    assert.equal((await call('POST', '/v1/mailboxes', { path: 'Work/Sub' })).status, 409);
    const got = await call('GET', '/v1/mailboxes/Work%2FSub');
    assert.equal(got.status, 200);
    assert.equal(got.json.path, 'Work/Sub');
    assert.deepEqual(got.json.specialUse, []);
    const missing = await call('GET', '/v1/mailboxes/Nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.code, 'NONEXISTENT');
    const bad = await call('GET', '/v1/mailboxes/%E0%A4%A');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'INVALID');
    const list = await call('GET', '/v1/mailboxes');
    assert.deepEqual(list.json.map((m: { path: string }) => m.path), ['INBOX', 'Work', 'Work/Sub']);
    const renamed = await call('POST', '/v1/mailboxes/Work%2FSub/rename', { newPath: 'Work/Other' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.json.path, 'Work/Other');
    assert.deepEqual((await call('PUT', '/v1/mailboxes/Work/subscription')).json, { changed: true });
    assert.deepEqual((await call('PUT', '/v1/mailboxes/Work/subscription')).json, { changed: false });
    assert.deepEqual((await call('DELETE', '/v1/mailboxes/Work/subscription')).json, { changed: true });
    assert.deepEqual((await call('DELETE', '/v1/mailboxes/NotAMailbox/subscription')).json, { changed: false });
    const uv = await call('POST', '/v1/mailboxes/Work%2FOther/uidvalidity', { uidvalidity: 777 });
    assert.equal(uv.status, 200);
    assert.equal(uv.json.uidvalidity, 777);
    assert.deepEqual(uv.json.uids, []);
    assert.equal((await call('POST', '/v1/mailboxes/Work%2FOther/uidvalidity', { uidvalidity: 'x' })).status, 400);
    assert.deepEqual((await call('DELETE', '/v1/mailboxes/Work%2FOther')).json, { deleted: true });
    const inbox = await call('DELETE', '/v1/mailboxes/INBOX');
    assert.equal(inbox.status, 409);
    assert.equal(inbox.json.error.code, 'CANNOT');
    assert.equal((await call('POST', '/v1/mailboxes', {})).status, 400);
  });

  test('messages: add (utf-8, base64), list, get, flags, copy, move, expunge, delete', async () => {
    await call('POST', '/v1/mailboxes', { path: 'Archive' });
    const added = await call('POST', '/v1/mailboxes/INBOX/messages', { raw: mail('one'), flags: ['\\Seen'], internaldate: '01-Nov-2026 10:00:00 +0000' });
    assert.equal(added.status, 201);
    assert.deepEqual(Object.keys(added.json).sort(), ['uid', 'uidvalidity']);
    const second = await call('POST', '/v1/mailboxes/INBOX/messages', { raw: b64(mail('two')), encoding: 'base64' });
    assert.equal(second.status, 201);
    assert.equal((await call('POST', '/v1/mailboxes/INBOX/messages', { raw: 'x', encoding: 'latin1' })).status, 400);
    assert.equal((await call('POST', '/v1/mailboxes/INBOX/messages', {})).status, 400);
    assert.equal((await call('POST', '/v1/mailboxes/Nope/messages', { raw: 'x' })).status, 404);
    const [u1, u2] = [added.json.uid as number, second.json.uid as number];
    const listed = await call('GET', '/v1/mailboxes/INBOX/messages');
    assert.deepEqual(listed.json.map((m: { uid: number }) => m.uid), [u1, u2]);
    assert.equal(listed.json[0].raw, undefined);
    assert.equal(listed.json[0].internaldate, '01-Nov-2026 10:00:00 +0000');
    const withRaw = await call('GET', `/v1/mailboxes/INBOX/messages?uids=${u2}&raw=true`);
    assert.equal(withRaw.json.length, 1);
    assert.equal(withRaw.json[0].encoding, 'base64');
    assert.equal(Buffer.from(withRaw.json[0].raw, 'base64').toString(), mail('two'));
    assert.equal((await call('GET', '/v1/mailboxes/INBOX/messages?uids=abc')).status, 400);
    const one = await call('GET', `/v1/mailboxes/INBOX/messages/${u1}`);
    assert.equal(Buffer.from(one.json.raw, 'base64').toString(), mail('one'));
    assert.equal((await call('GET', '/v1/mailboxes/INBOX/messages/999')).json.error.code, 'NONEXISTENT');
    assert.equal((await call('GET', '/v1/mailboxes/INBOX/messages/x')).status, 400);
    const flags = await call('POST', '/v1/mailboxes/INBOX/messages/flags', { uids: [u1, u2], flags: ['\\Flagged'], mode: 'add' });
    assert.equal(flags.status, 200);
    assert.deepEqual(flags.json, [
      { uid: u1, flags: ['\\Seen', '\\Flagged'] },
      { uid: u2, flags: ['\\Flagged'] },
    ]);
    assert.equal((await call('POST', '/v1/mailboxes/INBOX/messages/flags', { uids: [u1], flags: [], mode: 'toggle' })).status, 400);
    const copied = await call('POST', '/v1/mailboxes/INBOX/messages/copy', { uids: [u1], target: 'Archive' });
    assert.equal(copied.status, 200);
    assert.equal(copied.json.uids[0].uid, u1);
    assert.equal(typeof copied.json.uids[0].targetUid, 'number');
    const moved = await call('POST', '/v1/mailboxes/INBOX/messages/move', { uids: [u2], target: 'Archive' });
    assert.equal(moved.status, 200);
    assert.equal((await call('POST', '/v1/mailboxes/INBOX/messages/move', { uids: [u1], target: 'Nope' })).status, 404);
    const expunged = await call('POST', '/v1/mailboxes/Archive/messages/expunge', { uids: [copied.json.uids[0].targetUid] });
    assert.deepEqual(expunged.json, { uids: [copied.json.uids[0].targetUid] });
    const del = await call('DELETE', `/v1/mailboxes/INBOX/messages/${u1}`);
    assert.deepEqual(del.json, { uids: [u1] });
    assert.equal((await call('DELETE', `/v1/mailboxes/INBOX/messages/${u1}`)).status, 404);
  });

  test('users: list, add, update, delete', async () => {
    const list = await call('GET', '/v1/users');
    assert.deepEqual(list.json, [{ name: 'testuser', xoauth2: true }]);
    const added = await call('POST', '/v1/users', { name: 'bob', password: 'pw', xoauth2: { accessToken: 't', sessionTimeout: 1000 } });
    assert.equal(added.status, 201);
    assert.deepEqual(added.json, { name: 'bob' });
    assert.equal((await call('POST', '/v1/users', { name: 'bob' })).status, 409);
    assert.equal((await call('POST', '/v1/users', { name: 5 })).status, 400);
    assert.deepEqual((await call('PUT', '/v1/users/bob', { xoauth2: null })).json, { name: 'bob' });
    assert.deepEqual((await call('GET', '/v1/users')).json.find((u: { name: string }) => u.name === 'bob'), { name: 'bob', xoauth2: false });
    assert.equal((await call('PUT', '/v1/users/nobody', { password: 'x' })).json.error.code, 'NONEXISTENT');
    assert.deepEqual((await call('DELETE', '/v1/users/bob')).json, { deleted: true });
    assert.equal((await call('DELETE', '/v1/users/bob')).status, 404);
  });

  test('sessions: list, inject, disconnect; unknown session 404', async () => {
    const client = await rawSession(r.imapPort);
    const list = await call('GET', '/v1/sessions');
    assert.equal(list.json.length, 1);
    const id = list.json[0].session as number;
    assert.equal(list.json[0].user, 'testuser');
    assert.deepEqual((await call('POST', `/v1/sessions/${id}/inject`, { data: b64('* OK injected\r\n'), encoding: 'base64' })).json, { injected: true });
    assert.equal(await client.line(), '* OK injected');
    assert.equal((await call('POST', `/v1/sessions/${id}/inject`, {})).status, 400);
    assert.deepEqual((await call('DELETE', `/v1/sessions/${id}`, { text: 'Bye now' })).json, { disconnected: true });
    assert.equal(await client.line(), '* BYE Bye now');
    const gone = await call('DELETE', '/v1/sessions/9999');
    assert.equal(gone.status, 404);
    assert.equal(gone.json.error.code, 'NONEXISTENT');
  });

  test('script rules: add one and many, list, delete one, clear; invalid rule 400', async () => {
    const one = await call('POST', '/v1/script/rules', { on: 'command', command: 'NOOP', send: '$TAG NO scripted\r\n', match: 'NOOP' });
    assert.equal(one.status, 201);
    assert.equal(one.json.rule.match, 'NOOP');
    assert.deepEqual({ matched: one.json.matched, hits: one.json.hits }, { matched: 0, hits: 0 });
    const many = await call('POST', '/v1/script/rules', [{ on: 'command', command: 'CHECK' }, { on: 'greeting', send: '* OK hi\r\n' }]);
    assert.equal(many.status, 201);
    assert.equal(many.json.length, 2);
    const before = (await call('GET', '/v1/script/rules')).json.length;
    const invalid = await call('POST', '/v1/script/rules', [{ on: 'command' }, { on: 'nonsense' }]);
    assert.equal(invalid.status, 400);
    assert.equal(invalid.json.error.code, 'INVALID');
    assert.equal((await call('GET', '/v1/script/rules')).json.length, before);
    const client = await rawSession(r.imapPort);
    const lines = await client.command('NOOP');
    assert.match(lines[lines.length - 1]!, /NO scripted/);
    client.socket.destroy();
    const listed = await call('GET', '/v1/script/rules');
    assert.equal(listed.json.find((e: { id: number }) => e.id === one.json.id).hits, 1);
    assert.deepEqual((await call('DELETE', `/v1/script/rules/${one.json.id}`)).json, { deleted: true });
    assert.equal((await call('DELETE', `/v1/script/rules/${one.json.id}`)).json.error.code, 'NONEXISTENT');
    assert.deepEqual((await call('DELETE', '/v1/script/rules')).json, { deleted: true });
    assert.deepEqual((await call('GET', '/v1/script/rules')).json, []);
  });

  test('snapshot and reset', async () => {
    await call('POST', '/v1/mailboxes', { path: 'Temp' });
    const snap = await call('GET', '/v1/snapshot');
    assert.equal(snap.status, 200);
    assert.ok('INBOX' in snap.json);
    assert.ok('Temp' in snap.json[''].folders);
    const reset = await call('POST', '/v1/reset');
    assert.deepEqual(reset.json, { reset: true });
    assert.deepEqual((await call('GET', '/v1/mailboxes')).json.map((m: { path: string }) => m.path), ['INBOX']);
  });

  test('routing: 404 NOTFOUND vs NONEXISTENT, 405 with Allow, plugin routes absent', async () => {
    const nf = await call('GET', '/v1/nothing');
    assert.equal(nf.status, 404);
    assert.equal(nf.json.error.code, 'NOTFOUND');
    assert.equal((await call('GET', '/v2/mailboxes')).json.error.code, 'NOTFOUND');
    for (const [m, p] of [['GET', '/v1/quota'], ['GET', '/v1/metadata'], ['GET', '/v1/mailboxes/INBOX/acl'], ['PUT', '/v1/quota']] as const) {
      const res = await call(m, p, m === 'PUT' ? {} : undefined);
      assert.equal(res.status, 404, p);
      assert.equal(res.json.error.code, 'NOTFOUND', p);
    }
    const method = await call('PATCH', '/v1/mailboxes');
    assert.equal(method.status, 405);
    assert.equal(method.json.error.code, 'METHOD');
    assert.equal(method.headers.allow, 'GET, POST');
    const m2 = await call('PUT', '/v1/mailboxes/INBOX', {});
    assert.equal(m2.headers.allow, 'GET, DELETE');
  });

  test('bodies: 415 without JSON content type, 400 for bad JSON and non-objects, no body = {}', async () => {
    const noType = await request(r.restPort, 'POST', '/v1/reset');
    assert.equal(noType.status, 415);
    assert.equal(noType.json.error.code, 'UNSUPPORTED');
    // The spec's rule in words: a POST without a body needs the header too (issue 30).
    assert.equal(noType.json.error.message, "Every POST must carry Content-Type: application/json, even one without a body, got no Content-Type (curl: -H 'Content-Type: application/json')");
    const text = await request(r.restPort, 'POST', '/v1/mailboxes', { body: '{"path":"X"}', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(text.status, 415);
    assert.equal(text.json.error.message, `Request bodies must be sent as Content-Type: application/json, got Content-Type "text/plain" (curl: -H 'Content-Type: application/json')`);
    const putBody = await request(r.restPort, 'PUT', '/v1/mailboxes/INBOX/subscription', { body: '{}', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(putBody.status, 415);
    const putNoBody = await request(r.restPort, 'PUT', '/v1/mailboxes/INBOX/subscription');
    assert.equal(putNoBody.status, 200);
    const delNoBody = await request(r.restPort, 'DELETE', '/v1/script/rules');
    assert.equal(delNoBody.status, 200);
    const bad = await request(r.restPort, 'POST', '/v1/mailboxes', { body: '{oops', headers: { 'Content-Type': 'application/json' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'INVALID');
    const arr = await request(r.restPort, 'POST', '/v1/mailboxes', { json: [{ path: 'X' }] });
    assert.equal(arr.status, 400);
    const str = await request(r.restPort, 'POST', '/v1/mailboxes', { json: 'X' });
    assert.equal(str.status, 400);
    const charset = await request(r.restPort, 'POST', '/v1/reset', { headers: { 'Content-Type': 'application/json; charset=utf-8' } });
    assert.equal(charset.status, 200);
  });

  test('a chunked PUT/DELETE that turns out empty has no body; one with text is 415', async () => {
    const send = (method: string, path: string, chunks: string[], type?: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const headers: Record<string, string> = { 'Transfer-Encoding': 'chunked', ...(type ? { 'Content-Type': type } : {}) };
        const req = http.request({ host: '127.0.0.1', port: r.restPort, method, path, headers, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        for (const c of chunks) req.write(c);
        req.end();
      });
    assert.equal(await send('PUT', '/v1/mailboxes/INBOX/subscription', []), 200);
    assert.equal(await send('DELETE', '/v1/script/rules', []), 200);
    assert.equal(await send('PUT', '/v1/mailboxes/INBOX/subscription', ['{}'], 'text/plain'), 415);
    assert.equal(await send('PUT', '/v1/mailboxes/INBOX/subscription', ['{', '}'], 'application/json'), 200);
  });

  test('path segments: dot names are mailbox names, empty segments match no parameter', async () => {
    for (const name of ['..', '.', 'a/..']) {
      assert.equal((await call('POST', '/v1/mailboxes', { path: name })).status, 201, name);
      const encoded = encodeURIComponent(name).replace(/\./g, '%2E');
      const got = await call('GET', `/v1/mailboxes/${encoded}`);
      assert.equal(got.status, 200, name);
      assert.equal(got.json.path, name);
    }
    assert.equal((await call('DELETE', '/v1/mailboxes/a%2F%2E%2E')).status, 200);
    assert.equal((await call('DELETE', '/v1/mailboxes/%2E%2E')).status, 200);
    assert.equal((await call('DELETE', '/v1/mailboxes/%2e')).status, 200);
    assert.equal((await call('GET', '/v1/mailboxes/%2E%2E')).json.error.code, 'NONEXISTENT');
    const trailing = await call('GET', '/v1/users/');
    assert.equal(trailing.status, 404);
    assert.equal(trailing.json.error.code, 'NOTFOUND');
    // A query string and a fragment never reach the path.
    assert.equal((await call('GET', '/v1/mailboxes/INBOX?x=1#frag')).json.path, 'INBOX');
  });

  test('413 TOOBIG for a body over 64 MiB (declared length)', async () => {
    const res = await request(r.restPort, 'POST', '/v1/mailboxes/INBOX/messages', {
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(64 * 1024 * 1024 + 1) },
      body: '{}',
    }).catch((err: unknown) => err);
    // The server answers before reading the body and closes the connection.
    if (res instanceof Error) assert.fail(`request failed: ${res.message}`);
    assert.equal((res as { status: number }).status, 413);
    assert.equal((res as { json: { error: { code: string } } }).json.error.code, 'TOOBIG');
  });

  test('413 TOOBIG for a chunked body that grows past 64 MiB', async () => {
    // A raw socket: the server may close while the client is still writing, so write errors are ignored.
    const status = await new Promise<number>((resolve, reject) => {
      const socket = net.connect(r.restPort, '127.0.0.1');
      let got = '';
      socket.on('data', (d: Buffer) => {
        got += d.toString('latin1');
        const m = /^HTTP\/1\.1 (\d+)/.exec(got);
        if (m) {
          resolve(Number(m[1]));
          socket.destroy();
        }
      });
      socket.on('error', () => undefined);
      socket.on('close', () => reject(new Error(`closed without a response: ${got}`)));
      socket.write(`POST /v1/mailboxes/INBOX/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const chunk = Buffer.concat([Buffer.from('100000\r\n'), Buffer.alloc(0x100000, 0x61), Buffer.from('\r\n')]);
      let sent = 0;
      const pump = (): void => {
        while (sent < 70 && !socket.destroyed) {
          sent++;
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    assert.equal(status, 413);
  });

  test('a REST addMessage reaches a selected IMAP session as EXISTS', async () => {
    const client = await rawSession(r.imapPort);
    await client.command('SELECT INBOX');
    const added = await call('POST', '/v1/mailboxes/INBOX/messages', { raw: mail('live') });
    assert.equal(added.status, 201);
    const lines = await client.command('NOOP');
    assert.ok(lines.some((l) => /^\* \d+ EXISTS$/.test(l)), lines.join('\n'));
    client.socket.destroy();
  });
});

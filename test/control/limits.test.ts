/**
 * Values the control API and REST must refuse because no IMAP client could
 * receive them: flags that are not atoms, UIDs past 32 bits (found by the
 * REST fuzzer: both made IMAP output or a snapshot unusable).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createServer, ServiceError } from '../../src/index.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return err instanceof ServiceError ? err.code : 'other';
  }
  return undefined;
};

test('flags that are not RFC 3501 atoms are INVALID over the control API and REST; a good keyword still works', async () => {
  const { server, port } = await startServer({ rest: { port: 0 }, storage: { INBOX: { messages: [mail('one')] } } });
  try {
    for (const bad of ['a b', 'x)', '', '\ud800', 'caf\u00e9', '\\Recent', 'a\u0000b']) {
      assert.equal(code(() => server.control.setFlags('INBOX', { uids: [1], flags: [bad] })), 'INVALID', JSON.stringify(bad));
      assert.equal(code(() => server.control.addMessage('INBOX', { raw: mail('two'), flags: [bad] })), 'INVALID', JSON.stringify(bad));
    }
    const rest = server.restAddress()!;
    const res = await fetch(`http://127.0.0.1:${rest.port}/v1/mailboxes/INBOX/messages/flags`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uids: [1], flags: ['a b'] }),
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'INVALID');
    server.control.setFlags('INBOX', { uids: [1], flags: ['$Label1', '\\Seen'] });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('FETCH 1 FLAGS'), ['* 1 FETCH (FLAGS ($Label1 \\Seen))', 'T3 OK Fetch completed']);
    c.close();
    // The snapshot still loads.
    createServer({ storage: server.control.snapshot() });
  } finally {
    await server.stop();
  }
});

test('UIDs stay 32-bit: an append past the last UID is LIMIT, an offset past it INVALID, and the snapshot loads', () => {
  const server = createServer({ storage: { INBOX: { messages: [mail('one')] } } });
  assert.equal(code(() => server.control.resetUidValidity('INBOX', { uids: 'offset', offset: 0xffffffff })), 'INVALID');
  server.control.resetUidValidity('INBOX', { uids: 'offset', offset: 0xffffffff - 3 });
  server.control.addMessage('INBOX', { raw: mail('two') });
  assert.equal(code(() => server.control.addMessage('INBOX', { raw: mail('three') })), 'LIMIT');
  const uids = server.control.listMessages('INBOX').map((m) => m.uid);
  assert.deepEqual(uids, [0xffffffff - 2, 0xffffffff - 1]);
  createServer({ storage: server.control.snapshot() });
});

test('in-process typos are refused like REST ones: an unknown key names itself and the likely key', () => {
  const server = createServer({ storage: { INBOX: { messages: [mail('one')] } } });
  assert.throws(() => server.control.addUser({ name: 'bob', pasword: 'x' } as never), /pasword: unknown field; did you mean "password"\?/);
  assert.throws(() => server.control.setFlags('INBOX', { uids: [1], flags: ['\\Seen'], mod: 'add' } as never), /mod: unknown field; did you mean "mode"\?/);
  assert.throws(() => server.control.createMailbox('X', { subscribd: false } as never), /subscribd: unknown field; did you mean "subscribed"\?/);
  // Nothing happened: no user, flags untouched, no mailbox.
  assert.deepEqual(server.control.listUsers().map((u) => u.name), ['testuser']);
  assert.deepEqual(server.control.listMessages('INBOX')[0]!.flags, []);
  assert.equal(code(() => server.control.getMailbox('X')), 'NONEXISTENT');
});

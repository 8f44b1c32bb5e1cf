/**
 * Issue 31, item 4: the store's budget (`maxMessages`, `maxStoreBytes`).
 * Every way in (APPEND, COPY, MOVE, SMTP, control adds in-process and over
 * REST) fails the way a full server fails (RFC 5530 OVERQUOTA: IMAP
 * `NO [OVERQUOTA]`, SMTP 452, REST 409), nothing of a refused batch is
 * stored, GET /v1/health shows the use, and the running totals stay exact
 * through expunge, delete, rename, reset and per-user trees (checked against
 * a recount of every mailbox).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createServer, ServiceError, type Server } from '../../src/index.js';
import { rawSession, mail } from '../helpers/server.js';
import { tagged } from '../helpers/raw-client.js';
import { request } from '../rest/helpers.js';
import { RawSmtp, transaction } from '../smtp/smtp-client.js';

/** What the store holds, counted message by message (the slow way the budget must agree with). */
function recount(server: Server): { messages: number; bytes: number } {
  let messages = 0;
  let bytes = 0;
  const seen = new Set<unknown>();
  for (const m of server.everyMailbox()) {
    if (seen.has(m)) continue;
    seen.add(m);
    for (const message of m.messages) {
      messages++;
      bytes += message.raw.length;
    }
  }
  return { messages, bytes };
}

function assertExact(server: Server, what: string): void {
  // Counted first: the walk makes every user's tree, which counts its seed.
  const counted = recount(server);
  const b = server.store.budget!;
  assert.deepEqual({ messages: b.messages, bytes: b.bytes }, counted, what);
}

const overquota = (err: unknown): boolean => err instanceof ServiceError && err.code === 'OVERQUOTA' && /store is full/.test(err.message);

describe('maxMessages and maxStoreBytes', () => {
  test('control adds, IMAP APPEND, COPY and MOVE: OVERQUOTA at the limit, nothing of a refused batch stored, MOVE still works when full', async () => {
    const server = createServer({ port: 0, plugins: ['LITERAL+', 'MOVE', 'MULTIAPPEND'], maxMessages: 4, storage: { INBOX: { messages: [mail('seed 1'), mail('seed 2')] }, '': { folders: { Archive: {} } } } });
    const { imap } = await server.start();
    try {
      assertExact(server, 'the seed counts');
      server.control.addMessage('INBOX', { raw: mail('third') });
      const c = await rawSession(imap.port);
      // A MULTIAPPEND of two where one fits: the whole command is refused (RFC 3502 §6.3.11 atomicity).
      const a = mail('fourth');
      const b = mail('fifth');
      c.write(`M1 APPEND INBOX {${a.length}+}\r\n${a} {${b.length}+}\r\n${b}\r\n`);
      assert.match(tagged(await c.until('M1')), /^M1 NO \[OVERQUOTA\] The server's store is full/);
      assert.equal(server.control.listMessages('INBOX').length, 3);
      c.write(`A1 APPEND INBOX {${a.length}+}\r\n${a}\r\n`);
      assert.match(tagged(await c.until('A1')), /^A1 OK/);
      assert.equal(server.store.budget!.full, true);
      c.write(`A2 APPEND INBOX {${b.length}+}\r\n${b}\r\n`);
      assert.match(tagged(await c.until('A2')), /^A2 NO \[OVERQUOTA\]/);
      assert.throws(() => server.control.addMessage('INBOX', { raw: mail('control') }), overquota);
      assert.match(tagged(await c.command('SELECT INBOX')), /OK/);
      assert.match(tagged(await c.command('COPY 1 Archive')), /NO \[OVERQUOTA\]/);
      assert.equal(server.control.listMessages('Archive').length, 0);
      assert.throws(() => server.control.copyMessages('INBOX', { uids: [1], target: 'Archive' }), overquota);
      // A move leaves the store no fuller: allowed at the limit, over IMAP and the control API.
      assert.match(tagged(await c.command('MOVE 1 Archive')), /OK/);
      server.control.moveMessages('INBOX', { uids: [2], target: 'Archive' });
      assert.equal(server.control.listMessages('Archive').length, 2);
      assertExact(server, 'after the moves');
      // Room again after an expunge.
      server.control.expungeMessages('Archive', { uids: [1] });
      assertExact(server, 'after the expunge');
      c.write(`A3 APPEND INBOX {${b.length}+}\r\n${b}\r\n`);
      assert.match(tagged(await c.until('A3')), /^A3 OK/);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('maxStoreBytes counts octets of sources, copies in full; delete, rename of INBOX and reset keep the totals exact', async () => {
    const big = mail('big', 'x'.repeat(1000));
    const server = createServer({ maxStoreBytes: 4 * big.length, storage: { INBOX: { messages: [big] } } });
    assertExact(server, 'seed');
    server.control.createMailbox('Box');
    server.control.copyMessages('INBOX', { uids: [1], target: 'Box' });
    server.control.copyMessages('Box', { uids: [1], target: 'INBOX' });
    server.control.addMessage('Box', { raw: big });
    assert.equal(server.store.budget!.bytes, 4 * big.length);
    assert.throws(() => server.control.addMessage('INBOX', { raw: 'x' }), overquota);
    // A small one still fits where a byte over the limit does not: the limit is in octets.
    server.control.deleteMailbox('Box');
    assertExact(server, 'after deleting a mailbox with messages');
    assert.equal(server.store.budget!.bytes, 2 * big.length);
    server.control.renameMailbox('INBOX', { newPath: 'Old' });
    assertExact(server, 'after renaming INBOX (its messages move)');
    server.control.addMessage('INBOX', { raw: big });
    server.control.reset();
    assertExact(server, 'after reset');
    assert.equal(server.store.budget!.messages, 1);
    // Reset twice, and after a reset with deferred (unbuilt) seed lists, the totals are still those of the seed.
    server.control.reset();
    assert.deepEqual({ m: server.store.budget!.messages, b: server.store.budget!.bytes }, { m: 1, b: big.length });
    assertExact(server, 'after a second reset');
    await server.stop();
  });

  test('seed sources never read are counted in UTF-8 octets when the total is asked; a delete or reset before that keeps it exact', async () => {
    // Multi-byte text: a count in UTF-16 units would be short of the octets.
    const text = mail('Grüße 漢字', 'ö'.repeat(200));
    const octets = Buffer.byteLength(text, 'utf8');
    assert.ok(octets > text.length);
    const storage = { INBOX: { messages: [text] }, '': { folders: { Box: { messages: [text, text] } } } };
    const server = createServer({ maxStoreBytes: 3 * octets, storage });
    const budget = server.store.budget!;
    // Nothing has read a mailbox: the total, and the limit, still see every octet.
    assert.equal(budget.bytes, 3 * octets);
    assert.throws(() => server.control.addMessage('INBOX', { raw: 'x' }), overquota);
    // A mailbox deleted before anything counted it gives back what it held, no more.
    const fresh = createServer({ maxStoreBytes: 3 * octets, storage });
    fresh.control.deleteMailbox('Box');
    assert.equal(fresh.store.budget!.bytes, octets);
    fresh.control.addMessage('INBOX', { raw: 'x' });
    assert.equal(fresh.store.budget!.bytes, octets + 1);
    fresh.control.reset();
    assert.equal(fresh.store.budget!.bytes, 3 * octets);
    assertExact(fresh, 'after reset, read');
    // An add given as text is counted in octets before anything reads it, and reads back as those octets.
    fresh.control.deleteMailbox('Box');
    const before = fresh.store.budget!.bytes;
    const { uid } = fresh.control.addMessage('INBOX', { raw: text });
    assert.equal(fresh.store.budget!.bytes, before + octets);
    assert.deepEqual(Buffer.from(fresh.control.getMessage('INBOX', uid).raw!, 'base64'), Buffer.from(text, 'utf8'));
    fresh.control.expungeMessages('INBOX', { uids: [uid] });
    assert.equal(fresh.store.budget!.bytes, before);
    fresh.control.reset();
    // Counted, then reset, then counted again: the same total (the seed's count is kept, not added twice).
    server.control.reset();
    server.control.reset();
    assert.equal(budget.bytes, 3 * octets);
    assertExact(server, 'after two resets');
  });

  test('per-user trees share one budget; deleting a user and reset give their mail back', async () => {
    const server = createServer({
      userMailboxes: true,
      maxMessages: 3,
      users: { alice: { password: 'a' }, bob: { password: 'b' } },
      storage: { users: { alice: { INBOX: { messages: [mail('alice seed')] } } } },
    });
    server.control.addMessage('INBOX', { raw: mail('to bob') }, { user: 'bob' });
    // alice's tree is made (and its seed counted) on first use.
    server.control.addMessage('INBOX', { raw: mail('to alice') }, { user: 'alice' });
    assertExact(server, 'two trees');
    assert.throws(() => server.control.addMessage('INBOX', { raw: mail('one too many') }, { user: 'bob' }), overquota);
    server.control.deleteUser('alice');
    assert.equal(server.store.budget!.messages, 1);
    server.control.addUser({ name: 'carol', password: 'c' });
    server.control.addMessage('INBOX', { raw: mail('to carol') }, { user: 'carol' });
    server.control.reset();
    assert.equal(server.store.budget!.messages, 0, 'trees are made again from their seeds on first use');
    assertExact(server, 'after reset');
    await server.stop();
  });

  test('REST: adds answer 409 OVERQUOTA (the spec\'s code for it) and GET /v1/health shows the use', async () => {
    const server = createServer({ port: 0, rest: { port: 0 }, maxMessages: 1 });
    const { rest } = await server.start();
    try {
      const post = (raw: string): ReturnType<typeof request> => request(rest!.port, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw } });
      assert.equal((await post(mail('fits'))).status, 201);
      const refused = await post(mail('does not fit'));
      assert.equal(refused.status, 409);
      assert.equal(refused.json.error.code, 'OVERQUOTA');
      assert.match(refused.json.error.message, /maxMessages/);
      const health = await request(rest!.port, 'GET', '/v1/health');
      assert.deepEqual(health.json.store, { messages: 1, bytes: mail('fits').length, maxMessages: 1, maxStoreBytes: null, full: true });
    } finally {
      await server.stop();
    }
  });

  test('SMTP: a full store is 452 (transient), a message larger than the whole budget 552; nothing is stored', async () => {
    const server = createServer({ port: 0, smtp: { port: 0 }, maxStoreBytes: 3000 });
    const { smtp } = await server.start();
    try {
      const { client } = await RawSmtp.connect(smtp!.port);
      assert.equal((await transaction(client, 'alice@example.com', ['testuser@example.com'])).code, 354);
      assert.equal((await client.data(mail('fills most', 'x'.repeat(2000)))).code, 250);
      assert.equal((await transaction(client, 'alice@example.com', ['testuser@example.com'])).code, 354);
      const full = await client.data(mail('does not fit now', 'x'.repeat(1000)));
      assert.equal(full.code, 452);
      assert.match(full.text, /store is full/);
      assert.equal((await transaction(client, 'alice@example.com', ['testuser@example.com'])).code, 354);
      assert.equal((await client.data(mail('never fits', 'x'.repeat(4000)))).code, 552);
      assert.equal(server.control.listMessages('INBOX').length, 1);
      assertExact(server, 'after SMTP');
      client.close();
    } finally {
      await server.stop();
    }
  });

  test('options: typos are caught, bad values refused, and without them there is no limit', () => {
    assert.throws(() => createServer({ maxStoreByte: 5 } as never), /maxStoreByte: unknown key; did you mean "maxStoreBytes"/);
    assert.throws(() => createServer({ maxMessages: -1 }), /maxMessages: expected a non-negative integer/);
    assert.throws(() => createServer({ rest: { port: 0, maxConection: 5 } } as never), /rest\.maxConection: unknown key; did you mean "maxConnections"/);
    assert.throws(() => createServer({ rest: { port: 0, requestTimeout: 1000, headersTimeout: 2000 } }), /rest\.headersTimeout: must not be longer than rest\.requestTimeout/);
    const s = createServer();
    assert.equal(s.options.maxStoreBytes, null);
    assert.equal(s.options.maxMessages, null);
    for (let i = 0; i < 50; i++) s.control.addMessage('INBOX', { raw: mail(`m${i}`) });
    assert.equal(s.store.budget!.full, false);
  });
});

/**
 * STATUS=SIZE (RFC 8438) over real sockets: the capability, the RFC's §3
 * example shape, and the kept total following every kind of change
 * (APPEND, COPY, EXPUNGE, MOVE, RENAME of INBOX, DELETE, reset) checked
 * against a recount of `Message.size`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from '../../src/index.js';
import { rawSession, startServer, mail } from '../helpers/server.js';

const recount = (server: Server, path: string): number => server.store.get(path)!.messages.reduce((n, m) => n + m.size, 0);

test('RFC 8438 §3: CAPABILITY lists STATUS=SIZE; STATUS (MESSAGES SIZE) answers the sum of RFC822.SIZE', async () => {
  const { server, port } = await startServer({ plugins: ['STATUS=SIZE'] });
  try {
    const a = mail('one');
    const b = mail('two', 'a longer body than the first');
    server.control.addMessage('INBOX', { raw: a });
    server.control.addMessage('INBOX', { raw: b });
    const c = await rawSession(port);
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 STATUS=SIZE', 'T2 OK Capability completed']);
    const total = Buffer.byteLength(a) + Buffer.byteLength(b);
    assert.deepEqual(await c.command('STATUS INBOX (MESSAGES SIZE)'), [`* STATUS "INBOX" (MESSAGES 2 SIZE ${total})`, 'T3 OK Status completed']);
    // RFC822.SIZE of each message adds up to the same number.
    await c.command('EXAMINE INBOX');
    const sizes = (await c.command('FETCH 1:* RFC822.SIZE')).filter((l) => l.startsWith('* ')).map((l) => Number(/RFC822\.SIZE (\d+)/.exec(l)![1]));
    assert.equal(sizes.reduce((x, y) => x + y, 0), total);
    assert.deepEqual(await c.command('STATUS INBOX (SIZE)'), [`* STATUS "INBOX" (SIZE ${total})`, 'T6 OK Status completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('STATUS SIZE stays equal to a recount after append, copy, expunge, move, rename, delete and reset', async () => {
  const { server, port } = await startServer({ plugins: ['STATUS=SIZE', 'MOVE'] });
  try {
    const c = await rawSession(port);
    let n = 1;
    const check = async (path: string): Promise<void> => {
      n++;
      // EXISTS/EXPUNGE updates of the selected INBOX may come along; only STATUS and the tagged line count.
      const lines = (await c.command(`STATUS "${path}" (SIZE)`)).filter((l) => !/^\* \d+ /.test(l));
      assert.deepEqual(lines, [`* STATUS "${path}" (SIZE ${recount(server, path)})`, `T${n} OK Status completed`], lines.join('\n'));
    };
    await check('INBOX');
    server.control.addMessage('INBOX', { raw: mail('a') });
    await check('INBOX');
    c.write(`A1 APPEND INBOX {${Buffer.byteLength(mail('b', 'bb'))}+}\r\n${mail('b', 'bb')}\r\n`);
    assert.match(await c.line(), /^A1 OK/);
    await check('INBOX');
    server.control.createMailbox('Other');
    await check('Other');
    n++;
    await c.command('SELECT INBOX');
    n++;
    await c.command('COPY 1:* Other');
    await check('Other');
    n++;
    await c.command('STORE 1 +FLAGS.SILENT (\\Deleted)');
    n++;
    await c.command('EXPUNGE');
    await check('INBOX');
    n++;
    await c.command('MOVE 1 Other');
    await check('INBOX');
    await check('Other');
    server.control.addMessage('INBOX', { raw: mail('c', 'ccc') });
    await check('INBOX');
    n++;
    await c.command('RENAME INBOX Old');
    await check('INBOX');
    await check('Old');
    server.control.expungeMessages('Other', { uids: [server.store.get('Other')!.messages[0]!.uid] });
    await check('Other');
    n++;
    await c.command('DELETE Other');
    n++;
    await c.command('CREATE Other');
    await check('Other');
    c.close();
    // reset() ends the sessions; a new one sees the restored store.
    server.control.reset();
    const d = await rawSession(port);
    assert.deepEqual(await d.command('STATUS INBOX (SIZE)'), [`* STATUS "INBOX" (SIZE ${recount(server, 'INBOX')})`, 'T2 OK Status completed']);
    d.close();
  } finally {
    await server.stop();
  }
});

test('without the plugin SIZE is still the core count, and STATUS=SIZE is not advertised', async () => {
  const { server, port } = await startServer({ plugins: [] });
  try {
    server.control.addMessage('INBOX', { raw: mail('a') });
    const c = await rawSession(port);
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1', 'T2 OK Capability completed']);
    assert.deepEqual(await c.command('STATUS INBOX (SIZE)'), [`* STATUS "INBOX" (SIZE ${recount(server, 'INBOX')})`, 'T3 OK Status completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

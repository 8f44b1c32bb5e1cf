/**
 * Issue 9: `server.control.createMailbox` takes a plain path, as every
 * other mailbox operation does, and keeps the object form REST uses.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServiceError } from '../../src/index.js';
import { rawSession, startServer } from '../helpers/server.js';

const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServiceError) return err.code;
    throw err;
  }
  return undefined;
};

test('createMailbox(path) creates the mailbox and its missing parents; a connected client lists them', async () => {
  const { server, port } = await startServer({ plugins: 'all' });
  try {
    const c = await rawSession(port);
    const info = server.control.createMailbox('A/B');
    assert.equal(info.path, 'A/B');
    assert.equal(info.subscribed, true, 'subscribed by default, like mailboxes from storage');
    assert.equal(server.control.getMailbox('A').path, 'A');
    assert.deepEqual(await c.command('LIST "" A*'), [
      '* LIST (\\HasChildren) "/" "A"',
      '* LIST (\\HasNoChildren) "/" "A/B"',
      'T2 OK LIST completed',
    ]);
    // Options come second; the object form still works.
    assert.equal(server.control.createMailbox('Sub', { subscribed: true }).subscribed, true);
    assert.equal(server.control.createMailbox({ path: 'Obj/Form', subscribed: true }).path, 'Obj/Form');
    assert.deepEqual(await c.command('LSUB "" *'), ['* LSUB () "/" "A/B"', '* LSUB () "/" "INBOX"', '* LSUB () "/" "Obj/Form"', '* LSUB () "/" "Sub"', 'T3 OK LSUB completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('createMailbox(path) errors are those of the object form', async () => {
  const { server } = await startServer();
  try {
    server.control.createMailbox('X');
    assert.equal(code(() => server.control.createMailbox('X')), 'ALREADYEXISTS');
    assert.equal(code(() => server.control.createMailbox('')), 'INVALID');
    assert.equal(code(() => server.control.createMailbox('a//b')), 'INVALID');
    assert.equal(code(() => server.control.createMailbox('Caf\u00e9')), 'INVALID');
    assert.equal(code(() => server.control.createMailbox('Y', { subscribed: 'yes' } as never)), 'INVALID');
    assert.equal(code(() => server.control.createMailbox(42 as never)), 'INVALID');
    assert.equal(code(() => server.control.createMailbox(null as never)), 'INVALID');
  } finally {
    await server.stop();
  }
});

import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { createServer, ServiceError } from '../src/index.js';
import { RawClient } from './helpers/raw-client.js';

test('createServer validates options: typo, wrong type, unknown plugin, XTOYBIRD', () => {
  const message = (options: unknown): string => {
    try {
      createServer(options as never);
    } catch (err) {
      assert.ok(err instanceof ServiceError);
      assert.equal(err.code, 'INVALID');
      return err.message;
    }
    assert.fail('expected an error');
  };
  assert.match(message({ storage: { INBOX: { mesages: [] } } }), /storage\.INBOX\.mesages: unknown key; did you mean "messages"\?/);
  assert.match(message({ storage: { INBOX: { uidvalidity: 'abc' } } }), /storage\.INBOX\.uidvalidity: expected/);
  assert.match(message({ plugins: ['NOPE'] }), /unknown plugin "NOPE".*IDLE/);
  assert.match(message({ plugins: ['XTOYBIRD'] }), /control API.*REST API/);
  assert.match(message({ storage: { INBOX: { messages: [{ raw: 'x', internaldate: 'soon' }] } } }), /internaldate/);
});

test('start() opens IMAP on a free port and answers with its address; stop() is idempotent', async () => {
  const server = createServer();
  const addresses = await server.start();
  assert.equal(addresses.imap.host, '127.0.0.1');
  assert.ok(addresses.imap.port > 0);
  assert.equal(addresses.rest, null);
  const client = await RawClient.connect(addresses.imap.port);
  assert.match(await client.line(), /^\* OK \[CAPABILITY IMAP4rev1[^\]]*\] Rookery ready$/);
  await server.stop();
  await server.stop();
  await client.closedByServer();
  await assert.rejects(RawClient.connect(addresses.imap.port));
});

test('listen() opens IMAP only and calls back', async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address()!.port;
  const socket = net.connect(port, '127.0.0.1');
  const greeting = await new Promise<string>((resolve) => socket.once('data', (d) => resolve(d.toString())));
  assert.match(greeting, /^\* OK /);
  socket.destroy();
  await server.stop();
});

test('graceful shutdown waits for the last client; forced closes sessions at once', async () => {
  const server = createServer();
  const { imap } = await server.start();
  const client = await RawClient.connect(imap.port);
  await client.line();
  let done = false;
  const stopping = server.control.shutdown({ graceful: true }).then(() => (done = true));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(done, false, 'graceful shutdown must wait for the client');
  assert.deepEqual(await client.command('NOOP'), ['T1 OK NOOP completed']);
  await client.command('LOGOUT');
  await stopping;
  assert.equal(done, true);

  const forced = createServer();
  const second = await forced.start();
  const c2 = await RawClient.connect(second.imap.port);
  await c2.line();
  await forced.control.shutdown({ graceful: false });
  await c2.closedByServer();
});

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

test('graceful shutdown tells every client BYE, lets a running command finish, and ends within shutdownTimeout', async () => {
  const server = createServer({ plugins: 'all', shutdownTimeout: 300 });
  const { imap } = await server.start();
  const idle = await RawClient.connect(imap.port);
  await idle.line();
  // A client in the middle of AUTHENTICATE that never answers the challenge.
  const stuck = await RawClient.connect(imap.port);
  await stuck.line();
  stuck.write('A1 AUTHENTICATE PLAIN\r\n');
  assert.equal(await stuck.line(), '+ ');
  let done = false;
  const stopping = server.control.shutdown({ graceful: true }).then(() => (done = true));
  assert.equal(await idle.line(), '* BYE Server shutting down');
  await idle.closedByServer();
  assert.equal(done, false, 'waits while a command is still running');
  await stopping;
  assert.equal(done, true);
  // The stuck command was not answered; the client was told BYE before the close.
  assert.equal(await stuck.line(), '* BYE Server shutting down');
  await stuck.closedByServer();
});

test('graceful shutdown: a command in flight gets its tagged answer before BYE', async () => {
  const server = createServer({ plugins: 'all' });
  const { imap } = await server.start();
  const client = await RawClient.connect(imap.port);
  await client.line();
  client.write('A1 AUTHENTICATE PLAIN\r\n');
  assert.equal(await client.line(), '+ ');
  const stopping = server.control.shutdown({ graceful: true });
  await new Promise((r) => setTimeout(r, 50));
  client.write(Buffer.from('\0testuser\0testpass').toString('base64') + '\r\n');
  assert.match(await client.line(), /^A1 OK /);
  assert.equal(await client.line(), '* BYE Server shutting down');
  await client.closedByServer();
  await stopping;
});

test('forced shutdown: BYE also to a client in the middle of a command, then the connection closes', async () => {
  const forced = createServer();
  const second = await forced.start();
  const c2 = await RawClient.connect(second.imap.port);
  await c2.line();
  c2.write('A1 LOGIN {8}\r\n');
  assert.equal(await c2.line(), '+ OK');
  c2.write('test');
  await new Promise((r) => setTimeout(r, 20));
  await forced.control.shutdown({ graceful: false });
  assert.equal(await c2.line(), '* BYE Server shutting down');
  await c2.closedByServer();
});

test('a forced shutdown during a graceful one closes what is left at once', async () => {
  const server = createServer({ plugins: 'all', shutdownTimeout: 60_000 });
  const { imap } = await server.start();
  const stuck = await RawClient.connect(imap.port);
  await stuck.line();
  stuck.write('A1 AUTHENTICATE PLAIN\r\n');
  assert.equal(await stuck.line(), '+ ');
  const graceful = server.control.shutdown({ graceful: true });
  await new Promise((r) => setTimeout(r, 30));
  await server.control.shutdown({ graceful: false });
  await graceful;
  await stuck.closedByServer();
});

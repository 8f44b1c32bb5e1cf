/**
 * UNAUTHENTICATE (RFC 8437) over real sockets: the capability, the RFC's
 * §3 flow (log in, select, UNAUTHENTICATE, log in again as another user on
 * the same connection), the state after it (selected-state commands BAD,
 * capabilities as before login, ENABLE forgotten), its session events,
 * and BAD where it does not apply.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Plugin } from '../../src/index.js';
import { RawClient } from '../helpers/raw-client.js';
import { collect, startServer, mail } from '../helpers/server.js';

const xtest: Plugin = { name: 'XTEST', capabilities: () => ['XTEST'], enable: ['XTEST'] };

test('RFC 8437 §3: UNAUTHENTICATE from the selected state, then LOGIN as another user on the same connection', async () => {
  const { server, port } = await startServer({
    plugins: ['UNAUTHENTICATE', 'ENABLE', xtest],
    users: { testuser: { password: 'testpass' }, other: { password: 'secret' } },
  });
  try {
    server.control.addMessage('INBOX', { raw: mail('one') });
    const events = collect(server, 'session');
    const c = await RawClient.connect(port);
    const greeting = await c.line();
    const before = /\[CAPABILITY ([^\]]+)\]/.exec(greeting)![1]!;
    assert.match(before, /\bUNAUTHENTICATE\b/);
    c.write('A1 LOGIN testuser testpass\r\n');
    assert.match((await c.until('A1')).at(-1)!, /^A1 OK/);
    c.write('A2 ENABLE XTEST\r\n');
    assert.deepEqual(await c.until('A2'), ['* ENABLED XTEST', 'A2 OK Enabled']);
    c.write('A3 SELECT INBOX\r\n');
    assert.match((await c.until('A3')).at(-1)!, /^A3 OK \[READ-WRITE\]/);
    c.write('A4 STORE 1 +FLAGS (\\Deleted)\r\n');
    await c.until('A4');
    c.write('A5 UNAUTHENTICATE\r\n');
    // The tagged OK lists the capabilities as they are before login.
    assert.deepEqual(await c.until('A5'), [`A5 OK [CAPABILITY ${before}] Unauthenticate completed`]);
    // The mailbox was closed without expunging.
    assert.equal(server.control.listMessages('INBOX').length, 1);
    // Not authenticated now: commands of the other states are BAD, CAPABILITY is the pre-login one.
    c.write('A6 SELECT INBOX\r\n');
    assert.match((await c.until('A6')).at(-1)!, /^A6 BAD /);
    c.write('A7 FETCH 1 FLAGS\r\n');
    assert.match((await c.until('A7')).at(-1)!, /^A7 BAD /);
    c.write('A8 CAPABILITY\r\n');
    assert.deepEqual(await c.until('A8'), [`* CAPABILITY ${before}`, 'A8 OK Capability completed']);
    c.write('A9 UNAUTHENTICATE\r\n');
    assert.match((await c.until('A9')).at(-1)!, /^A9 BAD /);
    // Log in again, as someone else, on the same connection; ENABLE starts over.
    c.write('A10 LOGIN other secret\r\n');
    assert.match((await c.until('A10')).at(-1)!, /^A10 OK/);
    c.write('A11 ENABLE XTEST\r\n');
    assert.deepEqual(await c.until('A11'), ['* ENABLED XTEST', 'A11 OK Enabled']);
    c.write('A12 UNAUTHENTICATE\r\n');
    assert.match((await c.until('A12')).at(-1)!, /^A12 OK /);
    c.write('A13 LOGOUT\r\n');
    await c.until('A13');
    c.close();
    const mine = events.filter((e) => e.type !== 'open' && e.type !== 'close');
    assert.deepEqual(
      mine.map((e) => [e.type, e.session.user, e.session.state]),
      [
        ['login', 'testuser', 'Authenticated'],
        ['select', 'testuser', 'Selected'],
        ['unselect', 'testuser', 'Authenticated'],
        ['unauthenticate', null, 'Not Authenticated'],
        ['login', 'other', 'Authenticated'],
        ['unauthenticate', null, 'Not Authenticated'],
        ['logout', null, 'Logout'],
      ],
    );
    assert.deepEqual(events.find((e) => e.type === 'unauthenticate')!.session.enabled, []);
  } finally {
    await server.stop();
  }
});

test('UNAUTHENTICATE is BAD before login, with arguments, and unknown without the plugin', async () => {
  const { server, port } = await startServer({ plugins: ['UNAUTHENTICATE'] });
  const plain = await startServer();
  try {
    const c = await RawClient.connect(port);
    await c.line();
    c.write('A1 UNAUTHENTICATE\r\n');
    assert.match((await c.until('A1')).at(-1)!, /^A1 BAD /);
    c.write('A2 LOGIN testuser testpass\r\n');
    await c.until('A2');
    c.write('A3 UNAUTHENTICATE now\r\n');
    assert.match((await c.until('A3')).at(-1)!, /^A3 BAD /);
    c.write('A4 UNAUTHENTICATE\r\n');
    assert.match((await c.until('A4')).at(-1)!, /^A4 OK /);
    c.close();
    const d = await RawClient.connect(plain.port);
    assert.doesNotMatch(await d.line(), /UNAUTHENTICATE/);
    d.write('A1 LOGIN testuser testpass\r\n');
    await d.until('A1');
    d.write('A2 UNAUTHENTICATE\r\n');
    assert.match((await d.until('A2')).at(-1)!, /^A2 BAD /);
    d.close();
  } finally {
    await server.stop();
    await plain.server.stop();
  }
});

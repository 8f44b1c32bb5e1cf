/**
 * Protocol tests over a raw socket: session and command events, the
 * session part of the control API, and what a client sees when the
 * control API ends or changes its session.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import type { CommandSpec } from '../../src/imap/command.js';
import { imapProtocol } from '../../src/imap/protocol.js';
import { RawClient, tagged } from '../helpers/raw-client.js';
import { collect, mail, rawSession, startServer } from '../helpers/server.js';

let server: Server;
let port: number;

beforeEach(async () => {
  ({ server, port } = await startServer({
    plugins: 'all',
    storage: { INBOX: { messages: [mail('one'), mail('two')] }, '': { folders: { Archive: { messages: [mail('a')] } } } },
  }));
});
afterEach(async () => {
  await server.stop();
});

/** Waits until `check` holds (events arrive asynchronously with socket close). */
async function eventually(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const onlySession = (): number => {
  const list = server.control.sessions();
  assert.equal(list.length, 1);
  return list[0]!.session;
};

describe('session and command events', () => {
  test('open, login, select, unselect, logout, close with their states', async () => {
    const events = collect(server, 'session');
    const c = await RawClient.connect(port);
    assert.match(await c.line(), /^\* OK \[CAPABILITY IMAP4rev1 .*\] Rookery ready$/);
    await c.command('LOGIN testuser testpass');
    await c.command('SELECT INBOX');
    await c.command('UNSELECT');
    await c.command('EXAMINE Archive');
    assert.deepEqual(await c.command('LOGOUT'), ['* BYE Logging out', 'T5 OK Logout completed']);
    await c.closedByServer();
    await eventually(() => events.some((e) => e.type === 'close'), 'close event');
    const id = events[0]!.session.session;
    assert.deepEqual(
      events.map((e) => [e.type, e.session.state, e.session.user, e.session.mailbox, e.session.readOnly]),
      [
        ['open', 'Not Authenticated', null, null, false],
        ['login', 'Authenticated', 'testuser', null, false],
        ['select', 'Selected', 'testuser', 'INBOX', false],
        ['unselect', 'Authenticated', 'testuser', null, false],
        ['select', 'Selected', 'testuser', 'Archive', true],
        ['logout', 'Logout', 'testuser', 'Archive', true],
        ['close', 'Logout', 'testuser', 'Archive', false],
      ],
    );
    for (const e of events) assert.equal(e.session.session, id);
    assert.equal(events[0]!.session.remoteAddress, '127.0.0.1');
    assert.equal(events[events.length - 1]!.session.remoteAddress, null);
  });

  test('command events carry session, tag, command, status, user and protocol', async () => {
    const events = collect(server, 'command');
    const c = await rawSession(port, false);
    await c.command('NOOP');
    await c.command('LOGIN testuser wrong');
    await c.command('LOGIN testuser testpass');
    await c.command('SELECT INBOX');
    await c.command('UID FETCH 1 FLAGS');
    await c.command('BOGUS');
    const id = onlySession();
    assert.deepEqual(events, [
      { session: id, tag: 'T1', command: 'NOOP', status: 'OK', user: null, protocol: 'imap' },
      { session: id, tag: 'T2', command: 'LOGIN', status: 'NO', user: null, protocol: 'imap' },
      { session: id, tag: 'T3', command: 'LOGIN', status: 'OK', user: 'testuser', protocol: 'imap' },
      { session: id, tag: 'T4', command: 'SELECT', status: 'OK', user: 'testuser', protocol: 'imap' },
      { session: id, tag: 'T5', command: 'UID FETCH', status: 'OK', user: 'testuser', protocol: 'imap' },
      { session: id, tag: 'T6', command: 'BOGUS', status: 'BAD', user: 'testuser', protocol: 'imap' },
    ]);
    c.close();
  });

  test('control.sessions() shape', async () => {
    const a = await rawSession(port);
    const b = await rawSession(port, false);
    await a.command('EXAMINE INBOX');
    const list = server.control.sessions().sort((x, y) => x.session - y.session);
    assert.equal(list.length, 2);
    assert.deepEqual(list[0], {
      session: list[0]!.session,
      user: 'testuser',
      state: 'Selected',
      mailbox: 'INBOX',
      readOnly: true,
      enabled: [],
      secure: false,
      compressed: false,
      remoteAddress: '127.0.0.1',
      protocol: 'imap',
    });
    assert.deepEqual(list[1], {
      session: list[0]!.session + 1,
      user: null,
      state: 'Not Authenticated',
      mailbox: null,
      readOnly: false,
      enabled: [],
      secure: false,
      compressed: false,
      remoteAddress: '127.0.0.1',
      protocol: 'imap',
    });
    a.close();
    b.close();
  });
});

describe('control API on live sessions', () => {
  test('disconnect sends BYE and closes the connection', async () => {
    const c = await rawSession(port);
    server.control.disconnect(onlySession());
    assert.equal(await c.line(), '* BYE Disconnected by the server');
    await c.closedByServer();
    await eventually(() => server.control.sessions().length === 0, 'session removal');
  });

  test('disconnect with a text', async () => {
    const c = await rawSession(port);
    server.control.disconnect(onlySession(), { text: 'Go away' });
    assert.equal(await c.line(), '* BYE Go away');
    await c.closedByServer();
  });

  test('disconnect with reset closes without BYE', async () => {
    const c = await rawSession(port);
    server.control.disconnect(onlySession(), { reset: true });
    await c.closedByServer();
    assert.equal(c.pending(), '');
    await eventually(() => server.control.sessions().length === 0, 'session removal');
  });

  test('inject writes bytes verbatim', async () => {
    const c = await rawSession(port);
    server.control.inject(onlySession(), '* OK hello\r\n');
    assert.equal(await c.line(), '* OK hello');
    assert.deepEqual(await c.command('NOOP'), ['T2 OK NOOP completed']);
    c.close();
  });

  test('reset sends BYE Server reset', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    server.control.reset();
    assert.equal(await c.line(), '* BYE Server reset');
    await c.closedByServer();
  });

  test('deleting the selected mailbox sends BYE; other sessions stay', async () => {
    const c = await rawSession(port);
    const other = await rawSession(port);
    await c.command('SELECT Archive');
    await other.command('SELECT INBOX');
    server.control.deleteMailbox('Archive');
    assert.equal(await c.line(), '* BYE Selected mailbox was deleted, have to disconnect');
    await c.closedByServer();
    assert.deepEqual(await other.command('NOOP'), ['T3 OK NOOP completed']);
    other.close();
  });

  test('resetUidValidity of the selected mailbox sends BYE', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    server.control.resetUidValidity('INBOX', { uidvalidity: 777 });
    assert.equal(await c.line(), '* BYE Mailbox UIDVALIDITY changed, have to disconnect');
    await c.closedByServer();
    const again = await rawSession(port);
    const lines = await again.command('SELECT INBOX');
    assert.ok(lines.includes('* OK [UIDVALIDITY 777] UIDs valid'), lines.join('\n'));
    again.close();
  });

  test('deleteUser disconnects its sessions, unless disconnect is false', async () => {
    server.control.addUser({ name: 'other', password: 'pw' });
    const mine = await rawSession(port);
    const theirs = await RawClient.connect(port);
    await theirs.line();
    await theirs.command('LOGIN other pw');
    server.control.deleteUser('other', { disconnect: false });
    assert.deepEqual(await theirs.command('NOOP'), ['T2 OK NOOP completed']);
    server.control.deleteUser('testuser');
    assert.equal(await mine.line(), '* BYE User was deleted');
    await mine.closedByServer();
    assert.deepEqual(await theirs.command('NOOP'), ['T3 OK NOOP completed']);
    theirs.close();
  });
});

describe('robustness', () => {
  test('a throwing handler answers NO [SERVERBUG] and the session goes on', async () => {
    const commands = imapProtocol(server).commands as Map<string, CommandSpec>;
    const original = commands.get('CHECK')!;
    commands.set('CHECK', {
      ...original,
      run() {
        throw new Error('boom');
      },
    });
    const quiet = console.error;
    console.error = () => undefined;
    try {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      assert.deepEqual(await c.command('CHECK'), ['T3 NO [SERVERBUG] Internal error in the server; the session goes on']);
      assert.deepEqual(await c.command('NOOP'), ['T4 OK NOOP completed']);
      c.close();
    } finally {
      console.error = quiet;
      commands.set('CHECK', original);
    }
  });

  test('socket closed mid-literal leaves no session', async () => {
    const c = await rawSession(port);
    c.write('A1 APPEND INBOX {100}\r\n');
    assert.equal(await c.line(), '+ OK');
    c.write('only a part');
    await new Promise((r) => setTimeout(r, 20));
    c.close();
    await eventually(() => server.control.sessions().length === 0, 'session removal');
  });

  test('socket closed mid-IDLE leaves no session', async () => {
    const events = collect(server, 'session');
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('I1 IDLE\r\n');
    assert.equal(await c.line(), '+ idling');
    await eventually(() => events.some((e) => e.type === 'waiting'), 'waiting event');
    assert.equal(events.find((e) => e.type === 'waiting')!.command, 'IDLE');
    c.close();
    await eventually(() => server.control.sessions().length === 0, 'session removal');
    assert.equal(events[events.length - 1]!.type, 'close');
  });

  test('IDLE ends with DONE; anything else is BAD', async () => {
    const c = await rawSession(port);
    c.write('I1 IDLE\r\n');
    assert.equal(await c.line(), '+ idling');
    c.write('DONE\r\n');
    assert.deepEqual(await c.until('I1'), ['I1 OK Idle completed']);
    c.write('I2 IDLE\r\n');
    assert.equal(await c.line(), '+ idling');
    c.write('NOPE\r\n');
    assert.deepEqual(await c.until('I2'), ['I2 BAD Expected DONE']);
    assert.equal(tagged(await c.command('NOOP')), 'T2 OK NOOP completed');
    c.close();
  });
});

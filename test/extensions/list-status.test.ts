/**
 * LIST-STATUS (RFC 5819) over real sockets: the RFC's §2 examples, STATUS
 * items of extensions (STATUS=SIZE's SIZE), no STATUS for `\Noselect` and
 * `\NonExistent` entries or for mailboxes the user may not read, errors in
 * the return option's syntax, and Python imaplib sending the command.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rawSession, startServer, mail } from '../helpers/server.js';

async function fixture(plugins: string[] = ['LIST-STATUS']) {
  // `bar` is a \Noselect mailbox with a child, as in the RFC's example.
  return startServer({
    plugins,
    storage: {
      INBOX: { messages: [{ raw: mail('in0'), flags: ['\\Seen'] }, mail('in1'), mail('in2')] },
      '': {
        separator: '/',
        folders: {
          foo: { messages: [mail('foo0'), mail('foo1')] },
          bar: { flags: ['\\Noselect'], subscribed: false, folders: { baz: { subscribed: false } } },
        },
      },
    },
  });
}

test('RFC 5819 §2 example: a STATUS after each selectable mailbox, none for a \\Noselect level', async () => {
  const { server, port } = await fixture();
  try {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 LIST-STATUS', 'T2 OK Capability completed']);
    c.write('A01 LIST "" % RETURN (STATUS (MESSAGES UNSEEN))\r\n');
    assert.deepEqual(await c.until('A01'), [
      '* LIST () "/" "INBOX"',
      '* STATUS "INBOX" (MESSAGES 3 UNSEEN 2)',
      '* LIST (\\Noselect) "/" "bar"',
      '* LIST () "/" "foo"',
      '* STATUS "foo" (MESSAGES 2 UNSEEN 2)',
      'A01 OK LIST completed',
    ]);
    // Several return options together; item names in any case; one pattern list.
    c.write('A02 LIST "" ("INBOX" "bar/*") RETURN (CHILDREN status (uidnext messages))\r\n');
    assert.deepEqual(await c.until('A02'), [
      '* LIST (\\HasNoChildren) "/" "INBOX"',
      '* STATUS "INBOX" (UIDNEXT 4 MESSAGES 3)',
      '* LIST (\\HasNoChildren) "/" "bar/baz"',
      '* STATUS "bar/baz" (UIDNEXT 1 MESSAGES 0)',
      'A02 OK LIST completed',
    ]);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5819 §2: \\NonExistent subscribed names get no STATUS (SUBSCRIBED selection)', async () => {
  const { server, port } = await fixture();
  try {
    const c = await rawSession(port);
    await c.command('SUBSCRIBE foo');
    await c.command('SUBSCRIBE gone');
    c.write('A03 LIST (SUBSCRIBED) "" * RETURN (STATUS (MESSAGES))\r\n');
    assert.deepEqual(await c.until('A03'), [
      '* LIST (\\Subscribed) "/" "INBOX"',
      '* STATUS "INBOX" (MESSAGES 3)',
      '* LIST (\\Subscribed) "/" "foo"',
      '* STATUS "foo" (MESSAGES 2)',
      '* LIST (\\NonExistent \\Subscribed) "/" "gone"',
      'A03 OK LIST completed',
    ]);
    c.close();
  } finally {
    await server.stop();
  }
});

test('extension STATUS items (STATUS=SIZE) work in the return option; syntax errors are BAD; no STATUS without the option', async () => {
  const { server, port } = await fixture(['LIST-STATUS', 'STATUS=SIZE']);
  try {
    const c = await rawSession(port);
    const size = server.store.get('foo')!.messages.reduce((n, m) => n + m.size, 0);
    c.write('A1 LIST "" foo RETURN (STATUS (SIZE MESSAGES))\r\n');
    assert.deepEqual(await c.until('A1'), ['* LIST () "/" "foo"', `* STATUS "foo" (SIZE ${size} MESSAGES 2)`, 'A1 OK LIST completed']);
    c.write('A2 LIST "" foo RETURN (STATUS)\r\n');
    assert.match((await c.until('A2')).at(-1)!, /^A2 BAD /);
    c.write('A3 LIST "" foo RETURN (STATUS ())\r\n');
    assert.match((await c.until('A3')).at(-1)!, /^A3 BAD /);
    c.write('A4 LIST "" foo RETURN (STATUS (MESSAGES NOSUCH))\r\n');
    assert.match((await c.until('A4')).at(-1)!, /^A4 BAD /);
    c.write('A5 LIST "" foo\r\n');
    assert.deepEqual(await c.until('A5'), ['* LIST () "/" "foo"', 'A5 OK LIST completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('without the plugin the STATUS return option is BAD', async () => {
  const { server, port } = await startServer({ plugins: [] });
  try {
    const c = await rawSession(port);
    c.write('A1 LIST "" * RETURN (STATUS (MESSAGES))\r\n');
    assert.match((await c.until('A1')).at(-1)!, /^A1 BAD /);
    c.close();
  } finally {
    await server.stop();
  }
});

const python = spawnSync('python3', ['--version']).status === 0;

test('Python imaplib: LIST with RETURN (STATUS ...) through _simple_command, untagged STATUS data read back', { skip: !python && 'python3 not found' }, async () => {
  const { server, port } = await fixture();
  try {
    const script = `
import imaplib, sys
m = imaplib.IMAP4('127.0.0.1', ${port})
m.login('testuser', 'testpass')
assert 'LIST-STATUS' in m.capabilities, m.capabilities
typ, data = m._simple_command('LIST', '""', '%', 'RETURN', '(STATUS (MESSAGES UNSEEN))')
assert typ == 'OK', (typ, data)
typ, lists = m._untagged_response(typ, data, 'LIST')
typ, statuses = m._untagged_response(typ, data, 'STATUS')
for line in lists: print('LIST', line.decode())
for line in statuses: print('STATUS', line.decode())
m.logout()
`;
    const out = await new Promise<string>((resolve, reject) => {
      import('node:child_process').then(({ execFile }) =>
        execFile('python3', ['-c', script], { timeout: 10000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
      );
    });
    assert.deepEqual(out.trim().split('\n'), [
      'LIST () "/" "INBOX"',
      'LIST (\\Noselect) "/" "bar"',
      'LIST () "/" "foo"',
      'STATUS "INBOX" (MESSAGES 3 UNSEEN 2)',
      'STATUS "foo" (MESSAGES 2 UNSEEN 2)',
    ]);
  } finally {
    await server.stop();
  }
});

test('RFC 5819 §2: a mailbox the user may list but not read (ACL l without r) gets no STATUS', async () => {
  const { server, port } = await startServer({
    plugins: ['LIST-STATUS', 'ACL'],
    storage: {
      INBOX: { messages: [mail('in0')] },
      '': { separator: '/', folders: { shown: { acl: { testuser: 'l' }, messages: [mail('s')] }, readable: { acl: { testuser: 'lr' } } } },
    },
  });
  try {
    const c = await rawSession(port);
    c.write('A1 LIST "" % RETURN (STATUS (MESSAGES))\r\n');
    assert.deepEqual(await c.until('A1'), [
      '* LIST () "/" "INBOX"',
      '* STATUS "INBOX" (MESSAGES 1)',
      '* LIST () "/" "readable"',
      '* STATUS "readable" (MESSAGES 0)',
      '* LIST () "/" "shown"',
      'A1 OK LIST completed',
    ]);
    // STATUS itself is refused there, as LIST-STATUS leaves it out.
    c.write('A2 STATUS shown (MESSAGES)\r\n');
    assert.match((await c.until('A2')).at(-1)!, /^A2 NO \[NOPERM\]/);
    c.close();
  } finally {
    await server.stop();
  }
});

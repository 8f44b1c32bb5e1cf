/**
 * SPECIAL-USE and CREATE-SPECIAL-USE (RFC 6154) over real sockets: the
 * RFC's examples, LIST-EXTENDED selection and return options, CREATE with
 * USE, the REST route, and imapflow's list().
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ImapFlow } from 'imapflow';
import type { Server } from '../../src/index.js';
import { rawSession, startServer } from '../helpers/server.js';
import { request, startRest } from '../rest/helpers.js';

const storage = {
  INBOX: {},
  '': {
    folders: {
      Drafts: { 'special-use': '\\Drafts' },
      'Sent Mail': { 'special-use': '\\Sent' },
      Stuff: {},
      Junk: { 'special-use': ['\\Junk'] },
      Archive: { 'special-use': '\\Archive', folders: { '2026': {} } },
    },
  },
};

describe('SPECIAL-USE over IMAP', () => {
  let server: Server;
  let port: number;
  before(async () => {
    ({ server, port } = await startServer({ plugins: ['CREATE-SPECIAL-USE', 'CHILDREN'], storage }));
  });
  after(() => server.stop());

  test('CREATE-SPECIAL-USE loads SPECIAL-USE; both are advertised', async () => {
    const c = await rawSession(port);
    const [caps] = await c.command('CAPABILITY');
    assert.match(caps!, / SPECIAL-USE( |$)/);
    assert.match(caps!, / CREATE-SPECIAL-USE( |$)/);
    c.close();
  });

  test('RFC 6154 §5.1: LIST "" "%" shows the attributes beside the others', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('LIST "" "%"'), [
      '* LIST (\\HasChildren \\Archive) "/" "Archive"',
      '* LIST (\\HasNoChildren \\Drafts) "/" "Drafts"',
      '* LIST (\\HasNoChildren) "/" "INBOX"',
      '* LIST (\\HasNoChildren \\Junk) "/" "Junk"',
      '* LIST (\\HasNoChildren \\Sent) "/" "Sent Mail"',
      '* LIST (\\HasNoChildren) "/" "Stuff"',
      'T2 OK LIST completed',
    ]);
    c.close();
  });

  test('RFC 6154 §5.2: LIST (SPECIAL-USE) lists only special-use mailboxes; RETURN (SPECIAL-USE) is accepted', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('LIST (SPECIAL-USE) "" "*"'), [
      '* LIST (\\HasChildren \\Archive) "/" "Archive"',
      '* LIST (\\HasNoChildren \\Drafts) "/" "Drafts"',
      '* LIST (\\HasNoChildren \\Junk) "/" "Junk"',
      '* LIST (\\HasNoChildren \\Sent) "/" "Sent Mail"',
      'T2 OK LIST completed',
    ]);
    const lines = await c.command('LIST "" "*" RETURN (SPECIAL-USE)');
    assert.equal(lines.length, 8);
    assert.ok(lines.includes('* LIST (\\HasNoChildren \\Sent) "/" "Sent Mail"'));
    assert.deepEqual(await c.command('LIST (SPECIAL-USE) "" ("Dra*" "Sent*") RETURN (SPECIAL-USE CHILDREN)'), [
      '* LIST (\\HasNoChildren \\Drafts) "/" "Drafts"',
      '* LIST (\\HasNoChildren \\Sent) "/" "Sent Mail"',
      'T4 OK LIST completed',
    ]);
    // LSUB shows no special-use attributes; an unknown option is BAD.
    assert.deepEqual(await c.command('LSUB "" "Drafts"'), ['* LSUB () "/" "Drafts"', 'T5 OK LSUB completed']);
    assert.match((await c.command('LIST (NOSUCH) "" "*"')).at(-1)!, /^T6 BAD /);
    c.close();
  });

  test('RFC 6154 §5.3: CREATE with USE; an unknown attribute is NO [USEATTR] and creates nothing', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('CREATE MySpecial (USE (\\Drafts \\Sent))'), ['T2 OK Create completed']);
    assert.deepEqual(await c.command('LIST "" MySpecial'), ['* LIST (\\HasNoChildren \\Drafts \\Sent) "/" "MySpecial"', 'T3 OK LIST completed']);
    const refused = await c.command('CREATE Foo (USE (\\Important \\Nonsense))');
    assert.match(refused[0]!, /^T4 NO \[USEATTR\] /);
    assert.equal(server.store.has('Foo'), false);
    assert.match((await c.command('CREATE Bar (USE (Sent))'))[0]!, /^T5 NO \[USEATTR\] /);
    assert.deepEqual(await c.command('CREATE Plain (USE ())'), ['T6 OK Create completed']);
    assert.match((await c.command('CREATE Baz (NOSUCHPARAM)'))[0]!, /^T7 BAD /);
    assert.deepEqual(server.control.getMailbox('MySpecial').specialUse, ['\\Drafts', '\\Sent']);
    // Kept in snapshots and restored by reset (to the options' state).
    assert.deepEqual(server.control.snapshot()['']!.folders!['MySpecial']!['special-use'], ['\\Drafts', '\\Sent']);
    c.close();
  });
});

test('without the plugin: no attributes, no selection option, CREATE with USE is BAD', async () => {
  const { server, port } = await startServer({ plugins: ['CHILDREN'], storage });
  try {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('LIST "" "Drafts"'), ['* LIST (\\HasNoChildren) "/" "Drafts"', 'T2 OK LIST completed']);
    assert.match((await c.command('LIST (SPECIAL-USE) "" "*"')).at(-1)!, /^T3 BAD /);
    assert.match((await c.command('CREATE X (USE (\\Sent))')).at(-1)!, /^T4 BAD /);
    c.close();
  } finally {
    await server.stop();
  }
});

describe('SPECIAL-USE over REST', () => {
  test('PUT .../special-use replaces the attributes, answers MailboxInfo, and LIST shows the change at once', async () => {
    const { server, restPort, imapPort } = await startRest({ plugins: ['SPECIAL-USE'], storage });
    try {
      const c = await rawSession(imapPort);
      const put = await request(restPort, 'PUT', '/v1/mailboxes/Stuff/special-use', { json: { specialUse: ['\\trash', '\\Trash'] } });
      assert.equal(put.status, 200);
      assert.equal(put.json.path, 'Stuff');
      assert.deepEqual(put.json.specialUse, ['\\Trash']);
      assert.deepEqual(await c.command('LIST "" Stuff'), ['* LIST (\\Trash) "/" "Stuff"', 'T2 OK LIST completed']);
      const cleared = await request(restPort, 'PUT', '/v1/mailboxes/Drafts/special-use', { json: { specialUse: [] } });
      assert.deepEqual(cleared.json.specialUse, []);
      assert.deepEqual(await c.command('LIST "" Drafts'), ['* LIST () "/" "Drafts"', 'T3 OK LIST completed']);
      // Errors: unknown mailbox, bad attribute, missing or extra fields, wrong method.
      const missing = await request(restPort, 'PUT', '/v1/mailboxes/Nope/special-use', { json: { specialUse: [] } });
      assert.equal(missing.status, 404);
      assert.equal(missing.json.error.code, 'NONEXISTENT');
      const bad = await request(restPort, 'PUT', '/v1/mailboxes/Stuff/special-use', { json: { specialUse: ['\\Nope'] } });
      assert.equal(bad.status, 400);
      assert.equal(bad.json.error.code, 'INVALID');
      assert.equal((await request(restPort, 'PUT', '/v1/mailboxes/Stuff/special-use', { json: {} })).status, 400);
      assert.equal((await request(restPort, 'PUT', '/v1/mailboxes/Stuff/special-use', { json: { specialUse: [], x: 1 } })).status, 400);
      const get = await request(restPort, 'GET', '/v1/mailboxes/Stuff/special-use');
      assert.equal(get.status, 405);
      assert.equal(get.json.error.code, 'METHOD');
      // Nested paths are one URL-encoded segment.
      const nested = await request(restPort, 'PUT', '/v1/mailboxes/Archive%2F2026/special-use', { json: { specialUse: ['\\Archive'] } });
      assert.equal(nested.status, 200);
      assert.equal(nested.json.path, 'Archive/2026');
      // The control operation is the same one.
      assert.deepEqual(server.extension('SPECIAL-USE')!.setSpecialUse('Stuff', { specialUse: ['\\Junk'] }).specialUse, ['\\Junk']);
      // Snapshots show the change; reset restores the options' attributes.
      assert.deepEqual(server.control.snapshot()['']!.folders!['Stuff']!['special-use'], ['\\Junk']);
      server.control.reset();
      assert.deepEqual(server.control.getMailbox('Stuff').specialUse, []);
      assert.deepEqual(server.control.getMailbox('Drafts').specialUse, ['\\Drafts']);
      // In the OpenAPI document.
      const doc = await request(restPort, 'GET', '/v1/openapi.json');
      assert.ok(doc.json.paths['/v1/mailboxes/{path}/special-use'].put);
      c.close();
    } finally {
      await server.stop();
    }
  });

  test('without the plugin the route is 404 NOTFOUND and not in the OpenAPI document', async () => {
    const { server, restPort } = await startRest({ plugins: [], storage });
    try {
      const put = await request(restPort, 'PUT', '/v1/mailboxes/Stuff/special-use', { json: { specialUse: ['\\Trash'] } });
      assert.equal(put.status, 404);
      assert.equal(put.json.error.code, 'NOTFOUND');
      const doc = await request(restPort, 'GET', '/v1/openapi.json');
      assert.equal(doc.json.paths['/v1/mailboxes/{path}/special-use'], undefined);
    } finally {
      await server.stop();
    }
  });
});

test('imapflow list() reports specialUse, also after a REST change', { timeout: 15000 }, async () => {
  const { server, imapPort } = await startRest({ plugins: 'all', storage });
  const client = new ImapFlow({ host: '127.0.0.1', port: imapPort, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const list = await client.list();
    const byPath = new Map(list.map((m) => [m.path, m.specialUse]));
    assert.equal(byPath.get('Drafts'), '\\Drafts');
    assert.equal(byPath.get('Sent Mail'), '\\Sent');
    assert.equal(byPath.get('Junk'), '\\Junk');
    assert.equal(byPath.get('Archive'), '\\Archive');
    server.extension('SPECIAL-USE')!.setSpecialUse('Stuff', { specialUse: ['\\Trash'] });
    const again = await client.list();
    assert.equal(again.find((m) => m.path === 'Stuff')?.specialUse, '\\Trash');
    await client.mailboxCreate('Outbox');
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

/**
 * Per-user mailboxes (`userMailboxes: true`) over real sockets: separate
 * INBOXes over IMAP (raw and imapflow) and REST (`?user=`), the Other Users
 * namespace of RFC 2342 governed by RFC 4314 rights, SMTP delivering a copy
 * to each recipient's INBOX, events naming the user, snapshot and reset per
 * user, and the default (one tree) refusing `?user=`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ImapFlow } from 'imapflow';
import { createServer, type Server } from '../../src/index.js';
import type { ServerOptions, UserStorage } from '../../src/options/types.js';
import { collect, mail, rawSession } from '../helpers/server.js';
import type { RawClient } from '../helpers/raw-client.js';
import { request } from '../rest/helpers.js';
import { RawSmtp, transaction } from '../smtp/smtp-client.js';

const users = { alice: { password: 'alicepass' }, bob: { password: 'bobpass' }, carol: { password: 'carolpass' } };

const storage: UserStorage = {
  users: {
    alice: { INBOX: { messages: [mail('For alice 1'), mail('For alice 2')] }, '': { folders: { Notes: {} } } },
    bob: {
      INBOX: { messages: [mail('For bob')] },
      // bob shares Team with alice (read and list) and no one else.
      '': { folders: { Team: { acl: { bob: 'lrswipkxtea', alice: 'lr' }, messages: [mail('Team plan')] }, Private: {} } },
    },
  },
  shared: { '#shared/': { type: 'shared', separator: '/', folders: { Board: { messages: [mail('Notice')] } } } },
};

async function start(options: ServerOptions = {}): Promise<{ server: Server; imap: number; rest: number }> {
  const server = createServer({ port: 0, users, userMailboxes: true, storage, rest: { port: 0 }, ...options });
  const a = await server.start();
  return { server, imap: a.imap.port, rest: a.rest!.port };
}

async function login(port: number, user: string, password: string): Promise<RawClient> {
  const c = await rawSession(port, false);
  const lines = await c.command(`LOGIN ${user} ${password}`);
  assert.match(lines.at(-1)!, /^T\d+ OK/);
  return c;
}

const existsOf = (lines: string[]): number => Number(/^\* (\d+) EXISTS/m.exec(lines.join('\n'))![1]);
const listed = (lines: string[]): string[] =>
  lines.filter((l) => l.startsWith('* LIST ')).map((l) => /^\* LIST \([^)]*\) (?:"[^"]*"|NIL) (.*)$/.exec(l)![1]!.replace(/^"(.*)"$/, '$1'));

describe('per-user trees over IMAP and REST (ACL loaded)', () => {
  let server: Server;
  let imap: number;
  let rest: number;
  before(async () => ({ server, imap, rest } = await start({ plugins: ['ACL', 'NAMESPACE'] })));
  after(() => server.stop());

  test('raw IMAP: each user selects their own INBOX; LIST shows their tree, shared mailboxes and what ACL lets them see of others', async () => {
    const alice = await login(imap, 'alice', 'alicepass');
    const bob = await login(imap, 'bob', 'bobpass');
    const carol = await login(imap, 'carol', 'carolpass');
    try {
      assert.equal(existsOf(await alice.command('SELECT INBOX')), 2);
      assert.equal(existsOf(await bob.command('SELECT INBOX')), 1);
      // A user without storage of their own starts with an empty INBOX.
      assert.equal(existsOf(await carol.command('SELECT INBOX')), 0);
      // bob's Team (alice has l r), not bob's INBOX or Private (no ACL: bob's alone).
      assert.deepEqual(listed(await alice.command('LIST "" "*"')).sort(), ['#shared/Board', 'INBOX', 'Notes', 'Other Users/bob/Team']);
      // `%` stops at the namespace's levels (RFC 3501 §6.3.8), which are not mailboxes.
      const top = await alice.command('LIST "" "Other Users/%"');
      assert.ok(top.some((l) => /^\* LIST \([^)]*\\Noselect[^)]*\) "\/" "Other Users\/bob"$/.test(l)), top.join('\n'));
      // carol has no rights on bob's mailboxes: nothing of bob's shows.
      assert.deepEqual(listed(await carol.command('LIST "" "Other Users/*"')), []);
      assert.deepEqual(listed(await bob.command('LIST "" "*"')).sort(), ['#shared/Board', 'INBOX', 'Private', 'Team']);
    } finally {
      alice.close();
      bob.close();
      carol.close();
    }
  });

  test('NAMESPACE (RFC 2342) lists the personal, Other Users and shared namespaces', async () => {
    const alice = await login(imap, 'alice', 'alicepass');
    try {
      const lines = await alice.command('NAMESPACE');
      assert.ok(lines.includes('* NAMESPACE (("" "/")) (("Other Users/" "/")) (("#shared/" "/"))'), lines.join('\n'));
    } finally {
      alice.close();
    }
  });

  test('another user\'s mailbox: readable with l r, read-only, hidden without rights (RFC 4314 §4 NONEXISTENT)', async () => {
    const alice = await login(imap, 'alice', 'alicepass');
    const carol = await login(imap, 'carol', 'carolpass');
    try {
      const sel = await alice.command('SELECT "Other Users/bob/Team"');
      assert.match(sel.at(-1)!, /OK \[READ-ONLY\]/);
      assert.equal(existsOf(sel), 1);
      const fetched = await alice.command('FETCH 1 (BODY.PEEK[HEADER.FIELDS (SUBJECT)])');
      assert.ok(fetched.join('\n').includes('Subject: Team plan'));
      const status = await alice.command('STATUS "Other Users/bob/Team" (MESSAGES)');
      assert.ok(status.includes('* STATUS "Other Users/bob/Team" (MESSAGES 1)'), status.join('\n'));
      const myrights = await alice.command('MYRIGHTS "Other Users/bob/Team"');
      assert.ok(myrights.includes('* MYRIGHTS "Other Users/bob/Team" lr'), myrights.join('\n'));
      // No rights on bob's INBOX: it does not exist for alice.
      assert.match((await alice.command('SELECT "Other Users/bob/INBOX"')).at(-1)!, /NO \[NONEXISTENT\]/);
      assert.match((await carol.command('SELECT "Other Users/bob/Team"')).at(-1)!, /NO \[NONEXISTENT\]/);
      // Without the i right an APPEND is refused, and bob's mailbox is unchanged.
      assert.match((await alice.command('APPEND "Other Users/bob/Team" {5+}\r\nHi\r\n')).at(-1)!, /NO \[NOPERM\]/);
      assert.equal(server.control.listMessages('Team', {}, { user: 'bob' }).length, 1);
      // A name under Other Users that is no user names nothing.
      assert.match((await alice.command('CREATE "Other Users/nobody/x"')).at(-1)!, /^T\d+ NO/);
    } finally {
      alice.close();
      carol.close();
    }
  });

  test('subscriptions are each user\'s own, also to another user\'s mailbox (LSUB, LIST (SUBSCRIBED))', async () => {
    const alice = await login(imap, 'alice', 'alicepass');
    const bob = await login(imap, 'bob', 'bobpass');
    try {
      const bobsBefore = (await bob.command('LSUB "" "*"')).slice(0, -1);
      assert.match((await alice.command('SUBSCRIBE "Other Users/bob/Team"')).at(-1)!, /^T\d+ OK/);
      const lsub = await alice.command('LSUB "" "Other Users/*"');
      assert.ok(lsub.some((l) => /^\* LSUB \([^)]*\) "\/" "Other Users\/bob\/Team"$/.test(l)), lsub.join('\n'));
      const subscribed = await alice.command('LIST (SUBSCRIBED) "" "*"');
      assert.ok(subscribed.some((l) => l.includes('"Other Users/bob/Team"') && l.includes('\\Subscribed')), subscribed.join('\n'));
      // bob's subscriptions are his: alice's changed nothing of them.
      assert.deepEqual((await bob.command('LSUB "" "*"')).slice(0, -1), bobsBefore);
      assert.match((await alice.command('UNSUBSCRIBE "Other Users/bob/Team"')).at(-1)!, /^T\d+ OK/);
      assert.ok(!(await alice.command('LSUB "" "*"')).some((l) => l.includes('Team')));
    } finally {
      alice.close();
      bob.close();
    }
  });

  test('imapflow: two users, separate INBOXes; an APPEND by one never reaches the other', { timeout: 15_000 }, async () => {
    const flow = (user: string, pass: string): ImapFlow => {
      const c = new ImapFlow({ host: '127.0.0.1', port: imap, secure: false, auth: { user, pass }, logger: false, disableAutoIdle: true });
      c.on('error', () => undefined);
      return c;
    };
    const a = flow('alice', 'alicepass');
    const b = flow('bob', 'bobpass');
    await a.connect();
    await b.connect();
    try {
      const subjects = async (c: ImapFlow): Promise<string[]> => {
        const lock = await c.getMailboxLock('INBOX');
        try {
          const out: string[] = [];
          for await (const m of c.fetch('1:*', { envelope: true })) out.push(m.envelope?.subject ?? '');
          return out;
        } finally {
          lock.release();
        }
      };
      assert.deepEqual(await subjects(a), ['For alice 1', 'For alice 2']);
      assert.deepEqual(await subjects(b), ['For bob']);
      await a.append('INBOX', mail('Appended by alice'));
      assert.deepEqual(await subjects(b), ['For bob']);
      const st = await a.status('INBOX', { messages: true });
      assert.equal(st && st.messages, 3);
      const names = (await a.list()).map((m) => m.path).sort();
      assert.ok(names.includes('Other Users/bob/Team') && !names.includes('Other Users/bob/INBOX'), names.join(', '));
    } finally {
      await a.logout().catch(() => a.close());
      await b.logout().catch(() => b.close());
    }
  });

  test('REST: ?user= on mailbox and message routes; a path outside the shared namespaces needs it', async () => {
    const bobInbox = await request(rest, 'GET', '/v1/mailboxes/INBOX/messages?user=bob');
    assert.equal(bobInbox.status, 200);
    assert.equal(bobInbox.json.length, 1);
    const added = await request(rest, 'POST', '/v1/mailboxes/INBOX/messages?user=carol', { json: { raw: mail('REST to carol') } });
    assert.equal(added.status, 201);
    assert.deepEqual((await request(rest, 'GET', '/v1/mailboxes/INBOX/messages?user=carol')).json.map((m: { uid: number }) => m.uid), [added.json.uid]);
    const names = (await request(rest, 'GET', '/v1/mailboxes?user=bob')).json.map((m: { path: string }) => m.path);
    assert.deepEqual(names, ['INBOX', 'Private', 'Team']);
    // Mailbox routes: create, rename, subscribe and delete in carol's tree only.
    assert.equal((await request(rest, 'POST', '/v1/mailboxes?user=carol', { json: { path: 'Made' } })).status, 201);
    assert.equal((await request(rest, 'POST', '/v1/mailboxes/Made/rename?user=carol', { json: { newPath: 'Renamed' } })).status, 200);
    assert.deepEqual((await request(rest, 'GET', '/v1/mailboxes?user=carol')).json.map((m: { path: string }) => m.path), ['INBOX', 'Renamed']);
    assert.equal((await request(rest, 'GET', '/v1/mailboxes/Renamed?user=bob')).status, 404);
    assert.equal((await request(rest, 'DELETE', '/v1/mailboxes/Renamed?user=carol', { json: {} })).status, 200);
    // A shared namespace needs no user.
    assert.equal((await request(rest, 'GET', '/v1/mailboxes/%23shared%2FBoard/messages')).json.length, 1);
    // Without a user: the shared namespaces only.
    assert.deepEqual((await request(rest, 'GET', '/v1/mailboxes')).json.map((m: { path: string }) => m.path), ['#shared/Board']);
    const noUser = await request(rest, 'GET', '/v1/mailboxes/INBOX/messages');
    assert.equal(noUser.status, 400);
    assert.equal(noUser.json.error.code, 'INVALID');
    assert.match(noUser.json.error.message, /user/);
    const unknown = await request(rest, 'GET', '/v1/mailboxes/INBOX?user=zed');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.code, 'NONEXISTENT');
    const acl = await request(rest, 'GET', '/v1/mailboxes/Team/acl?user=bob');
    assert.deepEqual(acl.json, { bob: 'lrswipkxtea', alice: 'lr' });
    // A mailbox of a user's own tree without an ACL is its owner's alone.
    assert.deepEqual((await request(rest, 'GET', '/v1/mailboxes/Private/acl?user=bob')).json, { bob: 'lrswipkxtea' });
    const spec = (await request(rest, 'GET', '/v1/openapi.json')).json;
    const params = spec.paths['/v1/mailboxes/{path}/messages'].get.parameters.map((p: { name: string }) => p.name);
    assert.ok(params.includes('user'), params.join(', '));
  });
});

describe('without access control', () => {
  test('no other user\'s mailbox shows, even with rights stored (a tree is its owner\'s alone)', async () => {
    const { server, imap } = await start({ plugins: ['NAMESPACE'] });
    const alice = await login(imap, 'alice', 'alicepass');
    try {
      assert.deepEqual(listed(await alice.command('LIST "" "*"')).sort(), ['#shared/Board', 'INBOX', 'Notes']);
      assert.match((await alice.command('SELECT "Other Users/bob/Team"')).at(-1)!, /NO \[NONEXISTENT\]/);
    } finally {
      alice.close();
      await server.stop();
    }
  });
});

describe('changes, events, snapshot and reset per user', () => {
  test('a change in one tree reaches only that user\'s sessions; events carry the user', async () => {
    const { server, imap } = await start({ plugins: ['IDLE'] });
    const mailboxEvents = collect(server, 'mailbox');
    const expunges = collect(server, 'expunge');
    const alice = await login(imap, 'alice', 'alicepass');
    const bob = await login(imap, 'bob', 'bobpass');
    try {
      await alice.command('SELECT INBOX');
      await bob.command('SELECT INBOX');
      server.control.addMessage('INBOX', { raw: mail('late for bob') }, { user: 'bob' });
      const bobNoop = await bob.command('NOOP');
      assert.ok(bobNoop.includes('* 2 EXISTS'), bobNoop.join('\n'));
      const aliceNoop = await alice.command('NOOP');
      assert.ok(!aliceNoop.some((l) => /EXISTS/.test(l)), aliceNoop.join('\n'));
      await bob.command('CREATE Projects');
      assert.deepEqual(mailboxEvents.at(-1), { type: 'create', path: 'Projects', oldPath: null, origin: 2, user: 'bob' });
      server.control.expungeMessages('INBOX', { uids: [1] }, { user: 'alice' });
      assert.deepEqual(expunges.at(-1), { path: 'INBOX', uids: [1], origin: null, user: 'alice' });
    } finally {
      alice.close();
      bob.close();
      await server.stop();
    }
  });

  test('snapshot is { users, shared }; it rebuilds the same trees; reset restores every user\'s tree', async () => {
    const { server, imap } = await start();
    try {
      server.control.addMessage('INBOX', { raw: mail('extra') }, { user: 'alice' });
      server.control.createMailbox('Later', {}, { user: 'carol' });
      const snap = server.control.userSnapshot();
      assert.deepEqual(Object.keys(snap.users!).sort(), ['alice', 'bob', 'carol']);
      assert.equal(snap.users!.alice!.INBOX!.messages!.length, 3);
      assert.ok('#shared/' in snap.shared!);
      assert.equal(snap.shared!.INBOX, undefined);
      const copy = createServer({ users, userMailboxes: true, storage: snap });
      assert.deepEqual(copy.control.userSnapshot(), snap);
      assert.deepEqual(server.control.snapshot(), snap);
      const alice = await login(imap, 'alice', 'alicepass');
      server.control.reset();
      // Every session gets BYE on reset, as with one tree.
      const bye = await alice.command('NOOP').catch(() => ['closed']);
      assert.ok(alice.closed || bye.some((l) => l.startsWith('* BYE')), bye.join('\n'));
      alice.close();
      assert.equal(server.control.listMessages('INBOX', {}, { user: 'alice' }).length, 2);
      assert.throws(() => server.control.getMailbox('Later', { user: 'carol' }), /does not exist/);
      // Deleting a user drops their tree; added again, they start from their seed.
      server.control.addMessage('INBOX', { raw: mail('gone with bob') }, { user: 'bob' });
      server.control.deleteUser('bob');
      server.control.addUser({ name: 'bob', password: 'bobpass' });
      assert.deepEqual(server.control.listMessages('INBOX', {}, { user: 'bob' }).map((m) => m.uid), [1]);
      const again = await login(imap, 'alice', 'alicepass');
      assert.equal(existsOf(await again.command('SELECT INBOX')), 2);
      again.close();
    } finally {
      await server.stop();
    }
  });
});

describe('SMTP', () => {
  test('a message to two users leaves one copy in each INBOX, one delivery event per user', { timeout: 15_000 }, async () => {
    const server = createServer({ port: 0, users, userMailboxes: true, storage, smtp: { port: 0, addresses: { 'ali@example.org': 'alice' } } });
    const { smtp } = await server.start();
    const deliveries = collect(server, 'delivery');
    const { client } = await RawSmtp.connect(smtp!.port);
    try {
      const before = { alice: server.control.listMessages('INBOX', {}, { user: 'alice' }).length, bob: server.control.listMessages('INBOX', {}, { user: 'bob' }).length };
      const data = await transaction(client, 'sender@example.com', ['alice@example.com', 'bob@example.com', 'ali@example.org']);
      assert.equal(data.code, 354);
      const done = await client.data('Subject: to both\r\n\r\nHi\r\n');
      assert.equal(done.code, 250);
      assert.equal(server.control.listMessages('INBOX', {}, { user: 'alice' }).length, before.alice + 1);
      assert.equal(server.control.listMessages('INBOX', {}, { user: 'bob' }).length, before.bob + 1);
      assert.equal(server.control.listMessages('INBOX', {}, { user: 'carol' }).length, 0);
      assert.deepEqual(deliveries.map((d) => [d.user, d.to]).sort(), [['alice', ['alice@example.com', 'ali@example.org']], ['bob', ['bob@example.com']]]);
    } finally {
      client.close();
      await server.stop();
    }
  });
});

describe('options', () => {
  test('the one-tree storage form with userMailboxes is an error naming the field', () => {
    assert.throws(() => createServer({ users, userMailboxes: true, storage: { INBOX: {} } as never }), /storage\.INBOX: .*users/);
    assert.throws(() => createServer({ users, userMailboxes: true, storage: { users: { zed: {} } } }), /storage\.users\.zed: no such user/);
    assert.throws(() => createServer({ userMailboxes: 'yes' as never }), /userMailboxes/);
    assert.throws(() => createServer({ userMailboxes: true, plugins: ['X-GM-EXT-1'] }), /userMailboxes: cannot go with the X-GM-EXT-1 plugin/);
    assert.throws(() => createServer({ users, userMailboxes: true, storage: { users: { alice: { '#s/': { type: 'shared' } } } } }), /storage\.users\.alice\["#s\/"\]: a shared namespace belongs in storage\.shared/);
  });

  test('without userMailboxes, ?user= is refused and the one tree is unchanged', async () => {
    const server = createServer({ port: 0, rest: { port: 0 } });
    const { rest } = await server.start();
    try {
      const r = await request(rest!.port, 'GET', '/v1/mailboxes/INBOX/messages?user=testuser');
      assert.equal(r.status, 400);
      assert.match(r.json.error.message, /userMailboxes/);
      assert.equal((await request(rest!.port, 'GET', '/v1/mailboxes/INBOX/messages')).status, 200);
      assert.equal(server.trees, null);
    } finally {
      await server.stop();
    }
  });
});

describe('IDLE, NOTIFY, SETACL and METADATA in the session user\'s view', () => {
  let server: Server;
  let imap: number;
  before(async () => ({ server, imap } = await start({ plugins: ['ACL', 'IDLE', 'NOTIFY', 'METADATA'] })));
  after(() => server.stop());

  test('IDLE: a delivery to bob\'s INBOX is no EXISTS for alice idling in hers; one to hers is', async () => {
    const alice = await login(imap, 'alice', 'alicepass');
    try {
      const count = existsOf(await alice.command('SELECT INBOX'));
      alice.write('I1 IDLE\r\n');
      assert.match(await alice.line(), /^\+ /);
      server.control.addMessage('INBOX', { raw: mail('to bob during IDLE') }, { user: 'bob' });
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(alice.pending(), '');
      server.control.addMessage('INBOX', { raw: mail('to alice during IDLE') }, { user: 'alice' });
      assert.equal(await alice.line(), `* ${count + 1} EXISTS`);
      alice.write('DONE\r\n');
      assert.match((await alice.until('I1')).at(-1)!, /^I1 OK/);
    } finally {
      alice.close();
    }
  });

  test('NOTIFY (RFC 5465) personal: changes in another user\'s tree with the same names are not the session\'s', async () => {
    const alice = await login(imap, 'alice', 'alicepass');
    try {
      assert.match((await alice.command('NOTIFY SET (personal (MessageNew MessageExpunge))')).at(-1)!, /^T\d+ OK/);
      // bob gets a Notes of his own: same name as alice's, another mailbox.
      server.control.createMailbox('Notes', {}, { user: 'bob' });
      server.control.addMessage('Notes', { raw: mail('bob note') }, { user: 'bob' });
      server.control.addMessage('INBOX', { raw: mail('bob only') }, { user: 'bob' });
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(alice.pending(), '');
      server.control.addMessage('Notes', { raw: mail('alice note') }, { user: 'alice' });
      const line = await alice.line();
      assert.match(line, /^\* STATUS "?Notes"? \(.*MESSAGES 1 /);
    } finally {
      alice.close();
    }
  });

  test('SETACL by the owner shows a mailbox to another user under Other Users; DELETEACL hides it again', async () => {
    const bob = await login(imap, 'bob', 'bobpass');
    const carol = await login(imap, 'carol', 'carolpass');
    try {
      assert.deepEqual(listed(await carol.command('LIST "Other Users/" "*"')), []);
      assert.match((await bob.command('SETACL Private carol lr')).at(-1)!, /^T\d+ OK/);
      assert.deepEqual(listed(await carol.command('LIST "Other Users/" "*"')), ['Other Users/bob/Private']);
      const getacl = await bob.command('GETACL Private');
      assert.ok(getacl.some((l) => /^\* ACL "?Private"? /.test(l) && / "?bob"? lrswipkxte/.test(l) && / "?carol"? lr$/.test(l)), getacl.join('\n'));
      // carol may read but not change bob's ACL.
      assert.match((await carol.command('SETACL "Other Users/bob/Private" carol lrswi')).at(-1)!, /NO \[NOPERM\]/);
      // k on bob's Private lets carol create below it, not at the top of bob's tree (RFC 4314 §4 CREATE: k on the parent).
      assert.match((await bob.command('SETACL Private carol +k')).at(-1)!, /^T\d+ OK/);
      assert.match((await carol.command('CREATE "Other Users/bob/Private/ByCarol"')).at(-1)!, /^T\d+ OK/);
      assert.ok(server.control.listMailboxes({ user: 'bob' }).some((m) => m.path === 'Private/ByCarol'));
      assert.deepEqual(server.extension('ACL')!.getAcl('Private/ByCarol', { user: 'bob' }), { bob: 'lrswipkxtea', carol: 'lrswipkxtea' });
      assert.match((await carol.command('CREATE "Other Users/bob/TopByCarol"')).at(-1)!, /NO \[NOPERM\]/);
      assert.match((await carol.command('CREATE "Other Users/bob/INBOX/x"')).at(-1)!, /NO \[(NOPERM|NONEXISTENT)\]/);
      assert.match((await bob.command('DELETEACL Private carol')).at(-1)!, /^T\d+ OK/);
      // Private is hidden again; the mailbox carol created keeps her rights (its ACL, not its parent's).
      assert.deepEqual(listed(await carol.command('LIST "Other Users/" "*"')), ['Other Users/bob/Private/ByCarol']);
    } finally {
      bob.close();
      carol.close();
    }
  });

  test('METADATA: each user\'s INBOX has its own entries; the control API takes the user', async () => {
    const alice = await login(imap, 'alice', 'alicepass');
    const bob = await login(imap, 'bob', 'bobpass');
    try {
      assert.match((await alice.command('SETMETADATA INBOX (/private/comment "alice says")')).at(-1)!, /^T\d+ OK/);
      const bobs = await bob.command('GETMETADATA INBOX /private/comment');
      assert.ok(!bobs.some((l) => l.includes('alice says')), bobs.join('\n'));
      assert.deepEqual(server.extension('METADATA')!.getMetadata('INBOX', { user: 'alice' }), { '/private/comment': 'alice says' });
      assert.deepEqual(server.extension('METADATA')!.getMetadata('INBOX', { user: 'bob' }), {});
    } finally {
      alice.close();
      bob.close();
    }
  });
});

describe('the rookery command', () => {
  test('--demo with ROOKERY_USER_MAILBOXES=1 (the flag\'s environment form): each demo user has a copy of the demo mailboxes', { timeout: 15_000 }, async () => {
    const { startCli, exited } = await import('../helpers/cli.js');
    const { child, port } = await startCli(['--port', '0', '--demo'], { ROOKERY_USER_MAILBOXES: '1' });
    try {
      const a = await login(port, 'testuser', 'testpass');
      const b = await login(port, 'alice', 'alicepass');
      const countA = existsOf(await a.command('SELECT INBOX'));
      assert.ok(countA > 0);
      assert.equal(existsOf(await b.command('SELECT INBOX')), countA);
      await a.command('STORE 1 +FLAGS (\\Deleted)');
      await a.command('EXPUNGE');
      assert.equal(existsOf(await b.command('SELECT INBOX')), countA);
      a.close();
      b.close();
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  });

  test('--user-mailboxes with a per-user storage file: each user logs in to their own INBOX', { timeout: 15_000 }, async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { startCli, exited } = await import('../helpers/cli.js');
    const dir = mkdtempSync(join(tmpdir(), 'rookery-users-'));
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ users }));
    const file = join(dir, 'storage.json');
    writeFileSync(file, JSON.stringify({ users: { bob: { INBOX: { messages: [mail('cli bob')] } } } }));
    const { child, port } = await startCli(['--port', '0', '--user-mailboxes', '--storage', file, '--config', config]);
    try {
      const alice = await login(port, 'alice', 'alicepass');
      const bob = await login(port, 'bob', 'bobpass');
      assert.equal(existsOf(await alice.command('SELECT INBOX')), 0);
      assert.equal(existsOf(await bob.command('SELECT INBOX')), 1);
      alice.close();
      bob.close();
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  });
});

describe('REST fuzz with userMailboxes', () => {
  test('1500 seeded requests (?user= among them): every answer follows the error rules; every tree stays consistent and its snapshot rebuilds it', { timeout: 60_000 }, async () => {
    const { fuzzRest, routesFromOpenApi } = await import('../fuzz/rest-fuzz-core.js');
    const fuzzUsers = { testuser: { password: 'testpass' }, alice: { password: 'alicepass' }, bob: { password: 'bobpass' } };
    const server = createServer({ port: 0, plugins: 'all', users: fuzzUsers, userMailboxes: true, rest: { port: 0 }, storage: { users: { alice: storage.users!.alice! } } });
    const { rest } = await server.start();
    try {
      const routes = routesFromOpenApi((await request(rest!.port, 'GET', '/v1/openapi.json')).json);
      const result = await fuzzRest({ port: rest!.port, seed: 15, requests: 1500, concurrency: 4, routes });
      assert.deepEqual(result.findings.map((f) => `${f.problem} :: ${f.request}`), []);
      for (const status of [200, 400, 404]) assert.ok((result.statuses.get(status) ?? 0) > 0, `no ${status}: ${[...result.statuses].join(' ')}`);
      for (const name of server.control.listUsers().map((u) => u.name)) {
        for (const box of server.control.listMailboxes({ user: name })) {
          if (!box.selectable) continue;
          const uids = server.control.listMessages(box.path, {}, { user: name }).map((m) => m.uid);
          assert.equal(uids.length, box.messages, `${name}/${box.path}`);
          assert.ok(uids.every((u, i) => u < box.uidnext && (i === 0 || u > uids[i - 1]!)), `${name}/${box.path}: ${uids.join(',')}`);
        }
      }
      const snap = server.control.userSnapshot();
      const users = Object.fromEntries(Object.keys(snap.users!).map((n) => [n, { password: 'x' }]));
      const copy = createServer({ plugins: 'all', users, userMailboxes: true, storage: JSON.parse(JSON.stringify(snap)) });
      assert.deepEqual(copy.control.userSnapshot(), JSON.parse(JSON.stringify(snap)));
    } finally {
      await server.stop();
    }
  });
});

describe('wait-until on a user\'s mailbox', () => {
  test('waitUntil { mailbox, messages, user } resolves when that user\'s INBOX fills, not another\'s; REST waits on events, which carry the user', async () => {
    const { server, rest } = await start();
    try {
      const inProcess = server.waitUntil({ mailbox: 'INBOX', messages: 1, user: 'carol' }, { timeout: 5000 });
      const since = server.lastEventId();
      const polled = request(rest, 'GET', `/v1/events/wait?types=mailbox&match=user=carol&since=${since}&timeout=5000`);
      server.control.addMessage('INBOX', { raw: mail('not carol') }, { user: 'bob' });
      let settled = false;
      void inProcess.then(() => (settled = true));
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(settled, false);
      server.control.createMailbox('Waited', {}, { user: 'bob' });
      server.control.addMessage('INBOX', { raw: mail('carol') }, { user: 'carol' });
      assert.deepEqual(await inProcess, { mailbox: 'INBOX', messages: 1, user: 'carol' });
      server.control.createMailbox('Waited', {}, { user: 'carol' });
      const reply = await polled;
      assert.equal(reply.status, 200, reply.text);
      assert.deepEqual(reply.json.data, { type: 'create', path: 'Waited', oldPath: null, origin: null, user: 'carol' });
      await assert.rejects(server.waitUntil({ mailbox: 'INBOX', messages: 1 }, { timeout: 10 }), /user: required/);
      await assert.rejects(server.waitUntil({ mailbox: 'INBOX', messages: 1, user: 'zed' }, { timeout: 10 }), /does not exist/);
    } finally {
      await server.stop();
    }
  });
});

describe('URLAUTH (RFC 4467) with userMailboxes', () => {
  test('a URL names a mailbox of its user: the submission server fetches alice\'s INBOX message, not its own INBOX\'s', async () => {
    const server = createServer({
      port: 0,
      plugins: ['URLAUTH'],
      users: { ...users, submit: { password: 'submitpass' } },
      userMailboxes: true,
      storage,
      pluginOptions: { URLAUTH: { submitUsers: ['submit'] } },
    });
    const { imap } = await server.start();
    const alice = await login(imap.port, 'alice', 'alicepass');
    const submit = await login(imap.port, 'submit', 'submitpass');
    try {
      const gen = await alice.command('GENURLAUTH "imap://alice@example.com/INBOX/;uid=2;urlauth=submit+alice" INTERNAL');
      const url = /^\* GENURLAUTH "([^"]+)"$/.exec(gen.find((l) => l.startsWith('* GENURLAUTH'))!)![1]!;
      const fetched = await submit.command(`URLFETCH "${url}"`);
      assert.ok(fetched[0]!.includes('Subject: For alice 2'), fetched.join('\n'));
      // A URL for a name that is no user fetches nothing (and makes no tree).
      const forged = url.replace('imap://alice@', 'imap://zed@');
      assert.deepEqual((await submit.command(`URLFETCH "${forged}"`))[0], `* URLFETCH "${forged}" NIL`);
    } finally {
      alice.close();
      submit.close();
      await server.stop();
    }
  });
});

describe('userStorageSchema', () => {
  test('is plain JSON whose every $ref resolves, with users and shared as the only keys, each a one-tree storage', async () => {
    const { userStorageSchema } = await import('../../src/index.js');
    assert.deepEqual(JSON.parse(JSON.stringify(userStorageSchema)), userStorageSchema);
    const defs = userStorageSchema.$defs as Record<string, unknown>;
    const refs: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) (k === '$ref' ? refs.push(v as string) : walk(v));
    };
    walk(userStorageSchema);
    for (const ref of new Set(refs)) assert.ok(ref.startsWith('#/$defs/') && ref.slice(8) in defs, ref);
    assert.deepEqual(Object.keys(userStorageSchema.properties as object), ['users', 'shared']);
    assert.equal(userStorageSchema.additionalProperties, false);
    assert.deepEqual((defs.tree as { additionalProperties: unknown }).additionalProperties, { $ref: '#/$defs/namespace' });
  });
});

describe('QUOTA (RFC 9208) with userMailboxes', () => {
  test('each user\'s tree is their root "": usage and refusals per user, the same limits for all', async () => {
    const { server, imap, rest } = await start({ plugins: ['QUOTA', 'ACL'], pluginOptions: { QUOTA: { MESSAGE: 3 } } });
    const alice = await login(imap, 'alice', 'alicepass');
    const bob = await login(imap, 'bob', 'bobpass');
    try {
      assert.ok((await alice.command('GETQUOTA ""')).includes('* QUOTA "" (MESSAGE 2 3)'));
      assert.ok((await bob.command('GETQUOTA ""')).includes('* QUOTA "" (MESSAGE 2 3)'));
      assert.match((await alice.command('APPEND INBOX {5+}\r\nHi\r\n')).at(-1)!, /^T\d+ OK/);
      assert.match((await alice.command('APPEND INBOX {5+}\r\nHi\r\n')).at(-1)!, /NO \[OVERQUOTA\]/);
      // bob's root is his own: alice being full refuses nothing of his.
      assert.match((await bob.command('APPEND INBOX {5+}\r\nHi\r\n')).at(-1)!, /^T\d+ OK/);
      const root = await alice.command('GETQUOTAROOT INBOX');
      assert.ok(root.includes('* QUOTAROOT "INBOX" ""') && root.includes('* QUOTA "" (MESSAGE 3 3)'), root.join('\n'));
      // Another user's mailbox is in a root alice cannot name.
      const other = await alice.command('GETQUOTAROOT "Other Users/bob/Team"');
      assert.ok(other.includes('* QUOTAROOT "Other Users/bob/Team"') && !other.some((l) => l.startsWith('* QUOTA ')), other.join('\n'));
      assert.deepEqual(server.extension('QUOTA')!.getQuota({ user: 'bob' }).usage.MESSAGE, 3);
      assert.deepEqual((await request(rest, 'GET', '/v1/quota?user=carol')).json.usage, { STORAGE: 0, MESSAGE: 0, MAILBOX: 1 });
      // The control API's checks: true refuses as APPEND does, per user.
      assert.throws(() => server.control.addMessage('INBOX', { raw: mail('over'), checks: true }, { user: 'alice' }), /OVERQUOTA|Quota exceeded/);
      assert.equal(server.control.addMessage('INBOX', { raw: mail('fits'), checks: true }, { user: 'carol' }).uid, 1);
    } finally {
      alice.close();
      bob.close();
      await server.stop();
    }
  });
});

describe('IMAP fuzz with userMailboxes', () => {
  test('4000 seeded inputs naming Other Users and shared mailboxes too: no finding, every tree consistent', { timeout: 120_000 }, async () => {
    const { runFuzz } = await import('../fuzz/driver.js');
    const report = await runFuzz({ seed: 2026, inputs: 4000, resetEvery: 2000, userMailboxes: true });
    const findings = report.findings.map((f) => `${f.kind} (x${f.count}): ${f.message}\n  input: ${JSON.stringify(f.input ?? '').slice(0, 500)}`);
    assert.deepEqual(findings, []);
    for (const status of ['OK', 'NO', 'BAD']) assert.ok((report.statuses[status] ?? 0) > 20, `${status}: ${report.statuses[status]}`);
  });
});

describe('GET /v1/events/wait with user (state condition on a user\'s mailbox)', () => {
  test("waits for bob's INBOX, not alice's; user needs userMailboxes and a mailbox condition", async () => {
    const { server, rest } = await start();
    try {
      // bob's INBOX has 1 message: a wait for 2 is pending until a message reaches it, not alice's.
      const pending = request(rest, 'GET', '/v1/events/wait?mailbox=INBOX&messages=2&user=bob&timeout=5000');
      await new Promise((r) => setTimeout(r, 50));
      await request(rest, 'POST', '/v1/mailboxes/INBOX/messages?user=alice', { json: { raw: mail('to alice') } });
      await request(rest, 'POST', '/v1/mailboxes/INBOX/messages?user=bob', { json: { raw: mail('to bob') } });
      const answer = await pending;
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.json.data, { mailbox: 'INBOX', messages: 2, user: 'bob' });
      const alone = await request(rest, 'GET', '/v1/events/wait?user=bob&session=1');
      assert.equal(alone.status, 400);
      assert.match(alone.json.error.message, /user: only with mailbox and messages/);
    } finally {
      await server.stop();
    }
    const plain = createServer({ port: 0, rest: { port: 0 } });
    const { rest: plainRest } = await plain.start();
    try {
      const refused = await request(plainRest!.port, 'GET', '/v1/events/wait?mailbox=INBOX&messages=0&user=bob&timeout=0');
      assert.equal(refused.status, 400);
    } finally {
      await plain.stop();
    }
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createServer, ServiceError, type ServerEvents } from '../../src/index.js';
import { mail } from '../helpers/server.js';

function events(server: ReturnType<typeof createServer>): { type: keyof ServerEvents; data: unknown }[] {
  const seen: { type: keyof ServerEvents; data: unknown }[] = [];
  for (const type of ['mailbox', 'expunge', 'flags', 'reset'] as const) {
    server.on(type, (data: unknown) => seen.push({ type, data }));
  }
  return seen;
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ServiceError, `expected ServiceError, got ${String(err)}`);
    return err.code;
  }
  assert.fail('expected an error');
}

describe('control API: mailboxes', () => {
  test('create with missing parents, list ordered by name, MailboxInfo shape', () => {
    const server = createServer();
    const seen = events(server);
    const info = server.control.createMailbox({ path: 'Work/Projects/Rookery', subscribed: true });
    assert.deepEqual(info, {
      path: 'Work/Projects/Rookery',
      delimiter: '/',
      flags: ['\\HasNoChildren'],
      selectable: true,
      subscribed: true,
      messages: 0,
      unseen: 0,
      uidnext: 1,
      uidvalidity: info.uidvalidity,
      permanentFlags: ['\\Answered', '\\Flagged', '\\Draft', '\\Deleted', '\\Seen'],
      specialUse: [],
    });
    assert.deepEqual(
      server.control.listMailboxes().map((m) => [m.path, m.flags]),
      [
        ['INBOX', ['\\HasNoChildren']],
        ['Work', ['\\HasChildren']],
        ['Work/Projects', ['\\HasChildren']],
        ['Work/Projects/Rookery', ['\\HasNoChildren']],
      ],
    );
    assert.deepEqual(seen, [
      { type: 'mailbox', data: { type: 'create', path: 'Work', oldPath: null, origin: null } },
      { type: 'mailbox', data: { type: 'create', path: 'Work/Projects', oldPath: null, origin: null } },
      { type: 'mailbox', data: { type: 'create', path: 'Work/Projects/Rookery', oldPath: null, origin: null } },
      { type: 'mailbox', data: { type: 'subscribe', path: 'Work/Projects/Rookery', oldPath: null, origin: null } },
    ]);
    // Every new mailbox gets a UIDVALIDITY of its own.
    const validities = server.control.listMailboxes().map((m) => m.uidvalidity);
    assert.equal(new Set(validities).size, validities.length);
  });

  test('errors: existing, unknown, INBOX, children, bad names', () => {
    const server = createServer();
    server.control.createMailbox({ path: 'A/B' });
    assert.equal(code(() => server.control.createMailbox({ path: 'A' })), 'ALREADYEXISTS');
    assert.equal(code(() => server.control.createMailbox({ path: 'inbox' })), 'ALREADYEXISTS');
    assert.equal(code(() => server.control.getMailbox('Nope')), 'NONEXISTENT');
    assert.equal(code(() => server.control.deleteMailbox('INBOX')), 'CANNOT');
    assert.equal(code(() => server.control.deleteMailbox('A')), 'HASCHILDREN');
    assert.equal(code(() => server.control.createMailbox({ path: 'x//y' })), 'INVALID');
    assert.equal(code(() => server.control.createMailbox({ path: 'Caf\u00e9' })), 'INVALID');
    assert.equal(code(() => server.control.createMailbox({ path: '' })), 'INVALID');
    assert.equal(code(() => server.control.createMailbox({ path: 42 } as never)), 'INVALID');
    assert.equal(server.control.createMailbox({ path: 'Caf&AOk-' }).path, 'Caf&AOk-');
    assert.deepEqual(server.control.deleteMailbox('A/B'), { deleted: true });
    assert.equal(code(() => server.control.getMailbox('A/B')), 'NONEXISTENT');
  });

  test('rename moves children; subscriptions stay with the old name; INBOX rename moves messages', () => {
    const server = createServer();
    const seen = events(server);
    server.control.createMailbox({ path: 'Old/Child', subscribed: true });
    server.control.addMessage('INBOX', { raw: mail('one') });
    server.control.addMessage('INBOX', { raw: mail('two') });
    seen.length = 0;
    const renamed = server.control.renameMailbox('Old', { newPath: 'New' });
    assert.equal(renamed.path, 'New');
    assert.ok(server.control.getMailbox('New/Child'));
    assert.equal(code(() => server.control.getMailbox('Old/Child')), 'NONEXISTENT');
    assert.deepEqual(seen, [
      { type: 'mailbox', data: { type: 'rename', path: 'New', oldPath: 'Old', origin: null } },
      { type: 'mailbox', data: { type: 'rename', path: 'New/Child', oldPath: 'Old/Child', origin: null } },
    ]);
    assert.equal(server.control.getMailbox('New/Child').subscribed, false);
    assert.equal(server.control.unsubscribe('Old/Child').changed, true);

    const moved = server.control.renameMailbox('INBOX', { newPath: 'Archive' });
    assert.equal(moved.messages, 2);
    assert.equal(server.control.getMailbox('INBOX').messages, 0);
    assert.deepEqual(
      server.control.listMessages('Archive').map((m) => m.uid),
      [1, 2],
    );
    assert.equal(code(() => server.control.renameMailbox('New', { newPath: 'New/Child/X' })), 'CANNOT');
    assert.equal(code(() => server.control.renameMailbox('New', { newPath: 'Archive' })), 'ALREADYEXISTS');
    assert.equal(code(() => server.control.renameMailbox('Nope', { newPath: 'Z' })), 'NONEXISTENT');
  });

  test('subscribe and unsubscribe report whether anything changed', () => {
    const server = createServer();
    server.control.createMailbox({ path: 'S', subscribed: false });
    assert.deepEqual(server.control.subscribe('S'), { changed: true });
    assert.deepEqual(server.control.subscribe('S'), { changed: false });
    assert.deepEqual(server.control.unsubscribe('S'), { changed: true });
    assert.deepEqual(server.control.unsubscribe('S'), { changed: false });
    assert.deepEqual(server.control.unsubscribe('Not a mailbox'), { changed: false });
    assert.equal(code(() => server.control.subscribe('Missing')), 'NONEXISTENT');
  });
});

describe('control API: messages', () => {
  test('addMessage (utf-8 and base64), listMessages, getMessage', () => {
    const server = createServer({ now: Date.UTC(2026, 10, 21, 8, 30, 15, 500) });
    const a = server.control.addMessage('INBOX', { raw: mail('héllo'), flags: ['\\seen', 'Custom'] });
    const binary = Buffer.from([0x53, 0x75, 0x62, 0x6a, 0x3a, 0x20, 0xff, 0xfe, 0x0d, 0x0a, 0x0d, 0x0a, 0x80]);
    const b = server.control.addMessage('INBOX', {
      raw: binary.toString('base64'),
      encoding: 'base64',
      internaldate: '14-Sep-2013 21:22:28 -0300',
    });
    assert.equal(a.uid, 1);
    assert.equal(b.uid, 2);
    const list = server.control.listMessages('INBOX');
    assert.deepEqual(list[0], {
      uid: 1,
      flags: ['\\Seen', 'Custom'],
      internaldate: '21-Nov-2026 08:30:15 +0000',
      size: Buffer.byteLength(mail('héllo')),
      modseq: list[0]!.modseq,
    });
    assert.equal(list[1]!.internaldate, '14-Sep-2013 21:22:28 -0300');
    const got = server.control.getMessage('INBOX', 2);
    assert.equal(got.encoding, 'base64');
    assert.deepEqual(Buffer.from(got.raw!, 'base64'), binary);
    assert.deepEqual(
      server.control.listMessages('INBOX', { uids: [2, 99], raw: true }).map((m) => [m.uid, m.encoding]),
      [[2, 'base64']],
    );
    assert.equal(server.control.getMailbox('INBOX').unseen, 1);
    assert.equal(code(() => server.control.getMessage('INBOX', 3)), 'NONEXISTENT');
    assert.equal(code(() => server.control.addMessage('INBOX', { raw: 'x', internaldate: 'yesterday' })), 'INVALID');
    assert.equal(code(() => server.control.addMessage('INBOX', { raw: '%%%', encoding: 'base64' })), 'INVALID');
    assert.equal(code(() => server.control.addMessage('INBOX', {} as never)), 'INVALID');
    assert.equal(code(() => server.control.addMessage('Nope', { raw: 'x' })), 'NONEXISTENT');
  });

  test('setFlags set/add/remove, flags events only for changes, MODSEQ grows', () => {
    const server = createServer();
    for (let i = 0; i < 3; i++) server.control.addMessage('INBOX', { raw: mail(`m${i}`) });
    const seen = events(server);
    const before = server.control.listMessages('INBOX').map((m) => m.modseq);
    assert.deepEqual(server.control.setFlags('INBOX', { uids: [1, 2], flags: ['\\Seen', 'a'], mode: 'add' }), [
      { uid: 1, flags: ['\\Seen', 'a'] },
      { uid: 2, flags: ['\\Seen', 'a'] },
    ]);
    assert.deepEqual(server.control.setFlags('INBOX', { uids: [2], flags: ['a'], mode: 'remove' }), [{ uid: 2, flags: ['\\Seen'] }]);
    assert.deepEqual(server.control.setFlags('INBOX', { uids: [3], flags: ['\\Flagged'] }), [{ uid: 3, flags: ['\\Flagged'] }]);
    // No change, no event.
    server.control.setFlags('INBOX', { uids: [3], flags: ['\\Flagged'] });
    assert.deepEqual(seen, [
      { type: 'flags', data: { path: 'INBOX', messages: [{ uid: 1, flags: ['\\Seen', 'a'] }, { uid: 2, flags: ['\\Seen', 'a'] }], origin: null } },
      { type: 'flags', data: { path: 'INBOX', messages: [{ uid: 2, flags: ['\\Seen'] }], origin: null } },
      { type: 'flags', data: { path: 'INBOX', messages: [{ uid: 3, flags: ['\\Flagged'] }], origin: null } },
    ]);
    const after = server.control.listMessages('INBOX').map((m) => m.modseq);
    after.forEach((m, i) => assert.ok(m > before[i]!));
    assert.equal(code(() => server.control.setFlags('INBOX', { uids: [9], flags: [] })), 'NONEXISTENT');
    assert.equal(code(() => server.control.setFlags('INBOX', { uids: [1], flags: [], mode: 'toggle' as never })), 'INVALID');
  });

  test('expunge, copy, move with UID mappings and events', () => {
    const server = createServer();
    server.control.createMailbox({ path: 'Target' });
    for (let i = 0; i < 4; i++) server.control.addMessage('INBOX', { raw: mail(`m${i}`), flags: i === 0 ? ['\\Flagged'] : [] });
    const seen = events(server);
    const copied = server.control.copyMessages('INBOX', { uids: [2, 1], target: 'Target' });
    const target = server.control.getMailbox('Target');
    assert.deepEqual(copied, { uidvalidity: target.uidvalidity, uids: [{ uid: 1, targetUid: 1 }, { uid: 2, targetUid: 2 }] });
    assert.deepEqual(server.control.listMessages('Target')[0]!.flags, ['\\Flagged']);
    const moved = server.control.moveMessages('INBOX', { uids: [3], target: 'Target' });
    assert.deepEqual(moved.uids, [{ uid: 3, targetUid: 3 }]);
    assert.deepEqual(server.control.expungeMessages('INBOX', { uids: [1, 3, 77] }), { uids: [1] });
    assert.deepEqual(
      server.control.listMessages('INBOX').map((m) => m.uid),
      [2, 4],
    );
    assert.deepEqual(seen, [
      { type: 'expunge', data: { path: 'INBOX', uids: [3], origin: null } },
      { type: 'expunge', data: { path: 'INBOX', uids: [1], origin: null } },
    ]);
    assert.equal(code(() => server.control.copyMessages('INBOX', { uids: [2], target: 'Nope' })), 'NONEXISTENT');
    assert.equal(code(() => server.control.moveMessages('INBOX', { uids: [2], target: 'INBOX' })), 'CANNOT');
  });

  test('resetUidValidity: keep, renumber, offset, shuffle (repeatable)', () => {
    const build = (): ReturnType<typeof createServer> => {
      const server = createServer({
        storage: { INBOX: { uidvalidity: 10, messages: [1, 2, 3, 4, 5].map((n) => ({ raw: mail(`m${n}`), uid: n * 10 })) } },
      });
      return server;
    };
    const s = build();
    assert.deepEqual(s.control.resetUidValidity('INBOX'), {
      uidvalidity: 11,
      uidnext: 51,
      uids: [10, 20, 30, 40, 50].map((uid) => ({ uid, newUid: uid })),
    });
    const r = s.control.resetUidValidity('INBOX', { uids: 'renumber', uidvalidity: 99 });
    assert.deepEqual(r, { uidvalidity: 99, uidnext: 6, uids: [10, 20, 30, 40, 50].map((uid, i) => ({ uid, newUid: i + 1 })) });
    const o = s.control.resetUidValidity('INBOX', { uids: 'offset', offset: 100 });
    assert.deepEqual(o.uids.map((u) => u.newUid), [101, 102, 103, 104, 105]);
    assert.equal(o.uidnext, 106);
    const shuffled1 = build().control.resetUidValidity('INBOX', { uids: 'shuffle', seed: 7 });
    const shuffled2 = build().control.resetUidValidity('INBOX', { uids: 'shuffle', seed: 7 });
    assert.deepEqual(shuffled1, shuffled2);
    assert.deepEqual(shuffled1.uids.map((u) => u.newUid).sort((a, b) => a - b), [10, 20, 30, 40, 50]);
    assert.notDeepEqual(shuffled1.uids.map((u) => u.newUid), [10, 20, 30, 40, 50]);
    const uidsAfter = build();
    uidsAfter.control.resetUidValidity('INBOX', { uids: 'shuffle', seed: 7 });
    const listed = uidsAfter.control.listMessages('INBOX', { raw: true });
    assert.deepEqual(listed.map((m) => m.uid), [10, 20, 30, 40, 50]);
    assert.equal(code(() => s.control.resetUidValidity('INBOX', { uids: 'sideways' as never })), 'INVALID');
    assert.equal(code(() => s.control.resetUidValidity('INBOX', { uids: 'offset', offset: -1000 })), 'INVALID');
  });
});

describe('control API: users', () => {
  test('list, add, update, delete with the spec shapes and errors', () => {
    const server = createServer();
    assert.deepEqual(server.control.listUsers(), [{ name: 'testuser', xoauth2: true }]);
    assert.deepEqual(server.control.addUser({ name: 'bob', password: 'pw' }), { name: 'bob' });
    assert.equal(code(() => server.control.addUser({ name: 'bob' })), 'ALREADYEXISTS');
    assert.deepEqual(server.control.updateUser('bob', { xoauth2: { accessToken: 't', sessionTimeout: 1000 } }), { name: 'bob' });
    assert.deepEqual(server.control.listUsers()[1], { name: 'bob', xoauth2: true });
    server.control.updateUser('bob', { xoauth2: null });
    assert.deepEqual(server.control.listUsers()[1], { name: 'bob', xoauth2: false });
    assert.equal(code(() => server.control.updateUser('nobody', { password: 'x' })), 'NONEXISTENT');
    assert.deepEqual(server.control.deleteUser('bob'), { deleted: true });
    assert.equal(code(() => server.control.deleteUser('bob')), 'NONEXISTENT');
    assert.equal(code(() => server.control.addUser({ name: '' })), 'INVALID');
    // Credentials are never listed.
    assert.ok(!JSON.stringify(server.control.listUsers()).includes('testpass'));
  });
});

describe('control API: snapshot and reset', () => {
  test('snapshot round-trips byte for byte, binary messages included', () => {
    const binary = Buffer.from('Subject: bin\r\n\r\n\x00\x80\xff\xfe end\r\n', 'latin1');
    const server = createServer({
      storage: {
        INBOX: { messages: [{ raw: mail('first'), flags: ['\\Seen'], internaldate: '01-Jan-2020 00:00:00 +0530' }] },
        '': { folders: { Work: { folders: { Deep: {} } }, Sent: { 'special-use': '\\Sent' } } },
        'Shared/': { type: 'shared', folders: { team: {} } },
      },
    });
    server.control.addMessage('Work/Deep', { raw: binary.toString('base64'), encoding: 'base64', flags: ['x'] });
    server.control.setFlags('INBOX', { uids: [1], flags: ['\\Answered'], mode: 'add' });
    server.control.expungeMessages('Work/Deep', { uids: [] });
    const snap = server.control.snapshot();
    const restored = createServer({ storage: snap });
    assert.deepEqual(restored.control.snapshot(), snap);
    assert.deepEqual(restored.control.listMailboxes(), server.control.listMailboxes());
    assert.deepEqual(restored.control.listMessages('Work/Deep', { raw: true }), server.control.listMessages('Work/Deep', { raw: true }));
    assert.deepEqual(Buffer.from(restored.control.getMessage('Work/Deep', 1).raw!, 'base64'), binary);
    assert.deepEqual(
      restored.control.listMessages('INBOX').map((m) => [m.uid, m.modseq, m.internaldate, m.flags]),
      server.control.listMessages('INBOX').map((m) => [m.uid, m.modseq, m.internaldate, m.flags]),
    );
    assert.equal(JSON.stringify(snap).includes('testpass'), false);
    // JSON round trip too (what REST clients do).
    const viaJson = createServer({ storage: JSON.parse(JSON.stringify(snap)) });
    assert.deepEqual(viaJson.control.snapshot(), snap);
  });

  test('reset restores mailboxes and users and emits reset', () => {
    const storage = { INBOX: { messages: [mail('kept')] }, '': { folders: { Keep: {} } } };
    const server = createServer({ storage });
    const original = server.control.snapshot();
    const seen = events(server);
    server.control.createMailbox({ path: 'Temp' });
    server.control.addMessage('INBOX', { raw: mail('new') });
    server.control.addUser({ name: 'temp' });
    server.control.deleteUser('testuser');
    assert.deepEqual(server.control.reset(), { reset: true });
    assert.deepEqual(server.control.snapshot(), original);
    assert.deepEqual(server.control.listUsers(), [{ name: 'testuser', xoauth2: true }]);
    assert.deepEqual(seen.at(-1), { type: 'reset', data: {} });
  });

  test('caller objects are never mutated', () => {
    const storage = {
      INBOX: { messages: [{ raw: mail('a'), flags: ['\\Seen'] }] },
      '': { folders: { A: { messages: [mail('b')] } } },
    };
    const users = { u: { password: 'p' } };
    const frozen = JSON.parse(JSON.stringify({ storage, users }));
    const server = createServer({ storage, users });
    server.control.setFlags('INBOX', { uids: [1], flags: ['x'] });
    server.control.addMessage('A', { raw: mail('c') });
    server.control.updateUser('u', { password: 'changed' });
    server.control.reset();
    assert.deepEqual({ storage, users }, frozen);
    const flags = ['\\Seen'];
    server.control.addMessage('INBOX', { raw: 'x', flags });
    server.control.setFlags('INBOX', { uids: [2], flags: ['y'], mode: 'add' });
    assert.deepEqual(flags, ['\\Seen']);
  });
});

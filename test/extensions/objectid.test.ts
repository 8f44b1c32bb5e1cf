/**
 * OBJECTID (RFC 8474) over real sockets: the RFC's examples (§4.1 CREATE,
 * §4.2 SELECT, §4.3 STATUS and LIST-STATUS, §5.3 FETCH with MOVE, §6
 * SEARCH), the rules of §4 and §5 (RENAME keeps the MAILBOXID, RENAME of
 * INBOX makes a new mailbox, DELETE + CREATE gives a new one, COPY/MOVE
 * keep the EMAILID, THREADID is shared by a thread and never equals an
 * EMAILID), the ID syntax of §7, and the store fields: given by the
 * storage option, kept by snapshots, restored by reset. Then imapflow,
 * which asks for EMAILID/THREADID and reads MAILBOXID when offered.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ImapFlow } from 'imapflow';
import { createServer } from '../../src/index.js';
import type { RawClient } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

const OBJECT_ID = /^[A-Za-z0-9_-]{1,255}$/;
const PLUGINS = ['OBJECTID', 'MOVE', 'UIDPLUS', 'LIST-STATUS', 'ESEARCH'];

/** The MAILBOXID of a tagged or untagged OK line. */
const mailboxIdOf = (line: string): string => {
  const m = /\[MAILBOXID \(([^)]*)\)\]/.exec(line);
  assert.ok(m, `no MAILBOXID in ${line}`);
  assert.match(m[1]!, OBJECT_ID);
  return m[1]!;
};

async function statusId(c: RawClient, path: string): Promise<string> {
  const lines = await c.command(`STATUS ${path} (MAILBOXID)`);
  const m = new RegExp(`^\\* STATUS "?${path}"? \\(MAILBOXID \\(([A-Za-z0-9_-]+)\\)\\)$`).exec(lines[0]!);
  assert.ok(m, lines.join('\n'));
  assert.match(lines.at(-1)!, /^T\d+ OK/);
  return m[1]!;
}

/** EMAILID and THREADID of every message of the selected mailbox, by sequence number. */
async function ids(c: RawClient): Promise<{ email: string; thread: string }[]> {
  const lines = await c.command('FETCH 1:* (EMAILID THREADID)');
  assert.match(lines.at(-1)!, /OK/);
  return lines
    .filter((l) => l.startsWith('* ') && l.includes('FETCH'))
    .map((l) => {
      const m = /^\* \d+ FETCH \(EMAILID \(([A-Za-z0-9_-]+)\) THREADID \(([A-Za-z0-9_-]+)\)\)$/.exec(l);
      assert.ok(m, l);
      return { email: m[1]!, thread: m[2]! };
    });
}

async function append(c: RawClient, mailbox: string, message: string): Promise<string> {
  c.write(`A1 APPEND ${mailbox} {${Buffer.byteLength(message)}+}\r\n${message}\r\n`);
  return (await c.until('A1')).at(-1)!;
}

test('RFC 8474 §3, §4.1, §4.3: OBJECTID is advertised; CREATE answers OK [MAILBOXID (id)]; STATUS MAILBOXID keeps it across RENAME', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS });
  try {
    const c = await rawSession(port);
    assert.match((await c.command('CAPABILITY'))[0]!, /^\* CAPABILITY .* OBJECTID( |$)/);
    const foo = mailboxIdOf((await c.command('create foo'))[0]!);
    const bar = mailboxIdOf((await c.command('create bar'))[0]!);
    assert.notEqual(foo, bar);
    assert.match((await c.command('create foo')).at(-1)!, /^T\d+ NO /);
    assert.equal(await statusId(c, 'foo'), foo);
    assert.equal(await statusId(c, 'bar'), bar);
    assert.match((await c.command('rename foo renamed')).at(-1)!, /^T\d+ OK/);
    assert.equal(await statusId(c, 'renamed'), foo);
    assert.equal(await statusId(c, 'bar'), bar);
    // The item combines with the others; lower case works (STATUS items are case-insensitive).
    const lines = await c.command('status bar (messages mailboxid uidnext)');
    assert.equal(lines[0], `* STATUS "bar" (MESSAGES 0 MAILBOXID (${bar}) UIDNEXT 1)`);
    // §4.3 with LIST-STATUS: every listed mailbox's STATUS carries its MAILBOXID.
    const list = await c.command('list "" "*" return (status (mailboxid))');
    const inbox = await statusId(c, 'INBOX');
    assert.deepEqual(list.slice(0, -1).filter((l) => l.startsWith('* STATUS')), [
      `* STATUS "INBOX" (MAILBOXID (${inbox}))`,
      `* STATUS "bar" (MAILBOXID (${bar}))`,
      `* STATUS "renamed" (MAILBOXID (${foo}))`,
    ]);
    assert.equal(new Set([inbox, foo, bar]).size, 3);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 8474 §4.2: SELECT and EXAMINE send an untagged OK [MAILBOXID (id)], the same as STATUS', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS });
  try {
    const c = await rawSession(port);
    const id = mailboxIdOf((await c.command('CREATE foo'))[0]!);
    const select = await c.command('select "foo"');
    assert.ok(select.includes(`* OK [MAILBOXID (${id})] Ok`), select.join('\n'));
    assert.match(select.at(-1)!, /OK \[READ-WRITE\]/);
    const examine = await c.command('EXAMINE foo');
    assert.ok(examine.includes(`* OK [MAILBOXID (${id})] Ok`), examine.join('\n'));
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 8474 §4: DELETE then CREATE of one name gives a new MAILBOXID; RENAME of INBOX makes a new mailbox with a new one, INBOX keeps its own; a new UIDVALIDITY gives a new one', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS });
  try {
    const c = await rawSession(port);
    const first = mailboxIdOf((await c.command('CREATE foo'))[0]!);
    await c.command('DELETE foo');
    const second = mailboxIdOf((await c.command('CREATE foo'))[0]!);
    assert.notEqual(first, second);
    const inbox = await statusId(c, 'INBOX');
    assert.match(await append(c, 'INBOX', mail('one')), /OK/);
    assert.match((await c.command('RENAME INBOX Old')).at(-1)!, /OK/);
    assert.equal(await statusId(c, 'INBOX'), inbox);
    const old = await statusId(c, 'Old');
    assert.ok(![inbox, first, second].includes(old));
    // The control API gives foo a new UIDVALIDITY: the mailbox's invariants no longer hold.
    server.control.resetUidValidity('foo', {});
    const third = await statusId(c, 'foo');
    assert.ok(![first, second, old, inbox].includes(third));
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 8474 §5.3 example: EMAILID per message, one THREADID for a message and its reply; MOVE and COPY keep both', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS });
  try {
    const c = await rawSession(port);
    await c.command('CREATE foo');
    const a = 'Subject: Message A\r\nMessage-ID: <fake.1521475657.54797@example.com>\r\n\r\nA\r\n';
    const b = 'Subject: Re: Message A\r\nMessage-ID: <fake.1521475657.21213@example.org>\r\nReferences: <fake.1521475657.54797@example.com>\r\n\r\nB\r\n';
    const cc = 'Subject: Message C\r\nMessage-ID: <fake.1521475657.60280@example.com>\r\n\r\nC\r\n';
    for (const m of [a, b, cc]) assert.match(await append(c, 'inbox', m), /OK \[APPENDUID/);
    await c.command('SELECT INBOX');
    const before = await ids(c);
    assert.equal(before.length, 3);
    assert.equal(new Set(before.map((x) => x.email)).size, 3, 'every message has its own EMAILID');
    assert.equal(before[0]!.thread, before[1]!.thread, 'the reply is in the thread of A');
    assert.notEqual(before[0]!.thread, before[2]!.thread);
    // §5.2: an ObjectID is never both an EMAILID and a THREADID.
    for (const t of before) assert.ok(!before.some((x) => x.email === t.thread));

    const move = await c.command('move 2 foo');
    assert.match(move[0]!, /^\* OK \[COPYUID \d+ 2 1\]/);
    assert.equal(move[1], '* 2 EXPUNGE');
    assert.deepEqual(await ids(c), [before[0], before[2]]);
    assert.match((await c.command('COPY 1 foo')).at(-1)!, /OK \[COPYUID/);
    await c.command('select "foo"');
    assert.deepEqual(await ids(c), [before[1], before[0]], 'the moved and the copied message keep EMAILID and THREADID');
    // An APPEND of the same bytes is new content: a new EMAILID, the same thread.
    await append(c, 'foo', a);
    const after = await ids(c);
    assert.equal(after.length, 3);
    assert.ok(!before.some((x) => x.email === after[2]!.email));
    assert.equal(after[2]!.thread, before[0]!.thread);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 8474 §6: SEARCH EMAILID and THREADID match exactly (case-sensitive); a malformed ID is BAD and the session goes on', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS });
  try {
    server.control.addMessage('INBOX', { raw: 'Message-ID: <a@x>\r\nSubject: A\r\n\r\nA\r\n' });
    server.control.addMessage('INBOX', { raw: 'Message-ID: <b@x>\r\nIn-Reply-To: <a@x>\r\nSubject: B\r\n\r\nB\r\n' });
    server.control.addMessage('INBOX', { raw: 'Message-ID: <c@x>\r\nSubject: C\r\n\r\nC\r\n' });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const all = await ids(c);
    assert.deepEqual(await c.command(`search emailid ${all[0]!.email}`), ['* SEARCH 1', 'T4 OK Search completed']);
    assert.deepEqual(await c.command(`search threadid ${all[0]!.thread}`), ['* SEARCH 1 2', 'T5 OK Search completed']);
    assert.deepEqual(await c.command(`UID SEARCH OR EMAILID ${all[0]!.email} EMAILID ${all[2]!.email}`), ['* SEARCH 1 3', 'T6 OK Search completed']);
    assert.deepEqual(await c.command(`SEARCH EMAILID ${all[0]!.email.toLowerCase()}`), ['* SEARCH', 'T7 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH EMAILID Mnone'), ['* SEARCH', 'T8 OK Search completed']);
    assert.match((await c.command('SEARCH EMAILID M1!'))[0]!, /^T9 BAD/);
    assert.match((await c.command('SEARCH THREADID'))[0]!, /^T10 BAD/);
    assert.match((await c.command(`SEARCH EMAILID ${'x'.repeat(256)}`))[0]!, /^T11 BAD/);
    assert.deepEqual(await c.command('NOOP'), ['T12 OK NOOP completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('IDs are deterministic, kept as store fields: snapshot writes them, reset restores them, the storage option may give them', async () => {
  const storage = {
    INBOX: { messages: ['Subject: a\r\n\r\na\r\n', { raw: 'Subject: b\r\n\r\nb\r\n', emailId: 'Mgiven', threadId: 'Tgiven' }] },
    '': { folders: { Work: { mailboxId: 'F7' }, Archive: {} } },
  };
  const one = createServer({ plugins: ['OBJECTID'], storage });
  const two = createServer({ plugins: ['OBJECTID'], storage });
  const api = one.extension('OBJECTID')!;
  const snapshotIds = (s: typeof one): unknown => {
    const snap = s.control.snapshot() as Record<string, any>;
    return {
      inbox: snap.INBOX.mailboxId,
      messages: snap.INBOX.messages.map((m: Record<string, unknown>) => [m.emailId, m.threadId]),
      work: snap[''].folders.Work.mailboxId,
      archive: snap[''].folders.Archive.mailboxId,
      next: snap[''].objectIdNext,
    };
  };
  const start = snapshotIds(one);
  assert.deepEqual(start, snapshotIds(two), 'two servers over the same options give the same IDs');
  // Given IDs are kept; the counter moves past F7; the others are numbered by name, then messages by UID.
  assert.deepEqual(start, { archive: 'F8', inbox: 'F9', work: 'F7', messages: [['M10', undefined], ['Mgiven', 'Tgiven']], next: 11 });
  assert.equal(api.threadId(one.store.get('INBOX')!.messages[1]!), 'Tgiven');
  one.control.createMailbox('New');
  one.control.addMessage('INBOX', { raw: 'Subject: c\r\n\r\nc\r\n' });
  assert.equal(api.mailboxId(one.store.get('New')!), 'F11');
  assert.equal(api.emailId(one.store.get('INBOX')!.messages[2]!), 'M12');
  one.control.reset();
  assert.deepEqual(snapshotIds(one), start, 'reset restores the IDs and the counter');
  // A snapshot fed back as storage keeps every ID.
  const again = createServer({ plugins: ['OBJECTID'], storage: one.control.snapshot() as never });
  assert.deepEqual(snapshotIds(again), start);
});

test('seeded messages get their EMAILIDs when first read after a reset, the same whatever is read first, and a reset reads no message', () => {
  const storage = {
    INBOX: { messages: ['Subject: a\r\n\r\na\r\n', { raw: 'Subject: b\r\n\r\nb\r\n', emailId: 'M40' }, 'Subject: c\r\n\r\nc\r\n'] },
    '': { folders: { Archive: { messages: ['Subject: d\r\n\r\nd\r\n', 'Subject: e\r\n\r\ne\r\n'] } } },
  };
  const server = createServer({ plugins: ['OBJECTID'], storage });
  const api = server.extension('OBJECTID')!;
  const ids = (path: string): string[] => server.store.get(path)!.messages.map((m) => api.emailId(m));
  // Read in the store's order at start, in the other order after the reset: the IDs must not follow the reads.
  const start = { archive: ids('Archive'), inbox: ids('INBOX') };
  // The given M40 moves the one counter past it; mailboxes by name (Archive, INBOX) take F41, F42; then messages in that order.
  assert.deepEqual(start, { archive: ['M43', 'M44'], inbox: ['M45', 'M40', 'M46'] });
  server.control.addMessage('INBOX', { raw: 'Subject: f\r\n\r\nf\r\n' });
  server.control.reset();
  assert.equal(server.store.get('INBOX')!.loaded, false, 'the reset copied no message');
  assert.equal(server.store.get('Archive')!.loaded, false);
  const inbox = ids('INBOX');
  assert.deepEqual({ archive: ids('Archive'), inbox }, start);
  // The next new message is numbered after every seeded one, read or not.
  server.control.reset();
  server.control.addMessage('INBOX', { raw: 'Subject: g\r\n\r\ng\r\n' });
  assert.equal(ids('INBOX')[3], 'M47');
  assert.deepEqual(ids('Archive'), start.archive);
});

test('the storage option: malformed IDs are option errors; one MAILBOXID on two mailboxes is refused', () => {
  assert.throws(() => createServer({ plugins: ['OBJECTID'], storage: { INBOX: { mailboxId: 'has space' } } }), /INBOX\.mailboxId: expected an object ID/);
  assert.throws(() => createServer({ plugins: ['OBJECTID'], storage: { INBOX: { messages: [{ raw: 'x', emailId: '' }] } } }), /emailId: expected an object ID/);
  assert.throws(() => createServer({ plugins: ['OBJECTID'], storage: { INBOX: { mailboxId: 'X' }, '': { folders: { A: { mailboxId: 'X' } } } } }), /mailboxId "X" is given to both "A" and "INBOX"/);
});

test('imapflow reads MAILBOXID on SELECT and CREATE, and fetches EMAILID/THREADID when OBJECTID is offered', { timeout: 20000 }, async () => {
  const { server, port } = await startServer({ plugins: [...PLUGINS, 'ENABLE'] });
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, disableAutoIdle: true });
  client.on('error', () => undefined);
  try {
    server.control.addMessage('INBOX', { raw: mail('first') });
    await client.connect();
    const created = await client.mailboxCreate('Projects');
    const api = server.extension('OBJECTID')!;
    assert.equal((created as { mailboxId?: string }).mailboxId, api.mailboxId(server.store.get('Projects')!));
    const mailbox = await client.mailboxOpen('INBOX');
    assert.equal((mailbox as { mailboxId?: string }).mailboxId, api.mailboxId(server.store.get('INBOX')!));
    const message = await client.fetchOne('1', { uid: true, threadId: true });
    assert.ok(message);
    const stored = server.store.get('INBOX')!.messages[0]!;
    assert.equal(message.emailId, api.emailId(stored));
    assert.equal(message.threadId, api.threadId(stored));
    const found = await client.search({ emailId: api.emailId(stored) });
    assert.deepEqual(found, [1]);
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

test('the control API and REST show MAILBOXID and EMAILID (and SAVEDATE the save date) in MailboxInfo/MessageInfo fields', async () => {
  const { startRest, request } = await import('../rest/helpers.js');
  const rest = await startRest({ plugins: ['OBJECTID', 'SAVEDATE'], now: Date.UTC(2026, 10, 2, 10, 0, 0) });
  try {
    const { server } = rest;
    const api = server.extension('OBJECTID')!;
    const created = server.control.createMailbox('Work');
    assert.deepEqual(created.fields, { mailboxId: api.mailboxId(server.store.get('Work')!) });
    server.control.addMessage('Work', { raw: mail('x') });
    const [info] = server.control.listMessages('Work');
    assert.deepEqual(info!.fields, { emailId: api.emailId(server.store.get('Work')!.messages[0]!), saveDate: '02-Nov-2026 10:00:00 +0000' });
    const mailboxes = await request(rest.restPort, 'GET', '/v1/mailboxes');
    assert.equal(mailboxes.status, 200);
    assert.deepEqual(
      (mailboxes.json as { path: string; fields?: { mailboxId: string } }[]).map((m) => [m.path, m.fields?.mailboxId]),
      [['INBOX', api.mailboxId(server.store.get('INBOX')!)], ['Work', created.fields!.mailboxId]],
    );
    const messages = await request(rest.restPort, 'GET', '/v1/mailboxes/Work/messages');
    assert.deepEqual((messages.json as { fields: unknown }[])[0]!.fields, info!.fields);
  } finally {
    await rest.server.stop();
  }
  // Without the plugin there are no fields.
  const plain = createServer({ storage: { INBOX: { mailboxId: 'Fgiven' } } });
  assert.equal(plain.control.getMailbox('INBOX').fields, undefined);
});

test('RFC 8474 §5.2, §7: a message without Message-IDs is a thread of its own; every THREADID is a valid object ID, also for a 255-character EMAILID', async () => {
  const long = `M${'x'.repeat(254)}`;
  const storage = { INBOX: { messages: [{ raw: 'Subject: lone\r\n\r\na\r\n', emailId: long }, 'Subject: lone\r\n\r\na\r\n', 'Subject: other\r\n\r\nb\r\n'] } };
  const { server, port } = await startServer({ plugins: PLUGINS, storage });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const all = await ids(c);
    assert.equal(all[0]!.email, long);
    for (const x of all) assert.match(x.thread, OBJECT_ID);
    assert.equal(new Set(all.map((x) => x.thread)).size, 3, 'same bytes, different EMAILIDs: different threads');
    // A COPY keeps EMAILID and so THREADID.
    await c.command('COPY 1 INBOX');
    assert.deepEqual((await ids(c))[3], all[0]);
    c.close();
  } finally {
    await server.stop();
  }
});

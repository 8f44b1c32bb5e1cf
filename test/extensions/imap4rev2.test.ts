/**
 * IMAP4rev2 (RFC 9051) beside IMAP4rev1: what changes once a session sends
 * ENABLE IMAP4rev2 (RFC 9051 §6.3.1 and Appendix E), from the RFC's own
 * examples over raw sockets; imapflow, which ENABLEs IMAP4rev2 when offered;
 * and a rev1 session's transcript, byte-identical with and without the
 * plugin (capability lists aside).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ImapFlow } from 'imapflow';
import { BUILTIN_PLUGINS } from '../../src/extensions/catalog.js';
import type { Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import type { RawClient } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

/** A session that logged in and enabled IMAP4rev2. */
async function rev2Session(port: number): Promise<RawClient> {
  const c = await rawSession(port);
  const lines = await c.command('ENABLE IMAP4rev2');
  assert.deepEqual(lines.slice(0, -1), ['* ENABLED IMAP4rev2']);
  return c;
}

async function withServer(options: ServerOptions, body: (server: Server, port: number) => Promise<void>): Promise<void> {
  const { server, port } = await startServer(options);
  try {
    await body(server, port);
  } finally {
    await server.stop();
  }
}

const last = (lines: string[]): string => lines.at(-1)!;

/** Eleven messages: 2, 10 and 11 flagged and not from Smith; 5 flagged but from Smith (RFC 9051 §6.4.4's answer is 2,10:11). */
function elevenMessages(): { raw: string; flags?: string[] }[] {
  const out: { raw: string; flags?: string[] }[] = [];
  for (let i = 1; i <= 11; i++) {
    const from = i === 5 ? 'From: John Smith <smith@example.com>\r\n' : '';
    out.push({ raw: `${from}${mail(`m${i}`, i === 7 ? 'Grüße aus Köln' : 'Hello')}`, flags: [2, 5, 10, 11].includes(i) ? ['\\Flagged'] : [] });
  }
  return out;
}

test('IMAP4rev2 is advertised beside IMAP4rev1 and loads what rev2 folds into the base; ENABLE compares the name case-insensitively', async () => {
  await withServer({ plugins: ['IMAP4rev2'] }, async (server, port) => {
    const c = await rawSession(port);
    const caps = (await c.command('CAPABILITY'))[0]!.split(' ').slice(2);
    assert.deepEqual(caps.slice(0, 2), ['IMAP4rev1', 'IMAP4rev2']);
    for (const cap of ['ENABLE', 'NAMESPACE', 'UNSELECT', 'UIDPLUS', 'ESEARCH', 'SEARCHRES', 'IDLE', 'SASL-IR', 'LIST-EXTENDED', 'LIST-STATUS', 'MOVE', 'LITERAL-', 'SPECIAL-USE', 'STATUS=SIZE', 'CHILDREN', 'BINARY']) {
      assert.ok(caps.includes(cap), `${cap} in ${caps.join(' ')}`);
    }
    assert.ok(server.options.plugins.includes('IMAP4REV2'));
    // RFC 5161: unknown names are ignored; ENABLED names what was turned on, as advertised.
    assert.deepEqual(await c.command('ENABLE imap4rev2 X-GOOD-IDEA'), ['* ENABLED IMAP4rev2', 'T3 OK Enabled']);
    // Enabling again reports nothing new.
    assert.deepEqual(await c.command('ENABLE IMAP4rev2'), ['* ENABLED', 'T4 OK Enabled']);
    c.close();
  });
});

test('RFC 9051 §6.3.2 SELECT example: EXISTS, UIDVALIDITY, UIDNEXT, FLAGS, PERMANENTFLAGS and LIST; no RECENT, no OK [UNSEEN]', async () => {
  const storage = { INBOX: { uidvalidity: 3857529045, uidnext: 4392, messages: [{ raw: mail('a'), flags: ['\\Seen'] }, { raw: mail('b') }] } };
  await withServer({ plugins: ['IMAP4rev2'], storage }, async (_server, port) => {
    const c = await rev2Session(port);
    assert.deepEqual(await c.command('SELECT INBOX'), [
      '* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)',
      '* 2 EXISTS',
      '* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen \\*)] Flags permitted.',
      '* OK [UIDVALIDITY 3857529045] UIDs valid',
      '* OK [UIDNEXT 4392] Predicted next UID',
      '* LIST (\\HasNoChildren) "/" "INBOX"',
      'T3 OK [READ-WRITE] Select completed',
    ]);
    // The first session to select: rev1 would show \Recent on both; rev2 has no \Recent.
    const fetched = await c.command('FETCH 1:* (FLAGS)');
    assert.equal(fetched.length, 3);
    assert.match(fetched[0]!, /^\* 1 FETCH \(FLAGS \(\\Seen\)\)$/);
    assert.match(fetched[1]!, /^\* 2 FETCH \(FLAGS \(\)\)$/);
    c.close();
  });
});

test('RFC 9051 §6.4.4 SEARCH examples: answered by ESEARCH with or without RETURN; no match still sends ESEARCH', async () => {
  await withServer({ plugins: ['IMAP4rev2'], storage: { INBOX: { messages: elevenMessages() } } }, async (_server, port) => {
    const c = await rev2Session(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('SEARCH RETURN (MIN COUNT) FLAGGED SINCE 1-Feb-1994 NOT FROM "Smith"'), ['* ESEARCH (TAG "T4") MIN 2 COUNT 3', 'T4 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH FLAGGED SINCE 1-Feb-1994 NOT FROM "Smith"'), ['* ESEARCH (TAG "T5") ALL 2,10:11', 'T5 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH RETURN () FLAGGED SINCE 1-Feb-1994 NOT FROM "Smith"'), ['* ESEARCH (TAG "T6") ALL 2,10:11', 'T6 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH TEXT "string not in mailbox"'), ['* ESEARCH (TAG "T7")', 'T7 OK Search completed']);
    // A literal in UTF-8 (CHARSET UTF-8 is a MUST in rev2).
    c.write('u8 SEARCH CHARSET UTF-8 TEXT {7}\r\n');
    assert.match(await c.line(), /^\+ /);
    c.write(Buffer.concat([Buffer.from('Grüße', 'utf8'), Buffer.from('\r\n')]));
    assert.deepEqual(await c.until('u8'), ['* ESEARCH (TAG "u8") ALL 7', 'u8 OK Search completed']);
    // UID SEARCH says UID and gives UIDs.
    assert.deepEqual(await c.command('UID SEARCH FLAGGED'), ['* ESEARCH (TAG "T8") UID ALL 2,5,10:11', 'T8 OK Search completed']);
    c.close();
  });
});

test('no \\Recent in rev2 (Appendix E): SEARCH RECENT/NEW/OLD and STATUS RECENT are BAD, new mail comes without RECENT; a rev1 session still gets them', async () => {
  await withServer({ plugins: ['IMAP4rev2'], storage: { INBOX: { messages: [{ raw: mail('a') }] } } }, async (server, port) => {
    const v2 = await rev2Session(port);
    const v1 = await rawSession(port);
    await v2.command('SELECT INBOX');
    await v1.command('EXAMINE INBOX');
    for (const bad of ['SEARCH RECENT', 'SEARCH NEW', 'UID SEARCH OLD', 'SEARCH NOT (SEEN OR RECENT ALL)', 'STATUS INBOX (MESSAGES RECENT)', 'LIST "" "INBOX" RETURN (STATUS (RECENT))']) {
      assert.match(last(await v2.command(bad)), /^T\d+ BAD .*IMAP4rev2/, bad);
    }
    assert.match(last(await v2.command('NOOP')), /OK/);
    // The rev1 session keeps all of them.
    // (Its EXAMINE came after the rev2 SELECT, which took \Recent: none is left for it.)
    assert.deepEqual(await v1.command('SEARCH RECENT'), ['* SEARCH', 'T3 OK Search completed']);
    assert.deepEqual((await v1.command('STATUS INBOX (RECENT)'))[0], '* STATUS "INBOX" (RECENT 0)');
    server.control.addMessage('INBOX', { raw: mail('b') });
    assert.deepEqual((await v1.command('NOOP')).slice(0, -1), ['* 2 EXISTS', '* 1 RECENT']);
    assert.deepEqual((await v2.command('NOOP')).slice(0, -1), ['* 2 EXISTS']);
    assert.deepEqual((await v2.command('FETCH 2 FLAGS')).slice(0, -1), ['* 2 FETCH (FLAGS ())']);
    v1.close();
    v2.close();
  });
});

test('ENABLE IMAP4rev2 while a mailbox is selected (RFC 5161 lets the server accept it) takes effect at once: no \\Recent, UID in flag FETCHes', async () => {
  await withServer({ plugins: ['IMAP4rev2'], storage: { INBOX: {} } }, async (server, port) => {
    server.control.addMessage('INBOX', { raw: mail('new') });
    const c = await rawSession(port);
    assert.ok((await c.command('SELECT INBOX')).includes('* 1 RECENT'));
    assert.deepEqual((await c.command('FETCH 1 FLAGS')).slice(0, -1), ['* 1 FETCH (FLAGS (\\Recent))']);
    await c.command('ENABLE IMAP4rev2');
    assert.deepEqual((await c.command('FETCH 1 FLAGS')).slice(0, -1), ['* 1 FETCH (FLAGS ())']);
    assert.deepEqual((await c.command('STORE 1 +FLAGS (\\Seen)')).slice(0, -1), ['* 1 FETCH (UID 1 FLAGS (\\Seen))']);
    c.close();
  });
});

test('UNAUTHENTICATE forgets ENABLE IMAP4rev2 (RFC 8437 §3): the next login on the connection is rev1 again, \\Recent and all', async () => {
  await withServer({ plugins: ['IMAP4rev2', 'UNAUTHENTICATE'], storage: { INBOX: {} } }, async (server, port) => {
    server.control.addMessage('INBOX', { raw: mail('new') });
    const c = await rev2Session(port);
    const rev2Select = await c.command('SELECT INBOX');
    assert.ok(!rev2Select.some((l) => / RECENT$/.test(l)), rev2Select.join('\n'));
    assert.deepEqual((await c.command('STORE 1 +FLAGS (\\Seen)')).slice(0, -1), ['* 1 FETCH (UID 1 FLAGS (\\Seen))']);
    assert.match(last(await c.command('SEARCH RECENT')), /^\S+ BAD /);
    assert.match(last(await c.command('UNAUTHENTICATE')), /^\S+ OK /);
    assert.match(last(await c.command('LOGIN testuser testpass')), /^\S+ OK /);
    // The rules worked out for the rev2 session must not outlive what it enabled.
    const rev1Select = await c.command('SELECT INBOX');
    assert.ok(rev1Select.includes('* 0 RECENT'), rev1Select.join('\n'));
    assert.deepEqual((await c.command('STORE 1 -FLAGS (\\Seen)')).slice(0, -1), ['* 1 FETCH (FLAGS ())']);
    assert.deepEqual(await c.command('SEARCH RECENT').then((l) => l.slice(0, -1)), ['* SEARCH']);
    c.close();
  });
});

test('STATUS: DELETED and SIZE (RFC 9051 §6.3.11), the RFC example answered for any mailbox name', async () => {
  const storage = {
    INBOX: {},
    '': { folders: { blurdybloop: { uidnext: 44292, messages: [{ raw: mail('x'), flags: ['\\Deleted'] }, { raw: mail('y') }] } } },
  };
  await withServer({ plugins: ['IMAP4rev2'], storage }, async (_server, port) => {
    const c = await rev2Session(port);
    assert.deepEqual(await c.command('STATUS blurdybloop (UIDNEXT MESSAGES)'), ['* STATUS "blurdybloop" (UIDNEXT 44292 MESSAGES 2)', 'T3 OK Status completed']);
    const status = await c.command('STATUS blurdybloop (DELETED SIZE)');
    assert.match(status[0]!, /^\* STATUS "blurdybloop" \(DELETED 1 SIZE \d+\)$/);
    c.close();
  });
});

test('SELECT that ends a selection sends OK [CLOSED] first, once even with QRESYNC enabled too; every flag FETCH carries UID', async () => {
  const storage = { INBOX: { messages: [{ raw: mail('a') }, { raw: mail('b') }] }, '': { folders: { Other: {} } } };
  await withServer({ plugins: ['IMAP4rev2', 'QRESYNC'], storage }, async (_server, port) => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('ENABLE IMAP4rev2 QRESYNC'), ['* ENABLED IMAP4rev2 QRESYNC', 'T2 OK Enabled']);
    await c.command('SELECT INBOX');
    const again = await c.command('EXAMINE Other');
    assert.equal(again[0], '* OK [CLOSED] Previous mailbox closed.');
    assert.equal(again.filter((l) => l.includes('[CLOSED]')).length, 1);
    c.close();
  });
  await withServer({ plugins: ['IMAP4rev2'], storage }, async (_server, port) => {
    const v2 = await rev2Session(port);
    const v1 = await rawSession(port);
    await v2.command('SELECT INBOX');
    const first = await v2.command('SELECT Other');
    assert.equal(first[0], '* OK [CLOSED] Previous mailbox closed.');
    await v2.command('SELECT INBOX');
    await v1.command('SELECT INBOX');
    // The session's own STORE and another session's change: both with UID (Appendix E).
    assert.deepEqual((await v2.command('STORE 1 +FLAGS (\\Flagged)')).slice(0, -1), ['* 1 FETCH (UID 1 FLAGS (\\Flagged))']);
    // The rev1 session's flag updates are as before: no UID.
    assert.deepEqual((await v1.command('STORE 2 +FLAGS.SILENT (\\Seen)')).slice(0, -1), ['* 1 FETCH (FLAGS (\\Flagged))']);
    assert.deepEqual((await v2.command('NOOP')).slice(0, -1), ['* 2 FETCH (UID 2 FLAGS (\\Seen))']);
    // RFC 9051 removed CHECK: BAD, and the session goes on; rev1 keeps it.
    assert.match(last(await v2.command('CHECK')), /^T\d+ BAD .*NOOP/);
    assert.match(last(await v1.command('CHECK')), /^T\d+ OK /);
    // LSUB is deprecated in rev2, not removed: still answered.
    assert.deepEqual((await v2.command('LSUB "" "Other"')).slice(0, -1), ['* LSUB () "/" "Other"']);
    v1.close();
    v2.close();
  });
});

test('mailbox names are UTF-8 in a rev2 session (RFC 9051 §5.1), taken as sent; the store and rev1 sessions keep modified UTF-7', async () => {
  const storage = { INBOX: {}, '': { folders: { 'Entw&APw-rfe': { messages: [{ raw: mail('d') }] } } } };
  await withServer({ plugins: ['IMAP4rev2', 'ACL', 'QUOTA', 'UTF8=ACCEPT'], storage }, async (server, port) => {
    const v2 = await rev2Session(port);
    const v1 = await rawSession(port);
    const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
    const send = async (c: RawClient, tag: string, command: Buffer): Promise<string[]> => {
      c.write(Buffer.concat([utf8(`${tag} `), command, utf8('\r\n')]));
      return c.until(tag);
    };
    // Quoted UTF-8 is allowed in rev2 both ways (RFC 9051 QUOTED-CHAR): the answer quotes the name in UTF-8.
    const listed = await send(v2, 'u1', utf8('LIST "" "Entw*"'));
    assert.deepEqual(listed.map((l) => Buffer.from(l, 'latin1').toString('utf8')), ['* LIST (\\HasNoChildren) "/" "Entwürfe"', 'u1 OK LIST completed']);
    const selected = await send(v2, 'u2', utf8('SELECT "Entwürfe"'));
    assert.match(last(selected), /^u2 OK /);
    assert.ok(selected.map((l) => Buffer.from(l, 'latin1').toString('utf8')).includes('* LIST (\\HasNoChildren) "/" "Entwürfe"'));
    const status = await send(v2, 'u3', utf8('STATUS "Entwürfe" (MESSAGES)'));
    assert.equal(Buffer.from(status[0]!, 'latin1').toString('utf8'), '* STATUS "Entwürfe" (MESSAGES 1)');
    // Names are taken as sent, not normalized (RFC 9051 §5.1 allows either): no OLDNAME, and a
    // decomposed name (e + U+0301) is another mailbox than the composed one.
    const created = (await send(v2, 'u4', utf8('CREATE "Caf\u00e9"'))).map((l) => Buffer.from(l, 'latin1').toString('utf8'));
    assert.deepEqual(created, ['u4 OK Create completed']);
    assert.match(last(await send(v2, 'u4b', utf8('SELECT "Cafe\u0301"'))), /^u4b NO \[NONEXISTENT\]/);
    assert.ok(server.control.listMailboxes().some((m) => m.path === 'Caf&AOk-'));
    assert.match(last(await send(v2, 'u5', utf8('SELECT "Caf\u00e9"'))), /^u5 OK /);
    // Other answers that name a mailbox: MYRIGHTS, QUOTAROOT.
    const rights = await send(v2, 'u6', utf8('MYRIGHTS "Caf\u00e9"'));
    assert.equal(Buffer.from(rights[0]!, 'latin1').toString('utf8').split(' ').slice(0, 3).join(' '), '* MYRIGHTS "Café"');
    const root = await send(v2, 'u7', utf8('GETQUOTAROOT "Caf\u00e9"'));
    assert.ok(Buffer.from(root[0]!, 'latin1').toString('utf8').startsWith('* QUOTAROOT "Café"'));
    // Not UTF-8 at all: BAD, and the session goes on.
    const invalid = await send(v2, 'u8', Buffer.concat([utf8('SELECT "'), Buffer.from([0xff, 0xfe]), utf8('"')]));
    assert.match(last(invalid), /^u8 BAD /);
    // In a rev2 session "&" is just a character: "&AOk-" names a mailbox literally called that.
    assert.match(last(await send(v2, 'u9', utf8('SELECT "Caf&AOk-"'))), /^u9 NO \[NONEXISTENT\]/);
    // RENAME and DELETE by UTF-8 names: plain OK, nothing untagged.
    assert.deepEqual(await send(v2, 'u10', utf8('RENAME "Caf\u00e9" "Cr\u00e8me"')), ['u10 OK Rename completed']);
    assert.ok(server.control.listMailboxes().some((m) => m.path === 'Cr&AOg-me'));
    assert.deepEqual(await send(v2, 'u11', utf8('DELETE "Cr\u00e8me"')), ['u11 OK Delete completed']);
    assert.deepEqual(await send(v2, 'u12', utf8('CREATE "Caf\u00e9"')), ['u12 OK Create completed']);
    // The rev1 session sees the same mailboxes in modified UTF-7, and 8-bit quoted strings stay BAD.
    assert.deepEqual(await v1.command('LIST "" "C*"'), ['* LIST (\\HasNoChildren) "/" "Caf&AOk-"', 'T2 OK LIST completed']);
    assert.match(last(await send(v1, 'r1', utf8('SELECT "Entwürfe"'))), /^r1 BAD /);
    // IMAP4rev2 includes UTF8=ACCEPT (RFC 9755): a rev2 session may APPEND a UTF-8 header; a rev1 one that did
    // not enable UTF8=ACCEPT gets NO (RFC 6855 §4).
    const message = utf8('Subject: Grüße\r\n\r\nbody\r\n');
    const append = (tag: string): Buffer => Buffer.concat([utf8(`APPEND INBOX {${message.length}+}\r\n`), message]);
    assert.match(last(await send(v2, 'u13', append('u13'))), /^u13 OK /);
    assert.match(last(await send(v1, 'r2', append('r2'))), /^r2 NO .*8-bit/);
    v1.close();
    v2.close();
  });
});

test('imapflow 2.1.2 ENABLEs IMAP4rev2 when offered and then works in rev2: UTF-8 names, ESEARCH, no \\Recent, STATUS DELETED', { timeout: 15000 }, async () => {
  const log: string[] = [];
  const debug = (line: string): void => void log.push(line);
  await withServer({ plugins: 'all', debug, storage: { INBOX: { messages: [{ raw: mail('one') }, { raw: mail('two'), flags: ['\\Deleted'] }] } } }, async (server, port) => {
    const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, disableAutoIdle: true });
    const enables: string[] = [];
    server.on('command', (e) => {
      if (e.command === 'ENABLE') enables.push(e.status);
    });
    await client.connect();
    try {
      // Its autoEnable sends one `ENABLE CONDSTORE UTF8=ACCEPT IMAP4REV2` (all three are offered with plugins: "all").
      assert.ok(client.enabled.has('IMAP4REV2'), [...client.enabled].join(' '));
      assert.ok(client.enabled.has('CONDSTORE'));
      assert.ok(client.enabled.has('UTF8=ACCEPT'));
      assert.deepEqual(enables, ['OK']);
      // What it sent, as the server's debug log shows it (the client's own ENABLE, upper-cased).
      assert.ok(log.some((l) => / C: \S+ ENABLE CONDSTORE UTF8=ACCEPT IMAP4REV2$/.test(l)), log.filter((l) => l.includes('ENABLE')).join('\n'));
      // It sends names as UTF-8 in a rev2 session; the store keeps modified UTF-7.
      await client.mailboxCreate('Entwürfe');
      assert.ok(server.control.listMailboxes().some((m) => m.path === 'Entw&APw-rfe'));
      const listed = await client.list();
      assert.ok(listed.some((m) => m.path === 'Entwürfe'), listed.map((m) => m.path).join(', '));
      // STATUS: RECENT is never asked of a rev2 session (imapflow gives 0 itself); DELETED is.
      const status = await client.status('INBOX', { messages: true, recent: true, deleted: true } as never);
      assert.ok(status);
      assert.equal(status.messages, 2);
      assert.equal(status.recent, 0);
      assert.equal((status as unknown as { deleted?: number }).deleted, 1);
      const lock = await client.getMailboxLock('INBOX');
      try {
        // Plain SEARCH is answered by ESEARCH, which imapflow reads.
        assert.deepEqual(await client.search({ deleted: false }, { uid: true }), [1]);
        const message = await client.fetchOne('1', { flags: true, uid: true });
        assert.ok(message);
        assert.deepEqual([...(message.flags ?? [])], []);
        await client.messageFlagsAdd('1', ['\\Flagged']);
        const again = await client.fetchOne('1', { flags: true });
        assert.ok(again);
        assert.deepEqual([...(again.flags ?? [])], ['\\Flagged']);
      } finally {
        lock.release();
      }
    } finally {
      await client.logout();
    }
  });
});

test('a rev1 session is byte-identical with and without the IMAP4rev2 plugin loaded (capability lists aside)', async () => {
  const withoutRev2 = BUILTIN_PLUGINS.filter((p) => p !== 'IMAP4REV2');
  const storage = () => ({
    INBOX: { messages: [{ raw: mail('a'), flags: ['\\Seen'] }, { raw: mail('b') }, { raw: mail('c'), flags: ['\\Flagged'] }] },
    '': { folders: { 'Entw&APw-rfe': {}, Foo: { subscribed: false, folders: { Bar: {} } } } },
  });
  const script = [
    'CAPABILITY',
    'ENABLE CONDSTORE',
    'LIST "" "*"',
    'LIST (SUBSCRIBED RECURSIVEMATCH) "" "%" RETURN (CHILDREN)',
    'LSUB "" "*"',
    'STATUS INBOX (MESSAGES RECENT UIDNEXT UNSEEN DELETED SIZE)',
    'SELECT INBOX',
    'FETCH 1:* (FLAGS UID)',
    'SEARCH NEW',
    'SEARCH UNSEEN',
    'STORE 2 +FLAGS (\\Deleted)',
    'CHECK',
    'EXAMINE "Entw&APw-rfe"',
    'SELECT INBOX',
    'EXPUNGE',
    'NOOP',
    'LOGOUT',
  ];
  const transcript = async (plugins: string[]): Promise<string> => {
    const { server, port } = await startServer({ plugins, storage: storage() });
    try {
      const c = await rawSession(port);
      const out: string[] = [];
      for (const command of script) out.push(...(await c.command(command)));
      c.close();
      return out.join('\r\n');
    } finally {
      await server.stop();
    }
  };
  const plain = await transcript(withoutRev2);
  const loaded = await transcript([...BUILTIN_PLUGINS]);
  assert.ok(loaded.includes(' IMAP4rev2 '));
  assert.equal(loaded.replace(/ IMAP4rev2(?= )/g, ''), plain);
  // What the rev1 session got is rev1: RECENT, OK [UNSEEN], * SEARCH, no OK [CLOSED], CHECK answered.
  assert.match(plain, /\* \d+ RECENT/);
  assert.match(plain, /\[UNSEEN 2\]/);
  assert.match(plain, /\r\n\* SEARCH 2 3\r\n/);
  assert.doesNotMatch(plain, /CLOSED/);
});

test("SELECT's LIST line shows the attributes LIST would: a child the user may not list is no \\HasChildren (RFC 4314)", async () => {
  await withServer(
    {
      plugins: ['IMAP4rev2', 'ACL'],
      users: { testuser: { password: 'testpass' }, alice: { password: 'alicepass' } },
      storage: { INBOX: {}, '': { folders: { Team: { 'special-use': '\\Archive', folders: { Secret: {} } } } } },
    },
    async (server, port) => {
      const acl = server.extension('ACL')!;
      acl.setAcl('Team', 'alice', 'lrs');
      acl.setAcl('Team/Secret', 'testuser', 'lrswipkxtea');
      acl.deleteAcl('Team/Secret', 'anyone');
      const owner = await rev2Session(port);
      assert.ok((await owner.command('EXAMINE Team')).includes('* LIST (\\HasChildren \\Archive) "/" "Team"'));
      const alice = await rawSession(port, false);
      await alice.command('LOGIN alice alicepass');
      await alice.command('ENABLE IMAP4rev2');
      assert.ok((await alice.command('EXAMINE Team')).includes('* LIST (\\HasNoChildren \\Archive) "/" "Team"'));
      owner.close();
      alice.close();
    },
  );
});

test('rev2 with the other folded-in extensions: LIST-STATUS names in UTF-8, ESEARCH carries CONDSTORE MODSEQ, SEARCHRES SAVE alone sends nothing', async () => {
  const storage = { INBOX: { messages: [{ raw: mail('a') }, { raw: mail('b'), flags: ['\\Flagged'] }] }, '': { folders: { 'Entw&APw-rfe': {} } } };
  await withServer({ plugins: ['IMAP4rev2', 'CONDSTORE'], storage }, async (_server, port) => {
    const c = await rev2Session(port);
    const listed = (await c.command('LIST "" "E*" RETURN (STATUS (MESSAGES))')).map((l) => Buffer.from(l, 'latin1').toString('utf8'));
    assert.deepEqual(listed.slice(0, -1), ['* LIST (\\HasNoChildren) "/" "Entwürfe"', '* STATUS "Entwürfe" (MESSAGES 0)']);
    await c.command('SELECT INBOX');
    const modseq = await c.command('SEARCH MODSEQ 1');
    assert.match(modseq[0]!, /^\* ESEARCH \(TAG "T5"\) ALL 1:2 MODSEQ \d+$/);
    assert.deepEqual(await c.command('SEARCH RETURN (SAVE) FLAGGED'), ['T6 OK Search completed']);
    assert.deepEqual((await c.command('FETCH $ (FLAGS)')).slice(0, -1), ['* 2 FETCH (FLAGS (\\Flagged))']);
    c.close();
  });
});

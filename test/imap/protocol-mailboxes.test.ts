/**
 * Protocol tests over a raw socket: SELECT/EXAMINE responses, LIST/LSUB,
 * STATUS, mailbox management with response codes, APPEND, COPY, MOVE and
 * UID EXPUNGE with the UIDPLUS codes.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import { tagged } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

let server: Server;
let port: number;

beforeEach(async () => {
  ({ server, port } = await startServer({
    plugins: 'all',
    storage: {
      INBOX: {
        uidvalidity: 1000,
        subscribed: false,
        messages: [
          { raw: mail('one'), flags: ['\\Seen'] },
          { raw: mail('two'), flags: ['\\Seen', '$Work'] },
          { raw: mail('three') },
        ],
      },
      '': {
        separator: '/',
        folders: {
          Archive: { uidvalidity: 2000, subscribed: true },
          Work: { subscribed: true, folders: { Projects: { subscribed: false, folders: { Rookery: { subscribed: false } } } } },
        },
      },
    },
  }));
});
afterEach(async () => {
  await server.stop();
});

describe('SELECT and EXAMINE', () => {
  test('SELECT response', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('SELECT INBOX'), [
      '* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft $Work)',
      '* 3 EXISTS',
      '* 0 RECENT',
      '* OK [UNSEEN 3] First unseen.',
      '* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen $Work \\*)] Flags permitted.',
      '* OK [UIDVALIDITY 1000] UIDs valid',
      '* OK [UIDNEXT 4] Predicted next UID',
      // CONDSTORE (in "all"): with every successful SELECT/EXAMINE (RFC 7162 §3.1.2.1).
      '* OK [HIGHESTMODSEQ 1] Highest',
      // OBJECTID (in "all"): mailboxes are numbered by name at start, Archive F1, INBOX F2, ...
      '* OK [MAILBOXID (F2)] Ok',
      'T2 OK [READ-WRITE] Select completed',
    ]);
    c.close();
  });

  test('EXAMINE response is READ-ONLY with empty PERMANENTFLAGS', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('EXAMINE Archive'), [
      '* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)',
      '* 0 EXISTS',
      '* 0 RECENT',
      '* OK [PERMANENTFLAGS ()] Read-only mailbox.',
      '* OK [UIDVALIDITY 2000] UIDs valid',
      '* OK [UIDNEXT 1] Predicted next UID',
      '* OK [HIGHESTMODSEQ 1] Highest',
      '* OK [MAILBOXID (F1)] Ok',
      'T2 OK [READ-ONLY] Examine completed',
    ]);
    assert.deepEqual(await c.command('STORE 1:* +FLAGS (\\Seen)'), ['T3 NO [READ-ONLY] Mailbox is read-only']);
    c.close();
  });

  test('STORE and EXPUNGE on a read-only mailbox are refused', async () => {
    const c = await rawSession(port);
    await c.command('EXAMINE INBOX');
    assert.equal(tagged(await c.command('STORE 1 +FLAGS (\\Deleted)')), 'T3 NO [READ-ONLY] Mailbox is read-only');
    assert.equal(tagged(await c.command('EXPUNGE')), 'T4 NO [READ-ONLY] Mailbox is read-only');
    c.close();
  });

  test('SELECT of a missing mailbox fails and leaves the selected state', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.equal(tagged(await c.command('SELECT Nope')), "T3 NO [NONEXISTENT] Mailbox doesn't exist: Nope");
    assert.equal(tagged(await c.command('FETCH 1 FLAGS')), 'T4 BAD FETCH needs a selected mailbox');
    c.close();
  });
});

describe('LIST, LSUB and STATUS', () => {
  test('LIST with * and %', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('LIST "" *'), [
      '* LIST (\\HasNoChildren) "/" "Archive"',
      '* LIST (\\HasNoChildren) "/" "INBOX"',
      '* LIST (\\HasChildren) "/" "Work"',
      '* LIST (\\HasChildren) "/" "Work/Projects"',
      '* LIST (\\HasNoChildren) "/" "Work/Projects/Rookery"',
      'T2 OK LIST completed',
    ]);
    assert.deepEqual(await c.command('LIST "" %'), [
      '* LIST (\\HasNoChildren) "/" "Archive"',
      '* LIST (\\HasNoChildren) "/" "INBOX"',
      '* LIST (\\HasChildren) "/" "Work"',
      'T3 OK LIST completed',
    ]);
    assert.deepEqual(await c.command('LIST Work/ %'), ['* LIST (\\HasChildren) "/" "Work/Projects"', 'T4 OK LIST completed']);
    assert.deepEqual(await c.command('LIST "" Work/%/%'), ['* LIST (\\HasNoChildren) "/" "Work/Projects/Rookery"', 'T5 OK LIST completed']);
    assert.deepEqual(await c.command('LIST "" inbox'), ['* LIST (\\HasNoChildren) "/" "INBOX"', 'T6 OK LIST completed']);
    assert.deepEqual(await c.command('LIST "" ""'), ['* LIST (\\Noselect) "/" ""', 'T7 OK LIST completed']);
    assert.deepEqual(await c.command('LIST "" Nothing*'), ['T8 OK LIST completed']);
    c.close();
  });

  test('LSUB with * and %', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('LSUB "" *'), ['* LSUB () "/" "Archive"', '* LSUB () "/" "Work"', 'T2 OK LSUB completed']);
    assert.deepEqual(await c.command('SUBSCRIBE Work/Projects'), ['T3 OK Subscribe completed']);
    assert.deepEqual(await c.command('LSUB "" Work/%'), ['* LSUB () "/" "Work/Projects"', 'T4 OK LSUB completed']);
    assert.deepEqual(await c.command('UNSUBSCRIBE Archive'), ['T5 OK Unsubscribe completed']);
    assert.deepEqual(await c.command('LSUB "" %'), ['* LSUB () "/" "Work"', 'T6 OK LSUB completed']);
    c.close();
  });

  test('STATUS', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('STATUS INBOX (MESSAGES RECENT UIDNEXT UIDVALIDITY UNSEEN)'), [
      '* STATUS "INBOX" (MESSAGES 3 RECENT 0 UIDNEXT 4 UIDVALIDITY 1000 UNSEEN 1)',
      'T2 OK Status completed',
    ]);
    assert.equal(tagged(await c.command('STATUS Nope (MESSAGES)')), "T3 NO [NONEXISTENT] Mailbox doesn't exist: Nope");
    assert.match(tagged(await c.command('STATUS INBOX (BOGUS)')), /^T4 BAD /);
    c.close();
  });
});

describe('CREATE, RENAME, DELETE', () => {
  test('responses and codes', async () => {
    const c = await rawSession(port);
    // OBJECTID (in "all"): 5 mailboxes and 3 messages were numbered at start; CREATE answers the new MAILBOXID.
    assert.deepEqual(await c.command('CREATE New'), ['T2 OK [MAILBOXID (F9)] Create completed']);
    assert.deepEqual(await c.command('CREATE New'), ['T3 NO [ALREADYEXISTS] Mailbox already exists']);
    assert.deepEqual(await c.command('CREATE Deep/Down/'), ['T4 OK [MAILBOXID (F11)] Create completed'], 'Deep got F10');
    assert.deepEqual(await c.command('LIST "" Deep*'), [
      '* LIST (\\HasChildren) "/" "Deep"',
      '* LIST (\\HasNoChildren) "/" "Deep/Down"',
      'T5 OK LIST completed',
    ]);
    assert.deepEqual(await c.command('RENAME New Old'), ['T6 OK Rename completed']);
    assert.deepEqual(await c.command('RENAME New Other'), ["T7 NO [NONEXISTENT] Mailbox doesn't exist: New"]);
    assert.deepEqual(await c.command('RENAME Old Archive'), ['T8 NO [ALREADYEXISTS] Target mailbox already exists']);
    assert.deepEqual(await c.command('DELETE Old'), ['T9 OK Delete completed']);
    assert.deepEqual(await c.command('DELETE Old'), ["T10 NO [NONEXISTENT] Mailbox doesn't exist: Old"]);
    assert.match(tagged(await c.command('DELETE Deep')), /^T11 NO \[HASCHILDREN\] /);
    assert.match(tagged(await c.command('DELETE INBOX')), /^T12 NO \[CANNOT\] /);
    c.close();
  });

  test('deleting the own selected mailbox does not send BYE', async () => {
    const c = await rawSession(port);
    await c.command('SELECT Archive');
    assert.deepEqual(await c.command('DELETE Archive'), ['T3 OK Delete completed']);
    assert.deepEqual(await c.command('NOOP'), ['T4 OK NOOP completed']);
    c.close();
  });
});

describe('APPEND, COPY, MOVE, UID EXPUNGE', () => {
  test('APPEND to a missing mailbox is NO [TRYCREATE]; APPENDUID otherwise', async () => {
    const c = await rawSession(port);
    const msg = mail('new');
    assert.deepEqual(await c.command(`APPEND Nope {${msg.length}+}\r\n${msg}`), ["T2 NO [TRYCREATE] Mailbox doesn't exist: Nope"]);
    assert.deepEqual(await c.command(`APPEND Archive (\\Flagged) "05-Nov-2026 10:00:00 +0000" {${msg.length}+}\r\n${msg}`), [
      'T3 OK [APPENDUID 2000 1] Append completed',
    ]);
    assert.deepEqual(await c.command(`APPEND INBOX {${msg.length}+}\r\n${msg}`), ['T4 OK [APPENDUID 1000 4] Append completed']);
    assert.deepEqual(await c.command('EXAMINE Archive'), [
      '* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)',
      '* 1 EXISTS',
      '* 1 RECENT',
      '* OK [UNSEEN 1] First unseen.',
      '* OK [PERMANENTFLAGS ()] Read-only mailbox.',
      '* OK [UIDVALIDITY 2000] UIDs valid',
      '* OK [UIDNEXT 2] Predicted next UID',
      '* OK [HIGHESTMODSEQ 2] Highest',
      '* OK [MAILBOXID (F1)] Ok',
      'T5 OK [READ-ONLY] Examine completed',
    ]);
    assert.deepEqual(await c.command('FETCH 1 (FLAGS INTERNALDATE)'), [
      '* 1 FETCH (FLAGS (\\Flagged \\Recent) INTERNALDATE "05-Nov-2026 10:00:00 +0000")',
      'T6 OK Fetch completed',
    ]);
    c.close();
  });

  test('COPY answers COPYUID; COPY to a missing mailbox is NO [TRYCREATE]', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('COPY 1:2 Archive'), ['T3 OK [COPYUID 2000 1:2 1:2] Copy completed']);
    assert.deepEqual(await c.command('UID COPY 3 Archive'), ['T4 OK [COPYUID 2000 3 3] Copy completed']);
    assert.deepEqual(await c.command('COPY 1 Nope'), ["T5 NO [TRYCREATE] Mailbox doesn't exist: Nope"]);
    assert.deepEqual(await c.command('NOOP'), ['T6 OK NOOP completed']);
    c.close();
  });

  test('MOVE sends an untagged OK [COPYUID] then EXPUNGE', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('MOVE 2 Archive'), [
      '* OK [COPYUID 2000 2 1] Moved UIDs.',
      '* 2 EXPUNGE',
      'T3 OK Move completed',
    ]);
    assert.deepEqual(await c.command('UID MOVE 1,3 Archive'), [
      '* OK [COPYUID 2000 1,3 2:3] Moved UIDs.',
      '* 2 EXPUNGE',
      '* 1 EXPUNGE',
      'T4 OK Move completed',
    ]);
    assert.deepEqual(await c.command('STATUS Archive (MESSAGES UIDNEXT)'), ['* STATUS "Archive" (MESSAGES 3 UIDNEXT 4)', 'T5 OK Status completed']);
    c.close();
  });

  test('UID EXPUNGE removes only the named \\Deleted messages', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('STORE 1:3 +FLAGS.SILENT (\\Deleted)'), ['T3 OK Store completed']);
    assert.deepEqual(await c.command('UID EXPUNGE 2:3'), ['* 3 EXPUNGE', '* 2 EXPUNGE', 'T4 OK Expunge completed']);
    assert.deepEqual(await c.command('FETCH 1:* (UID FLAGS)'), ['* 1 FETCH (UID 1 FLAGS (\\Seen \\Deleted))', 'T5 OK Fetch completed']);
    assert.deepEqual(await c.command('EXPUNGE'), ['* 1 EXPUNGE', 'T6 OK Expunge completed']);
    c.close();
  });

  test('UID EXPUNGE is unknown without UIDPLUS', async () => {
    const { server: bare, port: barePort } = await startServer({ plugins: [] });
    try {
      const c = await rawSession(barePort);
      await c.command('SELECT INBOX');
      assert.deepEqual(await c.command('UID EXPUNGE 1'), ['T3 BAD Unknown command UID EXPUNGE']);
      assert.deepEqual(await c.command('MOVE 1 INBOX'), ['T4 BAD Unknown command MOVE']);
      c.close();
    } finally {
      await bare.stop();
    }
  });
});

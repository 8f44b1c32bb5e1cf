/**
 * reset() swaps every mailbox back and copies its messages from the seed
 * when first read (issue 20). What a client sees after each reset must be
 * the seed's state, however often the server is reset and whatever changed
 * in between: messages, flags, UIDs, UIDNEXT, HIGHESTMODSEQ, the unseen
 * count and the keyword list (RFC 3501 §7.2.6 FLAGS, §6.3.10 STATUS).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mail, rawSession, startServer } from '../helpers/server.js';

test('every reset gives IMAP clients the seed state again, changes and all reads in between', async () => {
  const { server, port } = await startServer({
    plugins: ['CONDSTORE'],
    storage: {
      INBOX: {
        messages: [mail('one'), { raw: mail('two'), flags: ['\\Seen', 'Keep'] }, { raw: mail('three'), uid: 7 }],
      },
      '': { folders: { Other: { messages: [mail('four')] } } },
    },
  });
  try {
    const seeded = async (): Promise<void> => {
      const c = await rawSession(port);
      try {
        const status = (await c.command('STATUS INBOX (MESSAGES UNSEEN UIDNEXT HIGHESTMODSEQ)')).join('\n');
        assert.match(status, /\* STATUS "?INBOX"? \(MESSAGES 3 UNSEEN 2 UIDNEXT 8 HIGHESTMODSEQ 1\)/);
        const select = (await c.command('SELECT INBOX')).join('\n');
        // The keyword list is the seed's: a keyword added before the reset is gone (FLAGS, RFC 3501 §7.2.6).
        assert.match(select, /\* FLAGS \(\\Answered \\Flagged \\Deleted \\Seen \\Draft Keep\)/);
        // STATUS HIGHESTMODSEQ enabled CONDSTORE (RFC 7162 §3.1), so MODSEQ may be in the FETCH too: read UID and FLAGS alone.
        const fetch = (await c.command('UID FETCH 1:* (FLAGS)'))
          .filter((l) => l.startsWith('* '))
          .map((l) => `${/^\* (\d+) FETCH/.exec(l)?.[1]} ${/UID (\d+)/.exec(l)?.[1]} ${/FLAGS \(([^)]*)\)/.exec(l)?.[1]}`);
        assert.deepEqual(fetch, ['1 1 ', '2 2 \\Seen Keep', '3 7 ']);
        const other = (await c.command('STATUS Other (MESSAGES UNSEEN)')).join('\n');
        assert.match(other, /\* STATUS "?Other"? \(MESSAGES 1 UNSEEN 1\)/);
      } finally {
        c.close();
      }
    };
    await seeded();
    for (let round = 0; round < 3; round++) {
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      assert.match((await c.command('STORE 1:* +FLAGS (\\Seen Added)')).at(-1)!, /OK/);
      assert.match((await c.command('STORE 3 +FLAGS (\\Deleted)')).at(-1)!, /OK/);
      assert.match((await c.command('EXPUNGE')).join('\n'), /\* 3 EXPUNGE/);
      c.close();
      server.control.addMessage('INBOX', { raw: mail(`added ${round}`) });
      server.control.addMessage('Other', { raw: mail(`other ${round}`) });
      // Even round: the reset follows changes that read every mailbox; odd round: a reset right after a reset.
      server.control.reset();
      if (round % 2 === 1) server.control.reset();
      await seeded();
    }
    // The control API reads the copy too: the same three UIDs, untouched raw bytes.
    const listed = server.control.listMessages('INBOX', { raw: true });
    assert.deepEqual(
      listed.map((m) => m.uid),
      [1, 2, 7],
    );
    assert.match(Buffer.from(listed[1]!.raw!, 'base64').toString('utf8'), /Subject: two/);
  } finally {
    await server.stop();
  }
});

test('a reset with nobody reading in between still leaves a mailbox that takes appends at the seed UIDNEXT', async () => {
  const { server, port } = await startServer({ storage: { INBOX: { messages: [mail('a'), mail('b')] } } });
  try {
    server.control.reset();
    server.control.reset();
    // The first read after the resets is an append: it must land after the seed's messages.
    assert.deepEqual(server.control.addMessage('INBOX', { raw: mail('c') }).uid, 3);
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const lines = await c.command('UID SEARCH ALL');
    assert.ok(lines.includes('* SEARCH 1 2 3'), lines.join('\n'));
    c.close();
  } finally {
    await server.stop();
  }
});

/**
 * Issue 9, "the core exactly right": exact RFC 3501 behaviour over a real
 * socket where the server used to deviate.
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
        messages: [{ raw: mail('one'), flags: ['\\Seen'] }, { raw: mail('two'), flags: ['\\Seen'] }, { raw: mail('three') }],
      },
      '': {
        separator: '/',
        folders: {
          Archive: { uidvalidity: 2000, subscribed: true },
          foo: { subscribed: false, folders: { bar: { subscribed: true } } },
        },
      },
    },
  }));
});
afterEach(async () => {
  await server.stop();
});

/** `NO` with the RFC 5530 code, whatever the human-readable text. */
function assertNo(line: string, tag: string, code: string): void {
  assert.match(line, new RegExp(`^${tag} NO \\[${code}\\] `), line);
}

describe('a mailbox name that is not modified UTF-7 is a well-formed argument: NO, not BAD (RFC 3501 §5.1.3, §6.3)', () => {
  // `&Jjo` (no closing `-`), a bare `&`, `&AGE-` (a shifted printable ASCII
  // "a", which has its own form) are astrings, but no mailbox can have them.
  const invalid = ['"&Jjo"', '"a&b"', '"&AGE-"', '"&"'];

  test('SELECT and EXAMINE answer NO [NONEXISTENT], and the failed SELECT leaves no mailbox selected', async () => {
    const c = await rawSession(port);
    for (const name of invalid) {
      await c.command('SELECT INBOX');
      const lines = await c.command(`SELECT ${name}`);
      assert.equal(lines.length, 1, lines.join('\n'));
      assertNo(lines[0]!, 'T\\d+', 'NONEXISTENT');
      // §6.3.1: "If ... a SELECT command that fails is attempted, no mailbox is selected."
      assert.match(tagged(await c.command('FETCH 1 FLAGS')), /^T\d+ BAD /);
      assertNo(tagged(await c.command(`EXAMINE ${name}`)), 'T\\d+', 'NONEXISTENT');
    }
    c.close();
  });

  test('8-bit bytes in a literal mailbox name: NO, and the name is not echoed', async () => {
    const c = await rawSession(port);
    c.write(Buffer.concat([Buffer.from('A1 SELECT {6+}\r\n'), Buffer.from([0x43, 0x61, 0x66, 0xc3, 0xa9, 0x0d]), Buffer.from('\r\n')]));
    const lines = await c.until('A1');
    assert.equal(lines.length, 1, lines.join('\n'));
    assertNo(lines[0]!, 'A1', 'NONEXISTENT');
    // The CR inside the name must not reach the response line.
    assert.ok(!lines[0]!.includes('Caf'), lines[0]);
    c.close();
  });

  test('STATUS, DELETE, RENAME source, UNSUBSCRIBE: NO [NONEXISTENT]; CREATE, RENAME target, SUBSCRIBE: NO [CANNOT]', async () => {
    const c = await rawSession(port);
    for (const name of invalid) {
      assertNo(tagged(await c.command(`STATUS ${name} (MESSAGES)`)), 'T\\d+', 'NONEXISTENT');
      assertNo(tagged(await c.command(`DELETE ${name}`)), 'T\\d+', 'NONEXISTENT');
      assertNo(tagged(await c.command(`RENAME ${name} Other`)), 'T\\d+', 'NONEXISTENT');
      assertNo(tagged(await c.command(`UNSUBSCRIBE ${name}`)), 'T\\d+', 'NONEXISTENT');
      assertNo(tagged(await c.command(`CREATE ${name}`)), 'T\\d+', 'CANNOT');
      assertNo(tagged(await c.command(`RENAME Archive ${name}`)), 'T\\d+', 'CANNOT');
      assertNo(tagged(await c.command(`SUBSCRIBE ${name}`)), 'T\\d+', 'CANNOT');
    }
    // Nothing changed: Archive is still there under its name.
    assert.deepEqual(await c.command('LIST "" Archive'), ['* LIST (\\HasNoChildren) "/" "Archive"', 'T30 OK LIST completed']);
    c.close();
  });

  test('APPEND, COPY and MOVE to such a name: NO without [TRYCREATE], since CREATE could never make it (§6.3.11, §6.4.7)', async () => {
    const c = await rawSession(port);
    const msg = mail('new');
    for (const name of invalid) {
      const line = tagged(await c.command(`APPEND ${name} {${msg.length}+}\r\n${msg}`));
      assert.match(line, /^T\d+ NO /, line);
      assert.doesNotMatch(line, /TRYCREATE/);
    }
    await c.command('SELECT INBOX');
    for (const name of invalid) {
      for (const verb of ['COPY', 'MOVE', 'UID COPY', 'UID MOVE']) {
        const lines = await c.command(`${verb} 1 ${name}`);
        assert.equal(lines.length, 1, lines.join('\n'));
        assert.match(lines[0]!, /^T\d+ NO /, lines[0]);
        assert.doesNotMatch(lines[0]!, /TRYCREATE/);
      }
    }
    assert.deepEqual(await c.command('STATUS INBOX (MESSAGES)'), ['* STATUS "INBOX" (MESSAGES 3)', 'T23 OK Status completed']);
    c.close();
  });

  test('LIST and LSUB with such a reference or pattern match nothing and succeed', async () => {
    const c = await rawSession(port);
    await c.command('CREATE "&AOk-t&AOk-"'); // "été", valid
    assert.deepEqual(await c.command('LIST "" "&*"'), ['T3 OK LIST completed']);
    assert.deepEqual(await c.command('LIST "" "&AOk-t&AOk"'), ['T4 OK LIST completed']);
    assert.deepEqual(await c.command('LIST "&" "*"'), ['T5 OK LIST completed']);
    assert.deepEqual(await c.command('LSUB "" "&*"'), ['T6 OK LSUB completed']);
    assert.deepEqual(await c.command('LIST "" "&AOk-t*"'), ['* LIST (\\HasNoChildren) "/" "&AOk-t&AOk-"', 'T7 OK LIST completed']);
    c.close();
  });

  test('syntax errors stay BAD', async () => {
    const c = await rawSession(port);
    assert.match(tagged(await c.command('SELECT')), /^T2 BAD /);
    assert.match(tagged(await c.command('SELECT "INBOX')), /^T3 BAD /);
    assert.match(tagged(await c.command('CREATE a b')), /^T4 BAD /);
    assert.match(tagged(await c.command('STATUS "&Jjo" MESSAGES')), /^T5 BAD /);
    assert.match(tagged(await c.command('RENAME "&Jjo"')), /^T6 BAD /);
    c.close();
  });
});

describe('LSUB and LIST with % (RFC 3501 §6.3.8-9)', () => {
  test('LSUB % returns an unsubscribed parent of a subscribed child as \\Noselect, not the child', async () => {
    const c = await rawSession(port);
    // "foo/bar" is subscribed, "foo" is not.
    assert.deepEqual(await c.command('LSUB "" %'), ['* LSUB () "/" "Archive"', '* LSUB (\\Noselect) "/" "foo"', 'T2 OK LSUB completed']);
    assert.deepEqual(await c.command('LSUB "" *'), ['* LSUB () "/" "Archive"', '* LSUB () "/" "foo/bar"', 'T3 OK LSUB completed']);
    assert.deepEqual(await c.command('LSUB "" foo/%'), ['* LSUB () "/" "foo/bar"', 'T4 OK LSUB completed']);
    assert.deepEqual(await c.command('LSUB "" f%'), ['* LSUB (\\Noselect) "/" "foo"', 'T5 OK LSUB completed']);
    // Subscribing the parent makes it an ordinary entry.
    await c.command('SUBSCRIBE foo');
    assert.deepEqual(await c.command('LSUB "" %'), ['* LSUB () "/" "Archive"', '* LSUB () "/" "foo"', 'T7 OK LSUB completed']);
    // Levels below the pattern's depth: "x/y" is reported for x/%, once.
    await c.command('SUBSCRIBE x/y/z');
    await c.command('SUBSCRIBE x/y/w');
    assert.deepEqual(await c.command('LSUB "" x/%'), ['* LSUB (\\Noselect) "/" "x/y"', 'T10 OK LSUB completed']);
    c.close();
  });

  test('LIST % returns a hierarchy level that is no mailbox as \\Noselect', async () => {
    const { server: s, port: p } = await startServer({
      plugins: 'all',
      storage: {
        INBOX: {},
        '': { folders: { Mine: {} } },
        'Shared.': { type: 'shared', separator: '.', folders: { Team: {} } },
      },
    });
    try {
      const c = await rawSession(p);
      // "Shared.Team" exists, the level "Shared" does not.
      assert.deepEqual(await c.command('LIST "" %'), [
        '* LIST (\\HasNoChildren) "/" "INBOX"',
        '* LIST (\\HasNoChildren) "/" "Mine"',
        '* LIST (\\Noselect \\HasChildren) "." "Shared"',
        'T2 OK LIST completed',
      ]);
      assert.deepEqual(await c.command('LIST "" Shared.%'), ['* LIST (\\HasNoChildren) "." "Shared.Team"', 'T3 OK LIST completed']);
      c.close();
    } finally {
      await s.stop();
    }
  });
});

describe('LIST patterns and INBOX case (RFC 3501 §5.1, §6.3.8)', () => {
  test('only INBOX is case-insensitive: "inboxes" is another name, and inbox* / in% still list INBOX', async () => {
    const c = await rawSession(port);
    await c.command('CREATE inboxes');
    await c.command('CREATE INBOXES');
    await c.command('CREATE INBOX/Sub');
    assert.deepEqual(await c.command('LIST "" inboxes'), ['* LIST (\\HasNoChildren) "/" "inboxes"', 'T5 OK LIST completed']);
    assert.deepEqual(await c.command('LIST "" inbox*'), [
      '* LIST (\\HasChildren) "/" "INBOX"',
      '* LIST (\\HasNoChildren) "/" "INBOX/Sub"',
      '* LIST (\\HasNoChildren) "/" "inboxes"',
      'T6 OK LIST completed',
    ]);
    assert.deepEqual(await c.command('LIST "" in%'), ['* LIST (\\HasChildren) "/" "INBOX"', '* LIST (\\HasNoChildren) "/" "inboxes"', 'T7 OK LIST completed']);
    assert.deepEqual(await c.command('LIST "" Inbox/%'), ['* LIST (\\HasNoChildren) "/" "INBOX/Sub"', 'T8 OK LIST completed']);
    assert.deepEqual(await c.command('LIST "" inbox/sub'), ['T9 OK LIST completed']);
    c.close();
  });
});

describe('SEARCH FROM/TO/CC/BCC match parsed addresses (RFC 3501 §6.4.4)', () => {
  test('mailbox@host of an address with comments and folding, and the decoded display name', async () => {
    const { server: s, port: p } = await startServer({
      storage: {
        INBOX: {
          messages: [
            'From: <user-from (comment)@ (comment) domain.org>\r\nTo: bob\r\n @example.org\r\nSubject: a\r\n\r\nx\r\n',
            'From: =?UTF-8?Q?J=C3=B6rg?= <joerg@example.net>\r\nCc: "Smith, Ann" <ann (work) @ example.com>\r\nBcc: Undisclosed: hidden (x) @ secret.example;\r\nSubject: b\r\n\r\ny\r\n',
            'From: someone@else.example\r\nTo: other@else.example\r\nSubject: c\r\n\r\nz\r\n',
          ],
        },
      },
    });
    try {
      const c = await rawSession(p);
      await c.command('SELECT INBOX');
      const search = async (criteria: string): Promise<string> => {
        const lines = await c.command(`SEARCH ${criteria}`);
        assert.match(tagged(lines), /^T\d+ OK /);
        assert.equal(lines.length, 2, lines.join('\n'));
        return lines[0]!;
      };
      assert.equal(await search('FROM "user-from@domain.org"'), '* SEARCH 1');
      assert.equal(await search('FROM "USER-FROM@DOMAIN"'), '* SEARCH 1');
      assert.equal(await search('TO "bob@example.org"'), '* SEARCH 1');
      assert.equal(await search('CC "ann@example.com"'), '* SEARCH 2');
      assert.equal(await search('CC "Smith, Ann"'), '* SEARCH 2');
      assert.equal(await search('BCC "hidden@secret.example"'), '* SEARCH 2');
      assert.equal(await search('CHARSET UTF-8 FROM {5+}\r\nJ\u00f6rg'), '* SEARCH 2');
      // The raw header text still matches, comments included.
      assert.equal(await search('FROM "(comment)"'), '* SEARCH 1');
      assert.equal(await search('FROM "else.example"'), '* SEARCH 3');
      // An address is not a substring of another field.
      assert.equal(await search('TO "user-from@domain.org"'), '* SEARCH');
      c.close();
    } finally {
      await s.stop();
    }
  });
});

describe('COPY and MOVE into the selected mailbox itself (RFC 3501 §6.4.7, RFC 6851, RFC 4315)', () => {
  test('MOVE: COPYUID first, EXPUNGE for the original, EXISTS for the copy; numbers stay consistent', async () => {
    const c = await rawSession(port);
    const other = await rawSession(port);
    await c.command('SELECT INBOX');
    await other.command('EXAMINE INBOX');
    assert.deepEqual(await c.command('MOVE 2 INBOX'), [
      // RFC 6851 §4.3: COPYUID in an untagged OK before any EXPUNGE.
      '* OK [COPYUID 1000 2 4] Moved UIDs.',
      '* 2 EXPUNGE',
      '* 3 EXISTS',
      '* 1 RECENT',
      'T3 OK Move completed',
    ]);
    // UID 2 is gone, UID 4 is its copy at the end, with its flags.
    assert.deepEqual(await c.command('FETCH 1:* (UID FLAGS)'), [
      '* 1 FETCH (UID 1 FLAGS (\\Seen))',
      '* 2 FETCH (UID 3 FLAGS ())',
      '* 3 FETCH (UID 4 FLAGS (\\Seen \\Recent))',
      'T4 OK Fetch completed',
    ]);
    // Another session sees the same change in the same order.
    assert.deepEqual(await other.command('NOOP'), ['* 2 EXPUNGE', '* 3 EXISTS', '* 0 RECENT', 'T3 OK NOOP completed']);
    assert.deepEqual(await other.command('FETCH 1:* (UID)'), [
      '* 1 FETCH (UID 1)',
      '* 2 FETCH (UID 3)',
      '* 3 FETCH (UID 4)',
      'T4 OK Fetch completed',
    ]);
    c.close();
    other.close();
  });

  test('UID MOVE of every message into its own mailbox renumbers them all', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('UID MOVE 1:* INBOX'), [
      '* OK [COPYUID 1000 1:3 4:6] Moved UIDs.',
      '* 3 EXPUNGE',
      '* 2 EXPUNGE',
      '* 1 EXPUNGE',
      '* 3 EXISTS',
      '* 3 RECENT',
      'T3 OK Move completed',
    ]);
    assert.deepEqual(await c.command('UID SEARCH ALL'), ['* SEARCH 4 5 6', 'T4 OK Search completed']);
    assert.deepEqual(await c.command('STATUS INBOX (MESSAGES UIDNEXT)'), ['* STATUS "INBOX" (MESSAGES 3 UIDNEXT 7)', 'T5 OK Status completed']);
    c.close();
  });

  test('COPY: new UIDs, COPYUID, EXISTS; the originals stay', async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('COPY 1:2 INBOX'), ['* 5 EXISTS', '* 2 RECENT', 'T3 OK [COPYUID 1000 1:2 4:5] Copy completed']);
    assert.deepEqual(await c.command('UID FETCH 1:* (FLAGS)'), [
      '* 1 FETCH (UID 1 FLAGS (\\Seen))',
      '* 2 FETCH (UID 2 FLAGS (\\Seen))',
      '* 3 FETCH (UID 3 FLAGS ())',
      '* 4 FETCH (UID 4 FLAGS (\\Seen \\Recent))',
      '* 5 FETCH (UID 5 FLAGS (\\Seen \\Recent))',
      'T4 OK Fetch completed',
    ]);
    c.close();
  });
});

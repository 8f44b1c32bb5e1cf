/**
 * Protocol tests over a raw socket: RFC 3501 behaviours a conformance
 * suite checks — FETCH sections, partials and macros, implicit \Seen,
 * STORE variants, SEARCH keys and charsets, COPY/CLOSE/EXPUNGE,
 * RENAME/DELETE of INBOX, LOGIN quoting and AUTHENTICATE PLAIN.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import { tagged } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

const MULTI =
  'From: a@example.com\r\nTo: b@example.com\r\nSubject: multi\r\nDate: Mon, 2 Nov 2026 10:00:00 +0000\r\n' +
  'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="XX"\r\n\r\npreamble\r\n' +
  '--XX\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nplain body\r\n' +
  '--XX\r\nContent-Type: text/html\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>hi</p>\r\n--XX--\r\n';

let server: Server;
let port: number;

beforeEach(async () => {
  ({ server, port } = await startServer({
    plugins: 'all',
    users: { testuser: { password: 'testpass' }, 'q"user': { password: 'pa\\ss"word' } },
    storage: {
      INBOX: {
        uidvalidity: 1000,
        messages: [
          { raw: mail('one'), flags: ['\\Seen'], internaldate: '02-Nov-2026 10:00:00 +0000' },
          { raw: MULTI, flags: ['$Work'], internaldate: '05-Nov-2026 12:30:00 +0200' },
          { raw: mail('three', 'Grüße'), internaldate: '10-Nov-2026 08:00:00 +0000' },
        ],
      },
      '': { separator: '/', folders: { Archive: { uidvalidity: 2000, subscribed: true } } },
    },
  }));
});
afterEach(async () => {
  await server.stop();
});

async function selected() {
  const c = await rawSession(port);
  await c.command('SELECT INBOX');
  return c;
}

describe('FETCH', () => {
  test('BODY[]<0.10> is labelled <0>, returns 10 bytes and reports FLAGS only when \\Seen changes', async () => {
    const c = await selected();
    assert.deepEqual(await c.command('FETCH 2 BODY[]<0.10>'), ['* 2 FETCH (BODY[]<0> {10}\r\nFrom: a@ex FLAGS ($Work \\Seen))', 'T3 OK Fetch completed']);
    assert.deepEqual(await c.command('FETCH 2 BODY[]<0.10>'), ['* 2 FETCH (BODY[]<0> {10}\r\nFrom: a@ex)', 'T4 OK Fetch completed']);
    assert.deepEqual(await c.command('FETCH 2 BODY.PEEK[TEXT]<2.5>'), ['* 2 FETCH (BODY[TEXT]<2> {5}\r\neambl)', 'T5 OK Fetch completed']);
    // A partial past the end is empty, still labelled with its origin.
    assert.match((await c.command('FETCH 2 BODY.PEEK[]<400.10>'))[0]!, /^\* 2 FETCH \(BODY\[\]<400> (\{0\}\r\n|"")\)$/);
    assert.equal(tagged(await c.command('FETCH 2 BODY.PEEK[]<0.0>')), 'T7 BAD Invalid partial');
    c.close();
  });

  test('HEADER.FIELDS and HEADER.FIELDS.NOT', async () => {
    const c = await selected();
    assert.deepEqual(await c.command('FETCH 1 BODY.PEEK[HEADER.FIELDS.NOT (From To Message-ID)]'), [
      '* 1 FETCH (BODY[HEADER.FIELDS.NOT (FROM TO MESSAGE-ID)] {54}\r\nSubject: one\r\nDate: Mon, 2 Nov 2026 10:00:00 +0000\r\n\r\n)',
      'T3 OK Fetch completed',
    ]);
    assert.deepEqual(await c.command('FETCH 2 BODY.PEEK[HEADER.FIELDS (Subject To)]'), [
      '* 2 FETCH (BODY[HEADER.FIELDS (SUBJECT TO)] {37}\r\nTo: b@example.com\r\nSubject: multi\r\n\r\n)',
      'T4 OK Fetch completed',
    ]);
    assert.deepEqual(await c.command('FETCH 1 BODY.PEEK[HEADER.FIELDS (X-Nope)]'), ['* 1 FETCH (BODY[HEADER.FIELDS (X-NOPE)] {2}\r\n\r\n)', 'T5 OK Fetch completed']);
    c.close();
  });

  test('body parts and their MIME headers on a multipart', async () => {
    const c = await selected();
    assert.deepEqual(await c.command('FETCH 2 (BODY.PEEK[1.MIME] BODY.PEEK[1] BODY.PEEK[2.MIME])'), [
      '* 2 FETCH (BODY[1.MIME] {46}\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n BODY[1] {10}\r\nplain body' +
        ' BODY[2.MIME] {72}\r\nContent-Type: text/html\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n)',
      'T3 OK Fetch completed',
    ]);
    c.close();
  });

  // Sibling parts go back to back: `body-type-mpart = 1*body SP media-subtype` (RFC 3501 §9).
  test('BODY has no extension data; BODYSTRUCTURE has it', async () => {
    const c = await selected();
    assert.deepEqual(await c.command('FETCH 2 (BODY BODYSTRUCTURE)'), [
      '* 2 FETCH (BODY (("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 10 0)("text" "html" ("charset" "us-ascii") NIL NIL "quoted-printable" 9 0) "mixed")' +
        ' BODYSTRUCTURE (("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 10 0 NIL NIL NIL NIL)("text" "html" ("charset" "us-ascii") NIL NIL "quoted-printable" 9 0 NIL NIL NIL NIL) "mixed" ("boundary" "XX") NIL NIL NIL))',
      'T3 OK Fetch completed',
    ]);
    c.close();
  });

  test('RFC822.HEADER does not set \\Seen; RFC822.TEXT and RFC822 do', async () => {
    const c = await selected();
    const header = await c.command('FETCH 2 RFC822.HEADER');
    assert.match(header[0]!, /^\* 2 FETCH \(RFC822\.HEADER \{161\}\r\nFrom: a@example\.com\r\n[^]*\r\n\r\n\)$/);
    assert.deepEqual(await c.command('FETCH 2 FLAGS'), ['* 2 FETCH (FLAGS ($Work))', 'T4 OK Fetch completed']);
    const text = await c.command('FETCH 2 RFC822.TEXT');
    assert.match(text[0]!, /^\* 2 FETCH \(RFC822\.TEXT \{171\}\r\npreamble\r\n[^]*--XX--\r\n FLAGS \(\$Work \\Seen\)\)$/);
    const full = await c.command('FETCH 3 RFC822');
    assert.match(full[0]!, /^\* 3 FETCH \(RFC822 \{158\}\r\nFrom: Alice [^]* FLAGS \(\\Seen\)\)$/);
    c.close();
  });

  test('FAST, ALL and FULL macros; INTERNALDATE format', async () => {
    const c = await selected();
    assert.deepEqual(await c.command('FETCH 1:3 FAST'), [
      '* 1 FETCH (FLAGS (\\Seen) INTERNALDATE "02-Nov-2026 10:00:00 +0000" RFC822.SIZE 152)',
      '* 2 FETCH (FLAGS ($Work) INTERNALDATE "05-Nov-2026 12:30:00 +0200" RFC822.SIZE 332)',
      '* 3 FETCH (FLAGS () INTERNALDATE "10-Nov-2026 08:00:00 +0000" RFC822.SIZE 158)',
      'T3 OK Fetch completed',
    ]);
    assert.deepEqual(await c.command('FETCH 1 ALL'), [
      '* 1 FETCH (FLAGS (\\Seen) INTERNALDATE "02-Nov-2026 10:00:00 +0000" RFC822.SIZE 152 ENVELOPE ("Mon, 2 Nov 2026 10:00:00 +0000" "one" ' +
        '(("Alice" NIL "alice" "example.com")) (("Alice" NIL "alice" "example.com")) (("Alice" NIL "alice" "example.com")) (("Bob" NIL "bob" "example.com")) NIL NIL NIL "<one@example.com>"))',
      'T4 OK Fetch completed',
    ]);
    const full = (await c.command('FETCH 2 FULL'))[0]!;
    assert.match(full, /^\* 2 FETCH \(FLAGS \(\$Work\) INTERNALDATE "05-Nov-2026 12:30:00 \+0200" RFC822\.SIZE 332 ENVELOPE \(.*\) BODY \(\(.*\) "mixed"\)\)$/);
    assert.doesNotMatch(full, /BODYSTRUCTURE|boundary/);
    c.close();
  });
});

describe('STORE', () => {
  test('FLAGS, -FLAGS, .SILENT and UID STORE responses', async () => {
    const c = await selected();
    assert.deepEqual(await c.command('STORE 1 -FLAGS (\\Seen)'), ['* 1 FETCH (FLAGS ())', 'T3 OK Store completed']);
    assert.deepEqual(await c.command('STORE 1 FLAGS.SILENT (\\Flagged)'), ['T4 OK Store completed']);
    // foo is new to the mailbox: FLAGS announces it even to a silent store (RFC 3501 §7.2.6).
    assert.deepEqual(await c.command('STORE 1 +FLAGS.SILENT (foo)'), [
      '* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft $Work foo)',
      '* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen $Work foo \\*)] Flags permitted.',
      'T5 OK Store completed',
    ]);
    assert.deepEqual(await c.command('STORE 1 FLAGS (\\Answered)'), ['* 1 FETCH (FLAGS (\\Answered))', 'T6 OK Store completed']);
    assert.deepEqual(await c.command('UID STORE 2 +FLAGS (\\Answered)'), ['* 2 FETCH (UID 2 FLAGS ($Work \\Answered))', 'T7 OK Store completed']);
    assert.deepEqual(await c.command('UID STORE 99 +FLAGS (\\Answered)'), ['T8 OK Store completed']);
    c.close();
  });

  test('\\Recent cannot be stored', async () => {
    const c = await selected();
    assert.match(tagged(await c.command('STORE 1 +FLAGS (\\Recent)')), /^T3 BAD /);
    assert.match(tagged(await c.command('STORE 1 FLAGS (\\Seen \\Recent)')), /^T4 BAD /);
    assert.deepEqual(await c.command('FETCH 1 FLAGS'), ['* 1 FETCH (FLAGS (\\Seen))', 'T5 OK Fetch completed']);
    c.close();
  });
});

describe('SEARCH', () => {
  const cases: [string, string][] = [
    ['OR NOT SEEN FLAGGED HEADER Subject multi', '2'],
    ['OR (SEEN) (NOT (UNKEYWORD $Work))', '1 2'],
    ['NOT OR SEEN KEYWORD $Work', '3'],
    ['HEADER Content-Type multipart', '2'],
    ['HEADER Message-ID ""', '1 3'],
    ['LARGER 200', '2'],
    ['SMALLER 153', '1'],
    ['SENTON 2-Nov-2026', '1 2 3'],
    ['SENTBEFORE 2-Nov-2026', ''],
    ['SENTSINCE 3-Nov-2026', ''],
    ['BEFORE 5-Nov-2026', '1'],
    ['ON 5-Nov-2026', '2'],
    ['SINCE 5-Nov-2026', '2 3'],
    ['UID 2:3', '2 3'],
    ['2,3 KEYWORD $Work', '2'],
    ['1:* UNKEYWORD $Work', '1 3'],
    ['NEW', ''],
    ['OLD', '1 2 3'],
    ['RECENT', ''],
    ['UNSEEN', '2 3'],
    ['FROM alice SUBJECT ONE', '1'],
    ['BODY hello', '1'],
    ['ALL', '1 2 3'],
  ];
  test('keys', async () => {
    const c = await selected();
    for (const [key, result] of cases) {
      const lines = await c.command(`SEARCH ${key}`);
      assert.equal(lines[0], result ? `* SEARCH ${result}` : '* SEARCH', key);
      assert.match(lines[1]!, /^T\d+ OK /, key);
    }
    c.close();
  });

  test('UID SEARCH answers UIDs; a bare set is sequence numbers', async () => {
    const c = await selected();
    await c.command('STORE 1 +FLAGS (\\Deleted)');
    await c.command('EXPUNGE');
    assert.deepEqual(await c.command('UID SEARCH ALL'), ['* SEARCH 2 3', 'T5 OK Search completed']);
    assert.deepEqual(await c.command('UID SEARCH 1'), ['* SEARCH 2', 'T6 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH UID 3'), ['* SEARCH 2', 'T7 OK Search completed']);
    c.close();
  });

  test('CHARSET UTF-8 with a non-ASCII literal; unknown charset is NO [BADCHARSET]', async () => {
    const c = await selected();
    const word = Buffer.from('Grüß', 'utf8');
    c.write(Buffer.concat([Buffer.from(`S1 SEARCH CHARSET UTF-8 BODY {${word.length}}\r\n`)]));
    assert.equal(await c.line(), '+ OK');
    c.write(Buffer.concat([word, Buffer.from('\r\n')]));
    assert.deepEqual(await c.until('S1'), ['* SEARCH 3', 'S1 OK Search completed']);
    const bad = tagged(await c.command('SEARCH CHARSET X-UNKNOWN ALL'));
    assert.match(bad, /^T3 NO \[BADCHARSET \([^)]*UTF-8[^)]*\)\] /);
    c.close();
  });
});

describe('COPY, CHECK, CLOSE and EXPUNGE', () => {
  test('UID COPY answers COPYUID; missing target is TRYCREATE; CHECK is OK', async () => {
    const c = await selected();
    assert.deepEqual(await c.command('CHECK'), ['T3 OK Check completed']);
    assert.deepEqual(await c.command('UID COPY 2:3 Archive'), ['T4 OK [COPYUID 2000 2:3 1:2] Copy completed']);
    assert.match(tagged(await c.command('UID COPY 1 Nope')), /^T5 NO \[TRYCREATE\] /);
    assert.match(tagged(await c.command('UID COPY 99 Archive')), /^T6 OK /);
    c.close();
  });

  test('CLOSE expunges silently; EXPUNGE reports each message', async () => {
    const c = await selected();
    await c.command('STORE 1,3 +FLAGS.SILENT (\\Deleted)');
    assert.deepEqual(await c.command('EXPUNGE'), ['* 3 EXPUNGE', '* 1 EXPUNGE', 'T4 OK Expunge completed']);
    await c.command('STORE 1 +FLAGS.SILENT (\\Deleted)');
    assert.deepEqual(await c.command('CLOSE'), ['T6 OK Close completed']);
    assert.match(tagged(await c.command('FETCH 1 FLAGS')), /^T7 BAD /);
    assert.equal((await c.command('STATUS INBOX (MESSAGES)'))[0], '* STATUS "INBOX" (MESSAGES 0)');
    c.close();
  });

  test('CLOSE after EXAMINE leaves \\Deleted messages', async () => {
    const c = await selected();
    await c.command('STORE 1 +FLAGS.SILENT (\\Deleted)');
    await c.command('EXAMINE INBOX');
    assert.deepEqual(await c.command('CLOSE'), ['T5 OK Close completed']);
    assert.equal((await c.command('STATUS INBOX (MESSAGES)'))[0], '* STATUS "INBOX" (MESSAGES 3)');
    c.close();
  });
});

describe('mailboxes', () => {
  test('RENAME INBOX moves its messages and leaves INBOX empty', async () => {
    const c = await rawSession(port);
    assert.match(tagged(await c.command('RENAME INBOX Old')), /^T2 OK /);
    assert.equal((await c.command('STATUS INBOX (MESSAGES)'))[0], '* STATUS "INBOX" (MESSAGES 0)');
    assert.equal((await c.command('STATUS Old (MESSAGES)'))[0], '* STATUS "Old" (MESSAGES 3)');
    assert.match(tagged(await c.command('SELECT INBOX')), /^T5 OK /);
    c.close();
  });

  test('DELETE INBOX is refused', async () => {
    const c = await rawSession(port);
    assert.match(tagged(await c.command('DELETE INBOX')), /^T2 NO /);
    c.close();
  });

  test('RENAME does not unilaterally remove the old name from the subscriptions', async () => {
    const c = await rawSession(port);
    assert.match(tagged(await c.command('RENAME Archive Attic')), /^T2 OK /);
    assert.ok((await c.command('LSUB "" *')).includes('* LSUB () "/" "Archive"'));
    assert.ok((await c.command('LIST "" *')).some((l) => l.endsWith('"/" "Attic"')));
    c.close();
  });
});

describe('LOGIN, AUTHENTICATE and CAPABILITY', () => {
  test('LOGIN with quoted strings and escapes', async () => {
    const c = await rawSession(port, false);
    assert.match(tagged(await c.command('LOGIN "q\\"user" "pa\\\\ss\\"word"')), /^T1 OK \[CAPABILITY IMAP4rev1 /);
    c.close();
  });

  test('LOGIN failure is NO [AUTHENTICATIONFAILED]; the session stays unauthenticated', async () => {
    const c = await rawSession(port, false);
    assert.match(tagged(await c.command('LOGIN testuser wrong')), /^T1 NO \[AUTHENTICATIONFAILED\] /);
    assert.match(tagged(await c.command('SELECT INBOX')), /^T2 BAD /);
    assert.match(tagged(await c.command('LOGIN testuser testpass')), /^T3 OK /);
    assert.match(tagged(await c.command('LOGIN testuser testpass')), /^T4 BAD /);
    c.close();
  });

  test('CAPABILITY before and after login', async () => {
    const c = await rawSession(port, false);
    const before = (await c.command('CAPABILITY'))[0]!;
    assert.match(before, /^\* CAPABILITY IMAP4rev1( |$)/);
    assert.ok(before.split(' ').includes('AUTH=PLAIN'));
    await c.command('LOGIN testuser testpass');
    const after = await c.command('CAPABILITY');
    assert.match(after[0]!, /^\* CAPABILITY IMAP4rev1( |$)/);
    assert.equal(after[1], 'T3 OK Capability completed');
    c.close();
  });

  test('AUTHENTICATE PLAIN with SASL-IR', async () => {
    const c = await rawSession(port, false);
    const ir = Buffer.from('\0testuser\0testpass').toString('base64');
    assert.match(tagged(await c.command(`AUTHENTICATE PLAIN ${ir}`)), /^T1 OK /);
    assert.match(tagged(await c.command('AUTHENTICATE PLAIN')), /^T2 BAD /);
    c.close();
  });

  test('AUTHENTICATE PLAIN with a continuation, a failure, a cancel and malformed data', async () => {
    const c = await rawSession(port, false);
    c.write('A1 AUTHENTICATE PLAIN\r\n');
    assert.equal(await c.line(), '+ ');
    c.write('*\r\n');
    assert.match(await c.line(), /^A1 BAD /);

    c.write('A2 AUTHENTICATE PLAIN\r\n');
    assert.equal(await c.line(), '+ ');
    c.write(Buffer.from('\0testuser\0wrong').toString('base64') + '\r\n');
    assert.match(await c.line(), /^A2 NO \[AUTHENTICATIONFAILED\] /);

    c.write('A3 AUTHENTICATE PLAIN\r\n');
    assert.equal(await c.line(), '+ ');
    c.write('%%%\r\n');
    assert.match(await c.line(), /^A3 BAD /);

    assert.match(tagged(await c.command(`AUTHENTICATE PLAIN ${Buffer.from('no-nuls').toString('base64')}`)), /^T1 NO \[AUTHENTICATIONFAILED\] /);

    c.write('A4 AUTHENTICATE PLAIN\r\n');
    assert.equal(await c.line(), '+ ');
    c.write(Buffer.from('\0testuser\0testpass').toString('base64') + '\r\n');
    assert.match(await c.line(), /^A4 OK \[CAPABILITY IMAP4rev1 /);
    c.close();
  });
});

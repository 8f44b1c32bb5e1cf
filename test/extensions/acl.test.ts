/**
 * ACL (RFC 4314) and LIST-MYRIGHTS (RFC 8440) over real sockets: the RFC's
 * own examples (§2.1.1, §3, §4, §5, §6), two users sharing the tree, the
 * REST routes and their errors, the `acl` event, snapshots, reset, rename
 * and delete, and `__proto__` as an identifier.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from '../../src/index.js';
import { collect, mail, rawSession, startServer } from '../helpers/server.js';
import { RawClient } from '../helpers/raw-client.js';
import { openEvents, request, startRest } from '../rest/helpers.js';

const users = { testuser: { password: 'testpass' }, alice: { password: 'alicepass' }, bob: { password: 'bobpass' } };
const ALL = 'lrswipkxtea';

async function login(port: number, user: string, password: string): Promise<RawClient> {
  const c = await rawSession(port, false);
  const lines = await c.command(`LOGIN ${user} ${password}`);
  assert.match(lines.at(-1)!, /^T1 OK/);
  return c;
}

/** The identifier → rights pairs of an `* ACL` line (rights as sorted letters, so orders compare equal). */
function aclPairs(line: string): Record<string, string> {
  const m = /^\* ACL (?:"[^"]*"|\S+)((?: (?:"[^"]*"|\S+) (?:"[^"]*"|\S+))*)$/.exec(line);
  assert.ok(m, `not an ACL response: ${line}`);
  const tokens = m[1]!.trim().match(/"[^"]*"|\S+/g) ?? [];
  const out: Record<string, string> = {};
  for (let i = 0; i < tokens.length; i += 2) {
    Object.defineProperty(out, tokens[i]!.replace(/"/g, ''), { value: tokens[i + 1]!.replace(/"/g, ''), enumerable: true });
  }
  return out;
}

/** FETCH lines without \\Recent (the messages are recent to the session that sees them first). */
const noRecent = (lines: string[]): string[] => lines.map((l) => l.replace(/ ?\\Recent/, ''));
const sorted = (rights: string): string => [...rights].sort().join('');
/** Rights without the virtual c and d, sorted: RFC 4314 §2.1.1 (*) tells clients to ignore c and d. */
const std = (rights: string): string => sorted(rights.replace(/[cd]/g, ''));

describe('RFC 4314 examples', () => {
  let server: Server;
  let port: number;
  before(async () => {
    ({ server, port } = await startServer({
      plugins: ['ACL'],
      users,
      storage: {
        INBOX: {
          acl: { testuser: ALL, Fred: 'rwipslxetad', '-Fred': 'wetd', $team: 'w' },
          folders: { Drafts: { acl: { testuser: ALL, Fred: 'rwipslxeta', Chris: 'lrswi' } } },
        },
        '': {
          folders: {
            archive: { folders: { imap: {} } },
            A: { acl: { testuser: 'r' }, folders: { B: { acl: { testuser: 'l' } } } },
            C: { folders: { D: {} } },
            Source: {},
            TargetMailbox: { acl: { testuser: 'rwis' } },
            Target2: { acl: { testuser: 'rsti' } },
            banan: { acl: { testuser: 'lrs' } },
            apple: { acl: { testuser: 'rit' } },
            pear: { acl: { testuser: 'rset' } },
            hidden: { acl: { alice: ALL } },
            perm: { acl: { testuser: 'lrwis' } },
            seenOnly: { acl: { testuser: 'lrs' } },
            noexp: { acl: { testuser: 'lrswit' } },
          },
        },
      },
    }));
  });
  after(() => server.stop());

  test('§5.1.1: CAPABILITY lists ACL and RIGHTS=texk', async () => {
    const c = await rawSession(port);
    const [caps] = await c.command('CAPABILITY');
    assert.match(caps!, / ACL( |$)/);
    assert.match(caps!, / RIGHTS=texk( |$)/);
    c.close();
  });

  test('§2.1.1: "d" expands to "et" and comes back as d; "k" brings back c', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('SeTacl INBOX/Drafts David lrswida'), ['T2 OK Setacl completed']);
    let lines = await c.command('getacl INBOX/Drafts');
    let acl = aclPairs(lines[0]!);
    assert.equal(std(acl.David!), std('lrswideta'));
    assert.ok(acl.David!.includes('d'), 'd comes back when e or t is granted');
    assert.equal(std(acl.Fred!), std('rwipslxcetda'));
    assert.deepEqual(await c.command('Setacl INBOX/Drafts Byron lrswikda'), ['T4 OK Setacl completed']);
    lines = await c.command('getAcl INBOX/Drafts');
    acl = aclPairs(lines[0]!);
    assert.equal(std(acl.Byron!), std('lrswikcdeta'));
    assert.ok(acl.Byron!.includes('c') && acl.Byron!.includes('d'), 'c comes back when k is granted');
    assert.equal(lines.at(-1), 'T5 OK Getacl completed');
    // Clean up for the next examples.
    await c.command('DELETEACL INBOX/Drafts David');
    await c.command('DELETEACL INBOX/Drafts Byron');
    c.close();
  });

  test('§3.1: SETACL +cda adds c (kx) and d (et); uppercase and unknown rights are BAD', async () => {
    const c = await rawSession(port);
    let acl = aclPairs((await c.command('GETACL INBOX/Drafts'))[0]!);
    assert.equal(std(acl.Fred!), std('rwipslxcetda'));
    assert.equal(acl.Chris, 'lrswi');
    assert.deepEqual(await c.command('SETACL INBOX/Drafts Chris +cda'), ['T3 OK Setacl completed']);
    acl = aclPairs((await c.command('GETACL INBOX/Drafts'))[0]!);
    assert.equal(sorted(acl.Chris!), sorted('lrswicdakxet'));
    assert.match((await c.command('SETACL INBOX/Drafts John lrQswicda'))[0]!, /^T5 BAD .*Uppercase rights are not allowed/);
    assert.match((await c.command('SETACL INBOX/Drafts John lrqswicda'))[0]!, /^T6 BAD .*"q" right is not supported/);
    // Neither BAD changed anything.
    assert.equal(aclPairs((await c.command('GETACL INBOX/Drafts'))[0]!).John, undefined);
    c.close();
  });

  test('§3.2: DELETEACL Fred leaves -Fred and $team', async () => {
    const c = await rawSession(port);
    let acl = aclPairs((await c.command('getacl INBOX'))[0]!);
    assert.deepEqual({ Fred: std(acl.Fred!), '-Fred': sorted(acl['-Fred']!), $team: acl.$team }, { Fred: std('rwipslxetad'), '-Fred': sorted('wetd'), $team: 'w' });
    assert.deepEqual(await c.command('DeleteAcl INBOX Fred'), ['T3 OK Deleteacl completed']);
    const lines = await c.command('GETACL INBOX');
    acl = aclPairs(lines[0]!);
    assert.deepEqual(Object.keys(acl), ['testuser', '-Fred', '$team']);
    assert.deepEqual({ '-Fred': sorted(acl['-Fred']!), $team: acl.$team }, { '-Fred': sorted('wetd'), $team: 'w' });
    c.close();
  });

  test('§3.4: LISTRIGHTS answers the identifier as given, nothing always granted, each right (c and d too) alone', async () => {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('listrights archive/imap anyone'), [
      '* LISTRIGHTS "archive/imap" anyone "" l r s w i p k x t e c d a',
      'T2 OK Listrights completed',
    ]);
    assert.deepEqual((await c.command('LISTRIGHTS archive/imap smith'))[0], '* LISTRIGHTS "archive/imap" smith "" l r s w i p k x t e c d a');
    c.close();
  });

  test('§3.6, §3.7: identifiers and rights are astrings, sent as atoms where they are atoms (* ACL INBOX Fred rwipslxetad)', async () => {
    const c = await rawSession(port);
    // The RFC's own GETACL example: every identifier of INBOX's ACL is an atom, negative and $ ones too.
    const [line] = await c.command('GETACL INBOX');
    assert.match(line!, /^\* ACL "INBOX" testuser [a-z]+ -Fred [a-z]+ \$team w$/);
    await c.command('CREATE Forms');
    // Text that is no atom goes quoted (SP, ", \, %, *), or as a literal (8-bit); NIL and digits stay quoted
    // so a tokenizer that reads them as nil or a number still gets the string; "]" is an ASTRING-CHAR.
    for (const [given, sent] of [
      ['"two words"', '"two words"'],
      ['"x\\"y"', '"x\\"y"'],
      ['"a%b"', '"a%b"'],
      ['NIL', '"NIL"'],
      ['"nil"', '"nil"'],
      ['12345', '"12345"'],
      ['a]b', 'a]b'],
      ['user.name@example.com', 'user.name@example.com'],
    ]) {
      assert.match((await c.command(`SETACL Forms ${given} lr`)).at(-1)!, /^T\d+ OK Setacl completed$/, given);
      const rights = await c.command(`LISTRIGHTS Forms ${given}`);
      assert.equal(rights[0], `* LISTRIGHTS "Forms" ${sent} "" l r s w i p k x t e c d a`, given);
      const acl = await c.command('GETACL Forms');
      assert.ok(acl[0]!.includes(` ${sent} lr`), `${given}: ${acl[0]}`);
      assert.match((await c.command(`DELETEACL Forms ${given}`)).at(-1)!, /OK/);
    }
    // 8-bit (set through the control API: IMAP would need a literal or UTF8=ACCEPT) goes as a literal.
    server.extension('ACL')!.setAcl('Forms', 'J\u00f6rg', 'lr');
    assert.equal((await c.command('GETACL Forms'))[0], '* ACL "Forms" testuser lrswipkxtecda {5}\r\nJ\xc3\xb6rg lr');
    // MYRIGHTS: the rights are an atom.
    assert.equal((await c.command('MYRIGHTS Forms'))[0], '* MYRIGHTS "Forms" lrswipkxtecda');
    c.close();
  });

  test('§3.5: MYRIGHTS', async () => {
    const c = await rawSession(port);
    const lines = await c.command('MYRIGHTS INBOX');
    assert.match(lines[0]!, /^\* MYRIGHTS "INBOX" (\w+)$/);
    assert.equal(sorted(lines[0]!.split(' ').at(-1)!), sorted('lrswipkxtecda'));
    assert.equal(lines[1], 'T2 OK Myrights completed');
    c.close();
  });

  test('§4: COPY keeps only the flags the target rights allow (rwis loses \\Deleted; rsti keeps only \\Deleted and \\Seen)', async () => {
    const source = server.store.get('Source')!;
    server.control.addMessage('Source', { raw: mail('one'), flags: ['\\Draft', '\\Deleted'] });
    server.control.addMessage('Source', { raw: mail('two'), flags: ['\\Answered'] });
    server.control.addMessage('Source', { raw: mail('three'), flags: ['$Forwarded', '\\Seen'] });
    assert.equal(source.messages.length, 3);
    const c = await rawSession(port);
    const myrights = await c.command('MYRIGHTS TargetMailbox');
    assert.match(myrights[0]!, /^\* MYRIGHTS "TargetMailbox" [rwis]{4}$/);
    assert.equal(sorted(myrights[0]!.split(' ').at(-1)!), sorted('rwis'));
    await c.command('SELECT Source');
    assert.deepEqual(noRecent(await c.command('FETCH 1:3 (FLAGS)')), [
      '* 1 FETCH (FLAGS (\\Draft \\Deleted))',
      '* 2 FETCH (FLAGS (\\Answered))',
      '* 3 FETCH (FLAGS ($Forwarded \\Seen))',
      'T4 OK Fetch completed',
    ]);
    assert.match((await c.command('COPY 1:3 TargetMailbox')).at(-1)!, /^T5 OK/);
    assert.match((await c.command('COPY 1:3 Target2')).at(-1)!, /^T6 OK/);
    assert.match((await c.command('SELECT TargetMailbox')).at(-1)!, /^T7 OK/);
    assert.deepEqual(noRecent(await c.command('FETCH 1:3 (FLAGS)')), [
      '* 1 FETCH (FLAGS (\\Draft))',
      '* 2 FETCH (FLAGS (\\Answered))',
      '* 3 FETCH (FLAGS ($Forwarded \\Seen))',
      'T8 OK Fetch completed',
    ]);
    assert.match((await c.command('SELECT Target2')).at(-1)!, /^T9 OK/);
    assert.deepEqual(noRecent(await c.command('FETCH 1:3 (FLAGS)')), [
      '* 1 FETCH (FLAGS (\\Deleted))',
      '* 2 FETCH (FLAGS ())',
      '* 3 FETCH (FLAGS (\\Seen))',
      'T10 OK Fetch completed',
    ]);
    // APPEND follows the same rule.
    const append = await c.command('APPEND TargetMailbox (\\Deleted \\Flagged) {5}\r\nhello');
    assert.match(append.at(-1)!, /OK/);
    assert.deepEqual([...server.store.get('TargetMailbox')!.messages.at(-1)!.flags], ['\\Flagged']);
    c.close();
  });

  test('§4: LIST shows A/B without its unlistable parent A; with % A is a level that does not exist', async () => {
    const c = await rawSession(port);
    const names = (lines: string[]) => lines.filter((l) => l.startsWith('* LIST')).map((l) => l.replace(/^\* LIST \((.*?)\) "\/" /, '$1 '));
    const all = names(await c.command('LIST "" *'));
    assert.ok(all.some((l) => l.endsWith('"A/B"')), all.join('\n'));
    assert.ok(!all.some((l) => l.endsWith('"A"')), all.join('\n'));
    assert.ok(all.some((l) => l.endsWith('"C"')) && all.some((l) => l.endsWith('"C/D"')));
    assert.ok(!all.some((l) => l.endsWith('"hidden"')));
    const top = names(await c.command('LIST "" %'));
    assert.ok(top.includes('\\Noselect "A"'), top.join('\n'));
    assert.ok(!top.some((l) => l.endsWith('"hidden"')));
    c.close();
  });

  test('§4: SELECT and STATUS need r (NOPERM with l, NONEXISTENT without); EXPUNGE needs e; CLOSE without e expunges nothing', async () => {
    const c = await rawSession(port);
    // A has r but not l: the mailbox exists for NOPERM purposes only with l, so SELECT works (r).
    assert.match((await c.command('SELECT A')).at(-1)!, /^T2 OK \[READ-ONLY\]/);
    assert.deepEqual(await c.command('SELECT A/B'), ['T3 NO [NOPERM] Permission denied: testuser lacks the r right on A/B']);
    assert.deepEqual(await c.command('STATUS A/B (MESSAGES)'), ['T4 NO [NOPERM] Permission denied: testuser lacks the r right on A/B']);
    assert.match((await c.command('STATUS hidden (MESSAGES)'))[0]!, /^T5 NO \[NONEXISTENT\]/);
    server.control.addMessage('noexp', { raw: mail('doomed'), flags: ['\\Deleted'] });
    assert.match((await c.command('SELECT noexp')).at(-1)!, /OK \[READ-WRITE\]/);
    assert.match((await c.command('EXPUNGE')).at(-1)!, /^T7 NO \[NOPERM\]/);
    assert.deepEqual(await c.command('CLOSE'), ['T8 OK Close completed']);
    assert.equal(server.store.get('noexp')!.messages.length, 1, 'CLOSE without e expunged nothing');
    c.close();
  });

  test('§5.2: READ-ONLY without i, e and flag rights (banan lrs is READ-WRITE here: \\Seen is shared, so s is a shared flag right)', async () => {
    const c = await rawSession(port);
    // All flags are shared between users here, so "s" is a shared flag right (RFC 4314 §5.2 example 2).
    assert.match((await c.command('SELECT banan')).at(-1)!, /OK \[READ-WRITE\]/);
    assert.match((await c.command('SELECT apple')).at(-1)!, /OK \[READ-WRITE\]/);
    assert.match((await c.command('SELECT pear')).at(-1)!, /OK \[READ-WRITE\]/);
    assert.match((await c.command('SELECT A')).at(-1)!, /OK \[READ-ONLY\]/);
    c.close();
  });

  test('§5.1.1: PERMANENTFLAGS reflects the rights (lrwis: no \\Deleted; lrs: only \\Seen)', async () => {
    const c = await rawSession(port);
    const perm = (lines: string[]) => lines.find((l) => l.includes('PERMANENTFLAGS'))!;
    const lines = await c.command('SELECT perm');
    assert.equal(perm(lines), '* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Seen \\*)] Flags permitted.');
    assert.match(lines.at(-1)!, /OK \[READ-WRITE\]/);
    assert.equal(sorted((await c.command('MYRIGHTS perm'))[0]!.split(' ').at(-1)!), sorted('lrwis'));
    assert.equal(perm(await c.command('SELECT seenOnly')), '* OK [PERMANENTFLAGS (\\Seen)] Flags permitted.');
    assert.match(perm(await c.command('SELECT Source')), /^\* OK \[PERMANENTFLAGS \(.*\\Deleted.*\\\*\)\] Flags permitted\.$/);
    c.close();
  });

  test('§6: ACL commands on a mailbox the user may not list answer as for a missing mailbox; with l but no a: NOPERM', async () => {
    const c = await rawSession(port);
    const missing = await c.command('GETACL nosuch');
    assert.match(missing[0]!, /^T2 NO \[NONEXISTENT\] Mailbox doesn't exist: nosuch$/);
    assert.deepEqual(await c.command('GETACL hidden'), ["T3 NO [NONEXISTENT] Mailbox doesn't exist: hidden"]);
    assert.deepEqual(await c.command('MYRIGHTS hidden'), ["T4 NO [NONEXISTENT] Mailbox doesn't exist: hidden"]);
    assert.deepEqual(await c.command('SETACL hidden testuser +a'), ["T5 NO [NONEXISTENT] Mailbox doesn't exist: hidden"]);
    assert.deepEqual(await c.command('LISTRIGHTS hidden testuser'), ["T6 NO [NONEXISTENT] Mailbox doesn't exist: hidden"]);
    assert.match((await c.command('GETACL A/B'))[0]!, /^T7 NO \[NOPERM\]/);
    assert.match((await c.command('DELETEACL A/B testuser'))[0]!, /^T8 NO \[NOPERM\]/);
    // MYRIGHTS needs only one of l r i k x a.
    assert.deepEqual(await c.command('MYRIGHTS A/B'), ['* MYRIGHTS "A/B" l', 'T9 OK Myrights completed']);
    c.close();
  });

  test('§3: an empty identifier is BAD', async () => {
    const c = await rawSession(port);
    assert.match((await c.command('SETACL INBOX "" lr'))[0]!, /^T2 BAD/);
    assert.match((await c.command('DELETEACL INBOX ""'))[0]!, /^T3 BAD/);
    assert.match((await c.command('LISTRIGHTS INBOX ""'))[0]!, /^T4 BAD/);
    c.close();
  });
});

describe('ACL across users', () => {
  let server: Server;
  let port: number;
  before(async () => {
    ({ server, port } = await startServer({ plugins: ['LIST-MYRIGHTS'], users, storage: { INBOX: {}, '': { folders: { Shared: {} } } } }));
  });
  after(() => server.stop());

  test('a mailbox without ACL grants everyone everything and shows as anyone:lrswipkxtea', async () => {
    const a = await login(port, 'alice', 'alicepass');
    assert.deepEqual(await a.command('GETACL Shared'), ['* ACL "Shared" anyone lrswipkxtecda', 'T2 OK Getacl completed']);
    assert.match((await a.command('SELECT Shared')).at(-1)!, /OK \[READ-WRITE\]/);
    assert.deepEqual(server.extension('ACL')!.getAcl('Shared'), { anyone: ALL });
    assert.equal(server.store.get('Shared')!.extra.acl, undefined, 'reading an open ACL stores nothing');
    a.close();
  });

  test('a mailbox created over IMAP is its creator’s; others see it once granted; negative rights; anyone', async () => {
    const events = collect(server, 'acl');
    const t = await rawSession(port);
    const a = await login(port, 'alice', 'alicepass');
    assert.match((await t.command('CREATE Private/Sub')).at(-1)!, /OK/);
    assert.deepEqual(events.map((e) => e.path), ['Private', 'Private/Sub']);
    assert.deepEqual(server.extension('ACL')!.getAcl('Private/Sub'), { testuser: ALL });
    // alice: the mailbox does not exist.
    assert.ok(!(await a.command('LIST "" *')).some((l) => l.includes('Private')));
    assert.deepEqual(await a.command('SELECT Private'), ["T3 NO [NONEXISTENT] Mailbox doesn't exist: Private"]);
    assert.match((await a.command('APPEND Private {1}\r\nx')).at(-1)!, /NO \[TRYCREATE\]/);
    assert.match((await a.command('CREATE Private/Other')).at(-1)!, /NO \[NOPERM\]/);
    assert.match((await a.command('DELETE Private/Sub')).at(-1)!, /NO \[NONEXISTENT\]/);
    assert.match((await a.command('RENAME Private/Sub Mine')).at(-1)!, /NO \[NONEXISTENT\]/);
    // Grant lr: listed, EXAMINE-only, no APPEND.
    assert.match((await t.command('SETACL Private alice lr')).at(-1)!, /OK/);
    assert.deepEqual(events.at(-1), { path: 'Private' });
    const list = await a.command('LIST "" * RETURN (MYRIGHTS)');
    assert.deepEqual(list.slice(0, -1), ['* LIST () "/" "INBOX"', '* MYRIGHTS "INBOX" lrswipkxtecda', '* LIST () "/" "Private"', '* MYRIGHTS "Private" lr', '* LIST () "/" "Shared"', '* MYRIGHTS "Shared" lrswipkxtecda']);
    assert.match((await a.command('SELECT Private')).at(-1)!, /OK \[READ-ONLY\]/);
    assert.match((await a.command('APPEND Private {1}\r\nx')).at(-1)!, /NO \[NOPERM\]/);
    assert.match((await a.command('GETACL Private')).at(-1)!, /NO \[NOPERM\]/);
    // +i: APPEND works, SELECT is read-write.
    await t.command('SETACL Private alice +i');
    assert.match((await a.command('APPEND Private {1}\r\nx')).at(-1)!, /OK/);
    assert.match((await a.command('SELECT Private')).at(-1)!, /OK \[READ-WRITE\]/);
    // STORE without s/w/t is NOPERM; EXPUNGE without e too.
    assert.match((await a.command('STORE 1 +FLAGS (\\Seen)')).at(-1)!, /NO \[NOPERM\]/);
    assert.match((await a.command('EXPUNGE')).at(-1)!, /NO \[NOPERM\]/);
    // Negative rights win over anyone and the user's own entry.
    await t.command('SETACL Private anyone lrs');
    await t.command('SETACL Private -alice r');
    assert.deepEqual((await a.command('MYRIGHTS Private'))[0], '* MYRIGHTS "Private" lsi');
    assert.match((await a.command('SELECT Private')).at(-1)!, /NO \[NOPERM\]/);
    // bob gets what anyone has.
    const b = await login(port, 'bob', 'bobpass');
    assert.deepEqual(await b.command('MYRIGHTS Private'), ['* MYRIGHTS "Private" lrs', 'T2 OK Myrights completed']);
    assert.match((await b.command('SELECT Private')).at(-1)!, /OK \[READ-WRITE\]/);
    // DELETEACL of the negative entry gives r back.
    await t.command('DELETEACL Private -alice');
    assert.match((await a.command('SELECT Private')).at(-1)!, /OK/);
    // Without l but with r, SELECT still works (r is what it needs); the mailbox is only hidden
    // when a right is missing. Without anyone's entry bob has nothing: the mailbox is gone for him.
    await t.command('SETACL Private anyone -l');
    assert.match((await b.command('SELECT Private')).at(-1)!, /OK/);
    assert.ok(!(await b.command('LIST "" *')).some((l) => l.includes('"Private"')));
    await t.command('DELETEACL Private anyone');
    await t.command('SETACL Private alice -l');
    assert.ok(!(await b.command('LIST "" *')).some((l) => l.includes('"Private"')));
    assert.match((await b.command('SELECT Private')).at(-1)!, /NO \[NONEXISTENT\]/);
    assert.match((await a.command('GETACL Private')).at(-1)!, /NO \[NONEXISTENT\]/);
    // alice's listing shows Private/Sub's parent level only if she may see the child: she may not.
    assert.ok(!(await a.command('LIST "" %')).some((l) => l.includes('Private')));
    t.close();
    a.close();
    b.close();
  });

  test('the creator keeps the parent’s entries (RFC 4314 §4 inherit) and gets every right', async () => {
    const t = await rawSession(port);
    server.extension('ACL')!.setAcl('Shared', 'alice', 'lr');
    assert.deepEqual(server.extension('ACL')!.getAcl('Shared'), { anyone: ALL, alice: 'lr' });
    await t.command('SETACL Shared anyone ""');
    assert.deepEqual(server.extension('ACL')!.getAcl('Shared'), { alice: 'lr' });
    // testuser has no right left on Shared but may create at the top and below own mailboxes.
    assert.match((await t.command('CREATE Shared/Kid')).at(-1)!, /NO \[NOPERM\]/);
    server.extension('ACL')!.setAcl('Shared', 'testuser', 'lk');
    assert.match((await t.command('CREATE Shared/Kid')).at(-1)!, /OK/);
    assert.deepEqual(server.extension('ACL')!.getAcl('Shared/Kid'), { alice: 'lr', testuser: ALL });
    t.close();
  });

  test('RFC 8440 §4: MYRIGHTS follows each listed mailbox, never a level that is no mailbox', async () => {
    server.control.createMailbox({ path: 'Deep/Leaf' });
    const c = await rawSession(port);
    assert.match((await c.command('SUBSCRIBE bar')).at(-1)!, /OK/);
    const sub = await c.command('LIST (SUBSCRIBED) "" "b*" RETURN (MYRIGHTS)');
    assert.deepEqual(sub.slice(0, -1), ['* LIST (\\NonExistent \\Subscribed) "/" "bar"']);
    const deep = await c.command('LIST "" "Deep/*" RETURN (MYRIGHTS)');
    assert.deepEqual(deep.slice(0, -1), ['* LIST () "/" "Deep/Leaf"', '* MYRIGHTS "Deep/Leaf" lrswipkxtecda']);
    // Without the return option, no MYRIGHTS lines.
    assert.deepEqual((await c.command('LIST "" "Deep/*"')).slice(0, -1), ['* LIST () "/" "Deep/Leaf"']);
    c.close();
  });

  test('__proto__ is an identifier like any other', async () => {
    const t = await rawSession(port);
    await t.command('CREATE Proto');
    assert.match((await t.command('SETACL Proto __proto__ lr')).at(-1)!, /OK/);
    const acl = server.extension('ACL')!.getAcl('Proto');
    assert.ok(Object.hasOwn(acl, '__proto__'));
    assert.equal(acl['__proto__'], 'lr');
    assert.equal(Object.getPrototypeOf(acl), Object.prototype);
    const lines = await t.command('GETACL Proto');
    assert.equal(lines[0], '* ACL "Proto" testuser lrswipkxtecda __proto__ lr');
    // A user called __proto__ gets those rights.
    server.control.addUser({ name: '__proto__', password: 'p' });
    const p = await login(port, '__proto__', 'p');
    assert.deepEqual(await p.command('MYRIGHTS Proto'), ['* MYRIGHTS "Proto" lr', 'T2 OK Myrights completed']);
    assert.match((await t.command('DELETEACL Proto __proto__')).at(-1)!, /OK/);
    assert.deepEqual(server.extension('ACL')!.getAcl('Proto'), { testuser: ALL });
    // The snapshot carries it as an own key and a new server reads it back.
    server.extension('ACL')!.setAcl('Proto', '__proto__', 'l');
    const snap = JSON.parse(JSON.stringify(server.control.snapshot()));
    const again = createServer({ plugins: ['ACL'], storage: snap });
    assert.equal(again.extension('ACL')!.getAcl('Proto')['__proto__'], 'l');
    t.close();
    p.close();
  });
});

describe('ACL in snapshots, reset, rename and delete', () => {
  test('snapshot keeps ACLs, reset restores them, rename carries them, delete drops them', () => {
    const storage = { INBOX: { acl: { testuser: ALL, alice: 'lr' } }, '': { folders: { Team: { acl: { anyone: 'lr', '-bob': 'r' } } } } };
    const server = createServer({ plugins: ['ACL'], storage });
    const acl = server.extension('ACL')!;
    acl.setAcl('Team', 'alice', 'lrswi');
    const snap = server.control.snapshot() as any;
    assert.deepEqual(snap.INBOX.acl, { testuser: ALL, alice: 'lr' });
    assert.deepEqual(snap[''].folders.Team.acl, { anyone: 'lr', '-bob': 'r', alice: 'lrswi' });
    assert.deepEqual(createServer({ plugins: ['ACL'], storage: snap }).extension('ACL')!.getAcl('Team'), { anyone: 'lr', '-bob': 'r', alice: 'lrswi' });
    server.control.reset();
    assert.deepEqual(acl.getAcl('Team'), { anyone: 'lr', '-bob': 'r' });
    server.control.renameMailbox('Team', { newPath: 'Group/Team' });
    assert.deepEqual(acl.getAcl('Group/Team'), { anyone: 'lr', '-bob': 'r' });
    assert.deepEqual(acl.getAcl('Group'), { anyone: ALL }, 'a level the rename made is open');
    // Renaming INBOX moves its messages to a new mailbox, which takes INBOX's ACL along.
    server.control.renameMailbox('INBOX', { newPath: 'Old' });
    assert.deepEqual(acl.getAcl('Old'), { testuser: ALL, alice: 'lr' });
    assert.deepEqual(acl.getAcl('INBOX'), { testuser: ALL, alice: 'lr' });
    server.control.deleteMailbox('Group/Team');
    server.control.createMailbox({ path: 'Group/Team' });
    assert.deepEqual(acl.getAcl('Group/Team'), { anyone: ALL }, 'a mailbox made again by the control API starts open');
    assert.equal(server.store.get('Group/Team')!.extra.acl, undefined);
  });

  test('the storage key is validated while the plugin is loaded', () => {
    assert.throws(() => createServer({ plugins: ['ACL'], storage: { INBOX: { acl: { alice: 'lrQ' } } } }), /storage\.INBOX\.acl.*Uppercase/s);
    assert.throws(() => createServer({ plugins: ['ACL'], storage: { INBOX: { acl: 'lr' } } }), /storage\.INBOX\.acl/);
    assert.throws(() => createServer({ plugins: ['ACL'], storage: { INBOX: { acl: { alice: 3 } } } }), /storage\.INBOX\.acl/);
    // c and d are read as kx and et.
    const s = createServer({ plugins: ['ACL'], storage: { INBOX: { acl: { alice: 'lcd' } } } });
    assert.deepEqual(s.extension('ACL')!.getAcl('INBOX'), { alice: 'lkxte' });
  });
});

describe('ACL REST routes', () => {
  let rest: Awaited<ReturnType<typeof startRest>>;
  const call = (method: string, path: string, json?: unknown) => request(rest.restPort, method, path, json === undefined ? {} : { json });
  before(async () => {
    rest = await startRest({ plugins: ['ACL'], users, storage: { INBOX: {}, '': { folders: { a: { folders: { b: {} } }, Team: { acl: { alice: 'lr' } } } } } });
  });
  after(() => rest.server.stop());

  test('GET answers the ACL object; a mailbox without one shows anyone with every right', async () => {
    const r = await call('GET', '/v1/mailboxes/Team/acl');
    assert.equal(r.status, 200);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.deepEqual(r.json, { alice: 'lr' });
    assert.deepEqual((await call('GET', '/v1/mailboxes/INBOX/acl')).json, { anyone: ALL });
    assert.deepEqual((await call('GET', '/v1/mailboxes/a%2Fb/acl')).json, { anyone: ALL });
  });

  test('PUT sets, + adds, - removes; each answers the new ACL and emits acl { path }', async () => {
    const events = collect(rest.server, 'acl');
    let r = await call('PUT', '/v1/mailboxes/Team/acl/bob', { rights: 'lrs' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { alice: 'lr', bob: 'lrs' });
    r = await call('PUT', '/v1/mailboxes/Team/acl/bob', { rights: '+wi' });
    assert.deepEqual(r.json, { alice: 'lr', bob: 'lrswi' });
    r = await call('PUT', '/v1/mailboxes/Team/acl/bob', { rights: '-sw' });
    assert.deepEqual(r.json, { alice: 'lr', bob: 'lri' });
    r = await call('PUT', '/v1/mailboxes/Team/acl/alice', { rights: 'cd' });
    assert.deepEqual(r.json, { alice: 'kxte', bob: 'lri' });
    r = await call('PUT', '/v1/mailboxes/Team/acl/-bob', { rights: 'i' });
    assert.deepEqual(r.json, { alice: 'kxte', bob: 'lri', '-bob': 'i' });
    assert.deepEqual(events, [{ path: 'Team' }, { path: 'Team' }, { path: 'Team' }, { path: 'Team' }, { path: 'Team' }]);
    // An entry left without rights is removed.
    r = await call('PUT', '/v1/mailboxes/Team/acl/-bob', { rights: '' });
    assert.deepEqual(r.json, { alice: 'kxte', bob: 'lri' });
    // A mailbox without ACL starts from anyone:lrswipkxtea.
    r = await call('PUT', '/v1/mailboxes/INBOX/acl/alice', { rights: 'lr' });
    assert.deepEqual(r.json, { anyone: ALL, alice: 'lr' });
    assert.deepEqual(events.at(-1), { path: 'INBOX' });
    // A PUT that changes nothing emits nothing.
    const before = events.length;
    await call('PUT', '/v1/mailboxes/INBOX/acl/alice', { rights: '+l' });
    assert.equal(events.length, before);
  });

  test('a REST change reaches IMAP at once', async () => {
    await call('PUT', '/v1/mailboxes/Team/acl/alice', { rights: 'lr' });
    const a = await login(rest.imapPort, 'alice', 'alicepass');
    assert.match((await a.command('SELECT Team')).at(-1)!, /OK \[READ-ONLY\]/);
    await call('PUT', '/v1/mailboxes/Team/acl/alice', { rights: '+i' });
    assert.match((await a.command('SELECT Team')).at(-1)!, /OK \[READ-WRITE\]/);
    await call('DELETE', '/v1/mailboxes/Team/acl/alice');
    assert.match((await a.command('SELECT Team')).at(-1)!, /NO \[NONEXISTENT\]/);
    a.close();
  });

  test('DELETE removes the identifier and answers the new ACL; an identifier without entry is 404 NONEXISTENT', async () => {
    await call('PUT', '/v1/mailboxes/Team/acl/carol', { rights: 'l' });
    const events = collect(rest.server, 'acl');
    const r = await call('DELETE', '/v1/mailboxes/Team/acl/carol');
    assert.equal(r.status, 200);
    assert.equal(r.json.carol, undefined);
    assert.deepEqual(events, [{ path: 'Team' }]);
    const gone = await call('DELETE', '/v1/mailboxes/Team/acl/carol');
    assert.equal(gone.status, 404);
    assert.equal(gone.json.error.code, 'NONEXISTENT');
    assert.equal(events.length, 1);
  });

  test('errors: unknown mailbox 404 NONEXISTENT, bad rights and bodies 400 INVALID, JSON only 415', async () => {
    for (const [method, path, body] of [
      ['GET', '/v1/mailboxes/nosuch/acl', undefined],
      ['PUT', '/v1/mailboxes/nosuch/acl/alice', { rights: 'l' }],
      ['DELETE', '/v1/mailboxes/nosuch/acl/alice', undefined],
    ] as const) {
      const r = await call(method, path, body);
      assert.equal(r.status, 404, path);
      assert.equal(r.json.error.code, 'NONEXISTENT', path);
    }
    for (const body of [{ rights: 'lrQ' }, { rights: 'lrq' }, { rights: 7 }, {}, { rights: 'l', right: 'x' }]) {
      const r = await call('PUT', '/v1/mailboxes/Team/acl/alice', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.json.error.code, 'INVALID', JSON.stringify(body));
    }
    assert.match((await call('PUT', '/v1/mailboxes/Team/acl/alice', { rights: 'lrQ' })).json.error.message, /Uppercase/);
    const plain = await request(rest.restPort, 'PUT', '/v1/mailboxes/Team/acl/alice', { body: '{"rights":"l"}', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(plain.status, 415);
    assert.equal(plain.json.error.code, 'UNSUPPORTED');
    const method = await call('POST', '/v1/mailboxes/Team/acl', {});
    assert.equal(method.status, 405);
    assert.equal(method.json.error.code, 'METHOD');
  });

  test('__proto__ over REST', async () => {
    let r = await call('PUT', '/v1/mailboxes/Team/acl/__proto__', { rights: 'lr' });
    assert.equal(r.status, 200);
    assert.match(r.text, /"__proto__":"lr"/);
    r = await call('GET', '/v1/mailboxes/Team/acl');
    assert.match(r.text, /"__proto__":"lr"/);
    r = await call('DELETE', '/v1/mailboxes/Team/acl/__proto__');
    assert.equal(r.status, 200);
    assert.doesNotMatch(r.text, /__proto__/);
  });

  test('the routes are in /v1/openapi.json; the event stream carries acl events from REST and IMAP', async () => {
    const doc = (await call('GET', '/v1/openapi.json')).json;
    assert.ok(doc.paths['/v1/mailboxes/{path}/acl']?.get, 'GET acl');
    assert.ok(doc.paths['/v1/mailboxes/{path}/acl/{identifier}']?.put, 'PUT acl');
    assert.ok(doc.paths['/v1/mailboxes/{path}/acl/{identifier}']?.delete, 'DELETE acl');
    // The event stream carries acl events, IMAP and REST alike, with only the path.
    const stream = await openEvents(rest.restPort, '/v1/events?types=acl');
    try {
      assert.equal(stream.status, 200);
      await stream.waitFor(/: connected/);
      await call('PUT', '/v1/mailboxes/Team/acl/dave', { rights: 'l' });
      await stream.waitFor(/event: acl\ndata: \{"path":"Team"\}\n\n/);
      const c = await rawSession(rest.imapPort);
      await c.command('SETACL a/b dave l');
      await stream.waitFor(/event: acl\ndata: \{"path":"a\/b"\}\n\n/);
      c.close();
      assert.doesNotMatch(stream.text(), /event: (?!acl)/);
    } finally {
      stream.close();
    }
  });

  test('without the plugin the routes are 404 NOTFOUND and absent from the OpenAPI document', async () => {
    const bare = await startRest({});
    try {
      for (const [method, path, body] of [
        ['GET', '/v1/mailboxes/INBOX/acl', undefined],
        ['PUT', '/v1/mailboxes/INBOX/acl/alice', { rights: 'l' }],
        ['DELETE', '/v1/mailboxes/INBOX/acl/alice', undefined],
      ] as const) {
        const r = await request(bare.restPort, method, path, body === undefined ? {} : { json: body });
        assert.equal(r.status, 404, path);
        assert.equal(r.json.error.code, 'NOTFOUND', path);
      }
      const doc = (await request(bare.restPort, 'GET', '/v1/openapi.json')).json;
      assert.equal(doc.paths['/v1/mailboxes/{path}/acl'], undefined);
      assert.equal(bare.server.extension('ACL'), undefined);
    } finally {
      await bare.server.stop();
    }
  });
});

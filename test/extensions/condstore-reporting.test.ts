/**
 * What a CONDSTORE server tells a client without being asked (RFC 7162),
 * over real sockets:
 *
 * - §3.1.2.1: "A server supporting the persistent storage of mod-sequences
 *   for the mailbox MUST send the OK untagged response including
 *   HIGHESTMODSEQ response code with every successful SELECT or EXAMINE
 *   command" — also to a session that has not enabled CONDSTORE (Thunderbird
 *   with use_condstore relies on it to ask only `CHANGEDSINCE n`).
 * - §3.1: the first CONDSTORE enabling command in a selected mailbox sends
 *   `OK [HIGHESTMODSEQ n]` when the SELECT did not (Dovecot 2.3's wording,
 *   `selectHighestModseq: "enabled"`).
 * - §3.1: "Once a CONDSTORE enabling command is issued by the client, the
 *   server MUST automatically include both UID and mod-sequence data in all
 *   subsequent untagged FETCH responses (until the connection is closed),
 *   whether they were caused by a regular STORE/UID STORE, a STORE/UID STORE
 *   with an UNCHANGEDSINCE modifier, a FETCH/UID FETCH that implicitly set
 *   the \Seen flag, or an external agent." A FETCH of BODY[...], RFC822,
 *   RFC822.TEXT or BINARY[...] that sets \Seen therefore answers with the new
 *   FLAGS, UID and MODSEQ; without it a client's next CHANGEDSINCE reports a
 *   change it never heard of (Python IMAPClient's live test_fetch).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from '../../src/index.js';
import type { RawClient } from '../helpers/raw-client.js';
import { mail, modseqOf, rawSession, startServer, startWithMessages } from '../helpers/server.js';

const highest = (server: Server): number => server.store.get('INBOX')!.highestModseq;
const okHighest = (server: Server): string => `* OK [HIGHESTMODSEQ ${highest(server)}] Highest`;

test('RFC 7162 §3.1.2.1: every successful SELECT and EXAMINE sends OK [HIGHESTMODSEQ n], CONDSTORE enabled or not', async () => {
  const { server, port } = await startWithMessages(3, { plugins: ['CONDSTORE'] });
  try {
    const c = await rawSession(port);
    const sel = await c.command('SELECT INBOX');
    assert.ok(sel.includes(okHighest(server)), sel.join('\n'));
    assert.equal(sel.at(-1), 'T2 OK [READ-WRITE] Select completed');
    // Selecting did not turn CONDSTORE on: flag FETCHes stay RFC 3501's.
    assert.deepEqual(await c.command('FETCH 1 (FLAGS)'), ['* 1 FETCH (FLAGS ())', 'T3 OK Fetch completed']);
    server.control.setFlags('INBOX', { uids: [2], flags: ['\\Flagged'], mode: 'add' });
    const ex = await c.command('EXAMINE INBOX');
    assert.ok(ex.includes(okHighest(server)), ex.join('\n'));
    // A failed SELECT sends none.
    const failed = await c.command('SELECT Nowhere');
    assert.ok(!failed.some((l) => l.includes('HIGHESTMODSEQ')), failed.join('\n'));
    c.close();
  } finally {
    await server.stop();
  }
  // Without CONDSTORE the server keeps no mod-sequences a client can know of: no response code.
  const plain = await startWithMessages(1, { plugins: [] });
  try {
    const c = await rawSession(plain.port);
    assert.ok(!(await c.command('SELECT INBOX')).some((l) => l.includes('MODSEQ')));
    c.close();
  } finally {
    await plain.server.stop();
  }
});

test('RFC 7162 §3.1: with selectHighestModseq "enabled" (Dovecot 2.3), the first CONDSTORE enabling command in a selected mailbox sends OK [HIGHESTMODSEQ n]', async () => {
  const { server, port } = await startWithMessages(3, {
    plugins: ['CONDSTORE', 'ENABLE'],
    pluginOptions: { CONDSTORE: { selectHighestModseq: 'enabled' } },
  });
  const open = async (): Promise<RawClient> => {
    const c = await rawSession(port);
    const sel = await c.command('SELECT INBOX');
    assert.ok(!sel.some((l) => l.includes('HIGHESTMODSEQ')), sel.join('\n'));
    return c;
  };
  try {
    const m = highest(server);
    // Each enabling command of §3.1, each in a fresh session: the OK comes before the command's own answer.
    const cases: [string, string[]][] = [
      ['FETCH 1 (MODSEQ)', [`* 1 FETCH (MODSEQ (${modseqOf(server, 1)}))`]],
      [`FETCH 1:* (FLAGS) (CHANGEDSINCE ${m})`, []],
      ['SEARCH MODSEQ 1', [`* SEARCH 1 2 3 (MODSEQ ${m})`]],
      [`STORE 3 (UNCHANGEDSINCE 1) +FLAGS (\\Seen)`, []],
      ['STATUS INBOX (HIGHESTMODSEQ)', [`* STATUS "INBOX" (HIGHESTMODSEQ ${m})`]],
      ['ENABLE CONDSTORE', ['* ENABLED CONDSTORE']],
    ];
    for (const [command, answer] of cases) {
      const c = await open();
      const lines = await c.command(command);
      const untagged = lines.slice(0, -1);
      // ENABLE is answered before the extension sees CONDSTORE on: its OK comes after `* ENABLED`.
      const ok = command.startsWith('ENABLE') ? untagged.at(-1) : untagged[0];
      assert.equal(ok, `* OK [HIGHESTMODSEQ ${m}] Highest`, `${command}: ${lines.join(' | ')}`);
      assert.equal(untagged.filter((l) => l.startsWith('* OK [HIGHESTMODSEQ')).length, 1, command);
      assert.deepEqual(
        untagged.filter((l) => !l.startsWith('* OK [HIGHESTMODSEQ')),
        answer,
        `${command}: ${lines.join(' | ')}`,
      );
      assert.match(lines.at(-1)!, / OK /);
      // Only the first: a second enabling command says nothing more.
      assert.deepEqual(await c.command(`FETCH 2 (MODSEQ)`), [`* 2 FETCH (MODSEQ (${modseqOf(server, 2)}))`, 'T4 OK Fetch completed']);
      c.close();
    }
    // Once CONDSTORE is on, SELECT reports it itself, and no enabling command repeats it.
    const c = await rawSession(port);
    await c.command('SELECT INBOX (CONDSTORE)');
    assert.ok((await c.command('EXAMINE INBOX')).includes(okHighest(server)));
    assert.ok(!(await c.command('FETCH 1 (MODSEQ)')).some((l) => l.includes('HIGHESTMODSEQ')));
    c.close();
    // Enabled in another mailbox, the next SELECT reports it: it goes with the selection.
    server.control.createMailbox('Other');
    const d = await rawSession(port);
    await d.command('SELECT Other');
    await d.command('SEARCH MODSEQ 1');
    assert.ok((await d.command('SELECT INBOX')).includes(okHighest(server)));
    d.close();
  } finally {
    await server.stop();
  }
});

/** A response line with each literal's bytes left out (`{8}` stays). */
function withoutLiterals(line: string): string {
  let out = '';
  let i = 0;
  for (const m of line.matchAll(/\{(\d+)\}\r\n/g)) {
    if (m.index! < i) continue;
    out += line.slice(i, m.index! + m[0].length - 2);
    i = m.index! + m[0].length + Number(m[1]);
  }
  return out + line.slice(i);
}

/** The FETCH lines of an answer, without literal bytes. */
const fetches = (lines: string[]): string[] => lines.filter((l) => /^\* \d+ FETCH \(/.test(l)).map(withoutLiterals);

test('RFC 7162 §3.1: a FETCH that implicitly sets \\Seen answers with FLAGS, UID and MODSEQ once CONDSTORE is on', async () => {
  const { server, port } = await startServer({ plugins: ['CONDSTORE', 'BINARY', 'ENABLE'] });
  try {
    for (let i = 1; i <= 7; i++) server.control.addMessage('INBOX', { raw: mail(`m${i}`, `body ${i}`) });
    const c = await rawSession(port);
    await c.command('ENABLE CONDSTORE');
    await c.command('SELECT INBOX');
    const other = await rawSession(port);
    await other.command('ENABLE CONDSTORE');
    await other.command('EXAMINE INBOX');
    const cases: [string, (seen: number) => string][] = [
      ['FETCH 1 BODY[]', (ms) => `* 1 FETCH (UID 1 BODY[] {${server.control.listMessages('INBOX', { uids: [1] })[0]!.size}} FLAGS (\\Seen \\Recent) MODSEQ (${ms}))`],
      ['FETCH 2 RFC822', (ms) => `* 2 FETCH (UID 2 RFC822 {${server.control.listMessages('INBOX', { uids: [2] })[0]!.size}} FLAGS (\\Seen \\Recent) MODSEQ (${ms}))`],
      ['FETCH 3 RFC822.TEXT', (ms) => `* 3 FETCH (UID 3 RFC822.TEXT {8} FLAGS (\\Seen \\Recent) MODSEQ (${ms}))`],
      ['FETCH 4 BINARY[1]', (ms) => `* 4 FETCH (UID 4 BINARY[1] {8} FLAGS (\\Seen \\Recent) MODSEQ (${ms}))`],
      // Asked items are not repeated; UID FETCH names UID once.
      ['UID FETCH 5 (BODY[TEXT] MODSEQ)', (ms) => `* 5 FETCH (UID 5 BODY[TEXT] {8} MODSEQ (${ms}) FLAGS (\\Seen \\Recent))`],
      ['FETCH 6 (FLAGS BODY[]<0.4>)', (ms) => `* 6 FETCH (UID 6 FLAGS (\\Seen \\Recent) BODY[]<0> {4} MODSEQ (${ms}))`],
    ];
    let n = 0;
    for (const [command, expected] of cases) {
      n++;
      const before = highest(server);
      const lines = await c.command(command);
      const ms = modseqOf(server, n);
      assert.ok(ms > before, command);
      assert.deepEqual(fetches(lines), [expected(ms)], command);
      // The client knows the new MODSEQ: a CHANGEDSINCE from it reports nothing new.
      assert.deepEqual(await c.command(`FETCH 1:* (FLAGS) (CHANGEDSINCE ${ms})`), [`T${3 + 2 * n} OK Fetch completed`], command);
    }
    // The other session hears of each as an external agent's change, with UID and MODSEQ.
    const told = fetches(await other.command('NOOP'));
    assert.deepEqual(told, [1, 2, 3, 4, 5, 6].map((u) => `* ${u} FETCH (UID ${u} FLAGS (\\Seen) MODSEQ (${modseqOf(server, u)}))`));
    // Peeking, BINARY.SIZE and a message already \Seen change nothing: no FLAGS, no MODSEQ.
    for (const command of ['FETCH 7 BODY.PEEK[]', 'FETCH 7 BINARY.PEEK[1]', 'FETCH 7 BINARY.SIZE[1]', 'FETCH 1 BODY[]', 'FETCH 2 BINARY[]']) {
      const lines = fetches(await c.command(command));
      assert.equal(lines.length, 1, command);
      assert.ok(!/FLAGS|MODSEQ|UID/.test(lines[0]!), `${command}: ${lines[0]}`);
    }
    c.close();
    other.close();
  } finally {
    await server.stop();
  }
});

test('RFC 3501 §6.4.5: without CONDSTORE on, an implicit \\Seen reports the new FLAGS only', async () => {
  const { server, port } = await startWithMessages(2, { plugins: ['CONDSTORE'] });
  try {
    const c = await rawSession(port);
    await c.command('EXAMINE INBOX');
    // EXAMINE is read-only: nothing is set, nothing reported.
    assert.deepEqual(fetches(await c.command('FETCH 1 BODY[TEXT]')), ['* 1 FETCH (BODY[TEXT] {7})']);
    await c.command('SELECT INBOX');
    assert.deepEqual(fetches(await c.command('FETCH 1 BODY[TEXT]')), ['* 1 FETCH (BODY[TEXT] {7} FLAGS (\\Seen))']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 7162 §3.1: an external change is told with UID and MODSEQ even when a FETCH answer showed the message meanwhile', async () => {
  const { server, port } = await startWithMessages(3, { plugins: ['CONDSTORE', 'ENABLE'] });
  try {
    const c = await rawSession(port);
    await c.command('ENABLE CONDSTORE');
    await c.command('SELECT INBOX');
    server.control.setFlags('INBOX', { uids: [1], flags: ['\\Answered'], mode: 'add' });
    // FETCH (UID) and FETCH (FLAGS) do not say all the update says (MODSEQ): it follows them.
    assert.deepEqual(await c.command('FETCH 1 (UID)'), [
      '* 1 FETCH (UID 1)',
      `* 1 FETCH (UID 1 FLAGS (\\Answered) MODSEQ (${modseqOf(server, 1)}))`,
      'T4 OK Fetch completed',
    ]);
    server.control.setFlags('INBOX', { uids: [2], flags: ['\\Answered'], mode: 'add' });
    assert.deepEqual(await c.command('FETCH 2 (FLAGS)'), [
      '* 2 FETCH (FLAGS (\\Answered))',
      `* 2 FETCH (UID 2 FLAGS (\\Answered) MODSEQ (${modseqOf(server, 2)}))`,
      'T5 OK Fetch completed',
    ]);
    // One that says it all stands for it.
    server.control.setFlags('INBOX', { uids: [3], flags: ['\\Draft'], mode: 'add' });
    const m3 = modseqOf(server, 3);
    assert.deepEqual(await c.command('UID FETCH 3 (FLAGS MODSEQ)'), [`* 3 FETCH (UID 3 FLAGS (\\Draft) MODSEQ (${m3}))`, 'T6 OK Fetch completed']);
    // A plain session: a FETCH without FLAGS does not swallow the update either.
    const plain = await rawSession(port);
    await plain.command('SELECT INBOX');
    server.control.setFlags('INBOX', { uids: [1], flags: ['\\Flagged'], mode: 'add' });
    assert.deepEqual(await plain.command('FETCH 1 (UID)'), ['* 1 FETCH (UID 1)', '* 1 FETCH (FLAGS (\\Answered \\Flagged))', 'T3 OK Fetch completed']);
    server.control.setFlags('INBOX', { uids: [2], flags: ['\\Flagged'], mode: 'add' });
    assert.deepEqual(await plain.command('FETCH 2 (FLAGS)'), ['* 2 FETCH (FLAGS (\\Answered \\Flagged))', 'T4 OK Fetch completed']);
    plain.close();
    c.close();
  } finally {
    await server.stop();
  }
});

test('QRESYNC: new messages (the session\'s own APPEND, another session\'s, in IDLE) are followed by OK [HIGHESTMODSEQ n], as Dovecot', async () => {
  const { server, port } = await startWithMessages(2, { plugins: ['QRESYNC', 'ENABLE', 'IDLE', 'UIDPLUS'] });
  try {
    const q = await rawSession(port);
    await q.command('ENABLE QRESYNC');
    await q.command('SELECT INBOX');
    const cs = await rawSession(port);
    await cs.command('ENABLE CONDSTORE');
    await cs.command('SELECT INBOX');
    const raw = mail('new');
    q.write(`A1 APPEND INBOX {${Buffer.byteLength(raw)}}\r\n`);
    await q.line();
    q.write(`${raw}\r\n`);
    const own = await q.until('A1');
    assert.deepEqual(own.slice(0, -1), ['* 3 EXISTS', '* 1 RECENT', okHighest(server)]);
    assert.match(own.at(-1)!, /^A1 OK \[APPENDUID \d+ 3\]/);
    // Nothing more to say on the next NOOP.
    assert.deepEqual(await q.command('NOOP'), ['T4 OK NOOP completed']);
    // A CONDSTORE-only session gets none (nor does Dovecot send one there).
    assert.deepEqual(await cs.command('NOOP'), ['* 3 EXISTS', '* 0 RECENT', 'T4 OK NOOP completed']);
    server.control.addMessage('INBOX', { raw: mail('control') });
    assert.deepEqual(await q.command('NOOP'), ['* 4 EXISTS', '* 2 RECENT', okHighest(server), 'T5 OK NOOP completed']);
    // Flag changes alone send none: their FETCH carries the MODSEQ.
    server.control.setFlags('INBOX', { uids: [1], flags: ['\\Seen'], mode: 'add' });
    assert.deepEqual(await q.command('NOOP'), [`* 1 FETCH (UID 1 FLAGS (\\Seen) MODSEQ (${modseqOf(server, 1)}))`, 'T6 OK NOOP completed']);
    // Inside IDLE, right after the EXISTS.
    q.write('I1 IDLE\r\n');
    assert.equal(await q.line(), '+ idling');
    server.control.addMessage('INBOX', { raw: mail('idle') });
    assert.equal(await q.line(), '* 5 EXISTS');
    assert.equal(await q.line(), '* 3 RECENT');
    assert.equal(await q.line(), okHighest(server));
    q.write('DONE\r\n');
    assert.deepEqual(await q.until('I1'), ['I1 OK Idle completed']);
    // The session's own EXPUNGE says it once, in its tagged OK.
    await q.command('STORE 1 +FLAGS.SILENT (\\Deleted)');
    assert.deepEqual(await q.command('EXPUNGE'), ['* VANISHED 1', `T8 OK [HIGHESTMODSEQ ${highest(server)}] Expunge completed`]);
    q.close();
    cs.close();
  } finally {
    await server.stop();
  }
});

/**
 * CONDSTORE (RFC 7162 §3.1) over real sockets: HIGHESTMODSEQ on SELECT,
 * SELECT (CONDSTORE), FETCH MODSEQ and CHANGEDSINCE (§3.1.4.1), STORE
 * UNCHANGEDSINCE with [MODIFIED] (§3.1.3 examples), MODSEQ in unsolicited
 * FETCH after a control-API flag change, and a plain session unchanged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from '../../src/index.js';
import { modseqOf, rawSession, startWithMessages } from '../helpers/server.js';

const withMessages = (n: number, plugins: string[] = ['CONDSTORE']): Promise<{ server: Server; port: number }> => startWithMessages(n, { plugins });

test('CONDSTORE capability, OK [HIGHESTMODSEQ] on SELECT and EXAMINE, SELECT (CONDSTORE), ENABLE CONDSTORE', async () => {
  const { server, port } = await withMessages(3, ['CONDSTORE', 'ENABLE']);
  try {
    const c = await rawSession(port);
    const caps = await c.command('CAPABILITY');
    assert.match(caps[0]!, / CONDSTORE/);
    const hms = server.store.get('INBOX')!.highestModseq;
    const sel = await c.command('SELECT INBOX (CONDSTORE)');
    assert.ok(sel.includes(`* OK [HIGHESTMODSEQ ${hms}] Highest`), sel.join('\n'));
    assert.match(sel[sel.length - 1]!, /OK \[READ-WRITE\]/);
    // CONDSTORE is on for the session now: every later SELECT/EXAMINE reports it.
    const ex = await c.command('EXAMINE INBOX');
    assert.ok(ex.includes(`* OK [HIGHESTMODSEQ ${hms}] Highest`));
    // SELECT (CONDSTORE) turned it on already: nothing new to enable.
    assert.deepEqual(await c.command('ENABLE CONDSTORE'), ['* ENABLED', 'T5 OK Enabled']);
    assert.match((await c.command('SELECT INBOX (FOO)')).at(-1)!, /BAD/);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 7162 §3.1.4.1: FETCH (FLAGS) (CHANGEDSINCE m) answers only messages changed since m, with MODSEQ', async () => {
  const { server, port } = await withMessages(10);
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const m = server.store.get('INBOX')!.highestModseq;
    server.control.setFlags('INBOX', { uids: [3, 7], flags: ['\\Seen'], mode: 'add' });
    const ms = modseqOf(server, 3);
    // Unsolicited FETCH after a control change, once CONDSTORE is on, carries MODSEQ.
    const lines = await c.command('FETCH 1:* (FLAGS) (CHANGEDSINCE ' + m + ')');
    assert.deepEqual(lines.filter((l) => / FETCH \(FLAGS \(\\Seen\) MODSEQ/.test(l)), [
      `* 3 FETCH (FLAGS (\\Seen) MODSEQ (${ms}))`,
      `* 7 FETCH (FLAGS (\\Seen) MODSEQ (${ms}))`,
    ]);
    assert.match(lines.at(-1)!, /OK Fetch completed/);
    // UID FETCH with a UID range narrows the changes.
    assert.deepEqual(await c.command(`UID FETCH 5:* (FLAGS) (CHANGEDSINCE ${m})`), [
      `* 7 FETCH (UID 7 FLAGS (\\Seen) MODSEQ (${ms}))`,
      'T4 OK Fetch completed',
    ]);
    assert.deepEqual(await c.command(`FETCH 1:* (FLAGS) (CHANGEDSINCE ${ms})`), ['T5 OK Fetch completed']);
    // A flag change by the control API now reaches the session with MODSEQ.
    server.control.setFlags('INBOX', { uids: [1], flags: ['\\Flagged'], mode: 'add' });
    const noop = await c.command('NOOP');
    assert.deepEqual(noop, [`* 1 FETCH (UID 1 FLAGS (\\Flagged) MODSEQ (${modseqOf(server, 1)}))`, 'T6 OK NOOP completed']);
    assert.match((await c.command('FETCH 1 (FLAGS) (CHANGEDSINCE x)')).at(-1)!, /BAD/);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 7162 §3.1.3: STORE (UNCHANGEDSINCE) changes what is unchanged and reports the rest in [MODIFIED]', async () => {
  const { server, port } = await withMessages(8);
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const base = server.store.get('INBOX')!.highestModseq;
    server.control.setFlags('INBOX', { uids: [2, 4], flags: ['$Work'], mode: 'add' });
    const later = modseqOf(server, 2);
    await c.command('NOOP');
    // Example 6-like: messages changed after UNCHANGEDSINCE are not touched.
    const lines = await c.command(`STORE 1:5 (UNCHANGEDSINCE ${base}) +FLAGS (\\Deleted)`);
    assert.equal(lines.at(-1), 'T4 OK [MODIFIED 2,4] Conditional STORE failed');
    const after = modseqOf(server, 1);
    assert.ok(after > later);
    assert.deepEqual(
      lines.filter((l) => l.includes('FETCH')),
      // RFC 7162 §3.1: a STORE's FETCH carries UID and MODSEQ once CONDSTORE is on.
      [1, 3, 5].map((n) => `* ${n} FETCH (UID ${n} FLAGS (\\Deleted) MODSEQ (${after}))`),
    );
    assert.deepEqual(server.control.listMessages('INBOX', { uids: [2] })[0]!.flags, ['$Work']);
    // UID STORE reports UIDs; a STORE whose test passes is a plain OK.
    // .SILENT with UNCHANGEDSINCE still reports the new MODSEQs, without FLAGS (RFC 7162 §3.1.3 example 3).
    const uidLines = await c.command(`UID STORE 2,6 (UNCHANGEDSINCE ${later}) FLAGS.SILENT (\\Seen)`);
    const now = modseqOf(server, 2);
    assert.deepEqual(uidLines, [`* 2 FETCH (UID 2 MODSEQ (${now}))`, `* 6 FETCH (UID 6 MODSEQ (${now}))`, 'T5 OK Store completed']);
    const fail = await c.command(`UID STORE 2,6,8 (UNCHANGEDSINCE ${later}) +FLAGS.SILENT (\\Answered)`);
    assert.equal(fail.at(-1), 'T6 OK [MODIFIED 2,6] Conditional STORE failed');
    // UNCHANGEDSINCE 0 always fails (§3.1.3).
    assert.equal((await c.command('STORE 1 (UNCHANGEDSINCE 0) +FLAGS (\\Seen)')).at(-1), 'T7 OK [MODIFIED 1] Conditional STORE failed');
    c.close();
  } finally {
    await server.stop();
  }
});

test('without CONDSTORE on, a session sees flag changes as before (no MODSEQ, no UID)', async () => {
  const { server, port } = await withMessages(2);
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    server.control.setFlags('INBOX', { uids: [2], flags: ['\\Seen'], mode: 'add' });
    assert.deepEqual(await c.command('NOOP'), ['* 2 FETCH (FLAGS (\\Seen))', 'T3 OK NOOP completed']);
    server.control.expungeMessages('INBOX', { uids: [1] });
    assert.deepEqual(await c.command('NOOP'), ['* 1 EXPUNGE', 'T4 OK NOOP completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('the change log stays exact past its compaction (many changes on few messages)', async () => {
  const { server, port } = await withMessages(3);
  try {
    const c = await rawSession(port);
    await c.command('ENABLE CONDSTORE');
    await c.command('EXAMINE INBOX');
    const m = server.store.get('INBOX')!.highestModseq;
    // 1,200 changes on message 2 (more than twice the mailbox plus 1,024 log entries), one on message 3.
    for (let i = 0; i < 600; i++) {
      server.control.setFlags('INBOX', { uids: [2], flags: ['$A'], mode: 'add' });
      server.control.setFlags('INBOX', { uids: [2], flags: ['$A'], mode: 'remove' });
    }
    server.control.setFlags('INBOX', { uids: [3], flags: ['$B'], mode: 'add' });
    const mid = modseqOf(server, 2);
    await c.command('NOOP');
    const fetches = (lines: string[]): string[] => lines.filter((l) => l.includes(' FETCH '));
    assert.deepEqual(fetches(await c.command(`UID FETCH 1:* (FLAGS) (CHANGEDSINCE ${m})`)), [
      `* 2 FETCH (UID 2 FLAGS () MODSEQ (${mid}))`,
      `* 3 FETCH (UID 3 FLAGS ($B) MODSEQ (${modseqOf(server, 3)}))`,
    ]);
    assert.deepEqual(fetches(await c.command(`FETCH 1:* (FLAGS) (CHANGEDSINCE ${mid})`)), [`* 3 FETCH (FLAGS ($B) MODSEQ (${modseqOf(server, 3)}))`]);
    // From the start of the log: every message (each was appended since).
    assert.equal(fetches(await c.command('FETCH 1:* (FLAGS) (CHANGEDSINCE 1)')).length, 3);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 7162 §3.1.5: SEARCH MODSEQ ends with (MODSEQ highest of the matches); none without matches or without MODSEQ', async () => {
  const { server, port } = await withMessages(6);
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const m = server.store.get('INBOX')!.highestModseq;
    server.control.setFlags('INBOX', { uids: [2, 5], flags: ['\\Flagged'], mode: 'add' });
    server.control.setFlags('INBOX', { uids: [5], flags: ['\\Seen'], mode: 'add' });
    await c.command('NOOP');
    const top = modseqOf(server, 5);
    // MODSEQ n matches MODSEQs >= n (message 6, appended last, has m itself).
    assert.deepEqual(await c.command(`SEARCH MODSEQ ${m + 1}`), [`* SEARCH 2 5 (MODSEQ ${top})`, 'T4 OK Search completed']);
    assert.deepEqual(await c.command(`UID SEARCH OR NOT MODSEQ ${top} FLAGGED`), [
      `* SEARCH 1 2 3 4 5 6 (MODSEQ ${top})`,
      'T5 OK Search completed',
    ]);
    assert.deepEqual(await c.command(`SEARCH MODSEQ "/flags/\\\\draft" all ${top + 1}`), ['* SEARCH', 'T6 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH FLAGGED'), ['* SEARCH 2 5', 'T7 OK Search completed']);
    // SEARCH MODSEQ turned CONDSTORE on: flag updates now carry MODSEQ.
    server.control.setFlags('INBOX', { uids: [1], flags: ['\\Seen'], mode: 'add' });
    assert.deepEqual(await c.command('NOOP'), [`* 1 FETCH (UID 1 FLAGS (\\Seen) MODSEQ (${modseqOf(server, 1)}))`, 'T8 OK NOOP completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

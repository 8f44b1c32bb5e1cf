/**
 * QRESYNC (RFC 7162 §3.2) over real sockets: ENABLE QRESYNC, SELECT
 * (QRESYNC (...)) with VANISHED (EARLIER) and FETCH of changes (§3.2.5
 * examples), known-uids narrowing, seq-match-data narrowing (and its BAD cases), OK [HIGHESTMODSEQ] after EXPUNGE, UID FETCH (CHANGEDSINCE
 * VANISHED) (§3.2.6), live VANISHED after EXPUNGE / UID EXPUNGE / a control
 * expunge, UID in unsolicited FETCH, OK [CLOSED], the BAD cases, and the
 * superset answer when the expunge log does not reach back; then imapflow
 * with `qresync: true` during IDLE.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ImapFlow } from 'imapflow';
import type { Server } from '../../src/index.js';
import type { RawClient } from '../helpers/raw-client.js';
import { mail, modseqOf, rawSession, startWithMessages } from '../helpers/server.js';
import { request, startRest } from '../rest/helpers.js';

const withMessages = (n: number): Promise<{ server: Server; port: number }> => startWithMessages(n, { plugins: ['QRESYNC', 'ENABLE', 'UIDPLUS', 'IDLE'] });

test('QRESYNC requires CONDSTORE; ENABLE QRESYNC; SELECT (QRESYNC) without it is BAD', async () => {
  const { server, port } = await withMessages(1);
  try {
    const c = await rawSession(port);
    const caps = (await c.command('CAPABILITY'))[0]!;
    assert.match(caps, / CONDSTORE/);
    assert.match(caps, / QRESYNC/);
    assert.match((await c.command('SELECT INBOX (QRESYNC (1 1))')).at(-1)!, /^T3 BAD /);
    assert.deepEqual(await c.command('ENABLE QRESYNC'), ['* ENABLED QRESYNC', 'T4 OK Enabled']);
    assert.match((await c.command('SELECT INBOX (QRESYNC (1))')).at(-1)!, /^T5 BAD /);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 7162 §3.2.5: SELECT (QRESYNC (uidvalidity modseq known-uids)) sends VANISHED (EARLIER) then the changed flags', async () => {
  const { server, port } = await withMessages(20);
  try {
    const mailbox = server.store.get('INBOX')!;
    const uv = mailbox.uidvalidity;
    const m = mailbox.highestModseq;
    server.control.expungeMessages('INBOX', { uids: [3, 4, 5, 12] });
    server.control.setFlags('INBOX', { uids: [7, 15], flags: ['\\Seen'], mode: 'add' });
    const ms = modseqOf(server, 7);
    const c = await rawSession(port);
    await c.command('ENABLE QRESYNC');
    const lines = await c.command(`SELECT INBOX (QRESYNC (${uv} ${m} 1:10,15:20 (1,5 1,5)))`);
    const tail = lines.slice(lines.findIndex((l) => l.includes('HIGHESTMODSEQ')));
    assert.deepEqual(tail, [
      `* OK [HIGHESTMODSEQ ${mailbox.highestModseq}] Highest`,
      '* VANISHED (EARLIER) 3:5',
      `* 4 FETCH (UID 7 FLAGS (\\Seen) MODSEQ (${ms}))`,
      `* 11 FETCH (UID 15 FLAGS (\\Seen) MODSEQ (${ms}))`,
      'T3 OK [READ-WRITE] Select completed',
    ]);
    // Without known-uids every expunged UID is reported; a wrong UIDVALIDITY gets no resync data.
    const all = await c.command(`EXAMINE INBOX (QRESYNC (${uv} ${m}))`);
    assert.equal(all[0], '* OK [CLOSED] Previous mailbox closed.');
    assert.ok(all.includes('* VANISHED (EARLIER) 3:5,12'), all.join('\n'));
    const wrong = await c.command(`EXAMINE INBOX (QRESYNC (${uv + 1} ${m}))`);
    assert.ok(!wrong.some((l) => l.includes('VANISHED') || l.includes('FETCH')));
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 7162 §3.2.6: UID FETCH (CHANGEDSINCE m VANISHED); BAD without UID, CHANGEDSINCE or ENABLE', async () => {
  const { server, port } = await withMessages(10);
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.match((await c.command('UID FETCH 1:* (FLAGS) (CHANGEDSINCE 1 VANISHED)')).at(-1)!, /^T3 BAD /);
    await c.command('ENABLE QRESYNC');
    await c.command('SELECT INBOX');
    const m = server.store.get('INBOX')!.highestModseq;
    server.control.expungeMessages('INBOX', { uids: [2, 9] });
    server.control.setFlags('INBOX', { uids: [4], flags: ['$X'], mode: 'add' });
    // The expunges wait for a command that may show them: UID FETCH holds them (RFC 3501 §7.4.1).
    const lines = await c.command(`UID FETCH 1:8 (FLAGS) (CHANGEDSINCE ${m} VANISHED)`);
    assert.deepEqual(
      lines.filter((l) => !l.startsWith('* FLAGS') && !l.startsWith('* OK [PERMANENTFLAGS')),
      ['* VANISHED (EARLIER) 2', `* 4 FETCH (UID 4 FLAGS ($X) MODSEQ (${modseqOf(server, 4)}))`, 'T6 OK Fetch completed'],
    );
    assert.match((await c.command(`FETCH 1:* (FLAGS) (CHANGEDSINCE ${m} VANISHED)`)).at(-1)!, /^T7 BAD /);
    assert.match((await c.command('UID FETCH 1:* (FLAGS) (VANISHED)')).at(-1)!, /^T8 BAD /);
    // Live: the held expunges go out as VANISHED, never as EXPUNGE, and then the HIGHESTMODSEQ that covers them (as Dovecot).
    assert.deepEqual(await c.command('NOOP'), [
      '* VANISHED 2,9',
      `* OK [HIGHESTMODSEQ ${server.store.get('INBOX')!.highestModseq}] Highest`,
      'T9 OK NOOP completed',
    ]);
    c.close();
  } finally {
    await server.stop();
  }
});

test('QRESYNC live: EXPUNGE and UID EXPUNGE answer VANISHED; another session and the control API reach it as VANISHED and FETCH with UID and MODSEQ', async () => {
  const { server, port } = await withMessages(6);
  try {
    const c = await rawSession(port);
    await c.command('ENABLE QRESYNC');
    await c.command('SELECT INBOX');
    await c.command('STORE 1,2 +FLAGS.SILENT (\\Deleted)');
    const mailbox = server.store.get('INBOX')!;
    assert.deepEqual(await c.command('EXPUNGE'), ['* VANISHED 1:2', `T5 OK [HIGHESTMODSEQ ${mailbox.highestModseq}] Expunge completed`]);
    await c.command('UID STORE 5 +FLAGS.SILENT (\\Deleted)');
    assert.deepEqual(await c.command('UID EXPUNGE 5'), ['* VANISHED 5', `T7 OK [HIGHESTMODSEQ ${mailbox.highestModseq}] Expunge completed`]);
    server.control.setFlags('INBOX', { uids: [3], flags: ['\\Answered'], mode: 'add' });
    server.control.expungeMessages('INBOX', { uids: [6] });
    assert.deepEqual(await c.command('NOOP'), [
      '* VANISHED 6',
      `* 1 FETCH (UID 3 FLAGS (\\Answered) MODSEQ (${modseqOf(server, 3)}))`,
      `* OK [HIGHESTMODSEQ ${mailbox.highestModseq}] Highest`,
      'T8 OK NOOP completed',
    ]);
    // A plain session sees the same changes as RFC 3501 says.
    const plain = await rawSession(port);
    await plain.command('SELECT INBOX');
    server.control.setFlags('INBOX', { uids: [4], flags: ['\\Seen'], mode: 'add' });
    server.control.expungeMessages('INBOX', { uids: [3] });
    assert.deepEqual(await plain.command('NOOP'), ['* 1 EXPUNGE', '* 1 FETCH (FLAGS (\\Seen))', 'T3 OK NOOP completed']);
    // The session's own STORE answers with UID and MODSEQ too (UID 3's VANISHED waits: STORE holds expunges).
    const own = await c.command('STORE 2 +FLAGS (\\Flagged)');
    assert.deepEqual(own.slice(-2), [`* 2 FETCH (UID 4 FLAGS (\\Seen \\Flagged) MODSEQ (${modseqOf(server, 4)}))`, 'T9 OK Store completed']);
    assert.deepEqual(await c.command('NOOP'), ['* VANISHED 3', `* OK [HIGHESTMODSEQ ${mailbox.highestModseq}] Highest`, 'T10 OK NOOP completed']);
    plain.close();
    c.close();
  } finally {
    await server.stop();
  }
});

test('VANISHED (EARLIER) beyond the expunge log: every missing UID of the range (a superset RFC 7162 allows)', async () => {
  const { server, port } = await withMessages(5);
  try {
    const c = await rawSession(port);
    await c.command('ENABLE QRESYNC');
    // A new UIDVALIDITY starts the expunge log afresh at MODSEQ 2, so MODSEQ 1 is older than anything it holds.
    server.control.setFlags('INBOX', { uids: [1], flags: ['\\Seen'], mode: 'add' });
    const uv = server.control.resetUidValidity('INBOX', { uidvalidity: 778 }).uidvalidity;
    // UIDs 1:5 exist, nothing vanished.
    const none = await c.command(`SELECT INBOX (QRESYNC (${uv} 1 1:10))`);
    assert.ok(!none.some((l) => l.includes('VANISHED')), none.join('\n'));
    server.control.expungeMessages('INBOX', { uids: [2] });
    const lines = await c.command(`SELECT INBOX (QRESYNC (${uv} 1 1:10))`);
    assert.ok(lines.includes('* VANISHED (EARLIER) 2'), lines.join('\n'));
    // The same range from a MODSEQ the log covers is exact: only what went since.
    const exact = await c.command(`SELECT INBOX (QRESYNC (${uv} ${server.store.get('INBOX')!.highestModseq} 1:10))`);
    assert.ok(!exact.some((l) => l.includes('VANISHED')), exact.join('\n'));
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 7162 §3.2.5.2: seq-match-data narrows VANISHED (EARLIER) beyond the expunge log; mismatched or unordered sets are BAD', async () => {
  const { server, port } = await withMessages(5);
  try {
    const c = await rawSession(port);
    await c.command('ENABLE QRESYNC');
    // A new UIDVALIDITY (same UIDs) starts the expunge log afresh at MODSEQ 2: a client at MODSEQ 1 is beyond it.
    server.control.setFlags('INBOX', { uids: [1], flags: ['\\Seen'], mode: 'add' });
    const uv = server.control.resetUidValidity('INBOX', { uidvalidity: 777 }).uidvalidity;
    server.control.expungeMessages('INBOX', { uids: [2] });
    // The client saw 1,3,4,5 as messages 1:4. Every pair still holds: nothing it knows of went.
    const select = (extra: string): Promise<string[]> => c.command(`EXAMINE INBOX (QRESYNC (${uv} 1 1:10${extra}))`);
    assert.ok(!(await select(' (1:4 1,3:5)')).some((l) => l.includes('VANISHED')));
    // Without seq-match-data the superset answer includes UID 2, which this client already knew was gone.
    assert.ok((await select('')).includes('* VANISHED (EARLIER) 2'));
    server.control.expungeMessages('INBOX', { uids: [4] });
    // (2,3) still holds, (3,4) and (4,5) do not: only UIDs above 3 are reported.
    const narrowed = await select(' (1:4 1,3:5)');
    assert.ok(narrowed.includes('* VANISHED (EARLIER) 4'), narrowed.join('\n'));
    assert.match((await select(' (1:3 1:2)')).at(-1)!, /BAD .*as many/);
    assert.match((await select(' (2,1 1,3)')).at(-1)!, /BAD .*ascending/);
    assert.match((await select(' (1:* 1:4)')).at(-1)!, /BAD .*\*/);
    assert.match((await c.command('NOOP')).at(-1)!, /OK/);
    c.close();
  } finally {
    await server.stop();
  }
});

test('QRESYNC: an EXPUNGE that removed something answers OK [HIGHESTMODSEQ n]; one that removed nothing and a CONDSTORE-only session do not', async () => {
  const { server, port } = await withMessages(4);
  try {
    const mailbox = server.store.get('INBOX')!;
    const c = await rawSession(port);
    await c.command('ENABLE QRESYNC');
    await c.command('SELECT INBOX');
    await c.command('STORE 1 +FLAGS.SILENT (\\Deleted)');
    const expunge = await c.command('EXPUNGE');
    assert.deepEqual(expunge.slice(0, 1), ['* VANISHED 1']);
    assert.equal(expunge.at(-1), `${expunge.at(-1)!.split(' ')[0]} OK [HIGHESTMODSEQ ${mailbox.highestModseq}] Expunge completed`);
    assert.match((await c.command('UID EXPUNGE 1:*')).at(-1)!, /^T\d+ OK Expunge completed$/);
    await c.command('UID STORE 3 +FLAGS.SILENT (\\Deleted)');
    const uidExpunge = await c.command('UID EXPUNGE 3');
    assert.deepEqual(uidExpunge.slice(0, 1), ['* VANISHED 3']);
    assert.match(uidExpunge.at(-1)!, new RegExp(`OK \\[HIGHESTMODSEQ ${mailbox.highestModseq}\\] Expunge completed$`));
    c.close();
    const plain = await rawSession(port);
    await plain.command('ENABLE CONDSTORE');
    await plain.command('SELECT INBOX');
    await plain.command('STORE 1 +FLAGS.SILENT (\\Deleted)');
    assert.match((await plain.command('EXPUNGE')).at(-1)!, /^T\d+ OK Expunge completed$/);
    plain.close();
  } finally {
    await server.stop();
  }
});

test('imapflow with qresync: true enables QRESYNC, selects with QRESYNC and gets VANISHED in IDLE after a control expunge', { timeout: 15000 }, async () => {
  const { server, port } = await withMessages(5);
  const client = new ImapFlow({
    host: '127.0.0.1',
    port,
    secure: false,
    auth: { user: 'testuser', pass: 'testpass' },
    logger: false,
    qresync: true,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    assert.ok(client.enabled.has('QRESYNC'), [...client.enabled].join(','));
    const first = await client.mailboxOpen('INBOX');
    const uv = first.uidValidity;
    const hms = first.highestModseq!;
    assert.equal(typeof hms, 'bigint');
    await client.mailboxClose();
    server.control.expungeMessages('INBOX', { uids: [2] });
    // imapflow sends QRESYNC parameters when given changedSince and uidValidity.
    const events: { seq?: number; uid?: number; vanished?: boolean; earlier?: boolean }[] = [];
    client.on('expunge', (e) => events.push(e as never));
    await client.mailboxOpen('INBOX', { changedSince: hms, uidValidity: uv } as never);
    assert.ok(events.some((e) => e.uid === 2 && e.vanished === true && e.earlier === true), JSON.stringify(events));
    const idling = client.idle();
    await new Promise((r) => setTimeout(r, 200));
    server.control.expungeMessages('INBOX', { uids: [4] });
    const deadline = Date.now() + 4000;
    while (!events.some((e) => e.uid === 4) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(events.some((e) => e.uid === 4 && e.vanished === true && !e.earlier), JSON.stringify(events));
    await client.logout();
    await idling.catch(() => undefined);
  } finally {
    client.close();
    await server.stop();
  }
});

test('REST flag changes and expunges reach a QRESYNC session as VANISHED and FETCH (UID, MODSEQ), a CONDSTORE one as EXPUNGE and FETCH with UID and MODSEQ, a plain one as before', async () => {
  const { server, restPort, imapPort } = await startRest({ plugins: ['QRESYNC', 'ENABLE'] });
  try {
    for (let i = 1; i <= 4; i++) server.control.addMessage('INBOX', { raw: mail(`r${i}`) });
    const open = async (enable: string | null): Promise<RawClient> => {
      const c = await rawSession(imapPort);
      if (enable) await c.command(`ENABLE ${enable}`);
      await c.command('EXAMINE INBOX');
      return c;
    };
    const q = await open('QRESYNC');
    const cs = await open('CONDSTORE');
    const plain = await open(null);
    const flags = await request(restPort, 'POST', '/v1/mailboxes/INBOX/messages/flags', { json: { uids: [3], flags: ['\\Flagged'], mode: 'add' } });
    assert.equal(flags.status, 200);
    const gone = await request(restPort, 'POST', '/v1/mailboxes/INBOX/messages/expunge', { json: { uids: [1] } });
    assert.equal(gone.status, 200);
    const ms = modseqOf(server, 3);
    // EXAMINE claims no \Recent: every session sees the messages as \Recent.
    const top = server.store.get('INBOX')!.highestModseq;
    assert.deepEqual((await q.command('NOOP')).slice(0, -1), [
      '* VANISHED 1',
      `* 2 FETCH (UID 3 FLAGS (\\Flagged \\Recent) MODSEQ (${ms}))`,
      `* OK [HIGHESTMODSEQ ${top}] Highest`,
    ]);
    // RFC 7162 §3.1: UID and MODSEQ in every untagged FETCH once CONDSTORE is on, an external agent's change too.
    assert.deepEqual((await cs.command('NOOP')).slice(0, -1), ['* 1 EXPUNGE', `* 2 FETCH (UID 3 FLAGS (\\Flagged \\Recent) MODSEQ (${ms}))`]);
    assert.deepEqual((await plain.command('NOOP')).slice(0, -1), ['* 1 EXPUNGE', '* 2 FETCH (FLAGS (\\Flagged \\Recent))']);
    for (const c of [q, cs, plain]) c.close();
  } finally {
    await server.stop();
  }
});

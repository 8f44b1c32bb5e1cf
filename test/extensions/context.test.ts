/**
 * CONTEXT=SEARCH and CONTEXT=SORT (RFC 5267 §4) over real sockets: the
 * capabilities, RETURN (UPDATE) answering the result and then ADDTO /
 * REMOVEFROM as the mailbox changes — by another session, the control API,
 * REST, the session's own STORE, while idling — position 0 for SEARCH and
 * places in the sort order for SORT, expunges (REMOVEFROM right before the
 * EXPUNGE, as Dovecot sends it), a live tag not reusable for UPDATE,
 * CANCELUPDATE, the end of
 * updates with the selection, NOUPDATE past the limit, PARTIAL with UPDATE.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rawSession, startServer, mail } from '../helpers/server.js';
import type { RawClient } from '../helpers/raw-client.js';
import { request, startRest } from '../rest/helpers.js';

/** INBOX: UIDs 1..4 with subjects b, d, f, h; 1 and 3 are \Seen. */
function storage(): Record<string, unknown> {
  const subjects = ['b', 'd', 'f', 'h'];
  return { INBOX: { messages: subjects.map((s, i) => ({ raw: mail(s), uid: i + 1, flags: i % 2 === 0 ? ['\\Seen'] : [] })) } };
}

const PLUGINS = ['CONTEXT', 'SORT', 'PARTIAL', 'IDLE'];

/** The lines of an answer that are ESEARCH, EXISTS or EXPUNGE responses, and the tagged status. */
async function answer(c: RawClient, command: string): Promise<string[]> {
  c.write(`Q1 ${command}\r\n`);
  const lines = await c.until('Q1');
  return lines.filter((l) => /^\* (ESEARCH|NO|VANISHED|\d+ EXISTS|\d+ EXPUNGE)\b/.test(l) || l.startsWith('Q1 ')).map((l) => (l.startsWith('Q1 ') ? l.split(' ').slice(0, 2).join(' ') : l));
}

test('RFC 5267 §4: capabilities; UPDATE answers the result, then ADDTO/REMOVEFROM follow other sessions and the control API', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS, storage: storage() as never });
  try {
    const c = await rawSession(port);
    const caps = (await c.command('CAPABILITY'))[0]!;
    assert.match(caps, / CONTEXT=SEARCH /);
    assert.match(caps, / CONTEXT=SORT( |$)/);
    assert.match(caps, / ESORT /);
    await c.command('SELECT INBOX');
    // UPDATE alone: an ESEARCH response without result data (as Dovecot answers); with ALL the starting list.
    assert.deepEqual(await answer(c, 'UID SEARCH RETURN (UPDATE) UNSEEN'), ['* ESEARCH (TAG "Q1") UID', 'Q1 OK']);
    // The tag names the live result: a second UPDATE under it is BAD (as Dovecot answers).
    assert.deepEqual(await answer(c, 'UID SEARCH RETURN (UPDATE ALL) UNSEEN'), ['Q1 BAD']);
    c.write('A1 UID SEARCH RETURN (COUNT UPDATE) UNSEEN\r\n');
    assert.deepEqual(await c.until('A1'), ['* ESEARCH (TAG "A1") UID COUNT 2', 'A1 OK Search completed']);
    // Nothing changed: nothing is sent.
    assert.deepEqual(await answer(c, 'NOOP'), ['Q1 OK']);
    // Another session marks 2 seen: 2 leaves both results (SEARCH results: position 0, RFC 5267's ABNF).
    const other = await rawSession(port);
    await other.command('SELECT INBOX');
    await other.command('UID STORE 2 +FLAGS (\\Seen)');
    assert.deepEqual(await answer(c, 'NOOP'), ['* ESEARCH (TAG "Q1") UID REMOVEFROM (0 2)', '* ESEARCH (TAG "A1") UID REMOVEFROM (0 2)', 'Q1 OK']);
    // The control API delivers a new unseen message: EXISTS first, then ADDTO.
    server.control.addMessage('INBOX', { raw: mail('c') });
    assert.deepEqual(await answer(c, 'NOOP'), ['* 5 EXISTS', '* ESEARCH (TAG "Q1") UID ADDTO (0 5)', '* ESEARCH (TAG "A1") UID ADDTO (0 5)', 'Q1 OK']);
    // The control API clears \Seen of 1 and 3: one ADDTO with both.
    server.control.setFlags('INBOX', { uids: [1, 3], flags: ['\\Seen'], mode: 'remove' });
    assert.deepEqual(await answer(c, 'CANCELUPDATE "A1"'), ['* ESEARCH (TAG "Q1") UID ADDTO (0 1,3)', 'Q1 OK']);
    // A1 is cancelled; Q1 still runs. A tag without updates is NO (as Dovecot answers), a missing one BAD.
    server.control.setFlags('INBOX', { uids: [5], flags: ['\\Seen'], mode: 'add' });
    assert.deepEqual(await answer(c, 'NOOP'), ['* ESEARCH (TAG "Q1") UID REMOVEFROM (0 5)', 'Q1 OK']);
    assert.deepEqual(await answer(c, 'CANCELUPDATE "A1"'), ['Q1 NO']);
    assert.deepEqual(await answer(c, 'CANCELUPDATE'), ['Q1 BAD']);
    other.close();
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5267 §4: the session\'s own STORE and an IDLE see updates; a new SELECT ends them', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS, storage: storage() as never });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await answer(c, 'SEARCH RETURN (MIN UPDATE) SEEN'), ['* ESEARCH (TAG "Q1") MIN 1', 'Q1 OK']);
    // Its own silent STORE: the update comes before the tagged OK.
    assert.deepEqual(await answer(c, 'STORE 2 +FLAGS.SILENT (\\Seen)'), ['* ESEARCH (TAG "Q1") ADDTO (0 2)', 'Q1 OK']);
    // While idling an update goes out at once.
    c.write('I1 IDLE\r\n');
    assert.match(await c.line(), /^\+ /);
    server.control.setFlags('INBOX', { uids: [1], flags: ['\\Seen'], mode: 'remove' });
    const lines = [await c.line(), await c.line()];
    assert.deepEqual(lines, ['* 1 FETCH (FLAGS ())', '* ESEARCH (TAG "Q1") REMOVEFROM (0 1)']);
    c.write('DONE\r\n');
    assert.match((await c.until('I1')).at(-1)!, /^I1 OK/);
    // A new selection ends the updates.
    await c.command('SELECT INBOX');
    server.control.setFlags('INBOX', { uids: [4], flags: ['\\Seen'], mode: 'add' });
    assert.deepEqual(await answer(c, 'NOOP'), ['Q1 OK']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5267 §4: expunges — REMOVEFROM right before the EXPUNGE, for sequence-number and UID results', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS, storage: storage() as never });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('S1 SEARCH RETURN (UPDATE ALL) ALL\r\n');
    assert.deepEqual(await c.until('S1'), ['* ESEARCH (TAG "S1") ALL 1:4', 'S1 OK Search completed']);
    c.write('U1 UID SEARCH RETURN (ALL UPDATE) ALL\r\n');
    assert.deepEqual(await c.until('U1'), ['* ESEARCH (TAG "U1") UID ALL 1:4', 'U1 OK Search completed']);
    server.control.expungeMessages('INBOX', { uids: [2] });
    // During FETCH the expunge is held back, and so are the updates.
    const fetched = await answer(c, 'FETCH 1 (UID)');
    assert.deepEqual(fetched, ['Q1 OK']);
    // Then the removal comes right before the EXPUNGE, with the numbers the client still has (as Dovecot does).
    assert.deepEqual(await answer(c, 'NOOP'), ['* ESEARCH (TAG "S1") REMOVEFROM (0 2)', '* ESEARCH (TAG "U1") UID REMOVEFROM (0 2)', '* 2 EXPUNGE', 'Q1 OK']);
    // A new message afterwards: sequence number 4 now.
    server.control.addMessage('INBOX', { raw: mail('z') });
    assert.deepEqual(await answer(c, 'NOOP'), ['* 4 EXISTS', '* ESEARCH (TAG "S1") ADDTO (0 4)', '* ESEARCH (TAG "U1") UID ADDTO (0 5)', 'Q1 OK']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5267 §4.3 CONTEXT=SORT: ADDTO and REMOVEFROM positions are places in the sort order', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS, storage: storage() as never });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    // Subjects b d f h (UIDs 1..4); REVERSE SUBJECT: h f d b.
    c.write('B1 UID SORT RETURN (UPDATE ALL) (REVERSE SUBJECT) UTF-8 ALL\r\n');
    assert.deepEqual(await c.until('B1'), ['* ESEARCH (TAG "B1") UID ALL 4,3,2,1', 'B1 OK Sort completed']);
    // c (UID 5) goes between d and b, at position 4; g (6) between h and f, at 2; a (7) last, at 7.
    server.control.addMessage('INBOX', { raw: mail('c') });
    server.control.addMessage('INBOX', { raw: mail('g') });
    server.control.addMessage('INBOX', { raw: mail('a') });
    assert.deepEqual(await answer(c, 'NOOP'), ['* 7 EXISTS', '* ESEARCH (TAG "B1") UID ADDTO (2 6) ADDTO (5 5) ADDTO (7 7)', 'Q1 OK']);
    // Now h g f d c b a. Removing f (3) and c (5): the later one first, so each position holds when applied.
    server.control.expungeMessages('INBOX', { uids: [3, 5] });
    assert.deepEqual(await answer(c, 'NOOP'), ['* ESEARCH (TAG "B1") UID REMOVEFROM (5 5) REMOVEFROM (3 3)', '* 5 EXPUNGE', '* 3 EXPUNGE', 'Q1 OK']);
    // A run of neighbours that ascends is one set: d (2) and b (1) are neighbours but descend, so two items.
    server.control.expungeMessages('INBOX', { uids: [1, 2] });
    assert.deepEqual(await answer(c, 'NOOP'), ['* ESEARCH (TAG "B1") UID REMOVEFROM (4 1) REMOVEFROM (3 2)', '* 2 EXPUNGE', '* 1 EXPUNGE', 'Q1 OK']);
    // Sequence-number SORT results with PARTIAL: the window answers first, the updates cover the whole result.
    c.write('B2 SORT RETURN (UPDATE PARTIAL 1:1) (SUBJECT) UTF-8 ALL\r\n');
    assert.deepEqual(await c.until('B2'), ['* ESEARCH (TAG "B2") PARTIAL (1:1 3)', 'B2 OK Sort completed']);
    server.control.addMessage('INBOX', { raw: mail('e') });
    const lines = await answer(c, 'NOOP');
    assert.deepEqual(lines, ['* 4 EXISTS', '* ESEARCH (TAG "B1") UID ADDTO (3 8)', '* ESEARCH (TAG "B2") ADDTO (2 4)', 'Q1 OK']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5267 §4: past maxContexts the search is answered with NO [NOUPDATE "tag"]; REST changes are followed', async () => {
  const r = await startRest({ plugins: PLUGINS, storage: storage() as never, pluginOptions: { CONTEXT: { maxContexts: 1 } } });
  try {
    const c = await rawSession(r.imapPort);
    await c.command('SELECT INBOX');
    assert.deepEqual(await answer(c, 'UID SEARCH RETURN (UPDATE ALL) UNSEEN'), ['* ESEARCH (TAG "Q1") UID ALL 2,4', 'Q1 OK']);
    c.write('A2 UID SEARCH RETURN (COUNT UPDATE) ALL\r\n');
    assert.deepEqual(await c.until('A2'), ['* ESEARCH (TAG "A2") UID COUNT 4', '* NO [NOUPDATE "A2"] Too many contexts', 'A2 OK Search completed']);
    const posted = await request(r.restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw: mail('new') } });
    assert.equal(posted.status, 201);
    assert.deepEqual(await answer(c, 'NOOP'), ['* 5 EXISTS', '* ESEARCH (TAG "Q1") UID ADDTO (0 5)', 'Q1 OK']);
    // Without UPDATE a live tag may be used again (the result stays live); RETURN (CONTEXT) is a hint only.
    assert.deepEqual(await answer(c, 'UID SEARCH RETURN (CONTEXT COUNT) ALL'), ['* ESEARCH (TAG "Q1") UID COUNT 5', 'Q1 OK']);
    c.close();
  } finally {
    await r.server.stop();
  }
});

test('without SORT only CONTEXT=SEARCH is advertised; without CONTEXT, UPDATE and CANCELUPDATE are BAD', async () => {
  const { server, port } = await startServer({ plugins: ['CONTEXT'], storage: storage() as never });
  const bare = await startServer({ plugins: ['ESEARCH'], storage: storage() as never });
  try {
    const c = await rawSession(port);
    const caps = (await c.command('CAPABILITY'))[0]!;
    assert.match(caps, / CONTEXT=SEARCH/);
    assert.doesNotMatch(caps, /CONTEXT=SORT/);
    c.close();
    const d = await rawSession(bare.port);
    await d.command('SELECT INBOX');
    assert.deepEqual(await answer(d, 'SEARCH RETURN (UPDATE) ALL'), ['Q1 BAD']);
    assert.deepEqual(await answer(d, 'CANCELUPDATE "x"'), ['Q1 BAD']);
    d.close();
  } finally {
    await server.stop();
    await bare.server.stop();
  }
});

test('a script rule may name CANCELUPDATE: the command is in the server\'s table', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS, storage: storage() as never });
  try {
    server.script.add({ on: 'command', command: 'CANCELUPDATE', send: '$TAG NO scripted\r\n' });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await answer(c, 'CANCELUPDATE "x"'), ['Q1 NO']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5032 with RFC 5267: a live YOUNGER result loses messages as they grow older, also while idling', async () => {
  let now = Date.parse('2026-11-24T12:00:00Z');
  const messages = [
    { raw: mail('a'), uid: 1, internaldate: '24-Nov-2026 11:00:00 +0000' },
    { raw: mail('b'), uid: 2, internaldate: '24-Nov-2026 11:30:00 +0000' },
    { raw: mail('c'), uid: 3, internaldate: '24-Nov-2026 11:59:00 +0000' },
  ];
  const { server, port } = await startServer({
    plugins: [...PLUGINS, 'WITHIN'],
    storage: { INBOX: { messages } } as never,
    now: () => now,
    pluginOptions: { CONTEXT: { clockCheckMs: 20 } },
  });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await answer(c, 'UID SEARCH RETURN (UPDATE ALL) YOUNGER 3600'), ['* ESEARCH (TAG "Q1") UID ALL 1:3', 'Q1 OK']);
    // Five minutes on: 1 is older than an hour.
    now += 5 * 60 * 1000;
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual(await answer(c, 'NOOP'), ['* ESEARCH (TAG "Q1") UID REMOVEFROM (0 1)', 'Q1 OK']);
    assert.deepEqual(await answer(c, 'NOOP'), ['Q1 OK']);
    // While idling the update goes out by itself.
    c.write('I1 IDLE\r\n');
    assert.match(await c.line(), /^\+ /);
    now += 30 * 60 * 1000;
    assert.equal(await c.line(), '* ESEARCH (TAG "Q1") UID REMOVEFROM (0 2)');
    c.write('DONE\r\n');
    assert.match((await c.until('I1')).at(-1)!, /^I1 OK/);
    c.close();
  } finally {
    await server.stop();
  }
});

test('pluginOptions.CONTEXT.sort false: CONTEXT=SEARCH only, as Dovecot; UPDATE on SORT is BAD, on SEARCH it works', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS, storage: storage() as never, pluginOptions: { CONTEXT: { sort: false } } });
  try {
    const c = await rawSession(port);
    const caps = (await c.command('CAPABILITY'))[0]!;
    assert.match(caps, / CONTEXT=SEARCH/);
    assert.doesNotMatch(caps, /CONTEXT=SORT/);
    await c.command('SELECT INBOX');
    assert.deepEqual(await answer(c, 'UID SORT RETURN (UPDATE) (SUBJECT) UTF-8 ALL'), ['Q1 BAD']);
    assert.deepEqual(await answer(c, 'UID SORT RETURN (COUNT) (SUBJECT) UTF-8 ALL'), ['* ESEARCH (TAG "Q1") UID COUNT 4', 'Q1 OK']);
    assert.deepEqual(await answer(c, 'UID SEARCH RETURN (UPDATE COUNT) ALL'), ['* ESEARCH (TAG "Q1") UID COUNT 4', 'Q1 OK']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5267 with QRESYNC: the REMOVEFROM of an expunged message comes before its VANISHED', async () => {
  const { server, port } = await startServer({ plugins: [...PLUGINS, 'ENABLE', 'QRESYNC'], storage: storage() as never });
  try {
    const c = await rawSession(port);
    await c.command('ENABLE QRESYNC');
    await c.command('SELECT INBOX');
    assert.deepEqual(await answer(c, 'UID SEARCH RETURN (UPDATE ALL) NOT SEEN'), ['* ESEARCH (TAG "Q1") UID ALL 2,4', 'Q1 OK']);
    server.control.expungeMessages('INBOX', { uids: [1, 2] });
    assert.deepEqual(await answer(c, 'NOOP'), ['* ESEARCH (TAG "Q1") UID REMOVEFROM (0 2)', '* VANISHED 1:2', 'Q1 OK']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5267 §4.3 with RFC 9051 §9: sequence numbers above EXISTS in a live search match nothing until messages reach them', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS, storage: storage() as never });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    // 4 messages: 5:1000 names none of them (it answered COUNT 1, message 4, before issue 29's fix).
    c.write('A1 SEARCH RETURN (COUNT UPDATE) 5:1000\r\n');
    assert.deepEqual(await c.until('A1'), ['* ESEARCH (TAG "A1") COUNT 0', 'A1 OK Search completed']);
    c.write('A2 UID SEARCH RETURN (COUNT UPDATE) 1000\r\n');
    assert.deepEqual(await c.until('A2'), ['* ESEARCH (TAG "A2") UID COUNT 0', 'A2 OK Search completed']);
    // The updates are those of the unmodified search run again (§4.3): message 5 is now in 5:1000.
    server.control.addMessage('INBOX', { raw: mail('j') });
    assert.deepEqual(await answer(c, 'NOOP'), ['* 5 EXISTS', '* ESEARCH (TAG "A1") ADDTO (0 5)', 'Q1 OK']);
    c.close();
  } finally {
    await server.stop();
  }
});

/**
 * SAVEDATE (RFC 8514) over real sockets, with the server clock pinned
 * (`now` option) so save dates are known: the capability (§4.1), FETCH
 * SAVEDATE (§4.2 example shape), a new save date for APPEND, COPY and MOVE
 * targets while the source keeps its own (§3), SAVEDBEFORE/SAVEDON/
 * SAVEDSINCE (§4.3 example) and SAVEDATESUPPORTED, the fixture fallback to
 * INTERNALDATE, and the `saveDate` store field through snapshot and reset.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from '../../src/index.js';
import type { RawClient } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

/** A clock the test moves. */
function clock(start: number): { now: () => number; set: (ms: number) => void } {
  let t = start;
  return { now: () => t, set: (ms) => (t = ms) };
}

const DEC_28 = Date.UTC(2014, 11, 28, 9, 30, 0);
const JAN_1 = Date.UTC(2015, 0, 1, 17, 50, 53);

async function saveDates(c: RawClient, set = '1:*'): Promise<string[]> {
  const lines = await c.command(`FETCH ${set} (SAVEDATE)`);
  assert.match(lines.at(-1)!, /OK/);
  return lines.filter((l) => / FETCH /.test(l)).map((l) => {
    const m = /^\* \d+ FETCH \(SAVEDATE "([^"]+)"\)$/.exec(l);
    assert.ok(m, l);
    return m[1]!;
  });
}

test('RFC 8514 §4.1, §4.2: SAVEDATE is advertised; FETCH SAVEDATE answers the server clock of the APPEND, not the INTERNALDATE given', async () => {
  const time = clock(JAN_1);
  const { server, port } = await startServer({ plugins: ['SAVEDATE'], now: time.now });
  try {
    const c = await rawSession(port);
    assert.match((await c.command('CAPABILITY'))[0]!, /^\* CAPABILITY .* SAVEDATE( |$)/);
    const m = mail('old');
    c.write(`A1 APPEND INBOX "20-Mar-2010 03:07:37 +1100" {${Buffer.byteLength(m)}+}\r\n${m}\r\n`);
    assert.match((await c.until('A1')).at(-1)!, /^A1 OK/);
    await c.command('SELECT INBOX');
    const lines = await c.command('FETCH 1 (SAVEDATE INTERNALDATE)');
    assert.equal(lines[0], '* 1 FETCH (SAVEDATE "01-Jan-2015 17:50:53 +0000" INTERNALDATE "20-Mar-2010 03:07:37 +1100")');
    assert.match((await c.command('UID FETCH 1 SAVEDATE'))[0]!, /^\* 1 FETCH \(UID 1 SAVEDATE "01-Jan-2015 17:50:53 \+0000"\)$/);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 8514 §3: COPY and MOVE give the new message the time it was saved; the source keeps its save date', async () => {
  const time = clock(DEC_28);
  const { server, port } = await startServer({ plugins: ['SAVEDATE', 'MOVE'], now: time.now });
  try {
    server.control.addMessage('INBOX', { raw: mail('a') });
    server.control.addMessage('INBOX', { raw: mail('b') });
    server.control.createMailbox('Trash');
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    time.set(JAN_1);
    await c.command('COPY 1 Trash');
    time.set(JAN_1 + 86_400_000);
    await c.command('MOVE 2 Trash');
    assert.deepEqual(await saveDates(c), ['28-Dec-2014 09:30:00 +0000'], 'the source of the COPY kept its save date');
    await c.command('SELECT Trash');
    assert.deepEqual(await saveDates(c), ['01-Jan-2015 17:50:53 +0000', '02-Jan-2015 17:50:53 +0000']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 8514 §4.3 example: SAVEDON, SAVEDSINCE, SAVEDBEFORE compare the day of the save date; SAVEDATESUPPORTED matches all', async () => {
  const time = clock(DEC_28 - 2 * 86_400_000);
  const { server, port } = await startServer({ plugins: ['SAVEDATE', 'ESEARCH'], now: time.now });
  try {
    const days = [-2, -1, 0, 0, 1, 2];
    for (const d of days) {
      time.set(DEC_28 + d * 86_400_000);
      server.control.addMessage('INBOX', { raw: mail(`day${d}`), internaldate: '01-Jan-2000 00:00:00 +0000' });
    }
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('SEARCH SAVEDON 28-Dec-2014'), ['* SEARCH 3 4', 'T3 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH SAVEDSINCE 28-Dec-2014'), ['* SEARCH 3 4 5 6', 'T4 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH SAVEDBEFORE 28-Dec-2014'), ['* SEARCH 1 2', 'T5 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH savedsince "29-Dec-2014" NOT SAVEDSINCE 30-Dec-2014'), ['* SEARCH 5', 'T6 OK Search completed']);
    assert.deepEqual(await c.command('UID SEARCH SAVEDATESUPPORTED'), ['* SEARCH 1 2 3 4 5 6', 'T7 OK Search completed']);
    // INTERNALDATE is another thing: every message says 2000.
    assert.deepEqual(await c.command('SEARCH ON 28-Dec-2014'), ['* SEARCH', 'T8 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH RETURN (COUNT) SAVEDSINCE 1-Jan-2015'), ['* ESEARCH (TAG "T9") COUNT 0', 'T9 OK Search completed']);
    // Malformed dates are BAD; the session goes on.
    assert.match((await c.command('SEARCH SAVEDON 32-Dec-2014'))[0]!, /^T10 BAD/);
    assert.match((await c.command('SEARCH SAVEDBEFORE'))[0]!, /^T11 BAD/);
    assert.match((await c.command('SEARCH SAVEDATESUPPORTED 1-Jan-2015'))[0]!, /^T12 BAD/);
    assert.deepEqual(await c.command('NOOP'), ['T13 OK NOOP completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('fixture messages without a save date answer their INTERNALDATE; a given saveDate is used; snapshot and reset keep save dates', async () => {
  const time = clock(JAN_1);
  const storage = {
    INBOX: {
      messages: [
        { raw: mail('a'), internaldate: '14-Sep-2013 21:22:28 -0300' },
        { raw: mail('b'), internaldate: '14-Sep-2013 21:22:28 -0300', saveDate: '20-Oct-2014 08:00:00 +0200' },
      ],
    },
  };
  const { server, port } = await startServer({ plugins: ['SAVEDATE'], now: time.now, storage });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    assert.deepEqual(await saveDates(c), ['14-Sep-2013 21:22:28 -0300', '20-Oct-2014 08:00:00 +0200']);
    assert.deepEqual(await c.command('SEARCH SAVEDON 14-Sep-2013'), ['* SEARCH 1', 'T4 OK Search completed']);
    assert.deepEqual(await c.command('SEARCH SAVEDON 20-Oct-2014'), ['* SEARCH 2', 'T5 OK Search completed']);
    server.control.addMessage('INBOX', { raw: mail('c') });
    const snapshot = server.control.snapshot() as { INBOX: { messages: Record<string, unknown>[] } };
    assert.deepEqual(
      snapshot.INBOX.messages.map((m) => m.saveDate),
      [undefined, '20-Oct-2014 08:00:00 +0200', '01-Jan-2015 17:50:53 +0000'],
    );
    c.close();
    server.control.reset();
    assert.equal(server.store.get('INBOX')!.messages.length, 2);
    assert.deepEqual(
      server.store.get('INBOX')!.messages.map((m) => server.extension('SAVEDATE')!.saveDate(m).ms),
      [Date.UTC(2013, 8, 15, 0, 22, 28), Date.UTC(2014, 9, 20, 6, 0, 0)],
    );
  } finally {
    await server.stop();
  }
});

test('a malformed saveDate in the storage option is an option error', () => {
  assert.throws(() => createServer({ plugins: ['SAVEDATE'], storage: { INBOX: { messages: [{ raw: 'x', saveDate: 'yesterday' }] } } }), /saveDate: expected an RFC 3501 date-time/);
});

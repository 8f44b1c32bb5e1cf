/**
 * WITHIN (RFC 5032) over real sockets: OLDER/YOUNGER against INTERNALDATE
 * and the server's (pinned) clock, time zones of the internal date not
 * shifting the interval, the clock moving between searches, the keys inside
 * NOT/OR, UID SEARCH, SORT and ESEARCH, nz-number syntax, and no keys
 * without the plugin.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rawSession, startServer, mail } from '../helpers/server.js';

const NOW = Date.parse('2026-11-24T12:00:00Z');

/** INBOX: 1 is 10 s old, 2 is one hour old (written at +0100), 3 one day old, 4 three days and a second old. */
function storage(): Record<string, unknown> {
  return {
    INBOX: {
      messages: [
        { raw: mail('ten seconds'), internaldate: '24-Nov-2026 11:59:50 +0000' },
        { raw: mail('one hour'), internaldate: '24-Nov-2026 12:00:00 +0100' },
        { raw: mail('one day'), internaldate: '23-Nov-2026 07:00:00 -0500' },
        { raw: mail('three days'), internaldate: '21-Nov-2026 11:59:59 +0000' },
      ],
    },
  };
}

test('RFC 5032: CAPABILITY lists WITHIN; OLDER and YOUNGER count seconds back from the server clock', async () => {
  let now = NOW;
  const { server, port } = await startServer({ plugins: ['WITHIN', 'ESEARCH', 'SORT'], storage: storage() as never, now: () => now });
  try {
    const c = await rawSession(port);
    const caps = (await c.command('CAPABILITY'))[0]!;
    assert.match(caps, / WITHIN( |$)/);
    await c.command('SELECT INBOX');
    const search = async (criteria: string): Promise<string[]> => {
      c.write(`S1 ${criteria}\r\n`);
      return c.until('S1');
    };
    assert.deepEqual(await search('SEARCH YOUNGER 60'), ['* SEARCH 1', 'S1 OK Search completed']);
    assert.deepEqual(await search('SEARCH OLDER 60'), ['* SEARCH 2 3 4', 'S1 OK Search completed']);
    // 12:00 +0100 is 11:00Z: an hour old, not "today at noon" — the zone does not shift the interval.
    assert.deepEqual(await search('SEARCH YOUNGER 3599'), ['* SEARCH 1', 'S1 OK Search completed']);
    assert.deepEqual(await search('SEARCH YOUNGER 3600'), ['* SEARCH 1 2', 'S1 OK Search completed']);
    assert.deepEqual(await search('SEARCH OLDER 3600'), ['* SEARCH 2 3 4', 'S1 OK Search completed']);
    // The RFC's use: the last three days (259200 s); 4 is a second too old.
    assert.deepEqual(await search('SEARCH YOUNGER 259200'), ['* SEARCH 1 2 3', 'S1 OK Search completed']);
    assert.deepEqual(await search('SEARCH OLDER 259200'), ['* SEARCH 4', 'S1 OK Search completed']);
    // Composed with other keys, and in UID SEARCH / SORT / ESEARCH.
    assert.deepEqual(await search('SEARCH NOT YOUNGER 86400'), ['* SEARCH 4', 'S1 OK Search completed']);
    assert.deepEqual(await search('SEARCH OR YOUNGER 60 OLDER 200000'), ['* SEARCH 1 4', 'S1 OK Search completed']);
    // 3 is exactly a day old: on the boundary it is both OLDER and YOUNGER.
    assert.deepEqual(await search('SEARCH OLDER 60 YOUNGER 86400'), ['* SEARCH 2 3', 'S1 OK Search completed']);
    assert.deepEqual(await search('SEARCH OLDER 86400'), ['* SEARCH 3 4', 'S1 OK Search completed']);
    assert.deepEqual(await search('UID SEARCH YOUNGER 86399'), ['* SEARCH 1 2', 'S1 OK Search completed']);
    assert.deepEqual(await search('SEARCH RETURN (COUNT MAX) OLDER 60'), ['* ESEARCH (TAG "S1") MAX 4 COUNT 3', 'S1 OK Search completed']);
    assert.deepEqual(await search('SORT (REVERSE ARRIVAL) UTF-8 OLDER 60'), ['* SORT 2 3 4', 'S1 OK Sort completed']);
    // Fractions of the clock's second do not count: INTERNALDATE has none (as Dovecot compares).
    now = NOW + 999;
    assert.deepEqual(await search('SEARCH YOUNGER 10'), ['* SEARCH 1', 'S1 OK Search completed']);
    now = NOW + 1000;
    assert.deepEqual(await search('SEARCH YOUNGER 10'), ['* SEARCH', 'S1 OK Search completed']);
    // The clock moves: the same search answers differently a day later.
    now = NOW + 86400 * 1000;
    assert.deepEqual(await search('SEARCH YOUNGER 90000'), ['* SEARCH 1 2', 'S1 OK Search completed']);
    assert.deepEqual(await search('SEARCH YOUNGER 3600'), ['* SEARCH', 'S1 OK Search completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5032 §4: the interval is an nz-number; errors are BAD and the session goes on', async () => {
  const { server, port } = await startServer({ plugins: ['WITHIN'], storage: storage() as never, now: NOW });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    for (const bad of ['SEARCH OLDER 0', 'SEARCH YOUNGER', 'SEARCH YOUNGER -5', 'SEARCH OLDER x', 'SEARCH OLDER 99999999999', 'SEARCH YOUNGER 1.5']) {
      c.write(`B1 ${bad}\r\n`);
      assert.match((await c.until('B1')).at(-1)!, /^B1 BAD /, bad);
    }
    c.write('A1 SEARCH older 100000\r\n');
    assert.deepEqual(await c.until('A1'), ['* SEARCH 4', 'A1 OK Search completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('without the WITHIN plugin OLDER and YOUNGER are unknown keys and WITHIN is not advertised', async () => {
  const { server, port } = await startServer({ plugins: ['ESEARCH'], storage: storage() as never, now: NOW });
  try {
    const c = await rawSession(port);
    assert.doesNotMatch((await c.command('CAPABILITY'))[0]!, /WITHIN/);
    await c.command('SELECT INBOX');
    c.write('A1 SEARCH YOUNGER 60\r\n');
    assert.match((await c.until('A1')).at(-1)!, /^A1 BAD .*OLDER|^A1 BAD .*YOUNGER/);
    c.close();
  } finally {
    await server.stop();
  }
});

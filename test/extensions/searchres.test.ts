/**
 * SEARCHRES (RFC 5182) over real sockets: the RFC's examples (SAVE then
 * FETCH $, SAVE with MIN/MAX, `$` inside SEARCH, UID COPY/STORE/EXPUNGE
 * on `$`, the BADCHARSET reset), the reset rules (SELECT, a failed SEARCH
 * with SAVE; BAD leaves `$`), expunged messages dropping out, and the
 * empty `$`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rawSession, startServer, mail } from '../helpers/server.js';
import type { RawClient } from '../helpers/raw-client.js';

/** 6 messages, UIDs 10, 20, ..., 60; 2, 4 and 5 are \Flagged; 5 is larger. */
function storage(): never {
  const messages = [];
  for (let i = 1; i <= 6; i++) {
    messages.push({ raw: mail(`m${i}`, i === 5 ? 'y'.repeat(5000) : 'x'), flags: [2, 4, 5].includes(i) ? ['\\Flagged'] : [], uid: 10 * i });
  }
  return { INBOX: { messages }, '': { separator: '/', folders: { Saved: {} } } } as never;
}

async function session(plugins = ['SEARCHRES']): Promise<{ c: RawClient; stop: () => Promise<void>; server: Awaited<ReturnType<typeof startServer>>['server'] }> {
  const { server, port } = await startServer({ plugins, storage: storage() });
  const c = await rawSession(port);
  c.write('S1 SELECT INBOX\r\n');
  await c.until('S1');
  return { c, server, stop: () => server.stop() };
}

const run = async (c: RawClient, tag: string, command: string): Promise<string[]> => {
  c.write(`${tag} ${command}\r\n`);
  return c.until(tag);
};

test('RFC 5182 §1 example: SEARCH RETURN (SAVE) answers nothing but OK; FETCH $ and UID FETCH $ name the saved messages', async () => {
  const { c, stop } = await session();
  try {
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 ESEARCH SEARCHRES', 'T2 OK Capability completed']);
    assert.deepEqual(await run(c, 'A282', 'SEARCH RETURN (SAVE) FLAGGED SINCE 1-Feb-1994 NOT FROM "Smith"'), ['A282 OK Search completed']);
    assert.deepEqual(await run(c, 'A283', 'FETCH $ (UID FLAGS)'), [
      '* 2 FETCH (UID 20 FLAGS (\\Flagged))',
      '* 4 FETCH (UID 40 FLAGS (\\Flagged))',
      '* 5 FETCH (UID 50 FLAGS (\\Flagged))',
      'A283 OK Fetch completed',
    ]);
    // `$` holds messages, not numbers: the UID form names the same ones.
    assert.deepEqual(await run(c, 'A284', 'UID FETCH $ (FLAGS)'), [
      '* 2 FETCH (UID 20 FLAGS (\\Flagged))',
      '* 4 FETCH (UID 40 FLAGS (\\Flagged))',
      '* 5 FETCH (UID 50 FLAGS (\\Flagged))',
      'A284 OK Fetch completed',
    ]);
  } finally {
    await stop();
  }
});

test('RFC 5182 §2.4: SAVE with MIN and/or MAX keeps only those; with ALL or COUNT every match; ESEARCH answers the other options', async () => {
  const { c, stop } = await session();
  try {
    const fetchUids = async (tag: string): Promise<string> =>
      (await run(c, tag, 'FETCH $ (UID)'))
        .filter((l) => l.startsWith('* '))
        .map((l) => /UID (\d+)/.exec(l)![1])
        .join(',');
    assert.deepEqual(await run(c, 'A1', 'SEARCH RETURN (MIN SAVE) FLAGGED'), ['* ESEARCH (TAG "A1") MIN 2', 'A1 OK Search completed']);
    assert.equal(await fetchUids('F1'), '20');
    assert.deepEqual(await run(c, 'A2', 'UID SEARCH RETURN (SAVE MAX) FLAGGED'), ['* ESEARCH (TAG "A2") UID MAX 50', 'A2 OK Search completed']);
    assert.equal(await fetchUids('F2'), '50');
    assert.deepEqual(await run(c, 'A3', 'SEARCH RETURN (SAVE MIN MAX) FLAGGED'), ['* ESEARCH (TAG "A3") MIN 2 MAX 5', 'A3 OK Search completed']);
    assert.equal(await fetchUids('F3'), '20,50');
    assert.deepEqual(await run(c, 'A4', 'SEARCH RETURN (SAVE MIN COUNT) FLAGGED'), ['* ESEARCH (TAG "A4") MIN 2 COUNT 3', 'A4 OK Search completed']);
    assert.equal(await fetchUids('F4'), '20,40,50');
    assert.deepEqual(await run(c, 'A5', 'SEARCH RETURN (SAVE ALL) UNFLAGGED'), ['* ESEARCH (TAG "A5") ALL 1,3,6', 'A5 OK Search completed']);
    assert.equal(await fetchUids('F5'), '10,30,60');
  } finally {
    await stop();
  }
});

test('RFC 5182 §3 examples: $ inside SEARCH, UID COPY $, UID STORE $, UID EXPUNGE $', async () => {
  const { c, server, stop } = await session(['SEARCHRES', 'UIDPLUS', 'MOVE']);
  try {
    await run(c, 'A300', 'SEARCH RETURN (SAVE) FLAGGED');
    assert.deepEqual(await run(c, 'A301', 'UID SEARCH UID $ SMALLER 4096'), ['* SEARCH 20 40', 'A301 OK Search completed']);
    assert.deepEqual(await run(c, 'A302', 'SEARCH OR $ 1 NOT 4'), ['* SEARCH 1 2 5', 'A302 OK Search completed']);
    assert.deepEqual(await run(c, 'A303', 'SEARCH RETURN (COUNT) $'), ['* ESEARCH (TAG "A303") COUNT 3', 'A303 OK Search completed']);
    const copied = await run(c, 'A304', 'UID COPY $ "Saved"');
    assert.match(copied.at(-1)!, /^A304 OK \[COPYUID \d+ 20,40,50 1:3\] /);
    assert.equal(server.control.listMessages('Saved').length, 3);
    assert.deepEqual(await run(c, 'A305', 'UID STORE $ +FLAGS.SILENT (\\Deleted)'), ['A305 OK Store completed']);
    assert.deepEqual(await run(c, 'A306', 'UID EXPUNGE $'), ['* 5 EXPUNGE', '* 4 EXPUNGE', '* 2 EXPUNGE', 'A306 OK Expunge completed']);
    // The expunged messages are gone from $: it is empty now.
    assert.deepEqual(await run(c, 'A307', 'FETCH $ (UID)'), ['A307 OK Fetch completed']);
    // SEARCH on $ and SAVE in one command: the old value is read, then the new one saved.
    await run(c, 'A308', 'SEARCH RETURN (SAVE) 1:2');
    assert.deepEqual(await run(c, 'A309', 'SEARCH RETURN (SAVE ALL) $ 2'), ['* ESEARCH (TAG "A309") ALL 2', 'A309 OK Search completed']);
    const moved = await run(c, 'A310', 'MOVE $ Saved');
    assert.match(moved.at(-1)!, /^A310 OK /);
    assert.ok(moved.includes('* 2 EXPUNGE'), moved.join('\n'));
    assert.equal(server.control.listMessages('Saved').length, 4);
  } finally {
    await stop();
  }
});

test('RFC 5182 §2.1: $ is empty after SELECT/EXAMINE and after a SEARCH with SAVE that fails with NO; a BAD SEARCH leaves it', async () => {
  const { c, stop } = await session();
  try {
    await run(c, 'A1', 'SEARCH RETURN (SAVE) FLAGGED');
    // BAD (syntax) changes nothing.
    assert.match((await run(c, 'A2', 'SEARCH RETURN (SAVE) NOSUCHKEY')).at(-1)!, /^A2 BAD /);
    assert.equal((await run(c, 'A3', 'FETCH $ (UID)')).length, 4);
    // The RFC's BADCHARSET example: NO with SAVE empties $.
    assert.match((await run(c, 'A01', 'SEARCH RETURN (SAVE) CHARSET X-NOSUCH (OR $ 1,3:4) TEXT x')).at(-1)!, /^A01 NO \[BADCHARSET/);
    assert.deepEqual(await run(c, 'A4', 'FETCH $ (UID)'), ['A4 OK Fetch completed']);
    assert.deepEqual(await run(c, 'A02', 'SEARCH RETURN (SAVE) CHARSET UTF-8 (OR $ 1,3:4) TEXT m'), ['A02 OK Search completed']);
    assert.equal((await run(c, 'A5', 'FETCH $ (UID)')).length, 4);
    // SELECT (of the same mailbox) starts with an empty $.
    await run(c, 'A6', 'EXAMINE INBOX');
    assert.deepEqual(await run(c, 'A7', 'FETCH $ (UID)'), ['A7 OK Fetch completed']);
  } finally {
    await stop();
  }
});

test('RFC 5182 §2.1: an empty $ makes FETCH, STORE, COPY, SEARCH succeed on no message', async () => {
  const { c, server, stop } = await session(['SEARCHRES', 'UIDPLUS']);
  try {
    assert.deepEqual(await run(c, 'A1', 'SEARCH RETURN (SAVE) DRAFT'), ['A1 OK Search completed']);
    assert.deepEqual(await run(c, 'A2', 'FETCH $ FLAGS'), ['A2 OK Fetch completed']);
    assert.deepEqual(await run(c, 'A3', 'UID STORE $ +FLAGS (\\Seen)'), ['A3 OK Store completed']);
    assert.match((await run(c, 'A4', 'COPY $ Saved')).at(-1)!, /^A4 OK /);
    assert.equal(server.control.listMessages('Saved').length, 0);
    assert.deepEqual(await run(c, 'A5', 'SEARCH $'), ['* SEARCH', 'A5 OK Search completed']);
    assert.deepEqual(await run(c, 'A6', 'SEARCH RETURN () $'), ['* ESEARCH (TAG "A6")', 'A6 OK Search completed']);
  } finally {
    await stop();
  }
});

test('without SEARCHRES: $ in SEARCH is BAD and SAVE is no result option', async () => {
  const { c, stop } = await session(['ESEARCH']);
  try {
    assert.match((await run(c, 'A1', 'SEARCH $')).at(-1)!, /^A1 BAD /);
    assert.match((await run(c, 'A2', 'SEARCH RETURN (SAVE) ALL')).at(-1)!, /^A2 BAD /);
  } finally {
    await stop();
  }
});

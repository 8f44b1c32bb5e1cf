/**
 * PARTIAL (RFC 9394) over real sockets: windows of SEARCH/UID SEARCH
 * results by position (`1:500`, `-1:-500`, either order), NIL past the
 * end, MIN/MAX/COUNT over the whole result beside it, windows of SORT
 * results in sort order (ESORT), SAVE keeping the window for a paged
 * `UID FETCH $`, and the BAD cases (ALL with PARTIAL, bad ranges, twice).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { atom, type Plugin } from '../../src/index.js';
import { rawSession, startServer, mail } from '../helpers/server.js';

/** 100 messages with UIDs 200..250 and 252..300 (251 is gone); every tenth (seq 10, 20, ...) is \Deleted. */
function storage(): Record<string, unknown> {
  const messages = [];
  let seq = 0;
  for (let uid = 200; uid <= 300; uid++) {
    if (uid === 251) continue;
    seq++;
    messages.push({ raw: mail(`m${seq}`), uid, flags: seq % 10 === 0 ? ['\\Deleted'] : [] });
  }
  return { INBOX: { messages } };
}

async function fixture(plugins: string[] = ['PARTIAL', 'SEARCHRES', 'SORT']) {
  const started = await startServer({ plugins, storage: storage() as never });
  const c = await rawSession(started.port);
  await c.command('SELECT INBOX');
  const run = async (command: string): Promise<string[]> => {
    c.write(`P1 ${command}\r\n`);
    return c.until('P1');
  };
  return { ...started, c, run };
}

test('RFC 9394 §3.1: PARTIAL windows of UID SEARCH results, from the start and from the end', async () => {
  const { server, c, run } = await fixture();
  try {
    assert.match((await c.command('CAPABILITY'))[0]!, / PARTIAL( |$)/);
    // The first 5 results of UNDELETED: UIDs 200..204.
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL 1:5) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (1:5 200:204)', 'P1 OK Search completed']);
    // The next page crosses the gap at UID 251 and skips the \Deleted seq 10 (UID 209).
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL 6:10) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (6:10 205:208,210)', 'P1 OK Search completed']);
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL 48:53) ALL'), ['* ESEARCH (TAG "P1") UID PARTIAL (48:53 247:250,252:253)', 'P1 OK Search completed']);
    // -1 is the last result: the last 5 of 90 undeleted messages (seq 100 = UID 300 is \Deleted).
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL -1:-5) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (-1:-5 295:299)', 'P1 OK Search completed']);
    // The ends may come in either order ("A range 500:400 is the same as 400:500"); the answer names the range low end first.
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL 5:1) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (1:5 200:204)', 'P1 OK Search completed']);
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL -5:-1) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (-1:-5 295:299)', 'P1 OK Search completed']);
    // A window past the end holds what there is; one wholly past it is NIL.
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL 88:500) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (88:500 297:299)', 'P1 OK Search completed']);
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL 23500:24000) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (23500:24000 NIL)', 'P1 OK Search completed']);
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL -200:-95) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (-95:-200 NIL)', 'P1 OK Search completed']);
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL -85:-200) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (-85:-200 200:205)', 'P1 OK Search completed']);
    // No match at all: NIL too.
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL 1:10) DRAFT'), ['* ESEARCH (TAG "P1") UID PARTIAL (1:10 NIL)', 'P1 OK Search completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 9394: a reversed range is answered normalized in SEARCH, UID SEARCH, SORT and UID SORT, and SAVE keeps the same window', async () => {
  const { server, c, run } = await fixture();
  try {
    // Issue 29: `PARTIAL 4:2` was echoed as `4:2`; the range is 2:4, and a reference server (Dovecot) answers `2:4`.
    assert.deepEqual(await run('SEARCH RETURN (PARTIAL 4:2) ALL'), ['* ESEARCH (TAG "P1") PARTIAL (2:4 2:4)', 'P1 OK Search completed']);
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL 4:2) ALL'), ['* ESEARCH (TAG "P1") UID PARTIAL (2:4 201:203)', 'P1 OK Search completed']);
    assert.deepEqual(await run('SORT RETURN (PARTIAL 4:2) (ARRIVAL) UTF-8 ALL'), ['* ESEARCH (TAG "P1") PARTIAL (2:4 2:4)', 'P1 OK Sort completed']);
    assert.deepEqual(await run('UID SORT RETURN (PARTIAL -3:-1) (REVERSE SUBJECT) UTF-8 ALL'), ['* ESEARCH (TAG "P1") UID PARTIAL (-1:-3 300,209,200)', 'P1 OK Sort completed']);
    // A range of one position either way round, and one wholly past the results (NIL), normalized too.
    assert.deepEqual(await run('SEARCH RETURN (PARTIAL 7:7) ALL'), ['* ESEARCH (TAG "P1") PARTIAL (7:7 7)', 'P1 OK Search completed']);
    assert.deepEqual(await run('SEARCH RETURN (PARTIAL 600:500) ALL'), ['* ESEARCH (TAG "P1") PARTIAL (500:600 NIL)', 'P1 OK Search completed']);
    assert.deepEqual(await run('SEARCH RETURN (PARTIAL -600:-500) ALL'), ['* ESEARCH (TAG "P1") PARTIAL (-500:-600 NIL)', 'P1 OK Search completed']);
    // MIN/MAX/COUNT beside a reversed PARTIAL still answer for the whole result.
    assert.deepEqual(await run('SEARCH RETURN (MIN PARTIAL 3:1 COUNT) DELETED'), ['* ESEARCH (TAG "P1") MIN 10 COUNT 10 PARTIAL (1:3 10,20,30)', 'P1 OK Search completed']);
    // SAVE with a reversed window keeps that window as `$`.
    assert.deepEqual(await run('UID SEARCH RETURN (SAVE PARTIAL -2:-1) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (-1:-2 298:299)', 'P1 OK Search completed']);
    assert.deepEqual(await run('UID SEARCH UID $'), ['* SEARCH 298 299', 'P1 OK Search completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 9394: sequence numbers for SEARCH; MIN, MAX and COUNT answer for the whole result beside PARTIAL', async () => {
  const { server, c, run } = await fixture();
  try {
    assert.deepEqual(await run('SEARCH RETURN (PARTIAL -1:-3) UNDELETED'), ['* ESEARCH (TAG "P1") PARTIAL (-1:-3 97:99)', 'P1 OK Search completed']);
    assert.deepEqual(await run('SEARCH RETURN (PARTIAL 9:12) UNDELETED'), ['* ESEARCH (TAG "P1") PARTIAL (9:12 9,11:13)', 'P1 OK Search completed']);
    assert.deepEqual(await run('SEARCH RETURN (COUNT PARTIAL 1:2 MIN MAX) DELETED'), ['* ESEARCH (TAG "P1") MIN 10 MAX 100 COUNT 10 PARTIAL (1:2 10,20)', 'P1 OK Search completed']);
    assert.deepEqual(await run('UID SEARCH RETURN (partial 1:1) 50'), ['* ESEARCH (TAG "P1") UID PARTIAL (1:1 249)', 'P1 OK Search completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 9394 with RFC 5267 §3 (ESORT): the window is taken of the sort order and listed in it', async () => {
  const { server, c, run } = await fixture();
  try {
    // Subjects m1..m100 sort as strings: REVERSE SUBJECT starts m99, m98, m97 and ends ..., m12, m11, m1.
    assert.deepEqual(await run('SORT RETURN (PARTIAL 1:3) (REVERSE SUBJECT) UTF-8 UNDELETED'), ['* ESEARCH (TAG "P1") PARTIAL (1:3 99,98,97)', 'P1 OK Sort completed']);
    assert.deepEqual(await run('UID SORT RETURN (PARTIAL -1:-2 COUNT) (REVERSE SUBJECT) UTF-8 UNDELETED'), ['* ESEARCH (TAG "P1") UID COUNT 90 PARTIAL (-1:-2 210,200)', 'P1 OK Sort completed']);
    assert.deepEqual(await run('UID SORT RETURN (PARTIAL 1:3) (ARRIVAL) UTF-8 DELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (1:3 209,219,229)', 'P1 OK Sort completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 9394 with SEARCHRES: SAVE keeps the window, so UID FETCH $ pages through the results', async () => {
  const { server, c, run } = await fixture();
  try {
    assert.deepEqual(await run('UID SEARCH RETURN (SAVE PARTIAL 3:4) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (3:4 202:203)', 'P1 OK Search completed']);
    assert.deepEqual(await run('UID FETCH $ (UID)'), ['* 3 FETCH (UID 202)', '* 4 FETCH (UID 203)', 'P1 OK Fetch completed']);
    assert.deepEqual(await run('SEARCH RETURN (SAVE COUNT PARTIAL 1:1) DELETED'), ['* ESEARCH (TAG "P1") COUNT 10 PARTIAL (1:1 10)', 'P1 OK Search completed']);
    assert.deepEqual(await run('FETCH $ (UID)'), ['* 10 FETCH (UID 209)', 'P1 OK Fetch completed']);
    // The newest page first: the last three undeleted messages, then their flags.
    assert.deepEqual(await run('UID SEARCH RETURN (SAVE PARTIAL -1:-3) UNDELETED'), ['* ESEARCH (TAG "P1") UID PARTIAL (-1:-3 297:299)', 'P1 OK Search completed']);
    assert.deepEqual(await run('UID FETCH $ (FLAGS)'), ['* 97 FETCH (UID 297 FLAGS ())', '* 98 FETCH (UID 298 FLAGS ())', '* 99 FETCH (UID 299 FLAGS ())', 'P1 OK Fetch completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 9394 / RFC 5267 §4.4: bad ranges, PARTIAL with ALL and PARTIAL twice are BAD; the session goes on', async () => {
  const { server, c, run } = await fixture();
  try {
    for (const bad of [
      'SEARCH RETURN (PARTIAL 1:5 ALL) UNDELETED',
      'SEARCH RETURN (ALL PARTIAL 1:5) UNDELETED',
      'SEARCH RETURN (PARTIAL 1:5 PARTIAL 6:7) UNDELETED',
      'SEARCH RETURN (PARTIAL 0:5) ALL',
      'SEARCH RETURN (PARTIAL 1:-5) ALL',
      'SEARCH RETURN (PARTIAL -1:5) ALL',
      'SEARCH RETURN (PARTIAL 5) ALL',
      'SEARCH RETURN (PARTIAL 1:*) ALL',
      'SEARCH RETURN (PARTIAL 1:4294967296) ALL',
      'SEARCH RETURN (PARTIAL) ALL',
      'SEARCH RETURN (PARTIAL (1:5)) ALL',
      'SORT RETURN (PARTIAL 1:5 ALL) (ARRIVAL) UTF-8 ALL',
    ]) {
      assert.match((await run(bad)).at(-1)!, /^P1 BAD /, bad);
    }
    assert.deepEqual(await run('UID SEARCH RETURN (PARTIAL 1:4294967295) 1'), ['* ESEARCH (TAG "P1") UID PARTIAL (1:4294967295 200)', 'P1 OK Search completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('without the PARTIAL plugin the option is unknown (BAD) and not advertised', async () => {
  const { server, c, run } = await fixture(['ESEARCH']);
  try {
    assert.doesNotMatch((await c.command('CAPABILITY'))[0]!, /PARTIAL/);
    assert.match((await run('SEARCH RETURN (PARTIAL 1:5) ALL')).at(-1)!, /^P1 BAD /);
    c.close();
  } finally {
    await server.stop();
  }
});

test('the points PARTIAL uses are open to plugins: a result option with an argument, a refusal, ESEARCH items', async () => {
  // XFIRST n: the first n results as an ESEARCH item; not together with MAX.
  const xfirst: Plugin<undefined> = {
    name: 'XFIRST',
    requires: ['ESEARCH'],
    search: {
      returnOptions: ['XFIRST'],
      parseReturnOption: (_option, args) => {
        args.sp();
        return args.nzNumber();
      },
      refuseReturnOptions: (options) => (options.has('XFIRST') && options.has('MAX') ? 'XFIRST and MAX do not go together' : undefined),
      resultItems: (ctx) => {
        if (!ctx.options.has('XFIRST') || ctx.found === null) return undefined;
        const first = ctx.found.slice(0, ctx.returnArguments.get('XFIRST') as number);
        return { items: [atom('XFIRST'), first.map((f) => (ctx.uid ? f.message.uid : f.seq))], returned: first };
      },
    },
  };
  const { server, port } = await startServer({ plugins: ['ESEARCH', xfirst], storage: storage() as never });
  try {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('X1 UID SEARCH RETURN (XFIRST 3 COUNT) DELETED\r\n');
    assert.deepEqual(await c.until('X1'), ['* ESEARCH (TAG "X1") UID COUNT 10 XFIRST (209 219 229)', 'X1 OK Search completed']);
    for (const bad of ['SEARCH RETURN (XFIRST) ALL', 'SEARCH RETURN (XFIRST 0) ALL', 'SEARCH RETURN (XFIRST 2 MAX) ALL', 'SEARCH RETURN (XFIRST 1 XFIRST 2) ALL']) {
      c.write(`B1 ${bad}\r\n`);
      assert.match((await c.until('B1')).at(-1)!, /^B1 BAD /, bad);
    }
    c.close();
  } finally {
    await server.stop();
  }
});

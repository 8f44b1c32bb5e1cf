/**
 * Expunges made by another session, as the watching session hears of them
 * (RFC 3501 §7.4.1): each `* n EXPUNGE` is a sequence number valid when the
 * client reads it (every one before it has already renumbered the rest), and
 * afterwards the numbers of the messages left close up. Over real sockets,
 * with several expunged messages that are not next to each other.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

let server: Server;
let port: number;

beforeEach(async () => {
  ({ server, port } = await startServer({
    storage: { INBOX: { uidvalidity: 7, messages: Array.from({ length: 8 }, (_, i) => ({ raw: mail(`m${i + 1}`) })) } },
  }));
});
afterEach(async () => {
  await server.stop();
});

/**
 * What a client that applies each `* n EXPUNGE` in turn is left with: the
 * UIDs it knew, less the n-th of the list at each line (RFC 3501 §7.4.1).
 */
function applyExpunges(uids: number[], lines: readonly string[]): number[] {
  const left = [...uids];
  for (const line of lines) {
    const m = /^\* (\d+) EXPUNGE$/.exec(line);
    if (!m) continue;
    const seq = Number(m[1]);
    assert.ok(seq >= 1 && seq <= left.length, `${line} names no message of the ${left.length} the client knows`);
    left.splice(seq - 1, 1);
  }
  return left;
}

describe("another session's expunges (RFC 3501 §7.4.1)", () => {
  test('four messages apart: every EXPUNGE is valid when read, and the view closes up', async () => {
    const watcher = await rawSession(port);
    const actor = await rawSession(port);
    await watcher.command('SELECT INBOX');
    await actor.command('SELECT INBOX');
    await actor.command('UID STORE 2,5,6,8 +FLAGS.SILENT (\\Deleted)');
    await actor.command('EXPUNGE');
    const heard = await watcher.command('NOOP');
    const expunges = heard.filter((l) => l.endsWith(' EXPUNGE'));
    assert.equal(expunges.length, 4, heard.join('\n'));
    // The client's picture after reading them is the server's.
    assert.deepEqual(applyExpunges([1, 2, 3, 4, 5, 6, 7, 8], expunges), [1, 3, 4, 7]);
    assert.deepEqual(await watcher.command('FETCH 1:* (UID)'), ['* 1 FETCH (UID 1)', '* 2 FETCH (UID 3)', '* 3 FETCH (UID 4)', '* 4 FETCH (UID 7)', 'T4 OK Fetch completed']);
    // A sequence number past the new end is a BAD (RFC 3501 §9, seq-number: "greater than the number of messages").
    assert.match((await watcher.command('FETCH 5 (UID)')).at(-1)!, /^T5 BAD /);
  });

  test('the first and the last message, and a message the watcher never heard of', async () => {
    const watcher = await rawSession(port);
    const actor = await rawSession(port);
    await watcher.command('SELECT INBOX');
    await actor.command('SELECT INBOX');
    // UID 9 arrives and goes before the watcher's next command: it must hear neither of it nor of its expunge.
    await server.control.addMessage('INBOX', { raw: mail('late') });
    await actor.command('NOOP');
    await actor.command('UID STORE 1,8,9 +FLAGS.SILENT (\\Deleted)');
    await actor.command('EXPUNGE');
    const heard = await watcher.command('NOOP');
    const expunges = heard.filter((l) => l.endsWith(' EXPUNGE'));
    assert.deepEqual(applyExpunges([1, 2, 3, 4, 5, 6, 7, 8], expunges), [2, 3, 4, 5, 6, 7]);
    const fetched = await watcher.command('FETCH 1:* (UID)');
    assert.deepEqual(
      fetched.filter((l) => l.startsWith('* ')),
      [2, 3, 4, 5, 6, 7].map((uid, i) => `* ${i + 1} FETCH (UID ${uid})`),
    );
  });
});

describe("another session's many expunges at once", () => {
  test('21 of 50, apart: every EXPUNGE is valid when read, and the view closes up', async () => {
    const big = await startServer({ storage: { INBOX: { messages: Array.from({ length: 50 }, (_, i) => ({ raw: mail(`b${i + 1}`) })) } } });
    try {
      const watcher = await rawSession(big.port);
      const actor = await rawSession(big.port);
      await watcher.command('SELECT INBOX');
      await actor.command('SELECT INBOX');
      const doomed = [...Array.from({ length: 20 }, (_, i) => 2 * (i + 1)), 50];
      await actor.command(`UID STORE ${doomed.join(',')} +FLAGS.SILENT (\\Deleted)`);
      await actor.command('EXPUNGE');
      const heard = await watcher.command('NOOP');
      const all = Array.from({ length: 50 }, (_, i) => i + 1);
      const left = all.filter((uid) => !doomed.includes(uid));
      assert.deepEqual(applyExpunges(all, heard.filter((l) => l.endsWith(' EXPUNGE'))), left);
      const fetched = await watcher.command('FETCH 1:* (UID)');
      assert.deepEqual(
        fetched.filter((l) => l.startsWith('* ')),
        left.map((uid, i) => `* ${i + 1} FETCH (UID ${uid})`),
      );
    } finally {
      await big.server.stop();
    }
  });
});

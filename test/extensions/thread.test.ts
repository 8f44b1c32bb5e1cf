/**
 * THREAD=ORDEREDSUBJECT and THREAD=REFERENCES (RFC 5256 §3) over real
 * sockets, each expectation worked out by hand from the RFC's steps:
 * subject grouping, References chains with a missing parent (a dummy kept
 * at the top, pruned below it), In-Reply-To when there is no References,
 * loops and self-references, duplicate Message-IDs, merging by base subject
 * (reply under non-reply, two non-replies under a dummy, a message under a
 * dummy), UID THREAD, the response grammar (RFC §4 example), a chain deeper
 * than the call stack, and errors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatThreads, node, type ThreadNode } from '../../src/extensions/thread/tree.js';
import { rawSession, startServer } from '../helpers/server.js';
import type { RawClient } from '../helpers/raw-client.js';

interface Spec {
  subject?: string;
  id?: string;
  refs?: string;
  reply?: string;
  day: number;
}

/** A message sent on `day` November 2026 at 10:00 UTC. */
function raw(s: Spec): string {
  let h = `From: a@x.org\r\nDate: ${s.day} Nov 2026 10:00:00 +0000\r\n`;
  if (s.subject !== undefined) h += `Subject: ${s.subject}\r\n`;
  if (s.id) h += `Message-ID: <${s.id}>\r\n`;
  if (s.refs) h += `References: ${s.refs}\r\n`;
  if (s.reply) h += `In-Reply-To: ${s.reply}\r\n`;
  return `${h}\r\nbody\r\n`;
}

async function withMailbox(specs: Spec[], body: (c: RawClient) => Promise<void>, plugins = ['THREAD']): Promise<void> {
  const messages = specs.map((s, i) => ({ raw: raw(s), uid: 100 + i }));
  const { server, port } = await startServer({ plugins, storage: { INBOX: { messages } } as never });
  try {
    const c = await rawSession(port);
    c.write('S1 SELECT INBOX\r\n');
    await c.until('S1');
    await body(c);
    c.close();
  } finally {
    await server.stop();
  }
}

const run = async (c: RawClient, tag: string, command: string): Promise<string[]> => {
  c.write(`${tag} ${command}\r\n`);
  return c.until(tag);
};

test('RFC 5256 §4 response grammar: one member list per child chain, a list per child where there are several', () => {
  const n = (seq: number, ...children: ThreadNode[]): ThreadNode => {
    const x = node(null, seq, 0);
    x.message = { uid: seq * 10 } as never;
    x.children = children;
    return x;
  };
  // The RFC's example: (2)(3 6 (4 23)(44 7 96))
  const roots = [n(2), n(3, n(6, n(4, n(23)), n(44, n(7, n(96)))))];
  assert.equal(formatThreads(roots, false), '(2)(3 6 (4 23)(44 7 96))');
  assert.equal(formatThreads(roots, true), '(20)(30 60 (40 230)(440 70 960))');
  // A dummy shows only its children: ((5)(6)).
  const dummy = node(null, 0, 0);
  dummy.children = [n(5), n(6)];
  assert.equal(formatThreads([dummy], false), '((5)(6))');
});

test('ORDEREDSUBJECT: threads by base subject, first message the parent of all others, threads by first date', async () => {
  const specs: Spec[] = [
    { subject: 'hello', day: 1 },
    { subject: 'Re: hello', day: 3 },
    { subject: 'other', day: 2 },
    { subject: 'RE: Hello', day: 2 },
    { subject: '[fwd: other]', day: 4 },
    { subject: 'solo', day: 1 }, // the same date as message 1: mailbox order decides
  ];
  await withMailbox(specs, async (c) => {
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 THREAD=ORDEREDSUBJECT THREAD=REFERENCES', 'T2 OK Capability completed']);
    // HELLO: 1 (1 Nov), 4 (2 Nov), 2 (3 Nov) → (1 (4)(2)); OTHER: 3, 5 → (3 5); SOLO: (6).
    // Threads by the date of their first message: 1 and 6 both 1 Nov (1 first by number), then 3.
    assert.deepEqual(await run(c, 'A1', 'THREAD ORDEREDSUBJECT UTF-8 ALL'), ['* THREAD (1 (4)(2))(6)(3 5)', 'A1 OK Thread completed']);
    assert.deepEqual(await run(c, 'A2', 'UID THREAD ORDEREDSUBJECT UTF-8 ALL'), ['* THREAD (100 (103)(101))(105)(102 104)', 'A2 OK Thread completed']);
    // Only the searched messages are threaded: HELLO starts with 4 (2 Nov), OTHER with 3 (2 Nov too: 3 first).
    assert.deepEqual(await run(c, 'A3', 'THREAD ORDEREDSUBJECT UTF-8 2:5'), ['* THREAD (3 5)(4 2)', 'A3 OK Thread completed']);
    assert.deepEqual(await run(c, 'A4', 'THREAD orderedsubject US-ASCII DRAFT'), ['* THREAD', 'A4 OK Thread completed']);
  });
});

test('REFERENCES: chains, In-Reply-To, siblings by date, a dummy for a missing parent kept at the top', async () => {
  const specs: Spec[] = [
    { subject: 'topic', id: 'a@x', day: 1 },
    { subject: 'Re: topic', id: 'b@x', refs: '<a@x>', day: 2 },
    { subject: 'Re: topic', id: 'c@x', refs: '<a@x> <b@x>', day: 3 },
    { subject: 'Re: topic', id: 'd@x', refs: '<a@x>', day: 4 },
    { subject: 'lost', id: 'e@x', refs: '<missing@x>', day: 5 },
    { subject: 'Re: lost', id: 'f@x', refs: '<missing@x>', day: 6 },
    // No References: the first ID of In-Reply-To is the parent.
    { subject: 'Re: topic', id: 'g@x', reply: '<c@x> <b@x>', day: 7 },
    // The parent is missing and has only this child: no dummy at the top.
    { subject: 'alone', id: 'h@x', refs: '<nowhere@x>', day: 8 },
    // A missing message in the middle of a chain: pruned, the child moves up to a.
    { subject: 'Re: topic', id: 'i@x', refs: '<a@x> <gone@x>', day: 9 },
  ];
  await withMailbox(specs, async (c) => {
    // a: children b (2 Nov), d (4 Nov), i (9 Nov); b → c → g.
    assert.deepEqual(await run(c, 'B1', 'THREAD REFERENCES UTF-8 ALL'), ['* THREAD (1 (2 3 7)(4)(9))((5)(6))(8)', 'B1 OK Thread completed']);
    assert.deepEqual(await run(c, 'B2', 'UID THREAD REFERENCES UTF-8 ALL'), ['* THREAD (100 (101 102 106)(103)(108))((104)(105))(107)', 'B2 OK Thread completed']);
    // Without message 1 its children lose their parent: the dummy a has several children and stays.
    assert.deepEqual(await run(c, 'B3', 'THREAD REFERENCES UTF-8 2:4'), ['* THREAD ((2 3)(4))', 'B3 OK Thread completed']);
  });
});

test('REFERENCES: loops are not linked, a self-reference is ignored, a duplicate Message-ID belongs to the first message', async () => {
  const specs: Spec[] = [
    { subject: 'x1', id: 'x@x', refs: '<y@x>', day: 1 },
    { subject: 'y1', id: 'y@x', refs: '<x@x>', day: 2 },
    { subject: 'self', id: 'z@x', refs: '<z@x>', day: 3 },
    { subject: 'dup', id: 'dup@x', day: 4 },
    { subject: 'dup2', id: 'dup@x', day: 5 },
    { subject: 'child', id: 'k@x', refs: '<dup@x>', day: 6 },
    // A References chain that contradicts an earlier one (x under y): the existing link stays.
    { subject: 'w', id: 'w@x', refs: '<x@x> <y@x> <w0@x>', day: 7 },
  ];
  await withMailbox(specs, async (c) => {
    // 1 goes under y (then a dummy); 2 fills y and would go under x, its own child: not linked.
    // 7: x→y is refused (y would be under its own child), y→w0 is made, w under w0.
    // So 2 (y) has children 1 and dummy w0 → w0 is pruned and 7 moves up: 2 → [1, 7].
    assert.deepEqual(await run(c, 'C1', 'THREAD REFERENCES UTF-8 ALL'), ['* THREAD (2 (1)(7))(3)(4 6)(5)', 'C1 OK Thread completed']);
  });
});

test('REFERENCES step 5: threads with one base subject merge (reply under non-reply, dummy for two originals, message into a dummy)', async () => {
  const specs: Spec[] = [
    { subject: 'plan', id: 'p@x', day: 1 },
    { subject: 'Re: plan', id: 'q@x', day: 2 },
    { subject: 'idea', id: 'r@x', day: 3 },
    { subject: 'Idea', id: 's@x', day: 4 },
    { subject: 'x', id: 't@x', refs: '<gone@x>', day: 5 },
    { subject: 'Re: x', id: 'u@x', refs: '<gone@x>', day: 6 },
    { subject: 'Fwd: x', id: 'v@x', day: 7 },
    // Empty subjects never merge.
    { id: 'e1@x', day: 8 },
    { subject: 'Re:', id: 'e2@x', day: 9 },
  ];
  await withMailbox(specs, async (c) => {
    assert.deepEqual(await run(c, 'D1', 'THREAD REFERENCES UTF-8 ALL'), ['* THREAD (1 2)((3)(4))((5)(6)(7))(8)(9)', 'D1 OK Thread completed']);
  });
});

test('REFERENCES on a chain longer than the call stack is deep, and ORDEREDSUBJECT on the same', async () => {
  const n = 20_000;
  const specs: Spec[] = Array.from({ length: n }, (_, i) => ({ subject: i === 0 ? 'deep' : 'Re: deep', id: `m${i}@x`, refs: i === 0 ? undefined : `<m${i - 1}@x>`, day: 1 }));
  await withMailbox(specs, async (c) => {
    const want = `* THREAD (${Array.from({ length: n }, (_, i) => i + 1).join(' ')})`;
    assert.deepEqual(await run(c, 'E1', 'THREAD REFERENCES UTF-8 ALL'), [want, 'E1 OK Thread completed']);
    const lines = await run(c, 'E2', 'THREAD ORDEREDSUBJECT UTF-8 ALL');
    assert.equal(lines[0], `* THREAD (1 (${Array.from({ length: n - 1 }, (_, i) => i + 2).join(')(')}))`);
  });
});

test('THREAD errors: unknown algorithm and bad syntax are BAD, an unknown charset NO [BADCHARSET]; the session goes on', async () => {
  await withMailbox([{ subject: 'a', day: 1 }], async (c) => {
    for (const bad of ['THREAD', 'THREAD REFERENCES', 'THREAD REFERENCES UTF-8', 'THREAD XYZZY UTF-8 ALL', 'THREAD (REFERENCES) UTF-8 ALL', 'THREAD REFERENCES UTF-8 ALL)', 'UID THREAD REFERENCES UTF-8 BADKEY']) {
      assert.match((await run(c, 'F1', bad)).at(-1)!, /^F1 BAD /, bad);
    }
    assert.deepEqual(await run(c, 'F2', 'THREAD REFERENCES X-NO-SUCH ALL'), ['F2 NO [BADCHARSET (US-ASCII UTF-8)] Unsupported charset X-NO-SUCH']);
    assert.deepEqual(await run(c, 'F3', 'THREAD REFERENCES UTF-8 ALL'), ['* THREAD (1)', 'F3 OK Thread completed']);
  });
});

test('ORDEREDSUBJECT and REFERENCES group subjects after RFC 2047 decoding and i;unicode-casemap', async () => {
  const specs: Spec[] = [
    { subject: '=?UTF-8?Q?Caf=C3=A9?=', id: 'c1@x', day: 1 },
    { subject: 'Re: CAF\u00c9', id: 'c2@x', day: 2 },
    { subject: 'cafe\u0301 (fwd)', id: 'c3@x', day: 3 },
    { subject: 'cafe', id: 'c4@x', day: 4 },
  ];
  // Raw 8-bit UTF-8 subjects: the storage takes the message text as UTF-8.
  await withMailbox(specs, async (c) => {
    // CAFÉ three times (encoded, upper case, decomposed with a (fwd) trailer), CAFE apart.
    assert.deepEqual(await run(c, 'G1', 'THREAD ORDEREDSUBJECT UTF-8 ALL'), ['* THREAD (1 (2)(3))(4)', 'G1 OK Thread completed']);
    // No references: 1 is the original, 2 and 3 are a reply and a forward, so they go under it.
    assert.deepEqual(await run(c, 'G2', 'THREAD REFERENCES UTF-8 ALL'), ['* THREAD (1 (2)(3))(4)', 'G2 OK Thread completed']);
  });
});

test('a repeated THREAD answers the same; after an expunge and an append it answers the new mailbox', async () => {
  const specs: Spec[] = [
    { subject: 'topic', id: 'a@x', day: 1 },
    { subject: 'Re: topic', id: 'b@x', refs: '<a@x>', day: 2 },
    { subject: 'other', id: 'c@x', day: 3 },
    { subject: 'Re: topic', id: 'd@x', refs: '<a@x> <b@x>', day: 4 },
  ];
  const messages = specs.map((s, i) => ({ raw: raw(s), uid: 100 + i }));
  const { server, port } = await startServer({ plugins: ['THREAD'], storage: { INBOX: { messages } } as never });
  try {
    const c = await rawSession(port);
    await run(c, 'S1', 'SELECT INBOX');
    for (const tag of ['H1', 'H2']) assert.deepEqual(await run(c, tag, 'THREAD REFERENCES UTF-8 ALL'), ['* THREAD (1 2 4)(3)', `${tag} OK Thread completed`]);
    // Without message 1 (a), b is a root and d its child.
    await run(c, 'H3', 'STORE 1 +FLAGS.SILENT (\\Deleted)');
    assert.deepEqual(await run(c, 'H4', 'EXPUNGE'), ['* 1 EXPUNGE', 'H4 OK Expunge completed']);
    assert.deepEqual(await run(c, 'H5', 'THREAD REFERENCES UTF-8 ALL'), ['* THREAD (1 3)(2)', 'H5 OK Thread completed']);
    server.control.addMessage('INBOX', { raw: raw({ subject: 'Re: other', id: 'e@x', refs: '<c@x>', day: 5 }) });
    assert.deepEqual(await run(c, 'H6', 'NOOP'), ['* 4 EXISTS', '* 1 RECENT', 'H6 OK NOOP completed']);
    assert.deepEqual(await run(c, 'H7', 'THREAD REFERENCES UTF-8 ALL'), ['* THREAD (1 3)(2 4)', 'H7 OK Thread completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('REFERENCES differential: one message citing an unknown ID (a dummy, the general path) leaves every other thread as it was without it (the path for mailboxes with no dummy)', async () => {
  // A seeded mailbox of replies, forwards and repeated subjects, every reference to an earlier message.
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const specs: Spec[] = [];
  for (let i = 0; i < 120; i++) {
    const parent = i > 0 && rand(3) > 0 ? rand(i) : -1;
    const refs = parent < 0 ? undefined : `${specs[parent]!.refs ?? ''} <m${parent}@x>`.trim();
    const subject = `${['', 'Re: ', 'Fwd: ', 'Re: [list] '][rand(4)]}topic ${rand(15)}`;
    specs.push({ id: `m${i}@x`, refs, subject, day: 1 + rand(28) });
  }
  const threads = async (list: Spec[]): Promise<string> => {
    let line = '';
    await withMailbox(list, async (c) => {
      const out = await run(c, 'T1', 'THREAD REFERENCES UTF-8 ALL');
      assert.equal(out.at(-1), 'T1 OK Thread completed');
      line = out[0]!;
    });
    return line;
  };
  const without = await threads(specs);
  // The extra message is the last (sequence number 121), alone in its subject, under a reference nobody has:
  // its dummy parent is pruned (one child at the top), so it is a thread of its own.
  const withDummy = await threads([...specs, { id: 'extra@x', refs: '<missing@nowhere>', subject: 'unique subject', day: 15 }]);
  assert.match(without, /^\* THREAD \(/);
  assert.ok(withDummy.includes('(121)'), withDummy);
  assert.equal(withDummy.replace('(121)', ''), without);
});

/**
 * CONDSTORE and QRESYNC against Dovecot: the same messages in Rookery and in
 * a throwaway Dovecot, the same commands from two sessions on each, and what
 * each command tells the client must be the same: the HIGHESTMODSEQ values
 * reported (untagged `OK [HIGHESTMODSEQ n]` or in the tagged OK), EXISTS,
 * VANISHED/EXPUNGE, SEARCH and STATUS lines, and per message the FLAGS and
 * MODSEQ its FETCH responses carry (merged: Dovecot sends the MODSEQ of an
 * implicit \Seen in a second FETCH, Rookery in the same one) and which
 * items were answered.
 *
 * Covered: SELECT without CONDSTORE, the first enabling command (FETCH
 * MODSEQ) in the selected mailbox, FETCH BODY[] / RFC822.TEXT / BINARY[1]
 * setting \Seen before and after CONDSTORE is on, CHANGEDSINCE after them,
 * another session's STORE, APPEND into the selected mailbox by the session
 * and by another one (CONDSTORE: no HIGHESTMODSEQ; QRESYNC: one after the
 * EXISTS), expunges seen as VANISHED, and new mail inside IDLE.
 *
 * Left out of the comparison on purpose (differences by design, asserted
 * on Rookery's side at the end):
 * - Rookery sends HIGHESTMODSEQ with every SELECT (RFC 7162 §3.1.2.1, a
 *   MUST); Dovecot 2.3 only once CONDSTORE is on. The compared run uses
 *   `pluginOptions.CONDSTORE.selectHighestModseq: "enabled"`, which models
 *   Dovecot.
 * - UID: Dovecot leaves UID out of a CONDSTORE-only session's flag updates
 *   (`* 2 FETCH (MODSEQ (12) FLAGS (...))`), which §3.1's MUST requires;
 *   Rookery sends it. UIDs are not compared.
 * - Where the HIGHESTMODSEQ goes: Dovecot puts it in a tagged OK that has
 *   no code (`OK [HIGHESTMODSEQ 14] NOOP completed`), Rookery always in an
 *   untagged OK before it. The values are compared.
 * - RECENT counts (Rookery repeats `* n RECENT` with every EXISTS).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawClient } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';
import { findDovecot, loggedIn as connect, startDovecot } from './dovecot.js';
import { parseFetch, show } from './imap-values.js';

const MESSAGES = [1, 2, 3, 4, 5].map((n) => `From: a@example.com\r\nSubject: m${n}\r\n\r\nbody ${n}\r\n`);

let appendTag = 0;

/** APPEND with a synchronizing literal; returns every line of the answer. */
async function append(c: RawClient, raw: string): Promise<string[]> {
  const tag = `A${++appendTag}`;
  c.write(`${tag} APPEND INBOX {${raw.length}}\r\n`);
  const cont = await c.line(20_000);
  if (!cont.startsWith('+')) throw new Error(`APPEND refused: ${cont}`);
  c.write(`${raw}\r\n`);
  return c.until(tag, 20_000);
}

/**
 * What an answer tells the client, in a form both servers must share:
 * HIGHESTMODSEQ values, EXISTS, VANISHED/EXPUNGE/SEARCH/STATUS/ENABLED lines,
 * per message the union of its FETCH items (FLAGS without \Recent, MODSEQ,
 * the names of the others), and the tagged status with its MODIFIED code.
 */
function digest(lines: readonly string[]): string[] {
  const out: string[] = [];
  const fetched = new Map<number, Map<string, string>>();
  for (const line of lines) {
    const tagged = !line.startsWith('*') && !line.startsWith('+');
    for (const m of line.matchAll(/\[HIGHESTMODSEQ (\d+)\]/g)) out.push(`HIGHESTMODSEQ ${m[1]}`);
    if (tagged) {
      const status = /^\S+ (OK|NO|BAD)\b/.exec(line);
      const modified = /\[MODIFIED ([^\]]+)\]/.exec(line);
      out.push(`tagged ${status?.[1] ?? line}${modified ? ` MODIFIED ${modified[1]}` : ''}`);
      continue;
    }
    if (/^\* \d+ EXISTS$/.test(line) || /^\* (VANISHED|ENABLED|SEARCH|ESEARCH)\b/.test(line) || /^\* \d+ EXPUNGE$/.test(line)) out.push(line.trimEnd());
    else if (/^\* STATUS /.test(line)) out.push(line.replace(/"/g, '').trimEnd());
    const f = /^\* (\d+) FETCH /.exec(line);
    if (f) {
      const seq = Number(f[1]);
      const items = fetched.get(seq) ?? new Map<string, string>();
      for (const [label, item] of parseFetch(line)) {
        if (label === 'UID') continue;
        if (label === 'FLAGS' && item.val.t === 'list') {
          const flags = item.val.v.map(show).filter((x) => x !== '\\Recent').sort();
          items.set(label, `(${flags.join(' ')})`);
        } else if (label === 'MODSEQ') items.set(label, show(item.val));
        else items.set(label, item.val.t === 'str' ? `${item.val.v.length} octets` : show(item.val));
      }
      fetched.set(seq, items);
    }
  }
  for (const [seq, items] of [...fetched].sort((a, b) => a[0] - b[0])) {
    out.push(`${seq} FETCH ${[...items].sort((a, b) => a[0].localeCompare(b[0])).map(([k, v]) => `${k} ${v}`).join(' ')}`);
  }
  return out;
}

interface Side {
  name: string;
  port: number;
  user: string;
  password: string;
  main: RawClient;
  other: RawClient;
}

/** One step: a command of the session under test, `other:` of the second session, `append:`/`other-append:` an APPEND, `idle-append` new mail during IDLE. */
async function step(side: Side, line: string, tag: string): Promise<string[]> {
  if (line === 'append') return append(side.main, `From: a@example.com\r\nSubject: ${tag}\r\n\r\nnew\r\n`);
  if (line === 'other-append') {
    await append(side.other, `From: a@example.com\r\nSubject: ${tag}\r\n\r\nnew\r\n`);
    return [];
  }
  if (line === 'idle-append') {
    side.main.write(`${tag} IDLE\r\n`);
    const cont = await side.main.line(20_000);
    if (!cont.startsWith('+')) throw new Error(`${side.name}: IDLE refused: ${cont}`);
    await append(side.other, `From: a@example.com\r\nSubject: ${tag}\r\n\r\nidle\r\n`);
    // Both servers tell an idling client at once; wait for the HIGHESTMODSEQ that ends it.
    const seen: string[] = [];
    for (;;) {
      const l = await side.main.line(20_000);
      seen.push(l);
      if (l.includes('HIGHESTMODSEQ')) break;
    }
    side.main.write('DONE\r\n');
    return [...seen, ...(await side.main.until(tag, 20_000))];
  }
  const other = line.startsWith('other:');
  const c = other ? side.other : side.main;
  c.write(`${tag} ${other ? line.slice(6) : line}\r\n`);
  return c.until(tag, 20_000);
}

/** A session that has CONDSTORE off, then turns it on by FETCH MODSEQ; a second session changes things. */
const CONDSTORE_SCRIPT = [
  'SELECT INBOX',
  'other:SELECT INBOX',
  'FETCH 1 (FLAGS)',
  // Before CONDSTORE is on: the new FLAGS only.
  'FETCH 1 BODY[]',
  // The first CONDSTORE enabling command in the selected mailbox (§3.1).
  'FETCH 1 (MODSEQ)',
  // From now on an implicit \Seen comes with MODSEQ.
  'FETCH 2 BODY[]',
  'FETCH 3 RFC822.TEXT',
  'FETCH 4 BINARY[1]',
  'FETCH 4 BINARY[1]',
  'FETCH 5 BINARY.PEEK[1]',
  'UID FETCH 1:* (FLAGS) (CHANGEDSINCE 7)',
  'other:STORE 2 +FLAGS (\\Flagged)',
  'NOOP',
  'STORE 5 (UNCHANGEDSINCE 3) +FLAGS (\\Answered)',
  'STORE 5 +FLAGS (\\Answered)',
  'append',
  'other-append',
  'NOOP',
  'SEARCH MODSEQ 9',
];

/** Sessions with QRESYNC on: HIGHESTMODSEQ after new messages and expunges. */
const QRESYNC_SCRIPT = [
  'ENABLE QRESYNC',
  'other:ENABLE QRESYNC',
  'SELECT INBOX',
  'other:SELECT INBOX',
  'FETCH 6 BODY[TEXT]',
  'append',
  'NOOP',
  'other-append',
  'NOOP',
  'other:STORE 1 +FLAGS (\\Deleted)',
  'other:EXPUNGE',
  'NOOP',
  'other:STORE 1 -FLAGS (\\Flagged)',
  'NOOP',
  'idle-append',
  'FETCH 2 (FLAGS MODSEQ)',
];

/** What the compared answers must hold, so that agreeing on nothing cannot pass (by step index in the scripts). */
const MUST_HOLD: [string[], number, RegExp][] = [
  [CONDSTORE_SCRIPT, 0, /^\* 5 EXISTS \| tagged OK$/],
  [CONDSTORE_SCRIPT, 3, /^tagged OK \| 1 FETCH BODY\[\] 44 octets FLAGS \(\\Seen\)$/],
  [CONDSTORE_SCRIPT, 4, /^HIGHESTMODSEQ \d+ \| tagged OK \| 1 FETCH MODSEQ/],
  [CONDSTORE_SCRIPT, 5, /2 FETCH BODY\[\] 44 octets FLAGS \(\\Seen\) MODSEQ \(\d+\)$/],
  [CONDSTORE_SCRIPT, 7, /4 FETCH BINARY\[1\] 8 octets FLAGS \(\\Seen\) MODSEQ \(\d+\)$/],
  [QRESYNC_SCRIPT, 5, /^\* 8 EXISTS \| HIGHESTMODSEQ \d+ \| tagged OK$/],
  [QRESYNC_SCRIPT, 8, /^\* 9 EXISTS \| HIGHESTMODSEQ \d+ \| tagged OK$/],
  [QRESYNC_SCRIPT, 11, /^\* VANISHED 1 \| HIGHESTMODSEQ \d+ \| tagged OK$/],
  [QRESYNC_SCRIPT, 14, /EXISTS \| HIGHESTMODSEQ \d+ \| tagged OK$/],
];

test('CONDSTORE and QRESYNC tell the client what Dovecot tells it (HIGHESTMODSEQ, implicit \\Seen, APPEND into the selected mailbox)', { timeout: 120_000 }, async (t) => {
  if (findDovecot() === null) {
    t.skip('dovecot not installed (Debian: apt-get install dovecot-imapd)');
    return;
  }
  const plugins = ['CONDSTORE', 'QRESYNC', 'ENABLE', 'BINARY', 'IDLE', 'UIDPLUS'];
  const { server, port } = await startServer({ plugins, pluginOptions: { CONDSTORE: { selectHighestModseq: 'enabled' } } });
  const dovecot = (await startDovecot().catch(async (e: unknown) => {
    await server.stop();
    throw e;
  }))!;
  const sides: Side[] = [];
  try {
    for (const [name, p, user, password] of [
      ['rookery', port, 'testuser', 'testpass'],
      ['dovecot', dovecot.port, 'u', 'pass'],
    ] as const) {
      const main = await connect(p, user, password);
      for (const raw of MESSAGES) await append(main, raw);
      sides.push({ name, port: p, user, password, main, other: await connect(p, user, password) });
    }
    let n = 0;
    for (const script of [CONDSTORE_SCRIPT, QRESYNC_SCRIPT]) {
      if (script === QRESYNC_SCRIPT) {
        // QRESYNC is enabled before anything is selected: fresh sessions.
        for (const side of sides) {
          side.main.close();
          side.other.close();
          side.main = await connect(side.port, side.user, side.password);
          side.other = await connect(side.port, side.user, side.password);
        }
      }
      for (const [i, line] of script.entries()) {
        const tag = `T${++n}`;
        const answers = await Promise.all(sides.map(async (side) => digest(await step(side, line, tag))));
        assert.deepEqual(answers[0], answers[1], `${line}\nrookery: ${answers[0]!.join(' | ')}\ndovecot: ${answers[1]!.join(' | ')}`);
        for (const [s, at, pattern] of MUST_HOLD) if (s === script && at === i) assert.match(answers[0]!.join(' | '), pattern, line);
      }
    }
    for (const side of sides) {
      side.main.close();
      side.other.close();
    }
  } finally {
    await server.stop();
    await dovecot.stop();
  }

  // By default Rookery follows RFC 7162 §3.1.2.1 where Dovecot 2.3 does not: HIGHESTMODSEQ with every SELECT.
  const strict = await startServer({ plugins });
  try {
    const c = await connect(strict.port, 'testuser', 'testpass');
    c.write('S1 SELECT INBOX\r\n');
    const lines = await c.until('S1', 20_000);
    assert.ok(lines.includes(`* OK [HIGHESTMODSEQ ${strict.server.store.get('INBOX')!.highestModseq}] Highest`), lines.join('\n'));
    c.close();
  } finally {
    await strict.server.stop();
  }
});

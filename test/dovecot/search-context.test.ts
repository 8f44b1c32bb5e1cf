/**
 * WITHIN, PARTIAL and CONTEXT=SEARCH against Dovecot: the same messages
 * (same flags and INTERNALDATEs, hours to seconds old) in Rookery and in a
 * throwaway Dovecot, then the same commands to both — OLDER/YOUNGER
 * searches, PARTIAL windows with MIN/MAX/COUNT, and live `RETURN (UPDATE)`
 * results while the session and a second session change flags, append and
 * expunge — and every ESEARCH/SEARCH line must be the same. ESEARCH data
 * items are compared as a set (Dovecot writes PARTIAL before COUNT).
 *
 * Left out on purpose: negative PARTIAL ranges (Dovecot 2.3 implements
 * RFC 5267's PARTIAL, not RFC 9394's `-1:-10`) and CONTEXT=SORT, which
 * Dovecot does not have. Reversed ranges are in: both answer `6:4` as `4:6`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawClient } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';
import { findDovecot, loggedIn as connect, startDovecot } from './dovecot.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An RFC 3501 date-time in UTC `secondsAgo` before now. */
function dateTime(secondsAgo: number): string {
  const d = new Date(Date.now() - secondsAgo * 1000);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

const AGES = [86400 * 3, 86400, 7200, 3000, 900, 600, 120, 30, 20, 10];

async function load(c: RawClient): Promise<void> {
  let n = 0;
  for (const age of AGES) {
    n++;
    const raw = Buffer.from(`From: a@example.com\r\nSubject: m${n}\r\n\r\nbody ${n}\r\n`);
    const flags = n % 3 === 0 ? '(\\Seen) ' : n % 3 === 1 ? '(\\Flagged) ' : '';
    c.write(`A${n} APPEND INBOX ${flags}"${dateTime(age)}" {${raw.length}}\r\n`);
    await c.line(20_000);
    c.write(Buffer.concat([raw, Buffer.from('\r\n')]));
    const lines = await c.until(`A${n}`, 20_000);
    if (!lines.at(-1)!.startsWith(`A${n} OK`)) throw new Error(`APPEND: ${lines.join(' | ')}`);
  }
}

/** SEARCH and ESEARCH lines, ESEARCH data items as sorted `NAME value` pairs. */
function results(lines: string[]): string[] {
  return lines
    .filter((l) => /^\* (SEARCH|ESEARCH)\b/.test(l))
    .map((l) => {
      const m = /^\* ESEARCH (\(TAG "[^"]*"\))( UID)?(.*)$/.exec(l.trimEnd());
      if (!m) return l.trimEnd();
      const items = [...m[3]!.matchAll(/ ([A-Z]+) (\([^)]*\)|\S+)/g)].map((x) => `${x[1]} ${x[2]}`).sort();
      return `* ESEARCH ${m[1]}${m[2] ?? ''} ${items.join(' ')}`.trimEnd();
    });
}

/** Commands of the session under test; `other:` ones go to a second session. */
const SCRIPT = [
  'SEARCH YOUNGER 3600',
  'SEARCH OLDER 3600',
  'UID SEARCH YOUNGER 700 NOT YOUNGER 60',
  'SEARCH OR OLDER 80000 YOUNGER 25',
  'SEARCH RETURN (COUNT) OLDER 100',
  'UID SEARCH RETURN (PARTIAL 1:3) ALL',
  'UID SEARCH RETURN (PARTIAL 4:6) ALL',
  'SEARCH RETURN (PARTIAL 2:4 COUNT MIN MAX) UNSEEN',
  'UID SEARCH RETURN (PARTIAL 8:20) ALL',
  'UID SEARCH RETURN (PARTIAL 50:60) ALL',
  'UID SEARCH RETURN (PARTIAL 1:2) DRAFT',
  'UID SEARCH RETURN (PARTIAL 2:3 SAVE) FLAGGED',
  'UID SEARCH UID $',
  'UID SEARCH RETURN (UPDATE SAVE) SEEN',
  'CANCELUPDATE "T14"',
  'UID SEARCH RETURN (UPDATE) UNSEEN',
  'SEARCH RETURN (UPDATE COUNT) FLAGGED',
  'UID STORE 1:3 +FLAGS (\\Seen)',
  'other:UID STORE 4:5 -FLAGS (\\Flagged \\Seen)',
  'NOOP',
  'other:UID STORE 6 +FLAGS (\\Flagged)',
  'other:UID STORE 2 -FLAGS (\\Seen)',
  'NOOP',
  'other:UID STORE 7 +FLAGS (\\Deleted)',
  'other:EXPUNGE',
  'NOOP',
  'CANCELUPDATE "T17"',
  'other:UID STORE 8 +FLAGS (\\Flagged)',
  'NOOP',
  'UID SEARCH RETURN (PARTIAL 6:4) ALL',
  'SEARCH RETURN (PARTIAL 3:1 COUNT) UNSEEN',
  'SEARCH RETURN (PARTIAL 40:30) ALL',
];

test('WITHIN, PARTIAL and CONTEXT=SEARCH answer like Dovecot', { timeout: 120_000 }, async (t) => {
  if (findDovecot() === null) {
    t.skip('dovecot not installed (Debian: apt-get install dovecot-imapd)');
    return;
  }
  const dovecot = (await startDovecot())!;
  const { server, port } = await startServer({ plugins: ['ESEARCH', 'SEARCHRES', 'WITHIN', 'PARTIAL', 'CONTEXT'] });
  try {
    const sides = [
      { name: 'rookery', main: await connect(port, 'testuser', 'testpass'), other: await connect(port, 'testuser', 'testpass') },
      { name: 'dovecot', main: await connect(dovecot.port, 'u', 'pass'), other: await connect(dovecot.port, 'u', 'pass') },
    ];
    for (const side of sides) {
      await load(side.main);
      for (const c of [side.main, side.other]) {
        c.write('S1 SELECT INBOX\r\n');
        await c.until('S1', 20_000);
      }
    }
    let n = 0;
    for (const line of SCRIPT) {
      const tag = `T${++n}`;
      const other = line.startsWith('other:');
      const command = other ? line.slice(6) : line;
      const answers = await Promise.all(
        sides.map(async (side) => {
          const c = other ? side.other : side.main;
          c.write(`${tag} ${command}\r\n`);
          const lines = await c.until(tag, 20_000);
          assert.match(lines.at(-1)!, new RegExp(`^${tag} OK`), `${side.name}: ${command}: ${lines.join(' | ')}`);
          return results(lines);
        }),
      );
      assert.deepEqual(answers[0], answers[1], `${command}`);
    }
    for (const side of sides) {
      side.main.close();
      side.other.close();
    }
  } finally {
    await server.stop();
    await dovecot.stop();
  }
});

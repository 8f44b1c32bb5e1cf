/**
 * Sync bench (CONDSTORE/QRESYNC, RFC 7162) on one mailbox of 100,000 small
 * messages (`--count N` or BENCH_MAILBOX_COUNT): what a resynchronizing
 * client costs when little changed.
 *
 * - `FETCH 1:* (FLAGS) (CHANGEDSINCE m)` after 10 flag changes by the control
 *   API: answered from the per-mailbox change log, O(changes).
 * - `SELECT INBOX (QRESYNC (uidvalidity m))` after 10 expunges since m:
 *   VANISHED (EARLIER) from the expunge log.
 *
 * Times are from writing the command to reading its tagged response over
 * loopback (median of 5 after one warm-up); each answer is checked (10 FETCH
 * lines, the 10 vanished UIDs), so a fast wrong answer does not pass.
 */
import { createServer } from '../src/index.js';
import { RawClient, fmt, median, ms, table } from './client.js';

const TARGET_MS = 5;
const RUNS = 5;

function small(i: number): string {
  return `From: a${i}@example.com\r\nTo: b@example.com\r\nSubject: m${i}\r\nMessage-ID: <m${i}@x>\r\n\r\nhi ${i}\r\n`;
}

function countOption(args: string[]): number {
  const i = args.findIndex((a) => a === '--count' || a.startsWith('--count='));
  const raw = i < 0 ? process.env.BENCH_MAILBOX_COUNT : args[i]!.includes('=') ? args[i]!.split('=')[1] : args[i + 1];
  const n = Number(raw ?? 100_000);
  if (!Number.isSafeInteger(n) || n < 100) throw new Error(`sync bench: bad message count ${raw}`);
  return n;
}

export async function run(args: string[] = []): Promise<void> {
  const n = countOption(args);
  const messages = Array.from({ length: n }, (_, i) => small(i));
  const server = createServer({ storage: { INBOX: { messages }, '': {} }, plugins: ['QRESYNC', 'ENABLE'], port: 0 });
  const { imap } = await server.start();
  const rows: string[][] = [['operation', 'ms', 'target', 'result', 'answer']];
  const problems: string[] = [];
  const timed = async (label: string, c: RawClient, cmd: string, check: (lines: string[]) => string): Promise<void> => {
    const durations: number[] = [];
    let lines: string[] = [];
    for (let i = 0; i <= RUNS; i++) {
      const t = process.hrtime.bigint();
      lines = (await c.ok(cmd)).lines;
      if (i > 0) durations.push(ms(t));
    }
    let note: string;
    try {
      note = check(lines);
    } catch (err) {
      note = `WRONG: ${(err as Error).message}`;
      problems.push(`${label}: ${note}`);
    }
    const d = median(durations);
    rows.push([label, `${fmt(d, 2)} (median of ${RUNS})`, `<= ${TARGET_MS}`, d <= TARGET_MS ? 'PASS' : 'MISS', note]);
  };

  const mailbox = server.store.get('INBOX')!;
  const step = Math.floor(n / 10);
  const picked = Array.from({ length: 10 }, (_, i) => 1 + i * step + 7);

  const a = await RawClient.connect(imap.host, imap.port);
  await a.ok('LOGIN testuser testpass');
  await a.ok('ENABLE QRESYNC');
  await a.ok('SELECT INBOX');
  const m = mailbox.highestModseq;
  // Ten flag changes, each its own control-API call (ten MODSEQs).
  for (const uid of picked) server.control.setFlags('INBOX', { uids: [uid], flags: ['\\Flagged'], mode: 'add' });
  await a.ok('NOOP');
  await timed(`FETCH 1:* (FLAGS) (CHANGEDSINCE m), 10 changed of ${n.toLocaleString('en-US')}`, a, `FETCH 1:* (FLAGS) (CHANGEDSINCE ${m})`, (lines) => {
    const got = lines.filter((l) => / FETCH \(/.test(l)).length;
    if (got !== 10) throw new Error(`${got} FETCH, expected 10`);
    return '10 FETCH with MODSEQ';
  });

  const m2 = mailbox.highestModseq;
  const gone = picked.map((uid) => uid + 1);
  for (const uid of gone) server.control.expungeMessages('INBOX', { uids: [uid] });
  const b = await RawClient.connect(imap.host, imap.port);
  await b.ok('LOGIN testuser testpass');
  await b.ok('ENABLE QRESYNC');
  await timed(`SELECT (QRESYNC (uidvalidity m)), 10 expunged of ${n.toLocaleString('en-US')}`, b, `SELECT INBOX (QRESYNC (${mailbox.uidvalidity} ${m2}))`, (lines) => {
    const v = lines.find((l) => l.startsWith('* VANISHED (EARLIER) '));
    const want = gone.join(',');
    if (v !== `* VANISHED (EARLIER) ${want}`) throw new Error(`${v ?? 'no VANISHED'}, expected ${want}`);
    return '10 UIDs in VANISHED (EARLIER)';
  });

  await a.ok('LOGOUT').catch(() => undefined);
  await b.ok('LOGOUT').catch(() => undefined);
  a.close();
  b.close();
  await server.stop();
  table('sync (CONDSTORE/QRESYNC; one raw-socket client on loopback; ms = command written -> tagged response read)', rows);
  if (problems.length) throw new Error(`sync bench: wrong answers:\n  ${problems.join('\n  ')}`);
}

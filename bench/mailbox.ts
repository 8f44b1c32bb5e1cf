/**
 * Mailbox bench: one mailbox of 100,000 small messages (`--count N` or
 * BENCH_MAILBOX_COUNT) driven over a raw loopback socket.
 *
 * Each time is measured from writing the command to reading its tagged
 * response, on loopback, by one client: the server's work plus moving the
 * response over the socket and splitting it into lines. Read-only commands
 * run three times (median shown, and the first, cold run); STORE and EXPUNGE change the mailbox and
 * run once. Every step checks its answer (counts of FETCH lines, SEARCH
 * hits, EXPUNGE responses), so a fast wrong answer does not pass.
 */
import { createServer } from '../src/index.js';
import { RawClient, fmt, median, ms, table } from './client.js';

const TARGET_MS = 100;

function small(i: number): string {
  return `From: a${i}@example.com\r\nTo: b@example.com\r\nSubject: m${i}\r\nMessage-ID: <m${i}@x>\r\n\r\nhi ${i}\r\n`;
}

function countOption(args: string[]): number {
  const i = args.findIndex((a) => a === '--count' || a.startsWith('--count='));
  const raw = i < 0 ? process.env.BENCH_MAILBOX_COUNT : args[i]!.includes('=') ? args[i]!.split('=')[1] : args[i + 1];
  const n = Number(raw ?? 100_000);
  if (!Number.isSafeInteger(n) || n < 4) throw new Error(`mailbox bench: bad message count ${raw}`);
  return n;
}

export async function run(args: string[] = []): Promise<void> {
  const count = countOption(args);
  const rssBefore = process.memoryUsage().rss;
  const tBuild = process.hrtime.bigint();
  const messages = Array.from({ length: count }, (_, i) => small(i));
  const server = createServer({ storage: { INBOX: { messages }, '': {} }, plugins: 'all', port: 0 });
  const { imap } = await server.start();
  const startMs = ms(tBuild);
  const c = await RawClient.connect(imap.host, imap.port);
  await c.ok('LOGIN testuser testpass');

  const rows: string[][] = [['operation', 'ms', 'target', 'result', 'answer']];
  const problems: string[] = [];
  /** Runs `cmd` `times` times; `check` looks at the last answer's untagged lines and returns a note or throws. */
  const step = async (label: string, cmd: string, times: number, check: (lines: string[]) => string): Promise<void> => {
    const durations: number[] = [];
    let lines: string[] = [];
    for (let i = 0; i < times; i++) {
      const t = process.hrtime.bigint();
      const r = await c.ok(cmd);
      durations.push(ms(t));
      lines = r.lines;
    }
    let note: string;
    try {
      note = check(lines);
    } catch (err) {
      note = `WRONG: ${(err as Error).message}`;
      problems.push(`${label}: ${(err as Error).message}`);
    }
    const d = median(durations);
    const shown = times > 1 ? `${fmt(d, 1)} (median of ${times}; first ${fmt(durations[0]!, 1)})` : fmt(d, 1);
    rows.push([label, shown, `<= ${TARGET_MS}`, d <= TARGET_MS ? 'PASS' : 'MISS', note]);
  };
  const expect = (what: string, got: number, want: number): string => {
    if (got !== want) throw new Error(`${got} ${what}, expected ${want}`);
    return `${got.toLocaleString('en-US')} ${what}`;
  };
  const searchHits = (lines: string[]): number => {
    const s = lines.find((l) => l.startsWith('* SEARCH'));
    if (!s) throw new Error('no * SEARCH');
    return s.split(' ').length - 2;
  };
  const fetches = (lines: string[]): number => lines.filter((l) => / FETCH \(/.test(l)).length;

  const n = count;
  const k = Math.min(10_000, Math.floor(n / 4));
  await step(`SELECT INBOX (${n.toLocaleString('en-US')} msgs)`, 'SELECT INBOX', 3, (lines) =>
    expect('EXISTS', Number(lines.find((l) => l.endsWith(' EXISTS'))?.split(' ')[1]), n),
  );
  await step('FETCH 1:* (FLAGS)', 'FETCH 1:* (FLAGS)', 3, (lines) => expect('FETCH', fetches(lines), n));
  await step('FETCH 1:* (UID FLAGS)', 'FETCH 1:* (UID FLAGS)', 3, (lines) => expect('FETCH', fetches(lines), n));
  await step('SEARCH UNSEEN', 'SEARCH UNSEEN', 3, (lines) => expect('hits', searchHits(lines), n));
  await step(`UID STORE ${k} +FLAGS.SILENT (\\Seen)`, `UID STORE 1:${k} +FLAGS.SILENT (\\Seen)`, 1, (lines) => expect('FETCH', fetches(lines), 0));
  await step(`UID STORE ${k} +FLAGS (\\Seen)`, `UID STORE ${k + 1}:${2 * k} +FLAGS (\\Seen)`, 1, (lines) => expect('FETCH', fetches(lines), k));
  await step(`UID STORE ${k} +FLAGS.SILENT (\\Deleted)`, `UID STORE ${2 * k + 1}:${3 * k} +FLAGS.SILENT (\\Deleted)`, 1, () => 'silent');
  await step(`EXPUNGE ${k}`, 'EXPUNGE', 1, (lines) => expect('EXPUNGE', lines.filter((l) => l.endsWith(' EXPUNGE')).length, k));
  await step('SEARCH UNSEEN (after)', 'SEARCH UNSEEN', 3, (lines) => expect('hits', searchHits(lines), n - 3 * k));
  await step('UID SEARCH UNSEEN (after)', 'UID SEARCH UNSEEN', 1, (lines) => expect('hits', searchHits(lines), n - 3 * k));

  await c.ok('LOGOUT').catch(() => undefined);
  c.close();
  const rss = process.memoryUsage().rss;
  await server.stop();
  rows.push([`(setup: build store + start)`, fmt(startMs, 1), '', '', '']);
  rows.push([`process RSS`, `${(rss / 2 ** 20).toFixed(0)} MiB (before store: ${(rssBefore / 2 ** 20).toFixed(0)} MiB)`, '', '', '']);
  table('mailbox (one raw-socket client on loopback; ms = command written -> tagged response read)', rows);
  if (problems.length) throw new Error(`mailbox bench: wrong answers:\n  ${problems.join('\n  ')}`);
}

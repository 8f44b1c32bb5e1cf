/** Mailbox bench: one mailbox of 100,000 small messages driven over a raw socket. */
import { createServer } from '../src/index.js';
import { RawClient, fmt, ms, table } from './client.js';

const COUNT = Number(process.env.BENCH_MAILBOX_COUNT ?? 100_000);
const TARGET_MS = 100;

function small(i: number): string {
  return `From: a${i}@example.com\r\nTo: b@example.com\r\nSubject: m${i}\r\nMessage-ID: <m${i}@x>\r\n\r\nhi ${i}\r\n`;
}

export async function run(): Promise<void> {
  const rssBefore = process.memoryUsage().rss;
  const tBuild = process.hrtime.bigint();
  const messages = Array.from({ length: COUNT }, (_, i) => small(i));
  const server = createServer({ storage: { INBOX: { messages }, '': {} }, plugins: 'all', port: 0 });
  const { imap } = await server.start();
  const startMs = ms(tBuild);
  const c = await RawClient.connect(imap.host, imap.port);
  await c.ok('LOGIN testuser testpass');
  c.keepLines = false;

  const rows: string[][] = [['operation', 'ms', 'target', 'result']];
  const step = async (label: string, cmd: string, check?: (lines: string[]) => string | null): Promise<void> => {
    c.keepLines = check !== undefined;
    const t = process.hrtime.bigint();
    const r = await c.ok(cmd);
    const d = ms(t);
    const note = check ? check(r.lines) : null;
    rows.push([label + (note ? ` [${note}]` : ''), fmt(d, 1), `<= ${TARGET_MS}`, d <= TARGET_MS ? 'PASS' : 'MISS']);
  };

  const n = COUNT;
  const k = Math.min(10_000, Math.floor(n / 4));
  await step(`SELECT INBOX (${n.toLocaleString('en-US')} msgs)`, 'SELECT INBOX');
  await step('FETCH 1:* (UID FLAGS)', 'FETCH 1:* (UID FLAGS)');
  await step('SEARCH UNSEEN', 'SEARCH UNSEEN', (lines) => {
    const s = lines.find((l) => l.startsWith('* SEARCH'));
    return s ? `${s.split(' ').length - 2} hits` : 'no SEARCH';
  });
  await step(`UID STORE ${k} +FLAGS.SILENT (\\Seen)`, `UID STORE 1:${k} +FLAGS.SILENT (\\Seen)`);
  await step(`UID STORE ${k} +FLAGS (\\Seen)`, `UID STORE ${k + 1}:${2 * k} +FLAGS (\\Seen)`, (lines) => `${lines.length} untagged`);
  await step(`UID STORE ${k} +FLAGS.SILENT (\\Deleted)`, `UID STORE ${2 * k + 1}:${3 * k} +FLAGS.SILENT (\\Deleted)`);
  await step(`EXPUNGE ${k}`, 'EXPUNGE', (lines) => `${lines.filter((l) => l.endsWith(' EXPUNGE')).length} expunged`);
  await step('SEARCH UNSEEN (after)', 'SEARCH UNSEEN', (lines) => {
    const s = lines.find((l) => l.startsWith('* SEARCH'));
    return s ? `${s.split(' ').length - 2} hits` : 'no SEARCH';
  });

  await c.ok('LOGOUT').catch(() => undefined);
  c.close();
  const rss = process.memoryUsage().rss;
  await server.stop();
  rows.push([`(setup: build store + start)`, fmt(startMs, 1), '', '']);
  rows.push([`process RSS`, `${(rss / 2 ** 20).toFixed(0)} MiB (before store: ${(rssBefore / 2 ** 20).toFixed(0)} MiB)`, '', '']);
  table('mailbox (single run, one raw-socket client)', rows);
}

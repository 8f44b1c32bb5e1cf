/**
 * `bench sessions`: RSS per idle authenticated session (issue 37's budget,
 * 12 KiB; issue 20 had 16), with the default options (transcripts and the client checker
 * on) and with either or both off, each in a server process of its own,
 * the idling clients in another (bench/fleet.ts, the scoreboard's fleet:
 * LOGIN, SELECT INBOX, IDLE). `--count N` sessions (default 10,000).
 *
 * `--heap` also writes heap snapshots of a default server before and after
 * min(N, 2,000) sessions and prints where their bytes are: what the
 * sessions added by kind and constructor, and the retained size (dominator
 * tree) of a session's parts. Run this first when the figure moves.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, table } from './client.js';
import { FLEET_ENV, askChild } from './fleet.js';
import { heapGrowth, retainedBy } from './heap-summary.js';

const VARIANTS: { label: string; options: object }[] = [
  { label: 'default (transcripts, client checker)', options: {} },
  { label: 'transcript: false', options: { transcript: false } },
  { label: 'clientCheck: "off"', options: { clientCheck: 'off' } },
  { label: 'both off', options: { transcript: false, clientCheck: 'off' } },
];

/** A session's parts, by constructor, whose retained size `--heap` prints. */
const PARTS = ['ImapSession', 'Socket', 'SelectedMailbox', 'CommandReader', 'SessionRecorder', 'SessionChecker', 'ResponseShaper', 'Generator'];

function countOption(args: string[]): number {
  const i = args.findIndex((a) => a === '--count' || a.startsWith('--count='));
  const raw = i < 0 ? '10000' : args[i]!.includes('=') ? args[i]!.split('=')[1] : args[i + 1];
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1 || n > 20_000) throw new Error(`sessions bench: --count takes 1 to 20,000 sessions, got ${raw}`);
  return n;
}

function forkRole(role: 'server' | 'clients', options: object = {}): ChildProcess {
  return fork(fileURLToPath(new URL('./fleet.js', import.meta.url)), [], {
    env: { ...process.env, [FLEET_ENV]: role, BENCH_SERVER_OPTIONS: JSON.stringify(options) },
    execArgv: role === 'server' ? ['--expose-gc'] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** One server with `count` idling clients: `during` runs with them connected, `before` without. */
async function fleet<T>(options: object, count: number, before: (server: ChildProcess) => Promise<T>, during: (server: ChildProcess, first: T) => Promise<T>): Promise<[T, T]> {
  const server = forkRole('server', options);
  const port = await askChild<number>(server, null, 'port');
  const clients = forkRole('clients');
  try {
    await askChild(clients, null, 'up');
    const a = await before(server);
    await askChild(clients, { ask: 'connect', port, count }, 'connected');
    return [a, await during(server, a)];
  } finally {
    clients.send({ ask: 'stop' });
    server.send({ ask: 'stop' });
  }
}

export async function run(args: string[] = []): Promise<void> {
  const count = countOption(args);
  const rows: string[][] = [['server options', 'RSS before', 'RSS with sessions', 'per session']];
  for (const v of VARIANTS) {
    const rss = (server: ChildProcess): Promise<number> => askChild<number>(server, { ask: 'rss' }, 'rss');
    const [before, after] = await fleet(v.options, count, rss, rss);
    rows.push([v.label, `${fmt(before / 2 ** 20, 1)} MiB`, `${fmt(after / 2 ** 20, 1)} MiB`, `${fmt((after - before) / count / 1024, 1)} KiB`]);
  }
  table(`sessions: RSS per idle authenticated session, ${count.toLocaleString('en-US')} sessions (LOGIN, SELECT, IDLE), target <= 12 KiB (issue 37)`, rows);

  if (!args.includes('--heap')) return;
  const units = Math.min(count, 2_000);
  const dir = mkdtempSync(join(tmpdir(), 'rookery-sessions-heap-'));
  try {
    const snap = (name: string) => (server: ChildProcess): Promise<string> => askChild<string>(server, { ask: 'heap', file: join(dir, name) }, 'heap');
    const [empty, full] = await fleet({}, units, snap('0.heapsnapshot'), snap(`${units}.heapsnapshot`));
    const growth = heapGrowth(empty, full, units);
    const total = growth.reduce((n, r) => n + r.bytes, 0);
    table(
      `sessions --heap: what ${units.toLocaleString('en-US')} idle sessions added to the heap, per session (${fmt(total / 1024, 2)} KiB in all), by kind`,
      [['kind:constructor', 'count', 'bytes'], ...growth.slice(0, 30).map((r) => [r.kind, fmt(r.count), fmt(r.bytes, 0)])],
    );
    const parts = retainedBy(full, PARTS, units);
    table(
      'sessions --heap: retained size of a session\'s parts (an instance inside another counts in both)',
      [['constructor', 'instances per session', 'retained bytes per session'], ...PARTS.map((p) => [p, fmt(parts.get(p)?.count ?? 0), fmt(parts.get(p)?.bytes ?? 0, 0)])],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

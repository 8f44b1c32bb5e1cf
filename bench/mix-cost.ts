/**
 * What each default feature costs the IMAP mix (issue 37), as the server's
 * own CPU time per command rather than a rate. The scoreboard's mix runs
 * clients and server on one event loop, so the rate moves with the machine
 * by 5-10% from run to run, as much as the features this bench weighs.
 * Here each configuration is a Rookery of its own in a child process, the
 * bench clients (the mix of bench/imap.ts) run in this process, and the
 * figure is the CPU time of the server's main thread (Linux:
 * /proc/<pid>/task/<pid>/stat, 10 ms ticks) per command, beside the CPU
 * time of all its threads (GC helpers, the thread pool) and the rate.
 * Configurations take turns, in alternating order, and the median of
 * their rounds is printed with every round: on the 2-core VM two servers
 * of one build differed by 0-3 us in the median, and a round by up to 10.
 *
 *   npm run bench -- mix-cost [--seconds=S] [--rounds=R] [--clients=N] [--configs=default,transcript-off,check-off,both-off]
 *
 * Every configuration is `plugins: "all"` and the server's defaults, then:
 * `transcript-off` (`transcript: false`), `check-off` (`clientCheck:
 * "off"`), `both-off` (both), `redact-off` (`transcript: {redact:
 * false}`), `no-events` (`events: {backlog: 0}`).
 *
 * This file is also the child process (ROOKERY_BENCH_MIX_COST=server,
 * with the configuration's options as JSON in ROOKERY_BENCH_MIX_OPTIONS);
 * imported any other way it does nothing.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer, type ServerOptions } from '../src/index.js';
import { fmt, median, positiveOption, table } from './client.js';
import { askChild } from './fleet.js';
import { drive, seedMessages, type Target } from './imap.js';

const ROLE_ENV = 'ROOKERY_BENCH_MIX_COST';
const OPTIONS_ENV = 'ROOKERY_BENCH_MIX_OPTIONS';
/** The mix's mailbox at the start, as in the scoreboard. */
const SEED = 200;

/** The configurations by name: what each changes of the defaults. */
const CONFIGS: ReadonlyMap<string, Partial<ServerOptions>> = new Map<string, Partial<ServerOptions>>([
  ['default', {}],
  ['transcript-off', { transcript: false }],
  ['check-off', { clientCheck: 'off' }],
  ['both-off', { transcript: false, clientCheck: 'off' }],
  ['redact-off', { transcript: { redact: false } }],
  ['no-events', { events: { backlog: 0 } }],
]);

/** CPU microseconds of the server: its main thread (null where /proc does not tell) and all its threads. */
interface CpuReading {
  main: number | null;
  all: number;
}

function readCpu(): CpuReading {
  const usage = process.cpuUsage();
  const all = usage.user + usage.system;
  try {
    // Fields after the command name: state is the first, utime the 12th, stime the 13th (proc(5)), in clock ticks of 10 ms.
    const fields = fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { main: (Number(fields[11]) + Number(fields[12])) * 10_000, all };
  } catch {
    return { main: null, all };
  }
}

async function serverRole(): Promise<void> {
  const options = JSON.parse(process.env[OPTIONS_ENV] ?? '{}') as Partial<ServerOptions>;
  const server = createServer({ storage: { INBOX: { messages: seedMessages(SEED) }, '': {} }, plugins: 'all', port: 0, ...options });
  const { imap } = await server.start();
  process.on('message', (m: { ask?: string }) => {
    if (m.ask === 'cpu') process.send!({ cpu: readCpu() });
  });
  process.on('disconnect', () => void server.stop().then(() => process.exit(0)));
  process.send!({ target: { host: imap.host, port: imap.port } });
}

interface Side {
  name: string;
  child: ChildProcess;
  target: Target;
  main: number[];
  all: number[];
  rates: number[];
  errors: number;
}

export async function run(args: string[] = []): Promise<void> {
  const seconds = positiveOption(args, 'seconds', 3);
  const rounds = positiveOption(args, 'rounds', 6);
  const clients = positiveOption(args, 'clients', 10);
  const names = (args.find((a) => a.startsWith('--configs='))?.slice('--configs='.length) ?? 'default,transcript-off,check-off,both-off').split(',');
  for (const name of names) if (!CONFIGS.has(name)) throw new Error(`--configs: unknown ${name} (known: ${[...CONFIGS.keys()].join(', ')})`);
  const sides: Side[] = [];
  try {
    for (const name of names) {
      const child = fork(fileURLToPath(import.meta.url), [], {
        env: { ...process.env, [ROLE_ENV]: 'server', [OPTIONS_ENV]: JSON.stringify(CONFIGS.get(name)) },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      // A child that dies before it listens (a bad option) ends the bench, not waits forever.
      const died = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`mix-cost: the ${name} server exited (code ${code})`))));
      const target = await Promise.race([askChild<Target>(child, null, 'target'), died]);
      sides.push({ name, child, target, main: [], all: [], rates: [], errors: 0 });
    }
    // Unmeasured first: V8 optimizes the server's code only after seconds of this mix.
    for (const side of sides) await drive(side.target, clients, seconds, SEED);
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 ? [...sides].reverse() : sides) {
        const before = await askChild<CpuReading>(side.child, { ask: 'cpu' }, 'cpu');
        const r = await drive(side.target, clients, seconds, SEED);
        const after = await askChild<CpuReading>(side.child, { ask: 'cpu' }, 'cpu');
        if (before.main !== null && after.main !== null) side.main.push((after.main - before.main) / r.commands);
        side.all.push((after.all - before.all) / r.commands);
        side.rates.push(r.commands / r.seconds);
        side.errors += r.errors;
      }
    }
  } finally {
    for (const side of sides) side.child.disconnect();
  }
  const mainOf = (s: Side): number | null => (s.main.length ? median(s.main) : null);
  const baseMain = mainOf(sides[0]!);
  const baseAll = median(sides[0]!.all);
  /** The difference to the first configuration, signed; empty for the first itself. */
  const delta = (value: number | null, first: number | null, s: Side): string =>
    value === null || first === null || s === sides[0] ? '' : `${value >= first ? '+' : ''}${fmt(value - first, 1)}`;
  const rows = [['configuration', 'main thread us/cmd', 'vs first', 'all threads us/cmd', 'vs first', 'commands/s', 'errors', 'main thread, each round']];
  for (const s of sides) {
    const main = mainOf(s);
    const all = median(s.all);
    rows.push([
      s.name,
      main === null ? 'n/a' : fmt(main, 1),
      delta(main, baseMain, s),
      fmt(all, 1),
      delta(all, baseAll, s),
      Math.round(median(s.rates)).toLocaleString('en-US'),
      String(s.errors),
      s.main.map((x) => fmt(x, 1)).join(' '),
    ]);
  }
  table(`IMAP mix, server CPU per command (${clients} clients, ${seconds} s x ${rounds} rounds each, each server in its own process, median)`, rows);
}

if (process.env[ROLE_ENV] === 'server') void serverRole();

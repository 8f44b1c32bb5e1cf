/**
 * Plugin overhead bench: APPEND throughput over IMAP from one client that
 * pipelines many small messages (LITERAL+ `{n+}` literals, which the reader
 * always accepts, a window of commands in flight), against a server with no
 * plugins and one with `plugins: ['ACL', 'QUOTA']` (whichever of the two
 * exist; the bench prints which). QUOTA gets limits far above what the run
 * adds, so every APPEND goes through its check and every append through its
 * usage accounting. Rounds alternate between the two servers (a fresh server
 * per round); the medians are compared. Target: with plugins within 10% of
 * without (ratio >= 0.90).
 *
 * Options: `--messages=N` / BENCH_MESSAGES (per round, default 20000),
 * `--rounds=R` / BENCH_ROUNDS (default 10; an even number runs both orders
 * equally often), `--size=S` / BENCH_SIZE (octets per message, default
 * 400), `--window=W` (commands in flight, default 256), `--with=A,B` (the
 * plugins to compare, default ACL,QUOTA; `--with=,` compares two servers
 * without plugins, which shows the noise of the machine).
 */
import net from 'node:net';
import { createServer } from '../src/index.js';
import type { ServerOptions } from '../src/options/types.js';
import { builtinPluginNames } from '../src/extensions/index.js';
import { fmt, median, messageOfSize, table } from './client.js';

function opt(args: string[], name: string, env: string, def: number): number {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  const v = a ? a.slice(name.length + 3) : process.env[env];
  const n = v === undefined ? def : Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`bad --${name} / ${env}: ${v}`);
  return n;
}

/**
 * Logs in, pipelines `count` APPENDs of `raw` with at most `window` in
 * flight; returns messages per wall-clock second and per CPU second of this
 * process (server and client both run here: the CPU figure is the work done,
 * which other load on the machine does not change).
 */
async function appendRun(port: number, raw: Buffer, count: number, window: number): Promise<{ wall: number; cpu: number }> {
  const sock = net.connect({ host: '127.0.0.1', port });
  sock.setNoDelay(true);
  let buf = '';
  let waiter: ((line: string) => void) | null = null;
  const queue: string[] = [];
  sock.on('data', (d: Buffer) => {
    buf += d.toString('latin1');
    let eol: number;
    while ((eol = buf.indexOf('\r\n')) >= 0) {
      const line = buf.slice(0, eol);
      buf = buf.slice(eol + 2);
      if (waiter) waiter(line);
      else queue.push(line);
    }
  });
  const failed = new Promise<never>((_, reject) => {
    sock.on('error', reject);
    sock.on('close', () => reject(new Error('connection closed')));
  });
  const next = (): Promise<string> => (queue.length ? Promise.resolve(queue.shift()!) : Promise.race([new Promise<string>((r) => (waiter = (l) => ((waiter = null), r(l)))), failed]));
  await next(); // greeting
  sock.write('L LOGIN testuser testpass\r\n');
  for (let line = await next(); !line.startsWith('L '); line = await next());
  const head = (i: number): string => `A${i} APPEND INBOX {${raw.length}+}\r\n`;
  const tail = Buffer.from('\r\n');
  let sent = 0;
  let done = 0;
  const sendUpTo = (limit: number): void => {
    const parts: Buffer[] = [];
    while (sent < limit) {
      parts.push(Buffer.from(head(sent)), raw, tail);
      sent++;
    }
    if (parts.length) sock.write(Buffer.concat(parts));
  };
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  sendUpTo(Math.min(count, window));
  while (done < count) {
    const line = await next();
    if (!line.startsWith('A')) continue;
    if (!/^A\d+ OK/.test(line)) throw new Error(`APPEND failed: ${line}`);
    done++;
    // Refill half a window at a time: fewer, larger writes.
    if (sent < count && sent - done <= window / 2) sendUpTo(Math.min(count, done + window));
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  sock.end('Z LOGOUT\r\n');
  sock.destroy();
  return { wall: count / seconds, cpu: count / ((used.user + used.system) / 1e6) };
}

export async function run(args: string[]): Promise<void> {
  const messages = opt(args, 'messages', 'BENCH_MESSAGES', 20000);
  const rounds = opt(args, 'rounds', 'BENCH_ROUNDS', 10);
  const size = opt(args, 'size', 'BENCH_SIZE', 400);
  const window = opt(args, 'window', 'BENCH_WINDOW', 256);
  const known = new Set(builtinPluginNames());
  const withArg = args.find((x) => x.startsWith('--with='));
  const wanted = withArg ? withArg.slice(7).split(',').filter(Boolean) : ['ACL', 'QUOTA'];
  const loaded = wanted.filter((p) => known.has(p));
  const missing = wanted.filter((p) => !known.has(p));
  console.log(`\nplugins bench: ${rounds} rounds x ${messages} APPENDs of ${size} octets, one client, ${window} in flight`);
  console.log(`with plugins: ${loaded.length ? loaded.join(', ') : '(none of ACL, QUOTA exists)'}${missing.length ? `; not in this build: ${missing.join(', ')}` : ''}`);
  const raw = Buffer.from(messageOfSize(1, size));
  const huge = { STORAGE: Math.floor(Number.MAX_SAFE_INTEGER / 1024), MESSAGE: Number.MAX_SAFE_INTEGER, MAILBOX: Number.MAX_SAFE_INTEGER };
  const configs: { name: string; options: ServerOptions }[] = [
    { name: 'no plugins', options: { plugins: [] } },
    {
      name: `plugins: [${loaded.map((p) => `'${p}'`).join(', ')}]`,
      options: { plugins: loaded, pluginOptions: loaded.includes('QUOTA') ? { QUOTA: huge } : {} },
    },
  ];
  const wall: number[][] = configs.map(() => []);
  const cpu: number[][] = configs.map(() => []);
  // One warm-up round each, then alternate so drift hits both alike.
  for (let round = -1; round < rounds; round++) {
    for (let i = 0; i < configs.length; i++) {
      const c = round % 2 === 0 ? configs[i]! : configs[configs.length - 1 - i]!;
      const index = configs.indexOf(c);
      const server = createServer({ port: 0, ...c.options });
      const { imap } = await server.start();
      try {
        const rate = await appendRun(imap.port, raw, messages, window);
        if (round >= 0) {
          wall[index]!.push(rate.wall);
          cpu[index]!.push(rate.cpu);
        }
        if (loaded.includes('QUOTA') && index === 1) {
          const usage = server.extension('QUOTA')!.getQuota().usage;
          if (usage.MESSAGE !== messages) throw new Error(`QUOTA counted ${usage.MESSAGE} messages, expected ${messages}`);
        }
      } finally {
        await server.stop();
      }
    }
  }
  // Rounds are paired (both servers ran back to back): the median of the per-round ratios
  // cancels drift in the machine's load better than a ratio of medians.
  const pairRatio = (xs: number[][]): number => median(xs[1]!.map((x, i) => x / xs[0]![i]!));
  const wallRatio = pairRatio(wall);
  const cpuRatio = pairRatio(cpu);
  const verdict = (r: number): string => `${fmt(r, 3)} (${r >= 0.9 ? 'PASS' : 'MISS'}, target >= 0.900)`;
  table('APPEND throughput (pipelined, one client)', [
    ['config', 'median msg/s (wall)', 'median msg per CPU s', 'rounds, wall msg/s'],
    ...configs.map((c, i) => [c.name, fmt(median(wall[i]!), 0), fmt(median(cpu[i]!), 0), wall[i]!.map((r) => fmt(r, 0)).join(' ')]),
  ]);
  console.log(`ratio with/without, median of paired rounds: wall ${verdict(wallRatio)}; CPU ${verdict(cpuRatio)}`);
}

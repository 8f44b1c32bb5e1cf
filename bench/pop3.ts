/**
 * POP3 bench (issue 33): RETR throughput (MB/s and messages/s, one client
 * and ten, messages of about 4 KiB and 1 MiB) and session start-to-`+OK`
 * latency (connect, greeting, USER, PASS, `+OK`), for Rookery and for
 * Dovecot's POP3 in the same run, on the same maildrop and the same client
 * code. Rookery runs in a child process so that, like Dovecot, it does not
 * share the client's event loop.
 *
 * Options: `--seconds=S` / BENCH_SECONDS (per throughput cell, default 3),
 * `--samples=N` / BENCH_POP3_SAMPLES (latency sessions, default 300).
 * Without dovecot-pop3d, the Dovecot columns say so.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createServer } from '../src/index.js';
import { Pop3Client, pop3Login } from '../test/helpers/pop3-client.js';
import { startDovecotPop3, type DovecotPop3 } from '../test/dovecot/pop3.js';
import { fmt, median, messageOfSize, table, positiveOption } from './client.js';

const KIB = 1024;
const MIB = 1024 * KIB;
const SMALL = { size: 4 * KIB, count: 200 };
const LARGE = { size: MIB, count: 10 };

/** The maildrop: SMALL.count messages of SMALL.size, then LARGE.count of LARGE.size (numbers 1.. in that order). */
function maildrop(): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < SMALL.count; i++) out.push(Buffer.from(messageOfSize(i, SMALL.size)));
  for (let i = 0; i < LARGE.count; i++) out.push(Buffer.from(messageOfSize(SMALL.count + i, LARGE.size)));
  return out;
}

async function child(): Promise<void> {
  const server = createServer({ port: 0, users: { u: { password: 'pass' } }, pop3: { port: 0 } });
  for (const raw of maildrop()) server.control.addMessage('INBOX', { raw });
  const { pop3 } = await server.start();
  process.send!({ pop3: pop3!.port });
}

interface Target {
  name: string;
  port: number;
}

/** `clients` sessions RETR the messages first..last over and over for `seconds`; octets and messages per second in all. */
async function throughput(port: number, clients: number, first: number, last: number, seconds: number): Promise<{ mbps: number; mps: number }> {
  const sessions = await Promise.all(Array.from({ length: clients }, () => pop3Login(port, 'u', 'pass', { timeoutMs: 20_000 })));
  let octets = 0;
  let messages = 0;
  const start = process.hrtime.bigint();
  const until = start + BigInt(Math.round(seconds * 1e9));
  await Promise.all(
    sessions.map(async (c, k) => {
      // each client starts at another message, so ten clients do not read in lockstep
      for (let i = 0; process.hrtime.bigint() < until; i++) {
        const n = first + ((i + k * 7) % (last - first + 1));
        const m = await c.multi(`RETR ${n}`, 60_000);
        if (!m.ok) throw new Error(`RETR ${n}: ${m.status}`);
        octets += m.raw.length;
        messages++;
      }
    }),
  );
  const secs = Number(process.hrtime.bigint() - start) / 1e9;
  for (const c of sessions) {
    await c.command('QUIT').catch(() => '');
    c.close();
  }
  return { mbps: octets / MIB / secs, mps: messages / secs };
}

/** Connect to `+OK` after PASS, one session at a time; milliseconds per session. */
async function latency(port: number, samples: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t = process.hrtime.bigint();
    const c = await Pop3Client.connect(port, { timeoutMs: 20_000 });
    c.write('USER u\r\n');
    await c.line(20_000);
    const ok = await c.command('PASS pass', 20_000);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (!ok.startsWith('+OK')) throw new Error(`PASS: ${ok}`);
    await c.command('QUIT');
    c.close();
  }
  return times;
}

const p99 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!;

export async function run(args: string[] = []): Promise<void> {
  const seconds = positiveOption(args, 'seconds', 3, 'BENCH_SECONDS');
  const samples = positiveOption(args, 'samples', 300, 'BENCH_POP3_SAMPLES');
  const proc: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let dovecot: DovecotPop3 | null = null;
  try {
    const rookeryPort = await new Promise<number>((resolve) => proc.once('message', (m) => resolve((m as { pop3: number }).pop3)));
    const targets: Target[] = [{ name: 'Rookery', port: rookeryPort }];
    dovecot = await startDovecotPop3().catch((e: Error) => {
      console.log(`pop3: Dovecot did not start: ${e.message.split('\n')[0]}`);
      return null;
    });
    if (dovecot) {
      await dovecot.load('u', maildrop());
      targets.push({ name: `Dovecot ${dovecot.version.split(' ')[0]}`, port: dovecot.pop3 });
    } else console.log('pop3: no Dovecot POP3 (Debian: apt-get install dovecot-pop3d); its column is left out');

    const rows: string[][] = [['figure', ...targets.map((t) => t.name)]];
    const cells: [string, number, number, number][] = [
      ['RETR ~4 KiB, 1 client', 1, 1, SMALL.count],
      ['RETR ~4 KiB, 10 clients', 10, 1, SMALL.count],
      ['RETR ~1 MiB, 1 client', 1, SMALL.count + 1, SMALL.count + LARGE.count],
      ['RETR ~1 MiB, 10 clients', 10, SMALL.count + 1, SMALL.count + LARGE.count],
    ];
    for (const [label, clients, first, last] of cells) {
      const results = [];
      for (const t of targets) results.push(await throughput(t.port, clients, first, last, seconds));
      rows.push([`${label}: MB/s`, ...results.map((r) => fmt(r.mbps, 1))]);
      rows.push([`${label}: messages/s`, ...results.map((r) => fmt(r.mps, 0))]);
    }
    const lat = [];
    for (const t of targets) {
      await latency(t.port, 20); // warm-up: Dovecot forks its login and pop3 processes on demand
      lat.push(await latency(t.port, samples));
    }
    rows.push([`session start to +OK, median (${samples} sessions)`, ...lat.map((l) => `${fmt(median(l), 2)} ms`)]);
    rows.push(['session start to +OK, p99', ...lat.map((l) => `${fmt(p99(l), 2)} ms`)]);
    table(`pop3: RETR throughput and login latency (${seconds} s per throughput cell; MB = MiB; octets as sent, stuffing and terminator included)`, rows);
  } finally {
    proc.kill();
    await dovecot?.stop();
  }
}

if (process.argv.includes('--child')) void child();

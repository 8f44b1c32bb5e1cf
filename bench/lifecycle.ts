/** Lifecycle bench: create+start+stop, control.reset(), control.addMessage(). */
import { createRequire } from 'node:module';
import { createServer } from '../src/index.js';
import { fmt, median, message, messageOfSize, ms, table } from './client.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const WARMUP = 5;

function store(n: number): { INBOX: { messages: string[] }; '': Record<string, never> } {
  return { INBOX: { messages: Array.from({ length: n }, (_, i) => message(i)) }, '': {} };
}

type Hoodie = (opts: unknown) => { listen(port: number, cb: () => void): void; close(cb: () => void): void };

function loadHoodiecrow(): Hoodie | null {
  try {
    return createRequire(import.meta.url)('hoodiecrow-imap') as Hoodie;
  } catch {
    return null;
  }
}

async function rookeryCycle(): Promise<number> {
  const storage = store(100);
  const t = process.hrtime.bigint();
  const server = createServer({ storage, plugins: 'all', port: 0 });
  await server.start();
  await server.stop();
  return ms(t);
}

async function hoodieCycle(hoodiecrow: Hoodie): Promise<number> {
  const storage = store(100);
  const t = process.hrtime.bigint();
  const server = hoodiecrow({ storage, plugins: ['IDLE', 'ID', 'UNSELECT', 'ENABLE', 'CONDSTORE', 'LITERALPLUS', 'NAMESPACE', 'SPECIAL-USE', 'UIDPLUS', 'MOVE'] });
  await new Promise<void>((r) => server.listen(0, r));
  await new Promise<void>((r) => server.close(() => r()));
  return ms(t);
}

const mark = (ok: boolean): string => (ok ? 'PASS' : 'MISS');

export async function run(): Promise<void> {
  const rows: string[][] = [['metric', 'value', 'target', 'result']];

  // create + start + stop, interleaved with hoodiecrow when available
  const hoodiecrow = loadHoodiecrow();
  const rook: number[] = [];
  const hood: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const r = await rookeryCycle();
    if (i >= WARMUP) rook.push(r);
    if (hoodiecrow) {
      const h = await hoodieCycle(hoodiecrow);
      if (i >= WARMUP) hood.push(h);
    }
  }
  const rMed = median(rook);
  if (hoodiecrow) {
    const hMed = median(hood);
    const ratio = rMed / hMed;
    rows.push(['rookery create+start+stop (100 msgs)', `${fmt(rMed, 3)} ms`, '', '']);
    rows.push(['hoodiecrow create+listen+close (100 msgs)', `${fmt(hMed, 3)} ms`, '', '']);
    rows.push(['ratio rookery/hoodiecrow', `${fmt(ratio)}x`, '<= 2x', mark(ratio <= 2)]);
  } else {
    rows.push(['rookery create+start+stop (100 msgs)', `${fmt(rMed, 3)} ms`, '<= 2x hoodiecrow', 'n/a (hoodiecrow-imap not loadable)']);
  }

  // control.reset() of a 1,000-message store
  {
    const server = createServer({ storage: store(1000), plugins: 'all', port: 0 });
    await server.start();
    const times: number[] = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const t = process.hrtime.bigint();
      server.control.reset();
      const d = ms(t);
      if (i >= WARMUP) times.push(d);
    }
    await server.stop();
    const m = median(times);
    rows.push(['control.reset() (1,000 msgs)', `${fmt(m, 3)} ms`, '<= 1 ms', mark(m <= 1)]);
  }

  // addMessage of 2 KiB messages
  {
    const server = createServer({ storage: { INBOX: { messages: [] }, '': {} }, plugins: 'all', port: 0 });
    await server.start();
    const raws = Array.from({ length: 1000 }, (_, i) => messageOfSize(i, 2048));
    const BATCH = 5000;
    for (let i = 0; i < 2000; i++) server.control.addMessage('INBOX', { raw: raws[i % raws.length]! }); // warm-up
    const rates: number[] = [];
    for (let run = 0; run < 7; run++) {
      server.control.reset();
      const t = process.hrtime.bigint();
      for (let i = 0; i < BATCH; i++) server.control.addMessage('INBOX', { raw: raws[i % raws.length]! });
      rates.push(BATCH / (ms(t) / 1000));
    }
    await server.stop();
    const m = median(rates);
    rows.push(['addMessage 2 KiB (5,000/run, median of 7)', `${Math.round(m).toLocaleString('en-US')} msg/s`, '>= 50,000/s', mark(m >= 50000)]);
  }

  table(`lifecycle (median of ${RUNS} after ${WARMUP} warm-up)`, rows);
}

/**
 * TLS bench (issue 34): the time to start a server whose listener serves
 * a fresh CA's certificates for five profiles (the default one and four
 * SNI names), against a plain server, and the time each further profile
 * adds (one more SNI name), by profile: RSA key generation makes
 * `weak-key` the slow one.
 *
 * Options: `--count=N` / BENCH_TLS_COUNT (servers per figure, default 20).
 */
import { createServer, PROFILES, type ProfileName } from '../src/index.js';
import type { ServerOptions } from '../src/options/types.js';
import { fmt, median, table } from './client.js';

function count(args: string[]): number {
  const a = args.find((x) => x.startsWith('--count='));
  const v = a ? a.slice('--count='.length) : process.env.BENCH_TLS_COUNT;
  const n = v === undefined ? 20 : Number(v);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`bad --count / BENCH_TLS_COUNT: ${v}`);
  return n;
}

/** Milliseconds from createServer to a listening server, each sample a new server (and a new CA). */
async function startTimes(options: ServerOptions, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const server = createServer({ port: 0, plugins: [], ...options });
    await server.start();
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
    await server.stop();
  }
  return out;
}

const FIVE: Record<string, ProfileName> = { 'a.test': 'expired', 'b.test': 'wrong-host', 'c.test': 'self-signed', 'd.test': 'unknown-ca' };

export async function run(args: string[]): Promise<void> {
  const n = count(args);
  // Warm-up: the first server of a process also loads node:tls, node:crypto and the certificate maker.
  await startTimes({ secure: true, tls: { freshCa: true, profile: 'valid' } }, 2);
  const plain = median(await startTimes({}, n));
  const builtin = median(await startTimes({ secure: true }, n));
  const five = median(await startTimes({ secure: true, tls: { freshCa: true, profile: 'valid', certificates: FIVE } }, n));
  const rows: string[][] = [
    ['server', 'start ms (median)'],
    ['plain server (no TLS)', fmt(plain)],
    ['TLS, built-in test certificate', fmt(builtin)],
    ['TLS, fresh CA + 5 profiles (valid, expired, wrong-host, self-signed, unknown-ca)', fmt(five)],
  ];
  // Each extra profile: servers with five and with six profiles in turn, so that a busy machine's drift
  // falls on both; the figure is the median of the pairs' differences.
  for (const extra of PROFILES) {
    const diffs: number[] = [];
    for (let i = 0; i < n; i++) {
      const [base] = await startTimes({ secure: true, tls: { freshCa: true, profile: 'valid', certificates: FIVE } }, 1);
      const [more] = await startTimes({ secure: true, tls: { freshCa: true, profile: 'valid', certificates: { ...FIVE, 'e.test': extra } } }, 1);
      diffs.push(more! - base!);
    }
    rows.push([`  one more profile: ${extra}`, `+${fmt(median(diffs))}`]);
  }
  table(`TLS start-up, median of ${n} servers`, rows);
}

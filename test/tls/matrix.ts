/**
 * What the three client matrices (IMAP, POP3, SMTP: test/tls/*client-matrix.test.ts)
 * share: the cells, how one run of a client becomes its worst verdict, and
 * how every client meets every case and the result is compared with the
 * frozen table. Each matrix keeps its clients, cases, table and how it
 * starts its server.
 */
import assert from 'node:assert/strict';
import type { Server, TlsVerdict } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';

export type Cell = TlsVerdict['verdict'] | 'no verdict';
export const S = 'safe';
export const LEAK = 'leaked-credentials';
export const CERT = 'accepted-bad-certificate';
export const INJ = 'acted-on-injected-response';
export const NOTLS = 'continued-without-tls';

const pause = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

/**
 * Runs `client` against a started server and returns the worst verdict the
 * server gave (some clients reconnect after a failure); what was not `safe`
 * goes into `evidence`. `listener`: the listener every verdict must name.
 */
export async function worstVerdict(server: Server, client: () => Promise<void>, listener: TlsVerdict['listener'] | null, evidence: string[]): Promise<Cell> {
  const verdicts: TlsVerdict[] = [];
  server.on('verdict', (v) => verdicts.push(v));
  await client();
  // The session may still be closing when the client returns; a stop closes what is left (and so ends its verdict).
  for (let i = 0; i < 50 && verdicts.length === 0; i++) await pause();
  await server.stop();
  // A session the stop closed reports on its socket's close, which may come just after.
  for (let i = 0; i < 50 && verdicts.length === 0; i++) await pause();
  if (verdicts.length === 0) return 'no verdict';
  for (const v of verdicts) {
    if (listener !== null) assert.equal(v.listener, listener);
    if (v.verdict !== 'safe') evidence.push(`${v.cases.join('+')}: ${v.verdict} (${v.text}; ${JSON.stringify(v.evidence)})`);
  }
  const order: Cell[] = [LEAK, INJ, CERT, NOTLS, S];
  return verdicts.map((v) => v.verdict).sort((a, b) => order.indexOf(a) - order.indexOf(b))[0]!;
}

export interface Matrix {
  clients: Record<string, (port: number) => Promise<void>>;
  cases: readonly { name: string; options: ServerOptions }[];
  expected: Record<string, Cell[]>;
  /** One run of a client in a case; a run that gave no verdict (a timeout on a loaded machine) is played once more. */
  playOnce(client: (port: number) => Promise<void>, options: ServerOptions): Promise<Cell>;
  workers: number;
  evidence: string[];
}

/** Plays every client in every case and asserts the table; ROOKERY_PRINT_MATRIX=1 prints it. */
export async function checkMatrix(m: Matrix): Promise<void> {
  const names = Object.keys(m.clients);
  const jobs = m.cases.flatMap((c) => names.map((n) => ({ c, n })));
  const got = new Map<string, Cell[]>(m.cases.map((c) => [c.name, names.map((): Cell => 'no verdict')]));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const { c, n } = jobs[next++]!;
      const first = await m.playOnce(m.clients[n]!, c.options);
      got.get(c.name)![names.indexOf(n)] = first === 'no verdict' ? await m.playOnce(m.clients[n]!, c.options) : first;
    }
  };
  await Promise.all(Array.from({ length: m.workers }, worker));
  if (process.env.ROOKERY_PRINT_MATRIX) {
    const rows = [`| case | ${names.join(' | ')} |`, `|---|${names.map(() => '---').join('|')}|`];
    for (const [name, cells] of got) rows.push(`| \`${name}\` | ${cells.map((c) => (c === 'safe' ? 'safe' : `**${c}**`)).join(' | ')} |`);
    console.log(rows.join('\n'));
    console.log(m.evidence.join('\n'));
  }
  const moved = m.cases.flatMap((c) => names.filter((n, i) => got.get(c.name)![i] !== m.expected[c.name]?.[i]).map((n) => `${c.name} x ${n}: ${got.get(c.name)![names.indexOf(n)]}`));
  assert.deepEqual(moved, [], `verdicts moved:\n${moved.join('\n')}\nevidence:\n${m.evidence.join('\n')}`);
}

/** The server's verdicts in order, one per call: at once when it was given already, else when it comes (the attack tests). */
export function verdictReader(server: Server): () => Promise<TlsVerdict> {
  const verdicts: TlsVerdict[] = [];
  const waiting: ((v: TlsVerdict) => void)[] = [];
  server.on('verdict', (v) => {
    const w = waiting.shift();
    if (w) w(v);
    else verdicts.push(v);
  });
  return () => {
    const v = verdicts.shift();
    return v ? Promise.resolve(v) : new Promise((resolve) => waiting.push(resolve));
  };
}

/**
 * What script rules on structured responses cost: FETCH of every message
 * of a mailbox with no rules, with a response rule that never matches
 * (responses then go out one by one through the rules), and with a mutate
 * rule that rewrites every FETCH.
 *
 * Options: `--messages=N` / BENCH_MESSAGES (default 20000), `--rounds=R` (default 5).
 */
import { createServer, type ScriptRule } from '../src/index.js';
import { RawClient, fmt, median, message, ms, table } from './client.js';

function opt(args: string[], name: string, env: string, def: number): number {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  const v = a ? a.slice(name.length + 3) : process.env[env];
  const n = v === undefined ? def : Number(v);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`bad --${name} / ${env}: ${v}`);
  return n;
}

export async function run(args: string[]): Promise<void> {
  const n = opt(args, 'messages', 'BENCH_MESSAGES', 20000);
  const rounds = opt(args, 'rounds', 'BENCH_ROUNDS', 5);
  const cases: [string, ScriptRule[]][] = [
    ['no rules', []],
    ['a response rule that never matches', [{ on: 'response', match: '^NEVER' }]],
    ['mutate every FETCH (set UID)', [{ on: 'response', untagged: 'FETCH', mutate: [{ set: 'UID', value: 1 }] }]],
  ];
  const rows: string[][] = [];
  for (const [label, rules] of cases) {
    const server = createServer({ port: 0 });
    for (let i = 1; i <= n; i++) server.control.addMessage('INBOX', { raw: message(i) });
    const { imap } = await server.start();
    if (rules.length) server.script.add(rules);
    const c = await RawClient.connect('127.0.0.1', imap.port);
    await c.ok('LOGIN testuser testpass');
    await c.ok('SELECT INBOX');
    const flags: number[] = [];
    const envelopes: number[] = [];
    for (let r = 0; r < rounds; r++) {
      let t = process.hrtime.bigint();
      await c.ok('FETCH 1:* (UID FLAGS)');
      flags.push(ms(t));
      t = process.hrtime.bigint();
      await c.ok('FETCH 1:* (UID ENVELOPE)');
      envelopes.push(ms(t));
    }
    c.close();
    await server.stop();
    rows.push([label, fmt(median(flags)), fmt(median(envelopes))]);
  }
  table(`script rules on FETCH 1:* of ${n} messages (median of ${rounds}, ms)`, [['case', '(UID FLAGS)', '(UID ENVELOPE)'], ...rows]);
}

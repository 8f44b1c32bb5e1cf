/**
 * Issue 14 figures: how exact the `bandwidth` cap is, and what the
 * server-clock timers and rate limits cost a session that never hits them.
 *
 * `npm run bench -- faults [seconds=2]`
 *
 * 1. A FETCH of a message sized to take `seconds` at each cap (50 KB/s,
 *    200 KB/s, 1 MB/s): achieved rate and its error against the cap.
 * 2. 20,000 pipelined NOOPs on one session, median of 5 rounds: no options,
 *    then with `autologout` + `maxIdle`, then also with a rate limit on `all`
 *    commands that is never reached.
 */
import { createServer, type ServerOptions } from '../src/index.js';
import net from 'node:net';
import { RawClient, fmt, median, ms, table } from './client.js';

function bigMessage(size: number): string {
  const line = `${'y'.repeat(76)}\r\n`;
  return `Subject: big\r\n\r\n${line.repeat(Math.ceil(size / line.length))}`;
}

async function bandwidthRow(cap: number, seconds: number): Promise<string[]> {
  const size = cap * seconds;
  const server = createServer({ port: 0, storage: { INBOX: { messages: [bigMessage(size)] } } });
  const { imap } = await server.start();
  server.script.add({ on: 'command', command: 'FETCH', bandwidth: cap });
  const client = await RawClient.connect('127.0.0.1', imap.port);
  await client.ok('LOGIN testuser testpass');
  await client.ok('SELECT INBOX');
  const t0 = process.hrtime.bigint();
  await client.ok('FETCH 1 BODY.PEEK[]');
  const took = ms(t0);
  client.close();
  await server.stop();
  const rate = (size * 1000) / took;
  return [`${fmt(cap / 1000, 0)} KB/s`, `${fmt(size / 1000, 0)} KB`, `${fmt(took, 0)} ms`, `${fmt(rate / 1000, 1)} KB/s`, `${fmt(((rate - cap) / cap) * 100, 1)} %`];
}

async function noopRound(options: ServerOptions, count: number): Promise<number> {
  const server = createServer({ port: 0, ...options });
  const { imap } = await server.start();
  const socket = net.connect(imap.port, '127.0.0.1');
  let seen = 0;
  let tail = '';
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  socket.on('data', (d: Buffer) => {
    const text = tail + d.toString('latin1');
    const lines = text.split('\r\n');
    tail = lines.pop()!;
    for (const l of lines) if (/^n\d+ OK/.test(l) && ++seen === count) done();
  });
  await new Promise((r) => socket.once('connect', r));
  socket.write('l LOGIN testuser testpass\r\n');
  const t0 = process.hrtime.bigint();
  let batch = '';
  for (let i = 1; i <= count; i++) batch += `n${i} NOOP\r\n`;
  socket.write(batch);
  await finished;
  const took = ms(t0);
  socket.destroy();
  await server.stop();
  return took;
}

export async function run(args: string[]): Promise<void> {
  const seconds = Number(args.find((a) => /^\d+$/.test(a)) ?? 2);
  const rows: string[][] = [];
  for (const cap of [50_000, 200_000, 1_000_000]) rows.push(await bandwidthRow(cap, seconds));
  table(`bandwidth cap: one FETCH sized for ${seconds} s`, [['cap', 'size', 'took', 'achieved', 'error'], ...rows]);

  const count = 20_000;
  const variants: [string, ServerOptions][] = [
    ['no timers, no limits', {}],
    ['autologout + maxIdle', { autologout: 1_800_000, maxIdle: 1_740_000 }],
    ['+ rateLimits (all, never hit)', { autologout: 1_800_000, maxIdle: 1_740_000, rateLimits: [{ commands: ['all'], max: 100_000, per: 1000 }] }],
  ];
  const out: string[][] = [];
  for (const [name, options] of variants) {
    const times: number[] = [];
    for (let r = 0; r < 5; r++) times.push(await noopRound(options, count));
    const m = median(times);
    out.push([name, `${fmt(m, 0)} ms`, `${fmt((count * 1000) / m, 0)} NOOP/s`]);
  }
  table(`${count.toLocaleString('en-US')} pipelined NOOPs, median of 5`, [['options', 'time', 'rate'], ...out]);
}

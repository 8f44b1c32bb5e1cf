/**
 * Wait bench: many waits resolved by one event.
 *
 *   npm run bench -- wait [waits=1000] [rounds=3]
 *
 * REST: `waits` concurrent GET /v1/events/wait long polls (one connection
 * each, over node:http), all for the same mailbox event; once every one is
 * pending, one mailbox is created, and the time from that event to the last
 * response is measured (p50 and last). In-process: the same number of
 * `server.waitFor` calls resolved by one event. The clients run in this
 * process, so their response parsing is part of the REST figure.
 */
import http from 'node:http';
import { createServer } from '../src/index.js';
import { fmt, median, table } from './client.js';

function waitRequest(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now()) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

export async function run(args: string[]): Promise<void> {
  const nums = args.filter((a) => /^\d+$/.test(a)).map(Number);
  const waits = nums[0] ?? 1000;
  const rounds = nums[1] ?? 3;
  const server = createServer({ port: 0, rest: { port: 0 } });
  const { rest } = await server.start();
  const rows: string[][] = [['round', 'kind', 'waits', 'p50 after event (ms)', 'last after event (ms)']];
  try {
    for (let round = 1; round <= rounds; round++) {
      const path = `Wait${round}`;
      const pending = Array.from({ length: waits }, () => waitRequest(rest!.port, `/v1/events/wait?types=mailbox&match=type=create,path=${path}&timeout=60000`));
      while (server.eventLog.waiting < waits) await new Promise((r) => setTimeout(r, 5));
      const at = performance.now();
      server.control.createMailbox({ path });
      const done = (await Promise.all(pending)).map((t) => t - at);
      rows.push([String(round), 'REST', String(waits), fmt(median(done)), fmt(Math.max(...done))]);

      const inProcess = `Local${round}`;
      const local = Array.from({ length: waits }, () => server.waitFor('mailbox', { type: 'create', path: inProcess }, { timeout: 60_000 }).then(() => performance.now()));
      const at2 = performance.now();
      server.control.createMailbox({ path: inProcess });
      const done2 = (await Promise.all(local)).map((t) => t - at2);
      rows.push([String(round), 'waitFor', String(waits), fmt(median(done2), 3), fmt(Math.max(...done2), 3)]);
    }
  } finally {
    await server.stop();
  }
  table(`${waits} concurrent waits resolved by one event`, rows);
}

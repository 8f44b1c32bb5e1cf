/**
 * The processes of the scoreboard's session figures: a Rookery server and a
 * fleet of idling IMAP clients, each in its own child process, so the
 * server's RSS is its own and the clients' parsing never runs on the
 * server's core or event loop. `bench/scoreboard.ts` forks this file twice
 * (ROOKERY_BENCH_FLEET=server and =clients) and talks to both over IPC;
 * imported any other way it does nothing.
 */
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import v8 from 'node:v8';
import { fileURLToPath } from 'node:url';
import { createServer } from '../src/index.js';
import { messageOfSize } from './client.js';

export const FLEET_ENV = 'ROOKERY_BENCH_FLEET';

/** Wall-clock milliseconds comparable across processes of one machine (sub-millisecond). */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Sends `msg` to a child process of the benches (null: send nothing) and
 * resolves with the `key` of its first answer that has one; an answer with
 * `error` rejects.
 */
export function askChild<T>(proc: ChildProcess, msg: object | null, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: Record<string, unknown>): void => {
      if (m.error !== undefined) {
        proc.off('message', on);
        reject(new Error(String(m.error)));
      } else if (key in m) {
        proc.off('message', on);
        resolve(m[key] as T);
      }
    };
    proc.on('message', on);
    if (msg !== null) proc.send(msg);
  });
}

export type ServerAsk = { ask: 'rss' } | { ask: 'add' } | { ask: 'stop' } | { ask: 'heap'; file: string };
export type ClientsAsk = { ask: 'connect'; port: number; count: number } | { ask: 'arm' } | { ask: 'stop' };

function heapSettledRss(): number {
  // Two collections: the first can leave garbage that a finalizer freed for the second.
  global.gc?.();
  global.gc?.();
  return process.memoryUsage.rss();
}

async function serverRole(): Promise<void> {
  const server = createServer({
    port: 0,
    plugins: 'all',
    maxConnections: 20_000,
    maxUnauthenticated: 20_000,
    storage: { INBOX: { messages: [messageOfSize(0, 2048)] }, '': {} },
    // More options for a comparison run (e.g. '{"transcript":false}'), JSON.
    ...(JSON.parse(process.env.BENCH_SERVER_OPTIONS ?? '{}') as object),
  });
  const { imap } = await server.start();
  const raw = messageOfSize(1, 2048);
  process.on('message', (m: ServerAsk) => {
    if (m.ask === 'rss') process.send!({ rss: heapSettledRss() });
    else if (m.ask === 'heap') {
      // Snapshots count what is reachable: no collection needed first (bench sessions --heap).
      process.send!({ heap: v8.writeHeapSnapshot(m.file) });
    } else if (m.ask === 'add') {
      const t0 = wallMs();
      server.control.addMessage('INBOX', { raw });
      // The notices are written in a microtask queued by the add, before this one: t1 - t0 is the server's
      // share of the fan-out.
      queueMicrotask(() => process.send!({ t0, t1: wallMs() }));
    } else if (m.ask === 'stop') void server.stop().then(() => process.exit(0));
  });
  process.send!({ port: imap.port });
}

/**
 * The fan-out's floor: a node:net server that greets, answers the fleet's
 * LOGIN/SELECT/IDLE with a canned continuation, and on `add` writes one
 * canned `* 2 EXISTS` to every socket. What any Node server must pay.
 */
async function floorRole(): Promise<void> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    s.setNoDelay(true);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
    let text = '';
    s.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (text.includes('IDLE\r\n')) {
        text = '';
        sockets.add(s);
        s.write('a OK LOGIN completed\r\n* 1 EXISTS\r\nb OK [READ-WRITE] SELECT completed\r\n+ idling\r\n');
      }
    });
    s.write('* OK floor ready\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const notice = Buffer.from('* 2 EXISTS\r\n');
  process.on('message', (m: ServerAsk) => {
    if (m.ask === 'rss') process.send!({ rss: heapSettledRss() });
    else if (m.ask === 'add') {
      const t0 = wallMs();
      for (const s of sockets) s.write(notice);
      process.send!({ t0, t1: wallMs() });
    } else if (m.ask === 'stop') {
      for (const s of sockets) s.destroy();
      server.close(() => process.exit(0));
    }
  });
  process.send!({ port: (server.address() as net.AddressInfo).port });
}

async function clientsRole(): Promise<void> {
  const sockets: net.Socket[] = [];
  let armed = false;
  let seen = 0;
  let last = 0;
  const connectOne = (port: number): Promise<net.Socket> =>
    new Promise((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port });
      let text = '';
      let idling = false;
      let sent = false;
      s.setNoDelay(true);
      s.on('error', reject);
      s.on('data', (d: Buffer) => {
        if (!idling) {
          text += d.toString('latin1');
          // The greeting is in: LOGIN, SELECT and IDLE go pipelined, read back as one run of lines.
          if (!sent && text.includes('\r\n')) {
            sent = true;
            s.write('a LOGIN testuser testpass\r\nb SELECT INBOX\r\nc IDLE\r\n');
          }
          if (/\r\n\+ [^\r]*\r\n/.test(text)) {
            idling = true;
            resolve(s);
          }
          if (/\r\n[abc] (NO|BAD)/.test(text)) reject(new Error(`fleet client: ${text.slice(-200)}`));
          return;
        }
        // Only a notice of a new message counts; one client counts once per arming.
        if (armed && d.includes(' EXISTS\r\n') && !(s as net.Socket & { got?: boolean }).got) {
          (s as net.Socket & { got?: boolean }).got = true;
          seen++;
          last = wallMs();
          if (seen === sockets.length) process.send!({ last });
        }
      });
    });
  process.on('message', (m: ClientsAsk) => {
    if (m.ask === 'connect') {
      void (async () => {
        // Waves keep the not-yet-logged-in count and the listen backlog small.
        for (let i = 0; i < m.count; i += 200) {
          const wave = await Promise.all(Array.from({ length: Math.min(200, m.count - i) }, () => connectOne(m.port)));
          sockets.push(...wave);
        }
        process.send!({ connected: sockets.length });
      })().catch((e: unknown) => process.send!({ error: String(e) }));
    } else if (m.ask === 'arm') {
      for (const s of sockets) (s as net.Socket & { got?: boolean }).got = false;
      seen = 0;
      last = 0;
      armed = true;
      process.send!({ armed: true });
    } else if (m.ask === 'stop') {
      for (const s of sockets) s.destroy();
      process.exit(0);
    }
  });
  process.send!({ up: true });
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  const role = process.env[FLEET_ENV];
  if (role === 'server') void serverRole();
  else if (role === 'floor') void floorRole();
  else if (role === 'clients') void clientsRole();
}

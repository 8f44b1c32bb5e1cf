/**
 * REST fuzz bench (issue 9) and event-stream memory (issue 18 item 3).
 *
 *   npm run bench -- fuzz-rest [--requests N] [--oauth N] [--seed N] [--concurrency N] [--streams N] [--commands N] [--stream-buffer N]
 *
 * 1. The REST fuzzer of test/fuzz/rest-fuzz-core.ts for a long run (100,000
 *    requests by default, seed from the clock unless given) against a real
 *    server with every plugin; prints requests/s, the status mix and every
 *    distinct finding with its (seed, index) for replay, then checks the
 *    store and a snapshot rebuild.
 * 1b. The OAuth endpoints' fuzzer (test/fuzz/oauth-fuzz-core.ts, issue 35):
 *    `--oauth` (20,000) form-encoded and JSON requests to /oauth/*; prints
 *    requests/s, the status mix and the findings.
 * 2. Memory under stalled event streams: a server in a child process (so its
 *    RSS is its own), `--streams` (100) event streams that never read, and
 *    `--commands` (100,000) pipelined IMAP NOOPs, each one a `command` event
 *    for every stream. Prints the server's RSS before, at its peak and after,
 *    and how many streams the server closed. Without the stream buffer limit
 *    this grew by gigabytes (482 -> 5,709 MB in issue 18).
 */
import { fork, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { createServer } from '../src/index.js';
import type { RestServer } from '../src/rest/rest.js';
import type { Storage } from '../src/options/types.js';
import { fuzzRest, routesFromOpenApi, storeProblems, type Finding } from '../test/fuzz/rest-fuzz-core.js';
import { fmt, table } from './client.js';
import { fuzzOAuth } from '../test/fuzz/oauth-fuzz-core.js';

const CHILD_ENV = 'ROOKERY_BENCH_SSE_SERVER';

function option(args: string[], name: string, env: string, fallback: number): number {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  const raw = i < 0 ? process.env[env] : args[i]!.includes('=') ? args[i]!.split('=')[1] : args[i + 1];
  const n = Number(raw ?? fallback);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name}: not a number: ${raw}`);
  return n;
}

const STORAGE: Storage = {
  INBOX: { messages: ['Subject: one\r\n\r\n1\r\n', { raw: 'Subject: two\r\n\r\n2\r\n', flags: ['\\Seen'] }, 'Subject: three\r\n\r\n3\r\n'] },
  '': { folders: { Archive: { folders: { '2024': {} } }, Sent: { 'special-use': '\\Sent' }, Trash: {} } },
};

async function fuzzPhase(requests: number, seed: number, concurrency: number): Promise<void> {
  console.log(`\nfuzz-rest: ${requests.toLocaleString('en-US')} requests, seed ${seed}, ${concurrency} connections at a time`);
  const server = createServer({ plugins: 'all', storage: STORAGE, rest: { port: 0 } });
  const { rest } = await server.start();
  const doc = (await fetch(`http://127.0.0.1:${rest!.port}/v1/openapi.json`).then((r) => r.json())) as Parameters<typeof routesFromOpenApi>[0];
  const routes = routesFromOpenApi(doc);
  const started = process.hrtime.bigint();
  const findings: Finding[] = [];
  const statuses = new Map<number, number>();
  // In slices, so progress shows on long runs.
  const slice = 5_000;
  for (let start = 0; start < requests; start += slice) {
    const r = await fuzzRest({ port: rest!.port, seed, start, requests: Math.min(slice, requests - start), concurrency, routes });
    findings.push(...r.findings);
    for (const [k, v] of r.statuses) statuses.set(k, (statuses.get(k) ?? 0) + v);
    // The store between slices too: a reset later in the run would hide what went wrong.
    for (const problem of storeProblems(server, (st) => createServer({ storage: st as Storage, plugins: 'all' }))) {
      findings.push({ seed, index: start + slice - 1, problem: `store: ${problem}`, request: `(state after requests ${start}..${start + slice - 1})`, response: '' });
    }
    if (requests > slice) process.stdout.write(`  ${Math.min(start + slice, requests).toLocaleString('en-US')} requests...\n`);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const store = storeProblems(server, (s) => createServer({ storage: s as Storage, plugins: 'all' }));
  const after = await fetch(`http://127.0.0.1:${rest!.port}/v1/users`).then((r) => r.status).catch((e: Error) => e.message);
  await server.stop();
  const distinct = new Map<string, Finding[]>();
  for (const f of findings) {
    const key = f.problem.replace(/\d+/g, 'N').slice(0, 80);
    distinct.set(key, [...(distinct.get(key) ?? []), f]);
  }
  table('fuzz-rest', [
    ['requests', requests.toLocaleString('en-US')],
    ['requests/s', fmt(requests / seconds, 0)],
    ['statuses', [...statuses].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}:${v}`).join(' ')],
    ['findings', `${findings.length} (${distinct.size} distinct)`],
    ['store after the run', store.length === 0 ? 'consistent, snapshot rebuilds it' : store.join('; ')],
    ['GET /v1/users after the run', String(after)],
  ]);
  for (const list of distinct.values()) {
    const f = list[0]!;
    console.log(`\n${list.length} x ${f.problem}\n  replay: seed ${f.seed} index ${f.index}\n  request: ${f.request}\n  response: ${JSON.stringify(f.response)}`);
  }
}

async function oauthPhase(requests: number, seed: number, concurrency: number): Promise<void> {
  console.log(`\nfuzz-rest (OAuth endpoints): ${requests.toLocaleString('en-US')} requests, seed ${seed}`);
  const server = createServer({ rest: { port: 0 } });
  const { rest } = await server.start();
  const started = process.hrtime.bigint();
  const r = await fuzzOAuth(`http://127.0.0.1:${rest!.port}`, seed, requests, concurrency);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await server.stop();
  table('fuzz-oauth', [
    ['requests', requests.toLocaleString('en-US')],
    ['requests/s', fmt(requests / seconds, 0)],
    ['statuses', [...r.statuses].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}:${v}`).join(' ')],
    ['findings', String(r.findings.length)],
  ]);
  for (const f of r.findings.slice(0, 20)) console.log(`\n${f.problem}\n  replay: seed ${f.seed} index ${f.index}\n  request: ${f.request}\n  response: ${JSON.stringify(f.response)}`);
}

// ------------------------------------------------------------ event-stream memory

/** The child: a server whose RSS the parent reads over IPC. */
async function child(): Promise<void> {
  const maxStreamBuffer = Number(process.env.SSE_STREAM_BUFFER ?? 1024 * 1024);
  const server = createServer({ port: 0, rest: { port: 0, maxEventStreams: 1000, maxStreamBuffer } });
  const { imap, rest } = await server.start();
  const stats = (): ReturnType<RestServer['streamStats']> => (server as unknown as { rest: RestServer }).rest.streamStats();
  process.on('message', (m: { ask: string }) => {
    if (m.ask === 'stats') {
      global.gc?.();
      const s = stats();
      process.send!({ rss: process.memoryUsage().rss, streams: s.streams, queued: s.queued.reduce((a, b) => a + b, 0) });
    }
    if (m.ask === 'stop') void server.stop().then(() => process.exit(0));
  });
  process.send!({ imap: imap.port, rest: rest!.port });
}

function ask<T>(proc: ChildProcess, what: string): Promise<T> {
  return new Promise((resolve) => {
    proc.once('message', (m) => resolve(m as T));
    proc.send({ ask: what });
  });
}

async function stalledStream(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write('GET /v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await new Promise<void>((resolve) => {
    let head = '';
    const onData = (c: Buffer): void => {
      head += c.toString('latin1');
      if (head.includes(': connected')) {
        socket.off('data', onData);
        socket.pause();
        resolve();
      }
    };
    socket.on('data', onData);
  });
  return socket;
}

/** Runs `count` NOOPs pipelined in batches on one logged-in connection. */
async function noops(port: number, count: number, onBatch: () => Promise<void>): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  let buffer = '';
  let waiting: { tag: string; resolve: () => void } | null = null;
  socket.on('data', (c: Buffer) => {
    buffer += c.toString('latin1');
    if (waiting && buffer.includes(`\r\n${waiting.tag} `)) {
      buffer = '';
      const w = waiting;
      waiting = null;
      w.resolve();
    } else if (buffer.length > 1 << 20) buffer = buffer.slice(-200);
  });
  const until = (tag: string): Promise<void> => new Promise((resolve) => (waiting = { tag, resolve }));
  await new Promise((resolve) => socket.once('connect', resolve));
  const login = until('L');
  socket.write('L LOGIN testuser testpass\r\n');
  buffer = '\r\n';
  await login;
  const batch = 500;
  for (let done = 0; done < count; done += batch) {
    const n = Math.min(batch, count - done);
    let text = '';
    for (let i = 0; i < n; i++) text += `n${done + i} NOOP\r\n`;
    const last = until(`n${done + n - 1}`);
    buffer = '\r\n';
    socket.write(text);
    await last;
    await onBatch();
  }
  socket.destroy();
}

async function memoryPhase(streams: number, commands: number, streamBuffer: number): Promise<void> {
  console.log(
    `\nevent-stream memory: ${streams} streams that never read, ${commands.toLocaleString('en-US')} IMAP commands, rest.maxStreamBuffer ${streamBuffer.toLocaleString('en-US')}`,
  );
  const env = { ...process.env, [CHILD_ENV]: '1', SSE_STREAM_BUFFER: String(streamBuffer) };
  const proc = fork(fileURLToPath(import.meta.url), [], { env, execArgv: ['--expose-gc'] });
  const ports = await new Promise<{ imap: number; rest: number }>((resolve) => proc.once('message', (m) => resolve(m as never)));
  type Stats = { rss: number; streams: number; queued: number };
  const before = await ask<Stats>(proc, 'stats');
  const sockets: net.Socket[] = [];
  for (let i = 0; i < streams; i++) sockets.push(await stalledStream(ports.rest));
  const opened = await ask<Stats>(proc, 'stats');
  let peak = opened;
  let batches = 0;
  const started = process.hrtime.bigint();
  await noops(ports.imap, commands, async () => {
    if (++batches % 10 !== 0) return;
    const s = await ask<Stats>(proc, 'stats');
    if (s.rss > peak.rss) peak = s;
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const after = await ask<Stats>(proc, 'stats');
  if (after.rss > peak.rss) peak = after;
  for (const s of sockets) s.destroy();
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.send({ ask: 'stop' });
  await exited;
  const mb = (n: number): string => `${fmt(n / 1024 / 1024, 0)} MB`;
  table('event-stream memory (server process)', [
    ['RSS before streams', mb(before.rss)],
    [`RSS with ${opened.streams} streams open`, mb(opened.rss)],
    ['RSS peak during the commands', `${mb(peak.rss)} (${peak.streams} streams open, ${mb(peak.queued)} queued for them)`],
    ['RSS after', `${mb(after.rss)} (${after.streams} streams open)`],
    ['streams closed by the server', `${opened.streams - after.streams} of ${opened.streams}`],
    ['commands/s with the streams', fmt(commands / seconds, 0)],
  ]);
}

export async function run(args: string[] = []): Promise<void> {
  const requests = option(args, 'requests', 'REST_FUZZ_REQUESTS', 100_000);
  const seed = option(args, 'seed', 'REST_FUZZ_SEED', Date.now() % 1_000_000);
  const concurrency = option(args, 'concurrency', 'REST_FUZZ_CONCURRENCY', 8);
  const streams = option(args, 'streams', 'SSE_STREAMS', 100);
  const commands = option(args, 'commands', 'SSE_COMMANDS', 100_000);
  // `--stream-buffer 1000000000000` shows what an unbounded stream buffer costs.
  const streamBuffer = option(args, 'stream-buffer', 'SSE_STREAM_BUFFER', 1024 * 1024);
  const oauth = option(args, 'oauth', 'OAUTH_FUZZ_REQUESTS', 20_000);
  if (requests > 0) await fuzzPhase(requests, seed, concurrency);
  if (oauth > 0) await oauthPhase(oauth, seed, concurrency);
  if (streams > 0 && commands > 0) await memoryPhase(streams, commands, streamBuffer);
}

if (process.env[CHILD_ENV] === '1') void child();


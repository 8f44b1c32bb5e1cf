/**
 * REST bench: requests per second of the REST API under autocannon, against
 * a bare node:http server answering the same bytes.
 *
 *   npm run bench -- rest [duration=5] [connections=10] [rounds=3]
 *
 * Measures GET /v1/mailboxes/INBOX (a 1,000-message INBOX), POST
 * /v1/mailboxes/INBOX/messages (a small message per request) and a bare
 * node:http server in this process that answers the GET's exact body with the
 * same header shape (Content-Type, Content-Length, Cache-Control). Target:
 * GET req/s >= 0.7 x bare req/s.
 *
 * Where the load comes from: the servers run in this process, autocannon runs
 * in a child process (this same file, forked, driving autocannon's
 * programmatic API and sending the result back over IPC). With autocannon in
 * the server's process, the load generator's own work (writing requests,
 * parsing responses, histograms) would run on the server's event loop and
 * core, adding the same fixed cost to every request: every figure would be
 * understated and the GET/bare ratio pulled towards 1, flattering REST. A
 * worker thread would get its own event loop and core too, but it still
 * shares the process (its allocations, its CPU time in process.cpuUsage(),
 * which the "server CPU/req" column reads); a child process is the clean
 * split on a 2-core machine: one core for the load generator, one for the
 * servers. Every target is measured the same way, each after a short warm-up
 * run that is not reported. On 2 cores the load generator is about as busy
 * as the server, so req/s figures move with other load on the machine; GET
 * and bare are therefore measured in alternating rounds and compared per
 * round.
 */
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { createServer } from '../src/index.js';
import { fmt, median, message, table } from './client.js';

const LOADGEN_ENV = 'ROOKERY_BENCH_LOADGEN';
const WARMUP_SECONDS = 1;
const TARGET_RATIO = 0.7;

/** What the parent asks the load-generator child to run. */
export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  duration: number;
}

/** What the child sends back: the figures of autocannon's result that are printed. */
export interface LoadResult {
  requests: number;
  total: number;
  p50: number;
  p99: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  /** Filled in by the parent: CPU time (user + system) of this process, the servers', per request in µs. */
  cpuUs?: number;
}

// ------------------------------------------------------------ child: the load generator

async function loadgen(spec: LoadSpec): Promise<LoadResult> {
  const opts: autocannon.Options = {
    url: spec.url,
    method: spec.method,
    connections: spec.connections,
    duration: spec.duration,
    pipelining: 1,
  };
  if (spec.headers) opts.headers = spec.headers;
  if (spec.body !== undefined) opts.body = spec.body;
  const r = await autocannon(opts);
  return {
    requests: r.requests.average,
    total: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
  };
}

if (process.env[LOADGEN_ENV] === '1' && process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  process.once('message', (spec: LoadSpec) => {
    loadgen(spec).then(
      (result) => process.send!({ result }, undefined, {}, () => process.disconnect()),
      (err: unknown) => process.send!({ error: String(err) }, undefined, {}, () => process.disconnect()),
    );
  });
}

/** Runs one autocannon measurement in a fresh child process. */
export function measure(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, [LOADGEN_ENV]: '1' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let done = false;
    const cpu = process.cpuUsage();
    child.once('message', (msg: { result?: LoadResult; error?: string }) => {
      done = true;
      const used = process.cpuUsage(cpu);
      if (msg.result) resolve({ ...msg.result, cpuUs: (used.user + used.system) / Math.max(1, msg.result.total) });
      else reject(new Error(`autocannon: ${msg.error}`));
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (!done) reject(new Error(`load generator exited with ${code} before answering`));
    });
    child.send(spec);
  });
}

// ------------------------------------------------------------ parent: the servers

function option(args: string[], name: string, fallback: number): number {
  const a = args.find((s) => s.startsWith(`${name}=`));
  if (!a) return fallback;
  const v = Number(a.slice(name.length + 1));
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name}: expected a positive number, got ${a}`);
  return v;
}

function row(name: string, r: LoadResult): string[] {
  return [
    name,
    Math.round(r.requests).toLocaleString('en-US'),
    `${r.p50} ms`,
    `${r.p99} ms`,
    String(r.errors),
    String(r.non2xx),
    r.total.toLocaleString('en-US'),
    r.cpuUs === undefined ? '' : `${fmt(r.cpuUs, 1)} µs`,
  ];
}

export async function run(args: string[] = []): Promise<void> {
  const duration = option(args, 'duration', 5);
  const connections = option(args, 'connections', 10);
  const rounds = Math.round(option(args, 'rounds', 3));

  const storage = { INBOX: { messages: Array.from({ length: 1000 }, (_, i) => message(i)) }, '': {} };
  const server = createServer({ storage, port: 0, rest: { port: 0 } });
  const { rest } = await server.start();
  if (!rest) throw new Error('REST listener did not start');
  const base = `http://127.0.0.1:${rest.port}`;
  const getUrl = `${base}/v1/mailboxes/INBOX`;
  const postUrl = `${base}/v1/mailboxes/INBOX/messages`;

  // The bare server answers the GET's exact bytes with the same header shape as RestServer#send.
  const sample = await fetch(getUrl);
  if (sample.status !== 200) throw new Error(`GET ${getUrl}: ${sample.status}`);
  const text = await sample.text();
  const resource = JSON.parse(text) as { path?: string; messages?: number };
  if (resource.path !== 'INBOX' || resource.messages !== 1000) throw new Error(`GET ${getUrl}: unexpected resource ${text}`);
  const bareBody = Buffer.from(text, 'utf8');
  const bare = http.createServer((_req, res) => {
    res.writeHead(200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': bareBody.length,
      'Cache-Control': 'no-store',
    });
    res.end(bareBody);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/v1/mailboxes/INBOX`;

  const postBody = JSON.stringify({ raw: 'From: Bench <bench@example.com>\r\nTo: testuser@example.com\r\nSubject: bench\r\n\r\nhello\r\n' });
  const postSpec = { url: postUrl, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: postBody };

  console.log(`\nnode ${process.version}, ${os.availableParallelism()} cores; servers in this process, autocannon in a child process`);
  console.log(`${connections} connections, ${duration} s per run after a ${WARMUP_SECONDS} s warm-up, ${rounds} rounds of GET and bare; GET response ${bareBody.length} bytes`);

  const load = (spec: Omit<LoadSpec, 'connections' | 'duration'>, seconds: number): Promise<LoadResult> =>
    measure({ ...spec, connections, duration: seconds });
  const get = { url: getUrl, method: 'GET' as const };
  const bareSpec = { url: bareUrl, method: 'GET' as const };

  // Warm both GET paths up, then measure them in alternating pairs (GET/bare,
  // bare/GET, ...) so drift in the machine's load hits both alike; each
  // target reports its median round and the ratio is the median of the
  // per-round ratios. POST goes last, as it grows INBOX.
  await load(get, WARMUP_SECONDS);
  await load(bareSpec, WARMUP_SECONDS);
  const gets: LoadResult[] = [];
  const bares: LoadResult[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      gets.push(await load(get, duration));
      bares.push(await load(bareSpec, duration));
    } else {
      bares.push(await load(bareSpec, duration));
      gets.push(await load(get, duration));
    }
  }
  await load(postSpec, WARMUP_SECONDS);
  const postResult = await load(postSpec, duration);

  await new Promise<void>((resolve) => bare.close(() => resolve()));
  await server.stop();

  const ratios = gets.map((g, i) => g.requests / bares[i]!.requests);
  const ratio = median(ratios);
  const rows: string[][] = [['target', 'req/s (avg)', 'p50', 'p99', 'errors', 'non-2xx', 'requests', 'server CPU/req']];
  rows.push(row('GET /v1/mailboxes/INBOX', medianRound(gets)));
  rows.push(row('POST /v1/mailboxes/INBOX/messages', postResult));
  rows.push(row('bare node:http (same body)', medianRound(bares)));
  table(`rest (autocannon; GET and bare: median of ${rounds} rounds)`, rows);
  console.log(`GET req/s per round: ${gets.map((r) => Math.round(r.requests)).join(', ')}`);
  console.log(`bare req/s per round: ${bares.map((r) => Math.round(r.requests)).join(', ')}`);
  console.log(`GET/bare per round: ${ratios.map((r) => fmt(r)).join(', ')}`);
  const cpuRatio = median(bares.map((b, i) => b.cpuUs! / gets[i]!.cpuUs!));
  console.log(`server CPU per request, bare/GET (median of rounds; the same ratio seen from this process's CPU time): ${fmt(cpuRatio)}x`);
  table('rest target', [
    ['metric', 'value', 'target', 'result'],
    ['GET / bare req/s (median of rounds)', `${fmt(ratio)}x`, `>= ${TARGET_RATIO}x`, ratio >= TARGET_RATIO ? 'PASS' : 'MISS'],
  ]);
}

/** The round with the median req/s; errors and non-2xx summed over every round. */
function medianRound(results: LoadResult[]): LoadResult {
  const sorted = [...results].sort((a, b) => a.requests - b.requests);
  const mid = sorted[(sorted.length - 1) >> 1]!;
  const sum = (f: (r: LoadResult) => number): number => results.reduce((n, r) => n + f(r), 0);
  return { ...mid, errors: sum((r) => r.errors), timeouts: sum((r) => r.timeouts), non2xx: sum((r) => r.non2xx) };
}

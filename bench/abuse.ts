/**
 * Abuse bench (issue 18): replays what a broken or hostile client does to a
 * server and prints the server's peak RSS for each, with a well-behaved
 * client's NOOP latency (p50/p99) measured beside the attack.
 *
 * The server runs in a child process, so the RSS is its own. Attacks:
 * 1. pipeliner: 1,000 `UID FETCH 1 BODY.PEEK[]` of a 1 MB message, never read.
 * 2. pre-login literal flood: `LOGIN {65536+}` followed by 3,200 literals of
 *    64 KiB each, on 4 connections.
 * 3. stalled event streams: 100 SSE streams that never read while another
 *    client runs 20,000 IMAP commands that each emit events.
 * 4. descriptor flood: 6,000 idle connections against the default cap of
 *    5,000, then one REST request to show REST is still reachable.
 * 5. REST half-open flood: 3,000 connections that send a request line and
 *    headers but never the blank line, against `rest.maxConnections` 1,000;
 *    then an IMAP login and one REST request.
 * 6. concurrent bodies: 8 POSTs of 64 MiB bodies at once (read and parsed,
 *    then refused by the schema, so nothing is stored), with the default
 *    `rest.maxBodyBytesInFlight` of 128 MiB and, in a second server, with
 *    the budget out of the way (what the server did before it had one).
 * 7. POP3 non-reading pipeliner: USER, PASS and 1,000 `RETR 1` of the 1 MB
 *    message in one write, never read; besides RSS, the most output any one
 *    connection had buffered in the server (socket `writableLength`, seen by
 *    wrapping `net.Socket#write` in the child).
 * 8. POP3 pre-login flood: 1,200 connections that never log in against the
 *    default `maxUnauthenticated` of 1,000; then a POP3 login, timed.
 * A POP3 normal client (NOOP) stands beside the POP3 attacks.
 *
 * `npm run bench -- abuse` (`--only=pop3`: the attacks whose name holds the word).
 */
import { fork, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { createServer } from '../src/index.js';
import { table } from './client.js';

const MB = 1024 * 1024;

async function child(): Promise<void> {
  const body = 'x'.repeat(76) + '\r\n';
  const big = `Subject: big\r\n\r\n${body.repeat(Math.ceil(MB / body.length))}`;
  const restOptions = JSON.parse(process.argv[process.argv.indexOf("--child") + 1] ?? "{}") as object;
  const server = createServer({ port: 0, plugins: 'all', rest: { port: 0, ...restOptions }, storage: { INBOX: { messages: [big] } }, pop3: { port: 0 } });
  const started = await server.start();
  // The most output any one connection held unsent: what a client that never reads costs the server per session.
  let buffered = 0;
  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function (this: net.Socket, ...args: Parameters<net.Socket['write']>): boolean {
    const flushed = write.apply(this, args);
    if (this.writableLength > buffered) buffered = this.writableLength;
    return flushed;
  } as net.Socket['write'];
  process.on('message', (m: { ask: string }) => {
    if (m.ask === 'rss') process.send!({ rss: process.memoryUsage.rss() });
    if (m.ask === 'gc') {
      global.gc?.();
      process.send!({ rss: process.memoryUsage.rss() });
    }
    if (m.ask === 'buffered') {
      process.send!({ buffered });
      buffered = 0;
    }
  });
  process.send!({ imap: started.imap.port, rest: started.rest!.port, pop3: started.pop3!.port });
}

function ask(proc: ChildProcess, what: string): Promise<number> {
  // answers come back in the order asked, but RSS polls run beside other questions: each waits for its own field
  const field = what === 'buffered' ? 'buffered' : 'rss';
  return new Promise((resolve) => {
    const onMessage = (m: { rss?: number; buffered?: number }): void => {
      const value = m[field];
      if (value === undefined) return;
      proc.off('message', onMessage);
      resolve(value);
    };
    proc.on('message', onMessage);
    proc.send({ ask: what });
  });
}

/** Polls the child's RSS while `attack` runs; returns the peak. */
async function peakDuring(proc: ChildProcess, attack: () => Promise<void>): Promise<number> {
  let peak = await ask(proc, 'rss');
  let running = true;
  const poll = (async () => {
    while (running) {
      peak = Math.max(peak, await ask(proc, 'rss'));
      await sleep(50);
    }
  })();
  await attack();
  running = false;
  await poll;
  return peak;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function connect(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return socket;
}

/** A well-behaved client: NOOPs one at a time, timing each, until `stop()`. */
async function normalClient(port: number): Promise<{ stop: () => Promise<number[]> }> {
  const socket = await connect(port);
  let buffer = '';
  let wake: (() => void) | null = null;
  socket.on('data', (d: Buffer) => {
    buffer += d.toString('latin1');
    wake?.();
  });
  const until = async (text: string): Promise<void> => {
    while (!buffer.includes(text)) await new Promise<void>((r) => (wake = r));
    buffer = '';
  };
  socket.write('a LOGIN testuser testpass\r\n');
  await until('a OK');
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const t = process.hrtime.bigint();
      socket.write(`n${i} NOOP\r\n`);
      await until(`n${i} OK`);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
      await sleep(5);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      socket.destroy();
      return times;
    },
  };
}

function percentile(values: number[], p: number): string {
  if (values.length === 0) return 'n/a';
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2)} ms`;
}

async function pipeliner(port: number): Promise<void> {
  const socket = await connect(port);
  socket.pause();
  let commands = 'a LOGIN testuser testpass\r\nb SELECT INBOX\r\n';
  for (let i = 0; i < 1000; i++) commands += `f${i} UID FETCH 1 BODY.PEEK[]\r\n`;
  socket.write(commands);
  await sleep(2000);
  socket.destroy();
}

async function preLoginFlood(port: number): Promise<void> {
  const literal = Buffer.alloc(64 * 1024, 0x61);
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      const socket = await connect(port);
      socket.resume();
      socket.write('X1 LOGIN {65536+}\r\n');
      for (let i = 0; i < 800; i++) {
        if (!socket.write(literal)) await new Promise((r) => socket.once('drain', r));
        socket.write(' {65536+}\r\n');
        if (socket.destroyed) break;
      }
      socket.destroy();
    }),
  );
  await sleep(500);
}

async function stalledStreams(imapPort: number, restPort: number): Promise<void> {
  const streams: net.Socket[] = [];
  for (let i = 0; i < 100; i++) {
    const socket = await connect(restPort);
    socket.write('GET /v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n');
    socket.pause();
    streams.push(socket);
  }
  const worker = await connect(imapPort);
  let seen = 0;
  let wake: (() => void) | null = null;
  worker.on('data', (d: Buffer) => {
    seen += d.toString('latin1').split('\r\nn').length - 1;
    wake?.();
  });
  worker.write('a LOGIN testuser testpass\r\nb SELECT INBOX\r\n');
  const total = 20_000;
  for (let sent = 0; sent < total; sent += 500) {
    let batch = '';
    for (let i = 0; i < 500; i++) batch += `n${sent + i} NOOP\r\n`;
    worker.write(batch);
  }
  const deadline = Date.now() + 60_000;
  while (seen < total && Date.now() < deadline) await Promise.race([new Promise<void>((r) => (wake = r)), sleep(100)]);
  worker.destroy();
  for (const s of streams) s.destroy();
}

async function descriptorFlood(imapPort: number, restPort: number): Promise<string> {
  const sockets: net.Socket[] = [];
  let refused = 0;
  for (let i = 0; i < 6000; i++) {
    try {
      const s = await connect(imapPort);
      s.on('data', (d: Buffer) => {
        if (d.toString('latin1').includes('BYE [UNAVAILABLE]')) refused++;
      });
      sockets.push(s);
    } catch {
      refused++;
    }
  }
  await sleep(500);
  const t = process.hrtime.bigint();
  const res = await fetch(`http://127.0.0.1:${restPort}/v1/sessions`).catch(() => null);
  const restMs = Number(process.hrtime.bigint() - t) / 1e6;
  for (const s of sockets) s.destroy();
  await sleep(500);
  return `${refused} refused with BYE; REST GET /v1/sessions ${res ? res.status : 'failed'} in ${restMs.toFixed(1)} ms`;
}

/** Opens `n` connections that send a request line and headers but never the blank line that ends them. */
async function restHalfOpenFlood(imapPort: number, restPort: number): Promise<string> {
  const sockets: net.Socket[] = [];
  let refused = 0;
  for (let i = 0; i < 3000; i++) {
    try {
      const s = await connect(restPort);
      s.on('data', (d: Buffer) => {
        if (d.toString('latin1').startsWith('HTTP/1.1 503')) refused++;
      });
      s.write('GET /v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      sockets.push(s);
    } catch {
      // A connection the server could not take at all.
    }
  }
  await sleep(500);
  let t = process.hrtime.bigint();
  const login = await imapLogin(imapPort);
  const loginMs = Number(process.hrtime.bigint() - t) / 1e6;
  t = process.hrtime.bigint();
  const res = await fetch(`http://127.0.0.1:${restPort}/v1/health`).catch(() => null);
  const restMs = Number(process.hrtime.bigint() - t) / 1e6;
  for (const s of sockets) s.destroy();
  await sleep(500);
  return `${refused} refused with 503; IMAP login ${login ? 'OK' : 'failed'} in ${loginMs.toFixed(1)} ms; REST GET /v1/health while full ${res ? res.status : 'failed'} in ${restMs.toFixed(1)} ms`;
}

async function imapLogin(port: number): Promise<boolean> {
  const s = await connect(port);
  let text = '';
  const ok = await new Promise<boolean>((resolve) => {
    s.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (text.startsWith('* OK') && !text.includes('a ')) s.write('a LOGIN testuser testpass\r\n');
      if (/a (OK|NO|BAD)/.test(text)) resolve(/a OK/.test(text));
    });
    s.once('close', () => resolve(false));
    setTimeout(() => resolve(false), 5000).unref();
  });
  s.destroy();
  return ok;
}

/** Eight POSTs of a 64 MiB body each, all at once: read and parsed, then refused by the schema (an unknown field). */
async function concurrentBodies(restPort: number): Promise<string> {
  const head = '{"uids":[1],"flags":["\\\\Seen"],"pad":"';
  const tail = '"}';
  const size = 64 * MB - 1;
  const body = Buffer.alloc(size, 0x78);
  body.write(head, 0, 'latin1');
  body.write(tail, size - tail.length, 'latin1');
  const started = process.hrtime.bigint();
  const statuses = await Promise.all(
    Array.from({ length: 8 }, async () => {
      const res = await fetch(`http://127.0.0.1:${restPort}/v1/mailboxes/INBOX/messages/flags`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      }).catch(() => null);
      if (res) await res.arrayBuffer();
      return res ? res.status : 0;
    }),
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const counts = new Map<number, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return `${[...counts].map(([s, n]) => `${n} x ${s || 'failed'}`).join(', ')} in ${(ms / 1000).toFixed(1)} s`;
}

/** A well-behaved POP3 client: NOOPs one at a time, timing each, until `stop()`. */
async function normalPop3Client(port: number): Promise<{ stop: () => Promise<number[]> }> {
  const socket = await connect(port);
  let buffer = '';
  let wake: (() => void) | null = null;
  socket.on('data', (d: Buffer) => {
    buffer += d.toString('latin1');
    wake?.();
  });
  const answers = async (n: number): Promise<void> => {
    while ((buffer.match(/\r\n/g) ?? []).length < n) await new Promise<void>((r) => (wake = r));
    buffer = '';
  };
  await answers(1);
  socket.write('USER testuser\r\nPASS testpass\r\n');
  await answers(2);
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = process.hrtime.bigint();
      socket.write('NOOP\r\n');
      await answers(1);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
      await sleep(5);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      socket.destroy();
      return times;
    },
  };
}

/** USER, PASS and 1,000 RETR of the 1 MB message in one write, never read. */
async function pop3Pipeliner(proc: ChildProcess, port: number): Promise<string> {
  await ask(proc, 'buffered');
  const socket = await connect(port);
  socket.pause();
  let commands = 'USER testuser\r\nPASS testpass\r\n';
  for (let i = 0; i < 1000; i++) commands += 'RETR 1\r\n';
  socket.write(commands);
  await sleep(2000);
  const most = await ask(proc, 'buffered');
  socket.destroy();
  return `most output buffered for one connection: ${(most / MB).toFixed(2)} MB (of ~1,000 MB asked for)`;
}

/**
 * 1,200 connections that never log in against the default maxUnauthenticated of 1,000. A client that
 * connected before the flood still logs in, a new one is refused while the flood lasts, and one after it is let in.
 */
async function pop3PreLoginFlood(port: number): Promise<string> {
  const early = await connect(port);
  let earlyText = '';
  early.on('data', (d: Buffer) => (earlyText += d.toString('latin1')));
  const sockets: net.Socket[] = [];
  let refused = 0;
  for (let i = 0; i < 1200; i++) {
    try {
      const s = await connect(port);
      let text = '';
      s.on('data', (d: Buffer) => {
        const first = text === '';
        text += d.toString('latin1');
        if (first && text.startsWith('-ERR')) refused++;
      });
      sockets.push(s);
    } catch {
      refused++;
    }
  }
  await sleep(500);
  const t = process.hrtime.bigint();
  early.write('USER testuser\r\nPASS testpass\r\n');
  const deadline = Date.now() + 5000;
  while (earlyText.split('\r\n').length < 4 && Date.now() < deadline) await sleep(5);
  const earlyMs = Number(process.hrtime.bigint() - t) / 1e6;
  const earlyOk = /^\+OK[^\r]*\r\n\+OK[^\r]*\r\n\+OK/.test(earlyText);
  early.destroy();
  const during = await pop3Login(port);
  for (const s of sockets) s.destroy();
  await sleep(500);
  const after = await pop3Login(port);
  return `${refused} of 1,200 refused with -ERR; connected before: login ${earlyOk ? 'OK' : 'failed'} in ${earlyMs.toFixed(1)} ms; new during: ${during ? 'let in' : 'refused'}; new after: ${after ? 'OK' : 'failed'}`;
}

async function pop3Login(port: number): Promise<boolean> {
  const s = await connect(port);
  let text = '';
  const ok = await new Promise<boolean>((resolve) => {
    s.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      const lines = text.split('\r\n');
      if (lines.length === 2 && lines[0]!.startsWith('+OK')) s.write('USER testuser\r\nPASS testpass\r\n');
      if (lines.length >= 4) resolve(lines[1]!.startsWith('+OK') && lines[2]!.startsWith('+OK'));
      if (text.startsWith('-ERR')) resolve(false);
    });
    s.once('close', () => resolve(false));
    setTimeout(() => resolve(false), 5000).unref();
  });
  s.destroy();
  return ok;
}

async function startChild(rest: object): Promise<{ proc: ChildProcess; ports: { imap: number; rest: number; pop3: number } }> {
  const proc = fork(fileURLToPath(import.meta.url), ['--child', JSON.stringify(rest)], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ports = await new Promise<{ imap: number; rest: number; pop3: number }>((resolve) => proc.once('message', (m) => resolve(m as { imap: number; rest: number; pop3: number })));
  return { proc, ports };
}

export async function run(args: string[] = []): Promise<void> {
  // `--only=pop3`: the attacks whose name holds the word (case-insensitive), e.g. to measure one protocol's
  const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).toLowerCase();
  const wanted = (name: string): boolean => only === undefined || name.toLowerCase().includes(only);
  const { proc, ports } = await startChild({});
  const rows: [string, string, string, string][] = [];
  const attacks: [string, () => Promise<string | void>][] = [
    ['non-reading pipeliner (1,000 x 1 MB FETCH)', () => pipeliner(ports.imap)],
    ['pre-login literal flood (4 x 800 x 64 KiB)', () => preLoginFlood(ports.imap)],
    ['100 stalled SSE readers, 20,000 commands', () => stalledStreams(ports.imap, ports.rest)],
    ['descriptor flood (6,000 connections)', () => descriptorFlood(ports.imap, ports.rest)],
    ['REST half-open flood (3,000 connections)', () => restHalfOpenFlood(ports.imap, ports.rest)],
    ['8 concurrent 64 MiB bodies (budget 128 MiB)', () => concurrentBodies(ports.rest)],
  ];
  const measure = async (target: { proc: ChildProcess; ports: { imap: number; pop3?: number } }, name: string, attack: () => Promise<string | void>, pop3 = false): Promise<void> => {
    const before = await ask(target.proc, 'gc');
    const normal = pop3 ? await normalPop3Client(target.ports.pop3!) : await normalClient(target.ports.imap);
    let note = '';
    const peak = await peakDuring(target.proc, async () => {
      note = (await attack()) ?? '';
    });
    const times = await normal.stop();
    rows.push([name, `${(before / MB).toFixed(0)} -> ${(peak / MB).toFixed(0)} MB`, `${percentile(times, 50)} / ${percentile(times, 99)}`, note]);
  };
  for (const [name, attack] of attacks) if (wanted(name)) await measure({ proc, ports }, name, attack);
  const pop3Attacks: [string, () => Promise<string>][] = [
    ['POP3 non-reading pipeliner (1,000 x 1 MB RETR)', () => pop3Pipeliner(proc, ports.pop3)],
    ['POP3 pre-login flood (1,200 connections)', () => pop3PreLoginFlood(ports.pop3)],
  ];
  for (const [name, attack] of pop3Attacks) if (wanted(name)) await measure({ proc, ports }, name, attack, true);
  proc.kill();
  // The same bodies against a server whose budget is out of the way: what one costs without it.
  if (wanted('8 concurrent 64 MiB bodies (no budget)')) {
    const unbounded = await startChild({ maxBodyBytesInFlight: 2 ** 40 });
    await measure(unbounded, '8 concurrent 64 MiB bodies (no budget)', () => concurrentBodies(unbounded.ports.rest));
    unbounded.proc.kill();
  }
  table('abuse: server RSS (child process) and a normal client\'s NOOP latency (IMAP, or POP3 beside the POP3 attacks) beside each attack', [
    ['attack', 'RSS before -> peak', 'normal p50 / p99', 'note'],
    ...rows,
  ]);
}

if (process.argv.includes('--child')) void child();

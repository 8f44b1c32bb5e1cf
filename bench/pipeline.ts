/**
 * Pipelined commands (issue 37): the cost of Rookery's command path itself,
 * with no storage work to hide behind. `clients` connections (10), each on a
 * mailbox of its own (so no session's STORE becomes another's untagged
 * FETCH), keep `window` commands (64) in flight: a batch is written in one
 * write, the next goes when the batch's last tagged answer is in. Four kinds,
 * each run alone: `NOOP`, `UID FETCH n (FLAGS)`, `UID STORE n +FLAGS
 * (\Flagged)` (and `-FLAGS`, in turn) and `UID SEARCH UNSEEN` (half of the
 * 200 messages are unseen).
 *
 *   npm run bench -- pipeline [--seconds=S] [--rounds=R] [--clients=N] [--window=W] [--kinds=noop,fetch,store,search] [--sides=rookery,floor,dovecot]
 *
 * Three sides, in rotating order, the median of their rounds kept: Rookery
 * (`plugins: "all"`, the server's defaults otherwise: transcripts and the
 * client checker on), the node:net floor (a server that answers each kind
 * with Rookery's recorded bytes, the tag swapped in, one write per read: no
 * parsing beyond the line, no state) and Dovecot, when installed. The
 * clients run in a child process of their own and so does Rookery, so the
 * clients' parsing never shares the server's event loop; the server's CPU
 * time per command is printed beside its rate.
 *
 * This file is also the child processes (ROOKERY_BENCH_PIPELINE=clients,
 * =server or =floor); imported any other way it does nothing.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { createServer } from '../src/index.js';
import { fmt, median, messageOfSize, table } from './client.js';
import { DOVECOT, startDovecot, type Target } from './imap.js';
import { askChild } from './fleet.js';

export const PIPELINE_ENV = 'ROOKERY_BENCH_PIPELINE';

export const KINDS = ['noop', 'fetch', 'store', 'search'] as const;
export type Kind = (typeof KINDS)[number];

/** Messages in each client's mailbox. */
export const MAILBOX_SIZE = 200;

/** The text of the `i`th command of a kind (without tag). */
function commandText(kind: Kind, i: number): string {
  const uid = 1 + (i % MAILBOX_SIZE);
  switch (kind) {
    case 'noop':
      return 'NOOP';
    case 'fetch':
      return `UID FETCH ${uid} (FLAGS)`;
    case 'store':
      // +FLAGS then -FLAGS on the same message: every STORE changes a flag, so every answer has its FETCH.
      return `UID STORE ${1 + ((i >> 1) % MAILBOX_SIZE)} ${i & 1 ? '-' : '+'}FLAGS (\\Flagged)`;
    case 'search':
      return 'UID SEARCH UNSEEN';
  }
}

const mailboxOf = (client: number): string => `box${client}`;

// ------------------------------------------------------------ a line reader for the set-up steps

class Lines {
  private text = '';
  private wake: (() => void) | null = null;
  constructor(readonly sock: net.Socket) {
    sock.on('data', (d: Buffer) => {
      this.text += d.toString('latin1');
      this.wake?.();
    });
  }
  /** Waits until the text so far matches, then forgets it. */
  async wait(re: RegExp): Promise<string> {
    while (!re.test(this.text)) {
      if (this.sock.destroyed) throw new Error(`connection closed waiting for ${re}`);
      await new Promise<void>((r) => (this.wake = r));
    }
    const t = this.text;
    this.text = '';
    return t;
  }
}

async function open(t: Target): Promise<Lines> {
  const sock = net.connect(t);
  sock.setNoDelay(true);
  const lines = new Lines(sock);
  sock.on('close', () => lines.wait(/$^/).catch(() => undefined));
  await lines.wait(/\r\n/);
  sock.write('a LOGIN testuser testpass\r\n');
  await lines.wait(/^a OK|\r\na OK/);
  return lines;
}

/**
 * Fills mailboxes box0..box{n-1} with MAILBOX_SIZE messages each, the even
 * ones \Seen, over IMAP: the same bytes for every server.
 */
export async function seed(t: Target, mailboxes: number): Promise<void> {
  const c = await open(t);
  for (let b = 0; b < mailboxes; b++) {
    c.sock.write(`c CREATE ${mailboxOf(b)}\r\n`);
    await c.wait(/(^|\r\n)c (OK|NO)/);
    // LITERAL+ (both servers have it): the mailbox's APPENDs go in one write, the answers are awaited together.
    let batch = '';
    for (let i = 0; i < MAILBOX_SIZE; i++) {
      const m = messageOfSize(b * MAILBOX_SIZE + i, 800);
      batch += `p${i} APPEND ${mailboxOf(b)} ${i % 2 === 0 ? '(\\Seen) ' : ''}{${Buffer.byteLength(m)}+}\r\n${m}\r\n`;
    }
    c.sock.write(batch);
    await c.wait(new RegExp(`(^|\\r\\n)p${MAILBOX_SIZE - 1} OK`));
  }
  c.sock.destroy();
}

/** Each kind's answer as Rookery sends it (tag `T`, untagged lines first), recorded once. */
async function record(t: Target): Promise<Map<string, Buffer>> {
  const c = await open(t);
  const out = new Map<string, Buffer>();
  c.sock.write(`s SELECT ${mailboxOf(0)}\r\n`);
  out.set('SELECT', Buffer.from((await c.wait(/(^|\r\n)s OK.*\r\n/)).replace(/(^|\r\n)s OK/, '$1T OK'), 'latin1'));
  const probes: [string, string][] = [
    ['NOOP', 'NOOP'],
    ['UID FETCH', commandText('fetch', 0)],
    ['UID STORE', commandText('store', 0)],
    ['UID SEARCH', commandText('search', 0)],
  ];
  for (const [name, text] of probes) {
    c.sock.write(`T ${text}\r\n`);
    out.set(name, Buffer.from(await c.wait(/(^|\r\n)T [A-Z]+ .*\r\n/), 'latin1'));
  }
  // Undo the probe's +FLAGS, so the measured runs start from the seed.
  c.sock.write(`u ${commandText('store', 1)}\r\nz LOGOUT\r\n`);
  await c.wait(/(^|\r\n)z OK/);
  c.sock.destroy();
  out.set('LOGIN', Buffer.from('T OK LOGIN completed\r\n'));
  out.set('LOGOUT', Buffer.from('* BYE\r\nT OK LOGOUT completed\r\n'));
  return out;
}

// ------------------------------------------------------------ the clients' process

interface RunAsk {
  ask: 'run';
  target: Target;
  clients: number;
  window: number;
  kind: Kind;
  ms: number;
}

interface RunResult {
  answers: number;
  errors: number;
  seconds: number;
}

/** One client: LOGIN, SELECT its mailbox, then windows of `window` commands until `deadline`. */
async function pipelineClient(a: RunAsk, id: number, deadline: { at: number }, res: RunResult, ready: () => void, go: Promise<void>): Promise<void> {
  const c = await open(a.target);
  c.sock.write(`s SELECT ${mailboxOf(id)}\r\n`);
  await c.wait(/(^|\r\n)s OK/);
  c.sock.removeAllListeners('data');
  ready();
  await go;
  let n = 0;
  let outstanding = 0;
  // A line starts at byte 0 of a chunk when the last chunk ended with its LF.
  let lineStart = true;
  const sendBatch = (): void => {
    let batch = '';
    for (let k = 0; k < a.window; k++, n++) batch += `a${n} ${commandText(a.kind, n)}\r\n`;
    outstanding = a.window;
    c.sock.write(batch);
  };
  /** A line starting at `at`: a tagged one (neither `*` nor `+` first) is an answer; not `tag OK` is an error. */
  const look = (d: Buffer, at: number): void => {
    const first = d[at]!;
    if (first === 42 /* * */ || first === 43 /* + */) return;
    outstanding--;
    res.answers++;
    const sp = d.indexOf(32, at);
    // A status split across two reads is taken as OK: rare, and counted on no side.
    if (sp >= 0 && sp + 2 < d.length && (d[sp + 1] !== 79 /* O */ || d[sp + 2] !== 75) /* K */) res.errors++;
  };
  await new Promise<void>((resolve) => {
    c.sock.on('data', (d: Buffer) => {
      if (lineStart) look(d, 0);
      let i = d.indexOf(10);
      while (i !== -1 && i + 1 < d.length) {
        look(d, i + 1);
        i = d.indexOf(10, i + 1);
      }
      lineStart = d[d.length - 1] === 10;
      if (outstanding === 0) {
        if (Date.now() < deadline.at) sendBatch();
        else resolve();
      }
    });
    sendBatch();
  });
  c.sock.destroy();
}

async function clientsRole(): Promise<void> {
  process.on('message', (m: RunAsk | { ask: 'stop' }) => {
    if (m.ask === 'stop') process.exit(0);
    void (async () => {
      const res: RunResult = { answers: 0, errors: 0, seconds: 0 };
      const deadline = { at: Number.POSITIVE_INFINITY };
      let readyCount = 0;
      let go!: () => void;
      const started = new Promise<void>((r) => (go = r));
      let allReady!: () => void;
      const ready = new Promise<void>((r) => (allReady = r));
      const loops = Array.from({ length: m.clients }, (_, i) =>
        pipelineClient(m, i, deadline, res, () => ++readyCount === m.clients && allReady(), started),
      );
      await ready;
      const t0 = process.hrtime.bigint();
      deadline.at = Date.now() + m.ms;
      go();
      await Promise.all(loops);
      res.seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      process.send!({ result: res });
    })().catch((e: Error) => process.send!({ error: e.stack }));
  });
  process.send!({ up: true });
}

// ------------------------------------------------------------ the servers' processes

/** Tells the driver this process's CPU time so far (user and system, milliseconds). */
function sendCpu(): void {
  const u = process.cpuUsage();
  process.send!({ cpu: (u.user + u.system) / 1000 });
}

async function serverRole(): Promise<void> {
  const server = createServer({ port: 0, plugins: 'all', ...(JSON.parse(process.env.BENCH_SERVER_OPTIONS ?? '{}') as object) });
  const { imap } = await server.start();
  process.on('message', (m: { ask: 'cpu' } | { ask: 'stop' }) => {
    if (m.ask === 'cpu') sendCpu();
    else void server.stop().then(() => process.exit(0));
  });
  process.send!({ port: imap.port });
}

/**
 * The floor: answers every line with the recorded answer of its command
 * (found by the words after the tag), the tag swapped in, and writes what
 * one read asked for in one write, as a server built for pipelining would.
 */
async function floorRole(): Promise<void> {
  const answers = await new Promise<Map<string, Buffer>>((resolve) => {
    process.once('message', (m: { answers: [string, string][] }) => resolve(new Map(m.answers.map(([k, v]) => [k, Buffer.from(v, 'latin1')]))));
  });
  const split = new Map<string, { untagged: Buffer; status: Buffer }>();
  for (const [name, bytes] of answers) {
    const at = bytes.subarray(0, 2).toString() === 'T ' ? 0 : bytes.lastIndexOf('\r\nT ') + 2;
    split.set(name, { untagged: bytes.subarray(0, at), status: bytes.subarray(at + 1) });
  }
  const names = [...split.keys()].sort((a, b) => b.length - a.length);
  const server = net.createServer((sock) => {
    sock.setNoDelay(true);
    sock.write('* OK floor ready\r\n');
    let buf: Buffer = Buffer.alloc(0);
    sock.on('error', () => undefined);
    sock.on('data', (d: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      const out: Buffer[] = [];
      let pos = 0;
      for (;;) {
        const eol = buf.indexOf(10, pos);
        if (eol < 0) break;
        const space = buf.indexOf(32, pos);
        const tag = buf.subarray(pos, space);
        const rest = buf.toString('latin1', space + 1, Math.min(eol, space + 12)).toUpperCase();
        pos = eol + 1;
        const a = split.get(names.find((n) => rest.startsWith(n)) ?? 'NOOP')!;
        out.push(a.untagged, tag, a.status);
      }
      buf = pos >= buf.length ? Buffer.alloc(0) : buf.subarray(pos);
      if (out.length) sock.write(Buffer.concat(out));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.on('message', (m: { ask: 'cpu' } | { ask: 'stop' }) => {
    if (m.ask === 'cpu') sendCpu();
    else if (m.ask === 'stop') server.close(() => process.exit(0));
  });
  process.send!({ port: (server.address() as net.AddressInfo).port });
}

// ------------------------------------------------------------ the driver

function forkRole(role: 'server' | 'floor' | 'clients'): ChildProcess {
  // BENCH_SERVER_ARGV: node flags for Rookery's process (e.g. `--cpu-prof`), as bench sessions takes them.
  const execArgv = role === 'server' ? (process.env.BENCH_SERVER_ARGV?.split(' ').filter(Boolean) ?? []) : [];
  return fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, [PIPELINE_ENV]: role }, execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

export interface PipelineSettings {
  clients: number;
  window: number;
  seconds: number;
  rounds: number;
  kinds: readonly Kind[];
  /** Only these sides (`--sides=rookery` for a profile of Rookery alone); all by default. */
  sides?: readonly string[];
}

export interface KindFigures {
  kind: Kind;
  /** Answers per second, the median of the rounds, by side ('dovecot' absent when not installed). */
  rookery: number;
  floor: number;
  dovecot?: number;
  /** Rookery's server CPU per answer, in microseconds (median of rounds). */
  rookeryCpuUs: number;
  /** The floor's, the same way: what the system calls and Node's streams cost an answer with no IMAP work. */
  floorCpuUs: number;
  errors: number;
}

export interface PipelineFigures {
  kinds: KindFigures[];
  dovecotVersion?: string;
  dovecotNote?: string;
}

export const KIND_LABEL: Record<Kind, string> = {
  noop: 'NOOP',
  fetch: 'UID FETCH n (FLAGS)',
  store: 'UID STORE n +FLAGS',
  search: 'UID SEARCH UNSEEN',
};

/** Runs every kind on every side; see the file's comment. */
export async function measurePipeline(s: PipelineSettings): Promise<PipelineFigures> {
  const server = forkRole('server');
  const floor = forkRole('floor');
  const clients = forkRole('clients');
  let dovecot: Awaited<ReturnType<typeof startDovecot>> | null = null;
  let dovecotNote: string | undefined;
  try {
    const rookPort = await askChild<number>(server, null, 'port');
    const rook: Target = { host: '127.0.0.1', port: rookPort };
    await seed(rook, s.clients);
    const answers = await record(rook);
    const floorPort = await askChild<number>(floor, { answers: [...answers].map(([k, v]) => [k, v.toString('latin1')]) }, 'port');
    if (s.sides && !s.sides.includes('dovecot')) dovecotNote = 'not run (--sides)';
    else if (fs.existsSync(DOVECOT)) {
      try {
        dovecot = await startDovecot();
        await seed(dovecot.target, s.clients);
      } catch (e) {
        dovecotNote = `dovecot failed: ${(e as Error).message.split('\n')[0]}`;
        await dovecot?.stop();
        dovecot = null;
      }
    } else dovecotNote = `${DOVECOT} not installed`;
    await askChild(clients, null, 'up');
    const sides: { name: 'rookery' | 'floor' | 'dovecot'; target: Target }[] = [
      { name: 'rookery', target: rook },
      { name: 'floor', target: { host: '127.0.0.1', port: floorPort } },
    ];
    if (dovecot) sides.push({ name: 'dovecot', target: dovecot.target });
    if (s.sides) for (let k = sides.length - 1; k > 0; k--) if (!s.sides.includes(sides[k]!.name)) sides.splice(k, 1);
    const runOnce = (target: Target, kind: Kind, ms: number): Promise<RunResult> =>
      askChild<RunResult>(clients, { ask: 'run', target, clients: s.clients, window: s.window, kind, ms } satisfies RunAsk, 'result');
    const out: KindFigures[] = [];
    for (const kind of s.kinds) {
      // Unmeasured first: V8 optimizes Rookery's command path (and the clients') after a second or so of it.
      for (const side of sides) await runOnce(side.target, kind, 1000);
      const rates = new Map<string, number[]>(sides.map((x) => [x.name, []]));
      const cpu: number[] = [];
      const floorCpu: number[] = [];
      let errors = 0;
      for (let i = 0; i < s.rounds; i++) {
        for (let k = 0; k < sides.length; k++) {
          const side = sides[(i + k) % sides.length]!;
          const proc = side.name === 'rookery' ? server : side.name === 'floor' ? floor : null;
          const before = proc ? await askChild<number>(proc, { ask: 'cpu' }, 'cpu') : 0;
          const r = await runOnce(side.target, kind, s.seconds * 1000);
          const used = proc ? (((await askChild<number>(proc, { ask: 'cpu' }, 'cpu')) - before) * 1000) / r.answers : 0;
          if (side.name === 'rookery') {
            cpu.push(used);
            errors += r.errors;
          } else if (side.name === 'floor') floorCpu.push(used);
          rates.get(side.name)!.push(r.answers / r.seconds);
        }
      }
      const dv = rates.get('dovecot');
      out.push({
        kind,
        rookery: median(rates.get('rookery')!),
        floor: median(rates.get('floor') ?? [Number.NaN]),
        ...(dv ? { dovecot: median(dv) } : {}),
        rookeryCpuUs: median(cpu),
        floorCpuUs: floorCpu.length ? median(floorCpu) : Number.NaN,
        errors,
      });
    }
    return { kinds: out, ...(dovecot ? { dovecotVersion: dovecot.version.split(' ')[0] } : {}), ...(dovecotNote ? { dovecotNote } : {}) };
  } finally {
    clients.send({ ask: 'stop' });
    server.send({ ask: 'stop' });
    floor.send({ ask: 'stop' });
    await dovecot?.stop();
  }
}

function numberOpt(args: string[], name: string, def: number): number {
  const v = args.find((x) => x.startsWith(`--${name}=`))?.slice(name.length + 3);
  const n = v === undefined ? def : Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`bad --${name}: ${v}`);
  return n;
}

export async function run(args: string[] = []): Promise<void> {
  const kindsArg = args.find((x) => x.startsWith('--kinds='))?.slice(8).split(',');
  for (const k of kindsArg ?? []) if (!(KINDS as readonly string[]).includes(k)) throw new Error(`--kinds: unknown ${k} (known: ${KINDS.join(', ')})`);
  const sidesArg = args.find((x) => x.startsWith('--sides='))?.slice(8).split(',');
  const s: PipelineSettings = {
    clients: numberOpt(args, 'clients', 10),
    window: numberOpt(args, 'window', 64),
    seconds: numberOpt(args, 'seconds', 3),
    rounds: numberOpt(args, 'rounds', 3),
    kinds: (kindsArg as Kind[] | undefined) ?? KINDS,
    ...(sidesArg ? { sides: sidesArg } : {}),
  };
  const f = await measurePipeline(s);
  const rate = (x: number | undefined): string => (x === undefined ? '' : `${Math.round(x).toLocaleString('en-US')}/s`);
  table(`${s.clients} clients, ${s.window} commands in flight each, median of ${s.rounds} rounds of ${s.seconds} s${f.dovecotNote ? ` (${f.dovecotNote})` : ''}`, [
    ['command', 'Rookery', 'server CPU/cmd', 'floor', 'floor CPU/cmd', 'vs floor', f.dovecotVersion ? `Dovecot ${f.dovecotVersion}` : 'Dovecot', 'vs Dovecot', 'errors'],
    ...f.kinds.map((k) => [
      KIND_LABEL[k.kind],
      rate(k.rookery),
      `${fmt(k.rookeryCpuUs, 2)} us`,
      rate(k.floor),
      `${fmt(k.floorCpuUs, 2)} us`,
      `${fmt(k.rookery / k.floor)}x`,
      rate(k.dovecot),
      k.dovecot ? `${fmt(k.rookery / k.dovecot)}x` : '',
      String(k.errors),
    ]),
  ]);
}

const role = process.env[PIPELINE_ENV];
if (role === 'clients') void clientsRole();
else if (role === 'server') void serverRole();
else if (role === 'floor') void floorRole();

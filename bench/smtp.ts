/**
 * SMTP intake bench (issue 13): messages/s delivered over parallel SMTP
 * connections, and the time from the end of DATA (the client's `.` line)
 * to `* n EXISTS` in an IMAP session in IDLE.
 *
 * Options: `--connections=N` / BENCH_SMTP_CONNECTIONS (default 10),
 * `--seconds=S` / BENCH_SECONDS (default 5), `--samples=N` /
 * BENCH_SMTP_SAMPLES (latency measurements, default 500),
 * `--size=B` / BENCH_SMTP_SIZE (message size, default 2048).
 */
import net from 'node:net';
import { createServer } from '../src/index.js';
import { fmt, median, messageOfSize, table } from './client.js';

function opt(args: string[], name: string, env: string, def: number): number {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  const v = a ? a.slice(name.length + 3) : process.env[env];
  const n = v === undefined ? def : Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`bad --${name} / ${env}: ${v}`);
  return n;
}

/** A line-oriented socket: `until(re)` resolves with the first match in what arrived since the last one. */
class Wire {
  private buffer = '';
  private wake: (() => void) | null = null;
  readonly socket: net.Socket;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.setEncoding('latin1');
    socket.setNoDelay(true);
    socket.on('data', (d: string) => {
      this.buffer += d;
      this.wake?.();
    });
  }

  static async connect(port: number): Promise<Wire> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new Wire(socket);
  }

  async until(re: RegExp): Promise<RegExpExecArray> {
    for (;;) {
      const m = re.exec(this.buffer);
      if (m) {
        this.buffer = this.buffer.slice(m.index + m[0].length);
        return m;
      }
      await new Promise<void>((r) => (this.wake = r));
      this.wake = null;
    }
  }

  send(text: string): void {
    this.socket.write(text);
  }
}

/** A final SMTP reply line (`250 ...`), skipping continuation lines. */
const SMTP_REPLY = /^(\d{3}) [^\r\n]*\r\n/m;

async function smtpReply(w: Wire, want: number): Promise<void> {
  const m = await w.until(SMTP_REPLY);
  if (Number(m[1]) !== want) throw new Error(`expected ${want}, got ${m[0].trim()}`);
}

async function smtpSession(port: number): Promise<Wire> {
  const w = await Wire.connect(port);
  await smtpReply(w, 220);
  w.send('EHLO bench.test\r\n');
  await smtpReply(w, 250);
  return w;
}

/** One message: MAIL, RCPT, DATA, the message; resolves when it is stored (250). `sent` runs as the `.` goes out. */
async function sendOne(w: Wire, body: string, sent?: () => void): Promise<void> {
  // RFC 2920 pipelining of MAIL and RCPT; DATA waits for its 354.
  w.send('MAIL FROM:<bench@example.com>\r\nRCPT TO:<testuser@example.com>\r\nDATA\r\n');
  await smtpReply(w, 250);
  await smtpReply(w, 250);
  await smtpReply(w, 354);
  w.send(`${body}.\r\n`);
  sent?.();
  await smtpReply(w, 250);
}

export async function run(args: string[]): Promise<void> {
  const connections = opt(args, 'connections', 'BENCH_SMTP_CONNECTIONS', 10);
  const seconds = opt(args, 'seconds', 'BENCH_SECONDS', 5);
  const samples = opt(args, 'samples', 'BENCH_SMTP_SAMPLES', 500);
  const size = opt(args, 'size', 'BENCH_SMTP_SIZE', 2048);
  const body = messageOfSize(1, size);

  // Throughput.
  let server = createServer({ port: 0, smtp: { port: 0 } });
  let { smtp } = await server.start();
  const deadline = Date.now() + seconds * 1000;
  let delivered = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      const w = await smtpSession(smtp!.port);
      while (Date.now() < deadline) {
        await sendOne(w, body);
        delivered++;
      }
      w.socket.destroy();
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const stored = server.control.listMessages('INBOX').length;
  await server.stop();
  if (stored !== delivered) throw new Error(`${delivered} accepted but ${stored} stored`);

  // Latency: DATA end → EXISTS in an idling session, one message at a time.
  server = createServer({ port: 0, plugins: ['IDLE'], smtp: { port: 0 } });
  const addresses = await server.start();
  smtp = addresses.smtp;
  const imap = await Wire.connect(addresses.imap.port);
  await imap.until(/^\* OK[^\r\n]*\r\n/m);
  imap.send('a LOGIN testuser testpass\r\nb SELECT INBOX\r\n');
  await imap.until(/^b OK[^\r\n]*\r\n/m);
  imap.send('c IDLE\r\n');
  await imap.until(/^\+[^\r\n]*\r\n/m);
  const w = await smtpSession(smtp!.port);
  const latencies: number[] = [];
  for (let i = 1; i <= samples; i++) {
    let t0 = 0n;
    const exists = imap.until(new RegExp(`^\\* ${i} EXISTS\\r\\n`, 'm')).then(() => Number(process.hrtime.bigint() - t0) / 1e6);
    await sendOne(w, body, () => (t0 = process.hrtime.bigint()));
    latencies.push(await exists);
  }
  imap.send('DONE\r\n');
  w.socket.destroy();
  imap.socket.destroy();
  await server.stop();

  const sorted = [...latencies].sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
  table(`SMTP intake (${size}-byte messages, in-process server and clients)`, [
    ['measure', 'value'],
    [`messages/s over ${connections} connections (${fmt(elapsed, 1)} s)`, fmt(delivered / elapsed, 0)],
    [`DATA end -> EXISTS in IDLE, median (${samples} messages)`, `${fmt(median(latencies))} ms`],
    ['DATA end -> EXISTS in IDLE, p99', `${fmt(p99)} ms`],
  ]);
}

/**
 * The SMTP fuzzer's driver: real listening Rookery servers (one per worker,
 * so each session is known by number), sessions of generated lines
 * (smtp-corpus.ts) sent one at a time. The properties:
 *
 * - every command line gets exactly one final reply (RFC 5321 §4.2), after
 *   354 (DATA) and 334 (AUTH) continuations; the server closes only after
 *   221 or 421;
 * - the session's command events are the commands sent, numbered 1, 2,
 *   ..., each with the status its reply's code gives (2yz/3yz OK, 500/501
 *   BAD, other NO), and `open`/`close` session events bracket them;
 * - without redaction the transcript holds exactly the bytes each side
 *   sent; with it, no credential of the corpus is in it;
 * - the session leaves the registry when it closes.
 */
import * as net from 'node:net';
import { createServer, type AttackName, type CommandEvent, type Server } from '../../src/index.js';
import { replyStatus } from '../../src/smtp/wire-tracker.js';
import type { Finding } from './driver.js';
import { Rand } from './generate.js';
import { bodyLines, SmtpGenerator } from './smtp-corpus.js';

export interface SmtpFuzzOptions {
  seed: number;
  inputs: number;
  connections?: number;
  /** STARTTLS attacks every session meets (with STARTTLS offered): the bridge's rewriting and the watch are fuzzed too. */
  attacks?: readonly AttackName[];
  onProgress?: (done: number) => void;
}

export interface SmtpFuzzReport {
  inputs: number;
  sessions: number;
  durationMs: number;
  replies: { ok: number; no: number; bad: number };
  bodies: number;
  sasl: number;
  findings: Finding[];
}

const SECRETS = [Buffer.from('\0testuser\0testpass').toString('base64'), Buffer.from('testpass').toString('base64')];

class Wire {
  private buffer = '';
  private waiter: (() => void) | null = null;
  sent = '';
  received = '';
  closed = false;
  constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      const text = d.toString('latin1');
      this.buffer += text;
      this.received += text;
      this.waiter?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
    socket.on('error', () => undefined);
  }
  send(line: string): void {
    this.sent += `${line}\r\n`;
    this.socket.write(Buffer.from(`${line}\r\n`, 'latin1'));
  }
  /** The next final reply's code, or null when the connection closed (or nothing came in `ms`: -1). */
  async reply(ms = 5000): Promise<number | null> {
    const deadline = Date.now() + ms;
    for (;;) {
      const m = /^(?:\d{3}-[^\n]*\n)*(\d{3})(?: [^\n]*)?\r?\n/.exec(this.buffer);
      if (m) {
        this.buffer = this.buffer.slice(m[0].length);
        return Number(m[1]);
      }
      if (this.closed) return null;
      if (Date.now() > deadline) return -1;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 100);
        this.waiter = () => {
          clearTimeout(t);
          this.waiter = null;
          resolve();
        };
      });
    }
  }
}

export async function runSmtpFuzz(options: SmtpFuzzOptions): Promise<SmtpFuzzReport> {
  const began = Date.now();
  const report: SmtpFuzzReport = { inputs: 0, sessions: 0, durationMs: 0, replies: { ok: 0, no: 0, bad: 0 }, bodies: 0, sasl: 0, findings: [] };
  const findings = new Map<string, Finding>();
  const find = (kind: string, message: string, input: string | null): void => {
    if (findings.size > 50) return;
    const key = `${kind}\0${message}`;
    const f = findings.get(key);
    if (f) f.count++;
    else findings.set(key, { kind, message, ...(input === null ? {} : { input: input.slice(0, 200) }), count: 1 });
  };
  const workers = Math.max(1, options.connections ?? 2);
  let budget = options.inputs;
  const take = (): boolean => {
    if (budget <= 0) return false;
    budget--;
    report.inputs++;
    if (report.inputs % 1000 === 0) options.onProgress?.(report.inputs);
    return true;
  };
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      const redact = w % 2 === 1;
      const attacked = options.attacks ? { attacks: [...options.attacks], tls: { smtp: { profile: 'valid' as const } } } : {};
      const server = createServer({ port: 0, smtp: { port: 0, catchAll: true, starttls: options.attacks !== undefined }, transcript: { redact }, ...attacked });
      const { smtp } = await server.start();
      const commands = new Map<number, CommandEvent[]>();
      server.on('command', (e) => {
        const list = commands.get(e.session);
        if (list) list.push(e);
        else commands.set(e.session, [e]);
      });
      const r = new Rand(options.seed * 31 + w);
      const g = new SmtpGenerator(r);
      try {
        while (budget > 0) await session(server, smtp!.port, g, r, redact, commands, take, find, report);
      } finally {
        await server.stop();
      }
    }),
  );
  report.findings = [...findings.values()];
  report.durationMs = Date.now() - began;
  return report;
}

async function session(
  server: Server,
  port: number,
  g: SmtpGenerator,
  r: Rand,
  redact: boolean,
  commands: Map<number, CommandEvent[]>,
  take: () => boolean,
  find: (kind: string, message: string, input: string | null) => void,
  report: SmtpFuzzReport,
): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const c = new Wire(socket);
  report.sessions++;
  if ((await c.reply()) !== 220) return void find('greeting', 'no 220 greeting', null);
  const id = server.control.sessions().at(-1)?.session ?? -1;
  const expected: { verb: string; status: string }[] = [];
  let sasl = false;
  let last: string | null = null;
  let ended = false;
  for (let n = r.int(1, 40); n > 0 && take(); n--) {
    const line = g.next(sasl);
    last = line;
    c.send(line);
    if (!sasl) expected.push({ verb: (line.trimStart().split(/[ \t]/, 1)[0] ?? '').toUpperCase(), status: '' });
    sasl = false;
    let code = await c.reply();
    if (code === 354) {
      report.bodies++;
      for (const body of bodyLines(r)) c.send(body.startsWith('.') ? `.${body}` : body);
      c.send('.');
      code = await c.reply();
    }
    if (code === -1) return void find('timeout', 'no reply within 5 s', line);
    if (code === null) return void find('closed', 'the server closed without 221 or 421', line);
    if (code === 334) {
      report.sasl++;
      sasl = true;
      continue;
    }
    const status = replyStatus(code);
    report.replies[status === 'OK' ? 'ok' : status === 'NO' ? 'no' : 'bad']++;
    expected[expected.length - 1]!.status = status;
    if (code === 221 || code === 421) {
      ended = true;
      break;
    }
  }
  if (!ended && !c.closed) {
    if (sasl) {
      // RFC 4954 §4: `*` cancels the exchange; its reply is the AUTH command's.
      c.send('*');
      const code = await c.reply();
      if (code !== null && code >= 0) expected[expected.length - 1]!.status = replyStatus(code);
    }
    c.send('QUIT');
    expected.push({ verb: 'QUIT', status: 'OK' });
    if ((await c.reply()) !== 221 && !c.closed) find('quit', 'QUIT got no 221', last);
  }
  for (let i = 0; i < 400 && !c.closed; i++) await new Promise((res) => setTimeout(res, 5));
  socket.destroy();
  for (let i = 0; i < 400 && server.control.sessions().some((s) => s.session === id); i++) await new Promise((res) => setTimeout(res, 5));
  if (server.control.sessions().some((s) => s.session === id)) find('registry', 'a closed session is still listed', last);
  const seen = (commands.get(id) ?? []).map((e) => ({ verb: e.command, status: e.status }));
  const want = expected.filter((e) => e.status !== '');
  const tags = (commands.get(id) ?? []).map((e) => e.tag).join(',');
  if (JSON.stringify(seen) !== JSON.stringify(want)) find('events', `command events ${JSON.stringify(seen)} for commands ${JSON.stringify(want)}`, last);
  if (tags !== want.map((_, i) => String(i + 1)).join(',')) find('events', `tags ${tags}`, last);
  commands.delete(id);
  const t = server.transcript(id);
  if (!t) return void find('transcript', 'no transcript', last);
  const client = t.bytes('client').toString('latin1');
  if (redact) {
    // A secret glued to other text (`AUTHPLAIN<b64>`) is no AUTH argument or SASL answer: the server refuses the line.
    for (const secret of SECRETS) {
      const leaked = client.split('\r\n').filter((l) => new RegExp(`(^|[ \\t])${secret.replace(/[+/=]/g, '\\$&')}([ \\t]|$)`).test(l));
      if (leaked.length > 0) find('transcript', `a credential in a redacted transcript: ${JSON.stringify(leaked)}`, last);
    }
  } else if (t.toJSON().droppedBytes === 0) {
    if (client !== c.sent) find('transcript', 'client bytes differ from what was sent', last);
    if (t.bytes('server').toString('latin1') !== c.received) find('transcript', 'server bytes differ from what was received', last);
  }
}

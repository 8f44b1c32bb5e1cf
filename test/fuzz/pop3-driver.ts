/**
 * The POP3 fuzzer's driver: a real listening Rookery with POP3 (STLS
 * offered, APOP on), several connections that each send batches of
 * generated lines (pop3-corpus.ts) in one write — pipelining, RFC 2449
 * section 6.6 — and read the answers in order. The properties:
 *
 * - every line gets exactly one answer: `+OK` or `-ERR` (followed by the
 *   end of the line or a space), or `+ ` during an AUTH exchange (RFC
 *   5034 section 4); a status line is at most 512 octets with its CRLF
 *   (RFC 1939 section 3, RFC 2449 section 4);
 * - a positive answer to CAPA, RETR, TOP, LIST and UIDL without argument
 *   is multi-line and ends with `.`; LIST and UIDL bodies have their form
 *   (RFC 1939 section 7, unique-ids of 0x21-0x7E);
 * - the session goes on: every batch ends with a NOOP probe that gets its
 *   answer, and the server closes a connection only after `+OK` to QUIT;
 * - STLS succeeds only in AUTHORIZATION before TLS, and nothing follows
 *   its `+OK` in clear text (RFC 2595 section 4);
 * - the server logs no error and throws nothing uncaught; afterwards a
 *   normal session sees the store the control API lists, with LIST sizes
 *   equal to the octets RETR sends.
 */
import type { ScriptRule, Server } from '../../src/index.js';
import { createServer } from '../../src/index.js';
import { Pop3Client, pop3Login } from '../helpers/pop3-client.js';
import type { Finding } from './driver.js';
import { Rand } from './generate.js';
import { FUZZ_PASS, FUZZ_USER, Pop3Generator, type Pop3FuzzState } from './pop3-corpus.js';

export interface Pop3FuzzOptions {
  seed: number;
  inputs: number;
  connections?: number;
  /** Most lines per write (the probe not counted). */
  batch?: number;
  answerTimeoutMs?: number;
  onProgress?: (done: number) => void;
  /** Script rules for the server: faults that the oracle must catch (its own tests). */
  script?: ScriptRule[];
}

/** What the workers need of the server under test (a Target, so the workers never reach into the server). */
interface Target {
  port: number;
  count(): Promise<number>;
  refill(messages: Buffer[]): Promise<void>;
}

export interface Pop3FuzzReport {
  inputs: number;
  batches: number;
  sessions: number;
  durationMs: number;
  answers: { ok: number; err: number; continuation: number };
  /** Lines answered in each state (probes included); `tls` counts those after a successful STLS. */
  states: Record<Pop3FuzzState | 'tls', number>;
  quits: number;
  upgrades: number;
  findings: Finding[];
}

/** The maildrop: byte-stuffed lines, 8-bit octets, an empty body; no line starts like a status line. */
const MAILDROP = [
  'From: a@example.com\r\nSubject: one\r\n\r\n.dot\r\n..two\r\n.\r\nend\r\n',
  'From: b@example.com\r\nSubject: two\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nGr\u00fc\u00dfe\r\nline 2\r\nline 3\r\n',
  'From: c@example.com\r\nSubject: three\r\n\r\n',
  `From: d@example.com\r\nSubject: four\r\n\r\n${'long line '.repeat(100)}\r\n`,
];

const SNIPPET = 400;
const STATUS = /^(\+OK|-ERR)( |$)/;

class Findings {
  readonly byKey = new Map<string, Finding>();

  add(kind: string, message: string, input?: string): void {
    const key = `${kind}: ${message.replace(/\d+/g, 'N').slice(0, 120)}`;
    const old = this.byKey.get(key);
    if (old) {
      old.count++;
      return;
    }
    const f: Finding = { kind, message, count: 1 };
    if (input !== undefined) {
      const short = input.replace(/(.)\1{31,}/gs, (run, c: string) => `<${c} x ${run.length}>`);
      f.input = short.length > SNIPPET ? `${short.slice(0, SNIPPET / 2)} ... ${short.slice(-SNIPPET / 2)}` : short;
    }
    this.byKey.set(key, f);
  }
}

/** Keyword of a line as a lenient server reads it. */
const keywordOf = (line: string): string => /^\s*([A-Za-z0-9-]+)/.exec(line)?.[1]?.toUpperCase() ?? '';

/** Whether a positive answer to `line` is multi-line: yes, no, or "depends on how the server read odd spacing". */
function multiLine(line: string, keyword: string): 'yes' | 'no' | 'maybe' {
  if (keyword === 'CAPA' || keyword === 'RETR' || keyword === 'TOP') return line.toUpperCase() === 'CAPA' || keyword !== 'CAPA' ? 'yes' : 'maybe';
  // LANG without an argument lists the languages (RFC 6856 section 3), like LIST and UIDL without one
  if (keyword !== 'LIST' && keyword !== 'UIDL' && keyword !== 'LANG') return 'no';
  if (line.length === 4) return 'yes';
  if (/^[A-Za-z]{4} \d+$/.test(line)) return 'no';
  return 'maybe';
}

class Worker {
  private client: Pop3Client | null = null;
  private state: Pop3FuzzState = 'authorization';
  private tls = false;
  private pushedBack: string | null = null;
  /** Whether the last status answer was +OK. */
  private lastOk = false;
  private greeting = '';

  constructor(
    private readonly port: number,
    private readonly gen: Pop3Generator,
    private readonly findings: Findings,
    private readonly report: Pop3FuzzReport,
    private readonly timeoutMs: number,
  ) {}

  private async open(server: Target): Promise<void> {
    // Sessions that QUIT delete what they marked: keep a few messages to work on.
    if ((await server.count()) < 2) await server.refill(MAILDROP.map((m) => Buffer.from(m, 'utf8')));
    this.client = await Pop3Client.connect(this.port, { timeoutMs: this.timeoutMs });
    this.greeting = this.client.greeting;
    this.state = 'authorization';
    this.tls = false;
    this.pushedBack = null;
    this.report.sessions++;
    if (!STATUS.test(this.greeting) || !this.greeting.startsWith('+OK')) this.findings.add('bad-greeting', JSON.stringify(this.greeting.slice(0, 200)));
  }

  private drop(): void {
    this.client?.close();
    this.client = null;
  }

  private async nextLine(): Promise<string> {
    if (this.pushedBack !== null) {
      const l = this.pushedBack;
      this.pushedBack = null;
      return l;
    }
    return this.client!.line(this.timeoutMs);
  }

  /** Reads and checks the answer to one line sent; false when the session cannot go on. */
  private async answer(line: string, batchText: string): Promise<boolean> {
    const c = this.client!;
    // the state the server read the line in, as far as the answers so far tell
    this.report.states[this.state]++;
    if (this.tls) this.report.states.tls++;
    const answer = await this.nextLine();
    const keyword = keywordOf(line);
    // RFC 2449 section 4: the first line of a response stays within 512 octets with its CRLF (SASL challenges are not bound by it)
    if (STATUS.test(answer) && Buffer.byteLength(answer, 'latin1') + 2 > 512) this.findings.add('long-status', `${answer.length + 2} octets answering ${keyword}`, batchText);
    if (this.state === 'authContinuation') {
      if (answer.startsWith('+ ') || answer === '+') {
        this.report.answers.continuation++;
        return true;
      }
      if (!STATUS.test(answer)) {
        this.findings.add('bad-answer', `to a SASL response: ${JSON.stringify(answer.slice(0, 120))}`, batchText);
        return false;
      }
      this.count(answer);
      this.state = answer.startsWith('+OK') ? 'transaction' : 'authorization';
      return true;
    }
    if (keyword === 'AUTH' && (answer.startsWith('+ ') || answer === '+') && this.state !== 'transaction') {
      this.report.answers.continuation++;
      this.state = 'authContinuation';
      return true;
    }
    if (!STATUS.test(answer)) {
      this.findings.add('bad-answer', `to ${keyword || JSON.stringify(line.slice(0, 20))} in ${this.state}: ${JSON.stringify(answer.slice(0, 120))}`, batchText);
      return false;
    }
    this.count(answer);
    const ok = answer.startsWith('+OK');
    if (ok) {
      if ((keyword === 'USER' || keyword === 'PASS' || keyword === 'APOP' || keyword === 'AUTH') && this.state === 'transaction') {
        this.findings.add('accepted-in-transaction', `${keyword} got ${JSON.stringify(answer.slice(0, 80))} in TRANSACTION`, batchText);
      }
      if (keyword === 'USER' && this.state !== 'transaction') this.state = 'afterUser';
      else if (keyword === 'PASS' || keyword === 'APOP' || keyword === 'AUTH') this.state = 'transaction';
    } else if ((keyword === 'PASS' || keyword === 'USER' || keyword === 'APOP' || keyword === 'AUTH') && this.state !== 'transaction') this.state = 'authorization';
    if (!ok) return true;
    const multi = multiLine(line, keyword);
    if (multi === 'no') return true;
    if (multi === 'maybe') {
      const next = await this.nextLine();
      if (STATUS.test(next) || next.startsWith('+ ')) {
        this.pushedBack = next;
        return true;
      }
      if (next === '.') return true;
      this.checkBody(keyword, [next, ...(await this.body())], batchText);
      return true;
    }
    if (keyword !== 'CAPA' && keyword !== 'LANG' && this.state !== 'transaction') this.findings.add('accepted-before-login', `${keyword} got +OK in ${this.state}`, batchText);
    const raw = await c.readBody(this.timeoutMs);
    const text = raw.subarray(0, raw.length - 3).toString('latin1');
    const lines = text === '' ? [] : text.slice(0, -2).split('\r\n');
    this.checkBody(keyword, lines, batchText);
    return true;
  }

  private async body(): Promise<string[]> {
    const raw = await this.client!.readBody(this.timeoutMs);
    const text = raw.subarray(0, raw.length - 3).toString('latin1');
    return text === '' ? [] : text.slice(0, -2).split('\r\n');
  }

  private checkBody(keyword: string, lines: string[], batchText: string): void {
    const form =
      keyword === 'LIST'
        ? /^\d+ \d+( |$)/
        : keyword === 'UIDL'
          ? /^\d+ [\x21-\x7e]{1,70}$/
          : keyword === 'CAPA'
            ? /^[\x21-\x7e]+( [\x20-\x7e]*)?$/
            : // RFC 6856 section 3: a language tag, a space, a description in UTF-8
              keyword === 'LANG'
              ? /^[A-Za-z0-9*-]+ \S/
              : null;
    if (form === null) return;
    const bad = lines.find((l) => !form.test(l));
    if (bad !== undefined) this.findings.add('bad-body', `${keyword} line ${JSON.stringify(bad.slice(0, 100))}`, batchText);
  }

  private count(answer: string): void {
    this.lastOk = answer.startsWith('+OK');
    if (this.lastOk) this.report.answers.ok++;
    else this.report.answers.err++;
  }

  /** One session: batches until QUIT, a drop, or a failure. */
  async session(server: Target, budget: () => number): Promise<void> {
    await this.open(server);
    const batches = this.gen.rand.int(1, 12);
    try {
      for (let b = 0; b < batches && budget() > 0; b++) {
        const lines: string[] = [];
        let ends: 'stls' | 'quit' | null = null;
        const max = Math.min(budget(), this.gen.rand.int(1, 24));
        const from = this.state;
        while (lines.length < max && ends === null) {
          const input = this.gen.next(from, this.greeting);
          lines.push(input.line);
          ends = input.ends;
        }
        this.report.inputs += lines.length;
        this.report.batches++;
        const sent = ends === 'stls' ? lines.slice(0, -1) : lines;
        const withProbe = ends === 'quit' ? sent : [...sent, 'NOOP'];
        const batchText = withProbe.join('\r\n') + '\r\n';
        this.client!.write(Buffer.from(batchText, 'latin1'));
        for (let i = 0; i < withProbe.length; i++) {
          const line = withProbe[i]!;
          const wasQuit = keywordOf(line) === 'QUIT' && this.state !== 'authContinuation';
          if (!(await this.answer(line, batchText))) return this.drop();
          if (wasQuit && this.lastOk) {
            this.report.quits++;
            // RFC 1939 section 6: the server closes the connection after +OK to QUIT; anything sent after is unread.
            await this.client!.closedByServer(this.timeoutMs).catch(() => this.findings.add('quit-not-closed', 'no close after +OK to QUIT', batchText));
            return this.drop();
          }
        }
        // an AUTH exchange left open at the end of the batch: cancel it (RFC 5034 section 4) and probe again
        for (let k = 0; k < 3 && this.state === 'authContinuation'; k++) {
          this.client!.write('*\r\nNOOP\r\n');
          if (!(await this.answer('*', '*')) || !(await this.answer('NOOP', 'NOOP'))) return this.drop();
        }
        if (ends === 'stls') await this.stls(batchText);
      }
      if (this.gen.rand.chance(0.5)) {
        this.client!.write('QUIT\r\n');
        if (this.state === 'authContinuation') return this.drop();
        const answer = await this.nextLine();
        if (!answer.startsWith('+OK')) this.findings.add('bad-answer', `to QUIT: ${JSON.stringify(answer.slice(0, 100))}`);
        await this.client!.closedByServer(this.timeoutMs).catch(() => this.findings.add('quit-not-closed', 'no close after QUIT'));
        this.report.quits++;
      }
    } catch (e) {
      const message = (e as Error).message;
      this.findings.add(message.startsWith('timed out') ? 'no-answer' : message.startsWith('connection closed') ? 'closed-without-quit' : 'client-error', message.slice(0, 200));
    }
    this.drop();
  }

  private async stls(batchText: string): Promise<void> {
    const before = this.state;
    const wasTls = this.tls;
    const { status, leftover } = await this.client!.stls();
    if (!STATUS.test(status)) {
      this.findings.add('bad-answer', `to STLS: ${JSON.stringify(status.slice(0, 100))}`, batchText);
      return;
    }
    this.count(status);
    if (!status.startsWith('+OK')) return;
    if (wasTls || before === 'transaction') this.findings.add('stls-wrong-state', `STLS accepted in ${wasTls ? 'a TLS session' : before}`, batchText);
    if (leftover.length) this.findings.add('stls-leftover', `${leftover.length} octets in clear text after +OK`, batchText);
    this.tls = true;
    this.state = 'authorization';
    this.report.upgrades++;
  }
}

/** Everything logged as an error and every uncaught error while `fn` runs. */
async function watchingErrors<T>(findings: Findings, fn: () => Promise<T>): Promise<T> {
  const original = console.error;
  const record = (kind: string, args: unknown[]): void =>
    findings.add(kind, args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : String(a))).join(' ').slice(0, 1000));
  console.error = (...args: unknown[]) => {
    record('console-error', args);
    original(...args);
  };
  const onUncaught = (err: unknown): void => record('uncaught-exception', [err]);
  const onRejection = (err: unknown): void => record('unhandled-rejection', [err]);
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onRejection);
  try {
    return await fn();
  } finally {
    console.error = original;
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onRejection);
  }
}

/** A normal session after the fuzzing: STAT and LIST agree with the store, each LIST size is the octets RETR sends. */
async function normalSession(server: Target, findings: Findings): Promise<void> {
  const c = await pop3Login(server.port, FUZZ_USER, FUZZ_PASS);
  try {
    const stored = await server.count();
    const stat = await c.command('STAT');
    if (!new RegExp(`^\\+OK ${stored} \\d+`).test(stat)) findings.add('store-mismatch', `STAT ${JSON.stringify(stat)} with ${stored} messages stored`);
    const list = await c.multi('LIST');
    for (const l of list.lines) {
      const [n, size] = l.split(' ');
      const m = await c.multi(`RETR ${n}`);
      if (m.body.length !== Number(size)) findings.add('size-mismatch', `LIST ${n} says ${size} octets, RETR sends ${m.body.length}`);
    }
    await c.command('QUIT');
  } finally {
    c.close();
  }
}

export async function runPop3Fuzz(options: Pop3FuzzOptions): Promise<Pop3FuzzReport> {
  const findings = new Findings();
  const report: Pop3FuzzReport = {
    inputs: 0,
    batches: 0,
    sessions: 0,
    durationMs: 0,
    answers: { ok: 0, err: 0, continuation: 0 },
    states: { authorization: 0, afterUser: 0, transaction: 0, authContinuation: 0, tls: 0 },
    quits: 0,
    upgrades: 0,
    findings: [],
  };
  const server: Server = createServer({ port: 0, storage: { INBOX: { messages: MAILDROP } }, pop3: { port: 0, stls: true, apop: true }, script: options.script ?? [] });
  const { pop3 } = await server.start();
  const target: Target = {
    port: pop3!.port,
    count: async () => server.control.listMessages('INBOX').length,
    refill: async (messages) => {
      for (const raw of messages) server.control.addMessage('INBOX', { raw });
    },
  };
  const start = Date.now();
  let lastProgress = 0;
  const budget = (): number => options.inputs - report.inputs;
  try {
    await watchingErrors(findings, async () => {
      const connections = options.connections ?? 4;
      await Promise.all(
        Array.from({ length: connections }, async (_, k) => {
          const worker = new Worker(target.port, new Pop3Generator(new Rand(options.seed * 31 + k)), findings, report, options.answerTimeoutMs ?? 5000);
          while (budget() > 0) {
            await worker.session(target, budget);
            if (options.onProgress && report.inputs - lastProgress >= 1000) {
              lastProgress = report.inputs;
              options.onProgress(report.inputs);
            }
          }
        }),
      );
      await normalSession(target, findings).catch((e: Error) => findings.add('normal-session', e.message.slice(0, 200)));
    });
  } finally {
    await server.stop();
  }
  report.durationMs = Date.now() - start;
  report.findings = [...findings.byKey.values()];
  return report;
}

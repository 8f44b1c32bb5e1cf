/**
 * The IMAP fuzzer's driver: a real listening Rookery (`plugins: 'all'`),
 * several raw-socket connections that each send batches of generated
 * inputs followed by probe commands, and the checks:
 *
 * - the server never logs an error, never throws uncaught, never answers
 *   `NO [SERVERBUG]`;
 * - every response is well formed (response-check.ts), a tagged response
 *   carries a tag that was sent, nothing but the tagged OK follows `* BYE`,
 *   EXPUNGE/FETCH numbers stay within EXISTS, EXISTS never shrinks without
 *   EXPUNGE;
 * - every batch's probe gets its tagged answer within `probeTimeoutMs`
 *   (the shadow framer makes sure the probe is a complete command);
 * - a connection the server closes got `* BYE` first;
 * - at the end (and before every store reset) the store is consistent by
 *   the control API and a normal session sees exactly that store.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createServer, MALFORMED_CASE_NAMES, type MailboxScope, type Server, type ServerOptions } from '../../src/index.js';
import { ShadowFramer } from './framing.js';
import { Generator, Rand, lineBreakParts, type FuzzState } from './generate.js';
import { ResponseError, ResponseSplitter, parseResponse, type ParsedResponse, type Response } from './response-check.js';

export interface FuzzOptions {
  seed: number;
  /** Inputs to send in all (the probes are not counted). */
  inputs: number;
  connections?: number;
  /** Inputs per batch (one write, one probe). */
  batch?: number;
  probeTimeoutMs?: number;
  /** Inputs between store checks + resets. */
  resetEvery?: number;
  /** Called now and then with progress. */
  onProgress?: (done: number) => void;
  /**
   * Per-user mailboxes: the fuzz user's tree is the usual storage, alice's
   * shares a mailbox with it (ACL), and there is a shared namespace; the
   * inputs name those too (`Other Users/alice/...`, `#shared/...`).
   */
  userMailboxes?: boolean;
}

/** The names the per-user run adds to the generator's mailboxes. */
const USER_MAILBOXES = ['"Other Users/alice/Shared"', '"Other Users/alice/INBOX"', '"Other Users/alice/Shared/New"', '"#shared/Board"', '"#shared/New"', '"Other Users/nobody/x"', '"Other Users/"', '"Other Users/alice"'];

/** Options of the per-user run's server. */
function userMailboxOptions(): ServerOptions {
  const all = 'lrswipkxtea';
  return {
    plugins: 'all',
    userMailboxes: true,
    users: { testuser: { password: 'testpass' }, alice: { password: 'alicepass' } },
    storage: {
      users: {
        testuser: storage() as never,
        alice: {
          INBOX: { messages: ['Subject: alice only\r\n\r\nx\r\n'] },
          '': { folders: { Shared: { acl: { alice: all, testuser: 'lrswik' }, messages: ['Subject: shared\r\n\r\ny\r\n'] } } },
        },
      },
      shared: { '#shared/': { type: 'shared', separator: '/', folders: { Board: { messages: ['Subject: board\r\n\r\nz\r\n'] } } } },
    },
  };
}

export interface Finding {
  kind: string;
  message: string;
  /** The batch that led to it (latin1, truncated), for a repro. */
  input?: string;
  count: number;
}

export interface FuzzReport {
  inputs: number;
  batches: number;
  bytesSent: number;
  responses: number;
  reconnects: number;
  /** Batches ended by the server closing the connection, by a literal too large to fill. */
  closedByServer: number;
  refills: number;
  /** Probe timeouts after a batch the framer could not frame for sure (`ShadowFramer.ambiguous`): not findings. */
  ambiguousTimeouts: number;
  durationMs: number;
  findings: Finding[];
  /** Tagged statuses seen, for a sanity check that the inputs reach the commands. */
  statuses: Record<string, number>;
  /** Inputs generated for each session state. */
  states: Record<FuzzState, number>;
}

const MAX_LINE = 8192;
const MAX_LITERAL = 1024 * 1024;
const INPUT_SNIPPET = 4000;

function storage(): object {
  const msg = (i: number, extra = ''): string =>
    `From: a${i}@example.com\r\nTo: b@example.com\r\nSubject: m${i}\r\nMessage-ID: <m${i}@x>\r\n${extra}\r\nbody ${i}\r\n`;
  return {
    INBOX: {
      messages: [
        msg(1),
        { raw: msg(2), flags: ['\\Seen'] },
        { raw: msg(3, 'Content-Type: multipart/alternative; boundary=z\r\n') + '--z\r\n\r\na\r\n--z--\r\n', flags: ['kw1'] },
        msg(4),
        { raw: msg(5), flags: ['\\Deleted', '\\Flagged'] },
        // Parts that decode to CR, LF, NUL and 8-bit: what BINARY, BODY partials, PREVIEW and URLFETCH send of them must be literals.
        lineBreakParts().toString('latin1'),
      ],
      metadata: { '/private/comment': 'line one\r\nline two', '/shared/comment': 'bare\nLF', '/shared/vendor/rookery/8bit': 'caf\u00e9' },
    },
    // Archive also holds every case of the generator's malformed catalogue (docs/generator.md): the probes SELECT it.
    '': { folders: { Archive: { messages: [msg(6)], generate: { seed: 36, count: MALFORMED_CASE_NAMES.length, profile: 'malformed' }, folders: { Sub: {} } }, Trash: { 'special-use': '\\Trash', acl: { testuser: 'lrswipkxtea', Fred: 'lr', '-Fred': 'w', 'two words': 'l', NIL: 'r', '12345': 'l' } }, 'All Mail': { 'special-use': '\\All' } } },
  };
}

/** Checks the store through the control API (`scope`: whose tree, with userMailboxes); returns problems. */
export function storeProblems(server: Server, scope?: MailboxScope): string[] {
  const problems: string[] = [];
  for (const box of server.control.listMailboxes(scope)) {
    if (!box.selectable) continue;
    const messages = server.control.listMessages(box.path, {}, scope);
    if (messages.length !== box.messages) problems.push(`${box.path}: ${messages.length} messages listed, count says ${box.messages}`);
    let last = 0;
    let unseen = 0;
    for (const m of messages) {
      if (!(m.uid > last)) problems.push(`${box.path}: UID ${m.uid} after ${last}`);
      if (!(m.uid < box.uidnext)) problems.push(`${box.path}: UID ${m.uid} not below UIDNEXT ${box.uidnext}`);
      if (!m.flags.includes('\\Seen')) unseen++;
      last = m.uid;
    }
    if (unseen !== box.unseen) problems.push(`${box.path}: ${unseen} unseen messages, count says ${box.unseen}`);
  }
  return problems;
}

type ProbeResult = { state: FuzzState } | 'closed' | 'timeout' | 'ambiguous';

class FuzzConnection {
  private socket: net.Socket | null = null;
  private splitter = new ResponseSplitter();
  readonly framer = new ShadowFramer({ maxLiteral: MAX_LITERAL, maxLine: MAX_LINE });
  state: FuzzState = 'notAuthenticated';
  private greeted = false;
  /** The session enabled UTF8=ACCEPT or IMAP4rev2 (seen in `* ENABLED`): its quoted strings may be UTF-8. */
  private utf8 = false;
  private closed = true;
  private sawBye = false;
  private afterBye = 0;
  /** Bytes sent since the last probe answer (latin1), to check echoed tags. */
  private sent = '';
  /** Untagged responses since the last tagged one (checked against the tagged one). */
  private group: ParsedResponse[] = [];
  /** Message count as the client knows it; null when unknown. */
  private exists: number | null = null;
  private probe: { tags: string[]; seen: Map<string, string>; resolve: (r: ProbeResult) => void } | null = null;
  private onGreeting: (() => void) | null = null;
  private gotReset = false;
  /** The last responses (shortened), shown with a finding. */
  private recent: string[] = [];
  /** Our end of the connection (for matching server-side logs). */
  private localPort = 0;

  constructor(
    private readonly fuzz: Fuzzer,
    private readonly port: number,
  ) {}

  async connect(): Promise<void> {
    this.splitter = new ResponseSplitter();
    this.framer.reset();
    this.state = 'notAuthenticated';
    this.utf8 = false;
    this.greeted = false;
    this.sawBye = false;
    this.afterBye = 0;
    this.sent = '';
    this.group = [];
    this.exists = null;
    const socket = net.connect(this.port, '127.0.0.1');
    socket.setNoDelay(true);
    this.socket = socket;
    this.closed = false;
    let timer: NodeJS.Timeout | undefined;
    const greeted = new Promise<void>((resolve, reject) => {
      this.onGreeting = resolve;
      socket.once('error', reject);
      socket.once('close', () => reject(new Error('closed before the greeting')));
      timer = setTimeout(() => reject(new Error('no greeting within 10 s')), 10_000);
    }).finally(() => clearTimeout(timer));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.gotReset = false;
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A server that closes with our unread input in its buffer sends RST, and the RST may
      // discard its BYE before we read it: nothing can be said about BYE then.
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') this.gotReset = true;
    });
    socket.on('close', () => this.onClose(socket));
    await greeted;
    this.localPort = socket.localPort ?? 0;
  }

  private onClose(socket: net.Socket): void {
    if (socket !== this.socket) return;
    this.socket = null;
    this.closed = true;
    if (!this.sawBye && !this.gotReset) {
      this.fuzz.finding('close-without-bye', 'the server closed the connection without * BYE', `${this.sent}\n[last responses: ${this.recent.join(' | ')}; client port ${this.localPort}]`);
    }
    const p = this.probe;
    this.probe = null;
    p?.resolve('closed');
  }

  /** Drops the connection from this side. */
  destroy(): void {
    const socket = this.socket;
    this.socket = null;
    this.closed = true;
    socket?.destroy();
    const p = this.probe;
    this.probe = null;
    p?.resolve('closed');
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private onData(chunk: Buffer): void {
    try {
      this.splitter.push(chunk, (r) => this.onResponse(r));
    } catch (err) {
      if (err instanceof ResponseError) this.fuzz.finding('malformed-response', err.message, this.sent);
      else throw err;
      this.destroy();
    }
  }

  private onResponse(r: Response): void {
    this.fuzz.responses++;
    this.recent.push(r.text.slice(0, 120));
    if (this.recent.length > 4) this.recent.shift();
    let p: ParsedResponse;
    try {
      p = parseResponse(r, { utf8: this.utf8 });
    } catch (err) {
      if (err instanceof ResponseError) {
        this.fuzz.finding('malformed-response', err.message, this.sent);
        return;
      }
      throw err;
    }
    if (!this.greeted) {
      this.greeted = true;
      if (p.kind !== 'untagged' || (p.type !== 'OK' && p.type !== 'PREAUTH')) this.fuzz.finding('greeting', `bad greeting ${r.text}`);
      this.onGreeting?.();
      return;
    }
    if (this.sawBye) {
      this.afterBye++;
      if (p.kind !== 'tagged' || this.afterBye > 1) this.fuzz.finding('after-bye', `response after * BYE: ${r.text.slice(0, 200)}`, this.sent);
    }
    if (/\[SERVERBUG/i.test(r.text) || p.code?.toUpperCase().startsWith('SERVERBUG')) {
      this.fuzz.finding('serverbug', r.text.slice(0, 300), this.sent);
    }
    if (p.kind === 'untagged') {
      if (p.type === 'BYE') this.sawBye = true;
      if (p.type === 'ENABLED' && /(^| )(UTF8=ACCEPT|IMAP4rev2)( |$)/i.test(r.text)) this.utf8 = true;
      this.group.push(p);
      return;
    }
    if (p.kind === 'continuation') return;
    // Tagged.
    const tag = p.tag!;
    this.fuzz.statuses[p.type] = (this.fuzz.statuses[p.type] ?? 0) + 1;
    if (!this.sent.includes(tag)) this.fuzz.finding('unknown-tag', `tagged response for a tag never sent: ${r.text.slice(0, 200)}`, this.sent);
    this.checkGroup(p);
    const probe = this.probe;
    if (probe && probe.tags.includes(tag)) {
      probe.seen.set(tag, p.type);
      if (tag === probe.tags[probe.tags.length - 1]) {
        this.probe = null;
        const [auth, sel] = probe.tags.map((t) => probe.seen.get(t));
        const state: FuzzState = sel === 'OK' ? 'selected' : auth === 'OK' ? 'authenticated' : 'notAuthenticated';
        // A probe eaten by a line-mode wait leaves the state unknown: not-authenticated is the safe guess.
        probe.resolve({ state });
      }
    }
  }

  /** Message-number checks of the untagged responses that came with one tagged response. */
  private checkGroup(tagged: ParsedResponse): void {
    let group = this.group;
    this.group = [];
    const code = tagged.code?.toUpperCase();
    let selectPart: ParsedResponse[] | null = null;
    if (tagged.type === 'OK' && (code === 'READ-WRITE' || code === 'READ-ONLY')) {
      // SELECT / EXAMINE: its responses start at its FLAGS; what came before belongs to earlier
      // commands answered without a tag (a garbage line gets an untagged BAD after the updates).
      let at = -1;
      group.forEach((g, i) => {
        if (g.type === 'FLAGS') at = i;
      });
      selectPart = at < 0 ? [] : group.slice(at);
      group = at < 0 ? group : group.slice(0, at);
    }
    for (const g of group) {
      if (this.exists === null) break;
      const n = g.number;
      if (g.type === 'EXPUNGE') {
        if (n! > this.exists) this.fuzz.finding('expunge-number', `* ${n} EXPUNGE with ${this.exists} messages`, this.sent);
        this.exists--;
      } else if (g.type === 'VANISHED') {
        // RFC 7162: a live VANISHED (not EARLIER) removes its UIDs from the view as EXPUNGE would.
        const m = /^\* VANISHED ([\d:,]+)/.exec(g.response.text);
        if (m) for (const part of m[1]!.split(',')) {
          const [a, b] = part.split(':').map(Number);
          this.exists -= b === undefined ? 1 : Math.abs(b - a!) + 1;
        }
      } else if (g.type === 'EXISTS') {
        if (n! < this.exists) this.fuzz.finding('exists-shrinks', `* ${n} EXISTS after ${this.exists} without EXPUNGE`, this.sent);
        this.exists = n!;
      } else if (g.type === 'FETCH') {
        if (n! > this.exists) this.fuzz.finding('fetch-number', `* ${n} FETCH with ${this.exists} messages`, this.sent);
      }
    }
    if (selectPart) {
      const ex = selectPart.filter((g) => g.type === 'EXISTS');
      if (ex.length !== 1) this.fuzz.finding('select', `SELECT answered with ${ex.length} EXISTS`, this.sent);
      this.exists = ex.length ? ex[0]!.number! : null;
    }
  }

  /**
   * With FUZZ_DUMP_DIR set, writes what a probe timeout needs for a repro:
   * the whole batch (base64), what the client last read, and every live
   * session's info and server-side transcript (what the server read and
   * answered), so a replay can start from the same bytes.
   */
  private dumpTimeout(probeN: number): void {
    const dir = process.env.FUZZ_DUMP_DIR;
    if (!dir) return;
    const server = this.fuzz.server;
    const sessions = server.control.sessions().map((info) => ({ info, transcript: server.transcript(info.session)?.text() ?? null }));
    const dump = { state: this.state, utf8: this.utf8, localPort: this.localPort, sent: Buffer.from(this.sent, 'latin1').toString('base64'), recent: this.recent, sessions };
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `probe-timeout-${process.pid}-${probeN}.json`), JSON.stringify(dump));
  }

  write(data: Buffer): void {
    this.framer.feed(data);
    this.sent += data.toString('latin1');
    this.socket?.write(data);
  }

  /**
   * Ends the batch: completes the pending command, answers up to two
   * line-mode waits (IDLE, AUTHENTICATE) with `*`, then NAMESPACE and
   * CHECK as probes, which also tell the session state.
   */
  async finishBatch(probeN: number, timeoutMs: number): Promise<ProbeResult | 'refill'> {
    if (this.closed) return 'closed';
    const completion = this.framer.completion(256 * 1024);
    if (completion === null) return 'refill';
    const tags = [`P${probeN}a`, `P${probeN}b`];
    const result = new Promise<ProbeResult>((resolve) => {
      this.probe = { tags, seen: new Map(), resolve };
    });
    this.write(Buffer.concat([completion, Buffer.from(`*\r\n*\r\n${tags[0]} NAMESPACE\r\n${tags[1]} CHECK\r\n`)]));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const r = await Promise.race([result, timeout]);
    clearTimeout(timer);
    if (r === 'timeout') {
      this.probe = null;
      // The framer could not tell whether a synchronizing literal was refused, and the two readings differ:
      // the server may be waiting, rightly, for literal bytes the fuzzer never counted.
      if (this.framer.ambiguous) return 'ambiguous';
      this.fuzz.finding('probe-timeout', `no tagged answer to the probe within ${timeoutMs} ms`, this.sent);
      this.dumpTimeout(probeN);
    }
    if (typeof r === 'object') {
      this.framer.clearAmbiguity();
      this.state = r.state;
      // UNAUTHENTICATE forgets what ENABLE turned on.
      if (r.state === 'notAuthenticated') this.utf8 = false;
      this.sent = '';
    }
    return r;
  }
}

export class Fuzzer {
  readonly findings = new Map<string, Finding>();
  responses = 0;
  statuses: Record<string, number> = {};

  constructor(readonly server: Server) {}

  finding(kind: string, message: string, input?: string): void {
    // Same kind and text (numbers and a leading tag blanked): the same finding.
    const key = `${kind}: ${message.replace(/^\S+ (?=(OK|NO|BAD) )/, '').replace(/\d+/g, 'N').slice(0, 120)}`;
    const old = this.findings.get(key);
    if (old) {
      old.count++;
      return;
    }
    const f: Finding = { kind, message, count: 1 };
    if (input !== undefined) {
      // Runs of one character (overlong lines, deep parentheses) shortened to `<c x N>`.
      const short = input.replace(/(.)\1{31,}/gs, (run, c: string) => `<${c} x ${run.length}>`);
      f.input = short.length > INPUT_SNIPPET ? short.slice(0, INPUT_SNIPPET / 2) + ' ... ' + short.slice(-INPUT_SNIPPET / 2) : short;
    }
    this.findings.set(key, f);
  }
}

/** Everything the server logs as an error and every uncaught error while `fn` runs. */
async function watchingErrors<T>(fuzz: () => Fuzzer | null, fn: () => Promise<T>): Promise<T> {
  const original = console.error;
  const record = (kind: string, args: unknown[]): void => {
    const text = args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : String(a))).join(' ');
    fuzz()?.finding(kind, text.slice(0, 1000));
  };
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

/** A normal session after the fuzzing: login, select, the store as the control API sees it, logout. */
async function normalSession(server: Server, port: number, fuzz: Fuzzer, scope?: MailboxScope): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  const splitter = new ResponseSplitter();
  const queue: ParsedResponse[] = [];
  let wake: (() => void) | null = null;
  let closed = false;
  socket.on('data', (d: Buffer) => {
    splitter.push(d, (r) => queue.push(parseResponse(r)));
    wake?.();
  });
  socket.on('close', () => {
    closed = true;
    wake?.();
  });
  socket.on('error', () => undefined);
  const next = async (): Promise<ParsedResponse> => {
    const deadline = Date.now() + 10_000;
    while (queue.length === 0) {
      if (closed) throw new Error('closed');
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 100);
      });
    }
    return queue.shift()!;
  };
  const command = async (tag: string, text: string): Promise<ParsedResponse[]> => {
    socket.write(`${tag} ${text}\r\n`);
    const out: ParsedResponse[] = [];
    for (;;) {
      const r = await next();
      out.push(r);
      if (r.kind === 'tagged' && r.tag === tag) return out;
    }
  };
  try {
    await next();
    const login = await command('N1', 'LOGIN testuser testpass');
    if (login.at(-1)!.type !== 'OK') return fuzz.finding('normal-session', `LOGIN failed: ${login.at(-1)!.response.text}`);
    const inbox = server.control.listMessages('INBOX', {}, scope);
    const sel = await command('N2', 'SELECT INBOX');
    if (sel.at(-1)!.type !== 'OK') return fuzz.finding('normal-session', `SELECT INBOX failed: ${sel.at(-1)!.response.text}`);
    const exists = sel.find((r) => r.type === 'EXISTS')?.number;
    if (exists !== inbox.length) fuzz.finding('normal-session', `SELECT says ${exists} EXISTS, the store has ${inbox.length}`);
    const fetched = await command('N3', 'UID FETCH 1:* (FLAGS)');
    const seen = fetched
      .filter((r) => r.type === 'FETCH')
      .map((r) => {
        const uid = r.fetch!.get('UID');
        const flags = r.fetch!.get('FLAGS');
        return `${uid?.t === 'num' ? uid.v : '?'}:${flags?.t === 'list' ? flags.v.map((f) => (f.t === 'atom' ? f.v : '?')).filter((f) => f !== '\\Recent').sort().join(',') : '?'}`;
      });
    const want = inbox.map((m) => `${m.uid}:${[...m.flags].sort().join(',')}`);
    if (seen.join(' ') !== want.join(' ')) fuzz.finding('normal-session', `UID FETCH 1:* FLAGS differs from the store: ${seen.slice(0, 20).join(' ')} vs ${want.slice(0, 20).join(' ')}`);
    const out = await command('N4', 'LOGOUT');
    if (out.length !== 2 || out[0]!.type !== 'BYE' || out[1]!.type !== 'OK') fuzz.finding('normal-session', `LOGOUT answered ${out.map((r) => r.response.text).join(' | ')}`);
  } catch (err) {
    fuzz.finding('normal-session', `normal session failed: ${(err as Error).message}`);
  } finally {
    socket.destroy();
  }
}

/** Runs the fuzzer against a fresh server; the server is stopped at the end. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const connections = options.connections ?? 6;
  const batch = options.batch ?? 24;
  const probeTimeoutMs = options.probeTimeoutMs ?? 10_000;
  const resetEvery = options.resetEvery ?? 10_000;
  const server = createServer({
    port: 0,
    // X-GM-EXT-1 is opt-in (not in "all"); the fuzzer drives its grammar and label model too.
    plugins: ['all', 'X-GM-EXT-1'],
    storage: storage() as never,
    maxLineLength: MAX_LINE,
    maxLiteral: MAX_LITERAL,
    ...(options.userMailboxes ? userMailboxOptions() : {}),
  });
  // The fuzz user's tree (userMailboxes) or the one tree.
  const scope: MailboxScope | undefined = options.userMailboxes ? { user: 'testuser' } : undefined;
  const { imap } = await server.start();
  const fuzz = new Fuzzer(server);
  let current: Fuzzer | null = fuzz;
  const started = Date.now();
  let done = 0;
  let batches = 0;
  let bytesSent = 0;
  let reconnects = 0;
  let closedByServer = 0;
  let refills = 0;
  let ambiguousTimeouts = 0;
  const states: Record<FuzzState, number> = { notAuthenticated: 0, authenticated: 0, selected: 0 };
  let probeN = 0;
  const control = new Rand(options.seed ^ 0x5eed);

  /** The fifth actor: control-API changes while the sessions run. */
  const controlChange = (): void => {
    try {
      const k = control.int(0, 3);
      const inbox = server.control.listMessages('INBOX', {}, scope);
      if (k === 0 || inbox.length === 0) server.control.addMessage('INBOX', { raw: `Subject: c${control.int(0, 999)}\r\n\r\nx\r\n`, flags: control.chance(0.3) ? [`ck${control.int(0, 9)}`] : [] }, scope);
      else if (k === 1) server.control.setFlags('INBOX', { uids: [control.pick(inbox).uid], flags: [control.pick(['\\Seen', '\\Deleted', `ck${control.int(0, 9)}`])], mode: control.pick(['add', 'remove', 'set'] as const) }, scope);
      else if (k === 2) server.control.expungeMessages('INBOX', { uids: [control.pick(inbox).uid] }, scope);
      else server.control.addMessage('Archive', { raw: 'Subject: a\r\n\r\ny\r\n' }, scope);
    } catch (err) {
      // INBOX/Archive may have been renamed or deleted by a fuzz input: that is a ServiceError, anything else a finding.
      if (!(err && typeof err === 'object' && 'code' in err)) fuzz.finding('control', String((err as Error).stack ?? err));
    }
  };

  const workers = Array.from({ length: connections }, (_, index) => ({
    gen: new Generator((options.seed * 7919 + index * 104729) >>> 0, options.userMailboxes ? { maxLineLength: MAX_LINE, mailboxes: USER_MAILBOXES } : { maxLineLength: MAX_LINE }),
    conn: new FuzzConnection(fuzz, imap.port),
  }));

  /** One worker's share of a round: batches on its connection until the round's inputs are sent. */
  const work = async ({ gen, conn }: (typeof workers)[number], roundEnd: number): Promise<void> => {
    while (done < roundEnd) {
      if (conn.isClosed) {
        await conn.connect();
        reconnects++;
      }
      // Move towards a state now and then, so every state gets its share.
      const parts: Buffer[] = [];
      const r = gen.r;
      let state = conn.state;
      if (state === 'notAuthenticated' && r.chance(0.4)) {
        parts.push(Buffer.from(`S${probeN} LOGIN testuser testpass\r\n`));
        state = 'authenticated';
      }
      if (state === 'authenticated' && r.chance(0.5)) {
        parts.push(Buffer.from(`S${probeN} ${r.chance(0.85) ? 'SELECT' : 'EXAMINE'} ${r.pick(['INBOX', 'INBOX', 'Archive'])}\r\n`));
        state = 'selected';
      }
      const n = Math.min(batch, roundEnd - done);
      for (let i = 0; i < n; i++) parts.push(gen.input(state));
      states[state] += n;
      done += n;
      const data = Buffer.concat(parts);
      bytesSent += data.length;
      conn.write(data);
      batches++;
      if (control.chance(0.3)) controlChange();
      const result = await conn.finishBatch(++probeN, probeTimeoutMs);
      // 'refill': the batch left a literal too large to fill; 'timeout' is a finding already; 'ambiguous' see
      // finishBatch. Start over.
      if (result === 'refill' || result === 'timeout' || result === 'ambiguous') conn.destroy();
      if (result === 'refill') refills++;
      if (result === 'ambiguous') ambiguousTimeouts++;
      if (result === 'closed') closedByServer++;
      if (options.onProgress && batches % 200 === 0) options.onProgress(done);
    }
  };

  const rounds = async (): Promise<void> => {
    while (done < options.inputs) {
      const roundEnd = Math.min(options.inputs, done + resetEvery);
      await Promise.all(workers.map((w) => work(w, roundEnd)));
      // Quiet now: check the store, a normal session, then start from the original storage.
      for (const p of storeProblems(server, scope)) fuzz.finding('store', p);
      if (options.userMailboxes) for (const p of [...storeProblems(server, { user: 'alice' }), ...storeProblems(server)]) fuzz.finding('store', p);
      await normalSession(server, imap.port, fuzz, scope);
      if (done < options.inputs) {
        for (const w of workers) w.conn.destroy();
        server.control.reset();
      }
    }
    for (const w of workers) w.conn.destroy();
  };

  try {
    await watchingErrors(
      () => current,
      rounds,
    );
  } finally {
    current = null;
    await server.stop();
  }
  return {
    inputs: done,
    batches,
    bytesSent,
    responses: fuzz.responses,
    reconnects,
    closedByServer,
    refills,
    ambiguousTimeouts,
    durationMs: Date.now() - started,
    findings: [...fuzz.findings.values()],
    statuses: fuzz.statuses,
    states,
  };
}

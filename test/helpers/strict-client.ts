/**
 * A state-tracking IMAP client for tests: it keeps its own model of the
 * selected mailbox (sequence numbers, UIDs, flags, the FLAGS it was told)
 * and checks every response against it and against the RFC 3501 grammar
 * (test/fuzz/response-check.ts). Every disagreement is a `Mismatch`:
 *
 * - EXISTS never shrinks without EXPUNGE; EXPUNGE, FETCH and RECENT
 *   numbers are within the mailbox;
 * - a FETCH keeps a message's UID, and UIDs ascend with sequence numbers;
 * - a keyword in a FETCH was announced in FLAGS before (or with) it
 *   (RFC 3501 §7.2.6);
 * - after `* BYE` only the tagged OK of LOGOUT, then the connection ends;
 * - tagged responses answer the command sent, continuation requests only
 *   where one was asked for (IDLE);
 * - a quoted string holds no CR, LF or NUL, and 8-bit only as UTF-8 once
 *   the session enabled UTF8=ACCEPT or IMAP4rev2 (`* ENABLED`, RFC 6855 §3).
 *
 * Commands run one at a time; `command()` returns the responses that came
 * with it. Callers add the checks only they can make (what their STORE,
 * COPY, MOVE or EXPUNGE must have caused) through `mismatch()`.
 */
import net from 'node:net';
import { ResponseError, ResponseSplitter, parseResponse, type ParsedResponse, type Value } from '../fuzz/response-check.js';

export interface Mismatch {
  session: string;
  command: string;
  problem: string;
}

/** One message as this client knows it. */
export interface ModelMessage {
  /** Null until a FETCH told it. */
  uid: number | null;
  /** Flags without \Recent. */
  flags: Set<string>;
}

export interface Model {
  mailbox: string;
  readOnly: boolean;
  messages: ModelMessage[];
  /** Flags of the last FLAGS response. */
  flags: Set<string>;
  uidvalidity: number | null;
}

export interface Result {
  tagged: ParsedResponse;
  untagged: ParsedResponse[];
  /** Sum of what EXISTS responses added during the command. */
  existsGrowth: number;
  /** EXPUNGE responses during the command. */
  expunged: number;
}

const flagsOf = (v: Value | undefined): string[] | null => (v?.t === 'list' ? v.v.map((f) => (f.t === 'atom' ? f.v : '?')) : null);
const isKeyword = (f: string): boolean => !f.startsWith('\\');

export class StrictClient {
  model: Model | null = null;
  private socket!: net.Socket;
  private splitter = new ResponseSplitter();
  private tagN = 0;
  private pending: { tag: string; text: string; untagged: ParsedResponse[]; growth: number; expunged: number; resolve: (r: Result) => void; reject: (e: Error) => void } | null = null;
  /** A SELECT/EXAMINE in progress builds this model; it replaces `model` on OK. */
  private selecting: Model | null = null;
  private sawBye = false;
  private afterBye = 0;
  private loggingOut = false;
  closed = false;
  private closeWaiters: (() => void)[] = [];
  private greeting: ((r: ParsedResponse) => void) | null = null;
  /** Commands answered. */
  commands = 0;
  /** The server said `* ENABLED` with UTF8=ACCEPT or IMAP4rev2: its quoted strings may carry UTF-8 from then on. */
  private utf8 = false;
  /** Set while a command waits for a continuation request (IDLE). */
  private continuation: (() => void) | null = null;

  private constructor(
    readonly name: string,
    private readonly report: (m: Mismatch) => void,
  ) {}

  static async connect(port: number, name: string, report: (m: Mismatch) => void): Promise<StrictClient> {
    const c = new StrictClient(name, report);
    const greeted = new Promise<ParsedResponse>((resolve, reject) => {
      c.greeting = resolve;
      c.socket = net.connect(port, '127.0.0.1');
      c.socket.setNoDelay(true);
      c.socket.once('error', reject);
    });
    c.socket.on('data', (d: Buffer) => c.onData(d));
    c.socket.on('error', () => undefined);
    c.socket.on('close', () => c.onClose());
    const g = await greeted;
    if (g.type !== 'OK') c.mismatch('(greeting)', `greeting is ${g.response.text}`);
    return c;
  }

  mismatch(command: string, problem: string): void {
    this.report({ session: this.name, command, problem });
  }

  private get current(): string {
    return this.pending?.text ?? '(no command)';
  }

  private onClose(): void {
    this.closed = true;
    if (this.pending) {
      const p = this.pending;
      this.pending = null;
      p.reject(new Error(`connection closed during ${p.text}`));
    }
    for (const w of this.closeWaiters.splice(0)) w();
  }

  private onData(d: Buffer): void {
    try {
      this.splitter.push(d, (r) => {
        let p: ParsedResponse;
        try {
          p = parseResponse(r, { utf8: this.utf8 });
        } catch (err) {
          if (!(err instanceof ResponseError)) throw err;
          this.mismatch(this.current, `malformed response: ${err.message}`);
          return;
        }
        this.onResponse(p);
      });
    } catch (err) {
      if (!(err instanceof ResponseError)) throw err;
      this.mismatch(this.current, `unframeable output: ${err.message}`);
      this.socket.destroy();
    }
  }

  private onResponse(r: ParsedResponse): void {
    if (this.greeting) {
      const g = this.greeting;
      this.greeting = null;
      g(r);
      return;
    }
    const text = r.response.text.slice(0, 200);
    if (this.sawBye) {
      this.afterBye++;
      if (!(this.loggingOut && r.kind === 'tagged' && r.type === 'OK' && this.afterBye === 1)) {
        this.mismatch(this.current, `response after * BYE: ${text}`);
      }
    }
    const p = this.pending;
    if (r.kind === 'continuation') {
      const waiter = this.continuation;
      this.continuation = null;
      if (waiter && p) waiter();
      else this.mismatch(this.current, `unexpected continuation request: ${text}`);
      return;
    }
    if (r.kind === 'tagged') {
      if (!p || r.tag !== p.tag) {
        this.mismatch(this.current, `tagged response for another command: ${text}`);
        return;
      }
      this.pending = null;
      this.commands++;
      // RFC 8437 §3: UNAUTHENTICATE ends what ENABLE turned on.
      if (r.type === 'OK' && /^UNAUTHENTICATE$/i.test(p.text)) this.utf8 = false;
      if (this.selecting) {
        if (r.type === 'OK') {
          const code = r.code?.toUpperCase();
          this.selecting.readOnly = code === 'READ-ONLY';
          this.model = this.selecting;
        } else this.model = null;
        this.selecting = null;
      }
      p.resolve({ tagged: r, untagged: p.untagged, existsGrowth: p.growth, expunged: p.expunged });
      return;
    }
    p?.untagged.push(r);
    this.onUntagged(r, p);
  }

  private onUntagged(r: ParsedResponse, p: StrictClient['pending']): void {
    const cmd = this.current;
    const text = r.response.text.slice(0, 200);
    if (r.type === 'BYE') {
      this.sawBye = true;
      return;
    }
    if (r.type === 'ENABLED' && /(^| )(UTF8=ACCEPT|IMAP4rev2)( |$)/i.test(r.response.text)) this.utf8 = true;
    const model = this.selecting ?? this.model;
    switch (r.type) {
      case 'FLAGS': {
        if (!model) return this.mismatch(cmd, `FLAGS without a selected mailbox: ${text}`);
        const flags = new Set(r.flags!);
        if (!this.selecting) {
          for (const m of model.messages) for (const f of m.flags) if (isKeyword(f) && !flags.has(f)) this.mismatch(cmd, `FLAGS drops ${f}, still on a message: ${text}`);
        }
        model.flags = flags;
        return;
      }
      case 'EXISTS': {
        if (!model) return this.mismatch(cmd, `EXISTS without a selected mailbox: ${text}`);
        const n = r.number!;
        if (this.selecting) {
          model.messages = Array.from({ length: n }, () => ({ uid: null, flags: new Set<string>() }));
          return;
        }
        if (n < model.messages.length) return this.mismatch(cmd, `EXISTS went from ${model.messages.length} to ${n} without EXPUNGE`);
        if (p) p.growth += n - model.messages.length;
        while (model.messages.length < n) model.messages.push({ uid: null, flags: new Set() });
        return;
      }
      case 'RECENT':
        if (model && r.number! > model.messages.length) this.mismatch(cmd, `${r.number} RECENT with ${model.messages.length} messages`);
        return;
      case 'EXPUNGE': {
        if (!model) return this.mismatch(cmd, `EXPUNGE without a selected mailbox: ${text}`);
        const n = r.number!;
        if (n > model.messages.length) return this.mismatch(cmd, `* ${n} EXPUNGE with ${model.messages.length} messages`);
        model.messages.splice(n - 1, 1);
        if (p) p.expunged++;
        return;
      }
      case 'FETCH': {
        if (!model) return this.mismatch(cmd, `FETCH without a selected mailbox: ${text}`);
        const n = r.number!;
        const m = model.messages[n - 1];
        if (!m) return this.mismatch(cmd, `* ${n} FETCH with ${model.messages.length} messages`);
        const uidValue = r.fetch!.get('UID');
        if (uidValue) {
          const uid = uidValue.t === 'num' ? uidValue.v : -1;
          if (m.uid !== null && m.uid !== uid) this.mismatch(cmd, `message ${n} had UID ${m.uid}, FETCH says ${uid}`);
          m.uid = uid;
          const before = model.messages.slice(0, n - 1).findLast((x) => x.uid !== null);
          const after = model.messages.slice(n).find((x) => x.uid !== null);
          if ((before && before.uid! >= uid) || (after && after.uid! <= uid)) {
            this.mismatch(cmd, `UID ${uid} at ${n} out of order (neighbours ${before?.uid} / ${after?.uid})`);
          }
        }
        const flags = flagsOf(r.fetch!.get('FLAGS'));
        if (flags) {
          for (const f of flags) if (isKeyword(f) && !model.flags.has(f)) this.mismatch(cmd, `keyword ${f} in FETCH before FLAGS announced it: ${text}`);
          m.flags = new Set(flags.filter((f) => f !== '\\Recent'));
        }
        return;
      }
      case 'OK': {
        const code = r.code ?? '';
        const uv = /^UIDVALIDITY (\d+)/i.exec(code);
        if (uv && model) model.uidvalidity = Number(uv[1]);
        return;
      }
      case 'NO':
      case 'BAD':
        this.mismatch(cmd, `untagged ${r.type}: ${text}`);
        return;
    }
  }

  /** Sends a command (`literal` goes as a LITERAL+ literal at the end) and returns its responses. */
  command(text: string, literal?: Buffer): Promise<Result> {
    if (this.pending) throw new Error(`${this.name}: ${text} while ${this.pending.text} runs`);
    if (this.closed) return Promise.reject(new Error(`${this.name}: connection closed`));
    const tag = `${this.name}.${++this.tagN}`;
    const upper = text.toUpperCase();
    if (/^(SELECT|EXAMINE) /.test(upper)) {
      const mailbox = text.slice(text.indexOf(' ') + 1).replace(/^"|"$/g, '');
      this.selecting = { mailbox, readOnly: upper.startsWith('EXAMINE'), messages: [], flags: new Set(), uidvalidity: null };
    }
    if (/^(CLOSE|UNSELECT)$/.test(upper)) this.model = null;
    if (upper === 'LOGOUT') this.loggingOut = true;
    return new Promise<Result>((resolve, reject) => {
      this.pending = { tag, text, untagged: [], growth: 0, expunged: 0, resolve, reject };
      this.socket.write(literal ? Buffer.concat([Buffer.from(`${tag} ${text} {${literal.length}+}\r\n`), literal, Buffer.from('\r\n')]) : `${tag} ${text}\r\n`);
    });
  }

  /**
   * IDLE (RFC 2177) for `ms` milliseconds: the continuation request, the
   * updates that arrive meanwhile (checked like any others), DONE, the
   * tagged OK.
   */
  async idle(ms: number): Promise<Result> {
    const continued = new Promise<void>((resolve) => {
      this.continuation = resolve;
    });
    const result = this.command('IDLE');
    const answered = await Promise.race([continued.then(() => false), result.then(() => true)]);
    if (answered) {
      this.continuation = null;
      this.mismatch('IDLE', 'IDLE answered without a continuation request');
      return result;
    }
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.socket.write('DONE\r\n');
    const r = await result;
    if (r.tagged.type !== 'OK') this.mismatch('IDLE', `IDLE answered ${r.tagged.response.text}`);
    return r;
  }

  /** LOGOUT: `* BYE`, the tagged OK, then the server closes the connection. */
  async logout(): Promise<void> {
    const r = await this.command('LOGOUT');
    if (r.tagged.type !== 'OK') this.mismatch('LOGOUT', `LOGOUT answered ${r.tagged.response.text}`);
    if (!r.untagged.some((u) => u.type === 'BYE')) this.mismatch('LOGOUT', 'no * BYE before the tagged OK');
    if (!this.closed) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.mismatch('LOGOUT', 'the server did not close the connection after LOGOUT');
          resolve();
        }, 5000);
        this.closeWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.socket.destroy();
  }

  /**
   * `UID FETCH 1:* (FLAGS)`: afterwards every message the client knew
   * before has its UID.
   */
  async sync(): Promise<Result> {
    const known = new Set(this.model?.messages ?? []);
    const r = await this.command('UID FETCH 1:* (FLAGS)');
    if (r.tagged.type !== 'OK') this.mismatch('UID FETCH 1:* (FLAGS)', `answered ${r.tagged.response.text}`);
    for (const m of this.model?.messages ?? []) {
      if (known.has(m) && m.uid === null) this.mismatch('UID FETCH 1:* (FLAGS)', 'a message got no FETCH with its UID');
    }
    return r;
  }

  close(): void {
    this.socket.destroy();
  }
}

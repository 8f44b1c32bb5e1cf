/**
 * One POP3 connection (RFC 1939): the AUTHORIZATION, TRANSACTION and UPDATE
 * states, over the protocol-neutral connection layer (src/connection/).
 * Commands run one at a time, in the order they arrive; a client that
 * pipelines (RFC 2449 PIPELINING) and does not read gets no further
 * command read until it has read its answers down (bounded memory).
 */
import type * as net from 'node:net';
import { hostname } from 'node:os';
import type * as tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { Admission, type AdmissionServer } from '../connection/admission.js';
import { Connection } from '../connection/connection.js';
import type { SessionHandle } from '../connection/registry.js';
import type { SessionEventType, SessionInfo, SessionState } from '../events.js';
import type { ResolvedPop3 } from '../options/types.js';
import type { ScriptAction } from '../script/engine.js';
import type { Pop3Fault, Pop3Stage, ScriptContext, ScriptRule } from '../script/rule.js';
import { failTlsHandshake } from '../script/transport.js';
import type { Server } from '../server.js';
import type { StoreChange } from '../store/changes.js';
import { applyUpdate, maildropMessages, uidlFormat } from './behaviour.js';
import { attackPop3Greeting, attackStls, POP3_DIALECT, pop3Offered, stlsStripped, type StlsPlan } from '../tls/attacks/pop3-attack.js';
import type { TlsWatch } from '../tls/verdicts.js';
import { capabilityLines, expireFor } from './capabilities.js';
import { NO_POP3_CHECK, pop3CheckerFactory, type Pop3Checker } from './checker-hook.js';
import { pop3Commands } from './commands/index.js';
import { bad, err, ok, type Pop3Reply, type Pop3State } from './commands/types.js';
import { frameBody, RFC_FRAMING } from './framing.js';
import { BARE_LF, LineReader, TOO_LONG } from './line-reader.js';
import { Maildrop } from './maildrop.js';

/** What the session needs of its listener (src/pop3/listener.ts). */
export interface Pop3Host extends AdmissionServer {
  readonly config: ResolvedPop3;
  /** RFC 2449 LOGIN-DELAY and `exclusive`: refuses a login with its reply, or takes the user's lock (null). */
  admitLogin(user: string, session: number): Pop3Reply | null;
  /** The session ended: its user's lock goes. */
  releaseLogin(user: string, session: number): void;
}

const STATE_NAMES: Record<Pop3State | 'closed', SessionState> = {
  authorization: 'Authorization',
  transaction: 'Transaction',
  update: 'Update',
  closed: 'Logout',
};

/** One process-wide part of the APOP timestamp: made on first use, not at import. */
let machineName: string | null = null;

export class Pop3Session implements SessionHandle {
  readonly id: number;
  state: Pop3State = 'authorization';
  user: string | null = null;
  /** The name given by USER, until PASS. */
  pendingUser: string | null = null;
  /** The user-name prefix the login used (pop3.behaviour.userPrefixes), or null. */
  prefix: string | null = null;
  /** RFC 6856 UTF8 was sent. */
  utf8 = false;
  /** The APOP timestamp of the greeting (`<pid.clock@host>`), or null without APOP. */
  readonly timestamp: string | null;
  private maildrop: Maildrop | null = null;
  private readonly conn: Connection;
  private readonly admission: Admission;
  private readonly reader: LineReader;
  private readonly checker: Pop3Checker;
  private readonly unsubscribe: () => void;
  /** Commands read so far: the next one's number (its command event's `tag`). */
  private seq = 0;
  private running = false;
  private closedDone = false;
  private quitting = false;
  private ending = false;
  /** The client sent CAPA; the capabilities last listed. */
  private capaSeen = false;
  private lastCapa: readonly string[] = [];
  /** The next command line was already waiting when the previous answer went out. */
  private nextPipelined = false;
  private lineWaiter: ((line: Buffer | null) => void) | null = null;
  /** A command rule's action whose output is gathered until the command has answered. */
  private capture: { parts: Buffer[]; action: ScriptAction } | null = null;
  private tlsUpgrade: ((plain: Duplex) => tls.TLSSocket) | null = null;
  /** The TLS bench's watch when this session meets a STARTTLS attack or a broken profile (docs/tls.md). */
  readonly tlsWatch: TlsWatch | null;
  /** Plain text an attack writes right after the next answer, in the same write (starttls-buffering). */
  private afterReply: Buffer | null = null;
  /** The tampering attack's injected CAPA answer stands in for the answer to the first CAPA. */
  private capaInjected = false;
  /** The TLS layer (implicit TLS or after STLS), for the client certificate SASL EXTERNAL reads. */
  private tlsSocket: tls.TLSSocket | null = null;
  /** The token service ended this login's token (outlook style): the text of the -ERR that answers the next command. */
  private tokenEndText: string | null = null;
  /** Set by a graceful shutdown: the goodbye once the running command has answered. */
  private goodbyeAfterCommand: string | null = null;
  /** The command running, for script contexts of its responses. */
  private current: { verb: string; seq: number } | null = null;

  constructor(
    readonly server: Server,
    private readonly host: Pop3Host,
    socket: net.Socket,
    secure: boolean,
    tcp: net.Socket,
  ) {
    this.id = server.sessions.nextId();
    if (secure && socket !== tcp) this.tlsSocket = socket as tls.TLSSocket;
    const config = host.config;
    this.reader = new LineReader(config.maxLineLength);
    const transcript = server.transcripts.open(this.id, socket.remoteAddress ?? null, this, 'pop3');
    this.conn = new Connection(
      {
        input: (chunk) => this.onData(chunk),
        bufferedInput: () => this.reader.bufferedBytes,
        flushHeld: () => undefined,
        closed: () => this.onClose(),
      },
      socket,
      secure,
      tcp,
      server.options.faults,
      transcript,
    );
    this.checker = server.options.clientCheck === 'off' ? NO_POP3_CHECK : pop3CheckerFactory(server.clientFindings, this.id);
    this.admission = new Admission(host, server.options.loginTimeout, () => {
      if (this.state === 'authorization') this.goodbye(`No login within ${server.options.loginTimeout / 1000} seconds`);
    });
    // RFC 1939 §3: an inactivity autologout ends the session without UPDATE: nothing is deleted.
    if (config.idleTimeout > 0) this.conn.setIdleTimeout(config.idleTimeout, () => this.goodbye(`Autologout: idle for ${idleText(config.idleTimeout)}`));
    this.unsubscribe = server.store.onChange((change) => this.onStoreChange(change));
    this.admission.register(this);
    this.timestamp = config.apop ? `<${process.pid}.${this.id}.${server.now()}@${(machineName ??= hostnameOnce())}>` : null;
    this.emitSession('open');
    let greeting: Buffer = Buffer.from(`+OK Rookery POP3 server ready${this.timestamp ? ` ${this.timestamp}` : ''}\r\n`);
    const action = this.fire('greeting', greeting.toString('latin1'));
    // After the greeting rules: one of them may choose this session's attacks (`attacks`).
    const offered = (): ReadonlySet<string> => pop3Offered(capabilityLines(config, this.state, this.conn.secure, this.state === 'transaction' ? this.user : null, this.certificateUser));
    this.tlsWatch = server.tls.watch(this.id, 'pop3', POP3_DIALECT, offered, !secure, action?.rule.attacks);
    if (this.tlsWatch) {
      if (secure && socket !== tcp) server.tls.follow(this.tlsWatch, 'pop3', socket as tls.TLSSocket);
      greeting = attackPop3Greeting(this.tlsWatch, greeting);
      this.capaInjected = this.tlsWatch.has('starttls-tampering');
    }
    if (action) this.applyOutput(action, greeting);
    else this.send([greeting]);
    this.checker.greeting?.(greeting.toString('latin1', 0, greeting.length - 2));
  }

  get config(): ResolvedPop3 {
    return this.host.config;
  }

  get secure(): boolean {
    return this.conn.secure;
  }

  /** The maildrop; only in TRANSACTION (the command table sees to it). */
  drop(): Maildrop {
    return this.maildrop!;
  }

  // ------------------------------------------------------------ what the control API sees

  info(): SessionInfo {
    const closed = this.conn.closed;
    return {
      session: this.id,
      user: this.user,
      state: STATE_NAMES[closed ? 'closed' : this.state],
      mailbox: this.maildrop ? 'INBOX' : null,
      readOnly: false,
      enabled: this.utf8 ? ['UTF8'] : [],
      secure: this.conn.secure,
      compressed: false,
      remoteAddress: closed ? null : this.conn.remoteAddress,
      protocol: 'pop3',
    };
  }

  /** `-ERR <text>` and the close (POP3 has no unsolicited goodbye; clients read it as the answer to what they sent), or a reset. */
  disconnect(options: { text?: string; reset?: boolean }): void {
    if (options.reset) this.conn.reset();
    else this.goodbye(options.text ?? 'Disconnected by the server');
    this.admission.unregister(this.id);
  }

  inject(data: Buffer): void {
    this.send([data]);
  }

  /** Graceful shutdown: the goodbye now between commands, else right after the running command's answer. */
  goodbyeWhenIdle(text: string): void {
    if (this.running) this.goodbyeAfterCommand = text;
    else this.goodbye(text);
  }

  private goodbye(text: string): void {
    if (this.conn.closed || this.quitting) return;
    this.quitting = true;
    this.send([Buffer.from(`-ERR ${text}\r\n`)]);
    this.endSocket();
  }

  // ------------------------------------------------------------ input

  private onData(chunk: Buffer): void {
    this.tlsWatch?.received();
    this.reader.push(chunk);
    if (this.lineWaiter && this.reader.hasLine) {
      const waiter = this.lineWaiter;
      this.lineWaiter = null;
      const line = this.reader.take();
      waiter(line === TOO_LONG ? Buffer.from('*') : line);
      return;
    }
    this.pump();
  }

  /** Runs the next command line, if one waits and none runs. */
  private pump(): void {
    if (this.running || this.conn.closed || this.quitting) return;
    const line = this.reader.take();
    if (line === null) {
      this.conn.resumeInput();
      return;
    }
    this.running = true;
    void this.runLine(line).then(
      () => this.afterCommand(),
      (error: unknown) => {
        console.error(`rookery: POP3 session ${this.id}: command failed:`, error);
        this.afterCommand();
      },
    );
  }

  /** A line inside a command (a SASL response); null when the connection closes first. Over-long lines read as `*` (abort). */
  readLine(): Promise<Buffer | null> {
    this.endCapture();
    const line = this.reader.take();
    if (line !== null) return Promise.resolve(line === TOO_LONG ? Buffer.from('*') : line);
    if (this.conn.closed) return Promise.resolve(null);
    this.conn.resumeInput();
    return new Promise((resolve) => (this.lineWaiter = resolve));
  }

  /** A SASL challenge line (`+ <base64>`, RFC 5034 §4). */
  challenge(base64: string): void {
    this.respond(Buffer.from(`+ ${base64}\r\n`, 'latin1'));
  }

  private async runLine(line: Buffer | typeof TOO_LONG): Promise<void> {
    const seq = ++this.seq;
    const pipelined = this.nextPipelined;
    if (line === TOO_LONG) {
      this.reply(seq, '', { ok: false, status: 'BAD', text: `Line too long (limit ${this.config.maxLineLength} octets with CRLF)` });
      return;
    }
    this.tlsWatch?.command(line, this.conn.secure);
    const text = line.toString('utf8');
    const space = text.indexOf(' ');
    const verb = (space < 0 ? text : text.slice(0, space)).toUpperCase();
    const rest = space < 0 ? '' : text.slice(space + 1);
    const args = rest === '' ? [] : rest.split(/ +/).filter((a) => a !== '');
    const scriptName = verb === 'AUTH' && args[0] ? `AUTH ${args[0].toUpperCase()}` : verb;
    // The wire log (`debug`), without credentials.
    const debug = this.server.options.debug;
    if (debug) debug(`S${this.id} C: ${verb === 'PASS' ? 'PASS ***' : verb === 'AUTH' && args.length > 1 ? `${scriptName} ***` : text.slice(0, 200)}`);
    const refusal = this.checker.command({
      session: this.id,
      seq,
      line: line.toString('latin1'),
      verb,
      state: this.state,
      user: this.user,
      secure: this.conn.secure,
      // Stripped by an attack, STLS was not offered as far as the client could see.
      stlsOffered: this.config.stls && !this.conn.secure && !stlsStripped(this.tlsWatch),
      capaSeen: this.capaSeen,
      capabilities: this.lastCapa,
      pipelined,
      afterQuit: false,
      bareLf: BARE_LF.has(line),
    });
    this.current = { verb: scriptName, seq };
    let fault: Pop3Fault | null = null;
    const action = this.fire('command', line.toString('latin1'));
    if (action) {
      const rule = action.rule;
      if (rule.drop || (action.send && !rule.run)) {
        // The rule answers (or swallows) the command: it does not run and makes no command event.
        this.applyOutput(action, null);
        this.current = null;
        return;
      }
      fault = rule.pop3Fault ?? null;
      this.capture = { parts: [], action };
    }
    let result: Pop3Reply;
    const spec = pop3Commands().get(verb);
    if (this.tokenEndText !== null) {
      // The token ended and the style waits for the client's next command: that command is answered, not run.
      result = err(this.tokenEndText, 'AUTH');
      this.tokenEndText = null;
      this.quitting = true;
    } else if (refusal !== null) result = err(refusal);
    else if (verb === '') result = bad('Empty command');
    else if (!spec) result = bad(`Unknown command ${verb.slice(0, 40)}`);
    else if (!spec.states.includes(this.state)) result = bad(`${verb} is not allowed in the ${STATE_NAMES[this.state]} state`);
    else {
      try {
        result = await spec.run({ session: this, verb, rest, args, fault });
      } catch (error) {
        console.error(`rookery: POP3 session ${this.id}: ${verb} failed:`, error);
        // RFC 3206 §4: a temporary system problem, the session goes on.
        result = err('Internal error in the server; the session goes on', 'SYS/TEMP');
      }
    }
    if (this.conn.closed) {
      this.capture = null;
      return;
    }
    this.reply(seq, scriptName, result);
  }

  private reply(seq: number, verb: string, result: Pop3Reply): void {
    const status = result.status ?? (result.ok ? 'OK' : 'NO');
    const code = result.code ? `[${result.code}] ` : '';
    const head = result.ok ? `+OK${result.text ? ` ${result.text}` : ''}\r\n` : `-ERR ${code}${result.text}\r\n`;
    const parts: Buffer[] = [statusLine(head)];
    this.server.options.debug?.(`S${this.id} S: ${head.slice(0, -2)}${result.body ? ' (multi-line)' : ''}`);
    if (result.ok && result.body !== undefined && result.body !== null) parts.push(...frameBody(result.body, result.framing ?? RFC_FRAMING));
    if (this.afterReply) parts.push(this.afterReply);
    this.afterReply = null;
    // The tampering attack already answered the first command (its injected CAPA answer): when that
    // command is CAPA, the client reads the injection as this answer; any other read it as its own.
    const injected = this.capaInjected;
    this.capaInjected = false;
    if (!(injected && verb === 'CAPA')) this.respond(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    this.checker.answered?.(result.ok, parts.length > 1);
    this.endCapture();
    this.current = null;
    this.server.emitCommand(this.id, String(seq), verb, status, this.user, 'pop3');
  }

  private async afterCommand(): Promise<void> {
    this.nextPipelined = this.reader.hasLine;
    if (this.conn.closed) return;
    if (this.quitting) {
      // Lines sent after QUIT are not run; the checker still hears of them.
      for (let line = this.reader.take(); line !== null; line = this.reader.take()) {
        if (line === TOO_LONG) continue;
        const text = line.toString('latin1');
        this.checker.command({
          session: this.id, seq: ++this.seq, line: text, verb: text.split(' ')[0]!.toUpperCase(), state: this.state, user: this.user,
          secure: this.conn.secure, stlsOffered: false, capaSeen: this.capaSeen, capabilities: this.lastCapa, pipelined: true, afterQuit: true,
        });
      }
      this.endSocket();
      return;
    }
    if (this.goodbyeAfterCommand !== null) {
      this.goodbye(this.goodbyeAfterCommand);
      return;
    }
    // A client that does not read its answers gets no further command read.
    const room = this.conn.outputRoom();
    if (room) {
      await room;
      if (this.conn.closed) return;
    }
    if (this.tlsUpgrade) {
      const context = this.tlsUpgrade;
      this.tlsUpgrade = null;
      if (this.conn.queued) await this.conn.queueDone;
      this.conn.uncork();
      const refused = this.conn.startTls(context, () => this.reader.discard());
      if (refused) {
        // A `tlsFailure` fault: the handshake is refused with an alert.
        failTlsHandshake(refused);
        return;
      }
      this.tlsSocket = this.conn.socket as tls.TLSSocket;
      // RFC 2595 §4: what was said before TLS does not count after it.
      this.pendingUser = null;
      this.capaSeen = false;
    }
    this.running = false;
    this.pump();
  }

  // ------------------------------------------------------------ what commands ask of the session

  /** STLS: the connection switches to TLS once the +OK is out; buffered plain text is dropped (RFC 2595 §4). */
  startTls(plan: StlsPlan | null = null): void {
    const server = this.server;
    const listener = server.tlsFor('pop3');
    const watch = this.tlsWatch;
    if (plan?.after) this.afterReply = plan.after;
    // starttls-no-handshake: "+OK" and the session stays in plain text.
    if (plan && !plan.handshake) return;
    this.tlsUpgrade = (plain) => {
      const socket = listener.wrap(plain);
      if (watch) server.tls.follow(watch, 'pop3', socket);
      const garbage = plan?.afterHandshake;
      // Under the TLS layer: these bytes reach the client outside any record.
      if (garbage && watch) socket.once('secure', () => watch.armGarbage(() => plain.write(garbage)));
      return socket;
    };
  }

  /** The STARTTLS attack's plan for STLS (null: none changes it). */
  stlsPlan(): StlsPlan | null {
    return this.tlsWatch ? attackStls(this.tlsWatch) : null;
  }

  /**
   * The user the client certificate names (signed by the test CA, still
   * valid; `tls.pop3.requestCert`), or null: what AUTH EXTERNAL logs in.
   */
  get certificateUser(): string | null {
    if (this.tlsSocket === null) return null;
    const user = this.server.tlsFor('pop3').certificateUser(this.tlsSocket);
    return user !== null && this.server.store.users.has(user) ? user : null;
  }

  /** The user logged in now, or null: the token service checks a lease is still this login's (src/oauth/leases.ts). */
  leaseUser(): string | null {
    return this.state === 'transaction' ? this.user : null;
  }

  /**
   * The token service ended this login's token (expired or revoked), as
   * the `oauth.style` provider ends a session (src/oauth/styles.ts). POP3
   * has no BYE: `-ERR [AUTH] text` and the close, now between commands
   * (after the running one) or in answer to the next command. [AUTH]
   * (RFC 3206 §4): the credentials, not the system, are the problem, so
   * the client knows to get a new token. No UPDATE: nothing is deleted.
   */
  tokenEnded(text: string, atNextCommand: boolean): void {
    if (atNextCommand) this.tokenEndText = text;
    else this.goodbyeWhenIdle(`[AUTH] ${text}`);
  }

  capaSent(lines: readonly string[]): void {
    this.capaSeen = true;
    this.lastCapa = lines.map((l) => l.split(' ')[0]!.toUpperCase());
    this.checker.capa({ session: this.id, state: this.state, lines });
  }

  /**
   * A successful credential check: the refusals of the listener
   * (`[IN-USE]`, `[LOGIN-DELAY]`), then the maildrop is fixed and the
   * session enters TRANSACTION.
   */
  login(user: string, prefix: string | null): Pop3Reply {
    const inbox = this.server.viewOf(user).get('INBOX');
    // RFC 3206 §4: SYS/PERM, the maildrop cannot be had, trying again will not help.
    if (!inbox) return err('The user has no INBOX', 'SYS/PERM');
    const refused = this.host.admitLogin(user, this.id);
    if (refused) return refused;
    this.user = user;
    this.prefix = prefix;
    this.maildrop = new Maildrop(inbox, maildropMessages(this.config.behaviour, prefix, inbox, this.server.now()), uidlFormat(this.config.behaviour));
    this.state = 'transaction';
    this.admission.leaveUnauthenticated();
    this.emitSession('login');
    this.checker.authenticated?.(this.maildrop.count);
    return ok(`Logged in, ${this.maildrop.count} messages (${this.maildrop.octets} octets)`);
  }

  /**
   * QUIT. In TRANSACTION the UPDATE state removes the marked messages in
   * one store change (RFC 1939 §6); the connection closes after the answer.
   */
  quit(): Pop3Reply {
    // The connection closes once the answer is out (afterCommand).
    this.quitting = true;
    const drop = this.maildrop;
    if (this.state !== 'transaction' || !drop) {
      this.emitSession('logout');
      return ok('Bye');
    }
    this.state = 'update';
    let result: Pop3Reply;
    try {
      const doomed = drop.doomed(expireFor(this.config, this.user!) === 0);
      const outcome = applyUpdate(this.config.behaviour, this.server.store, this.server.viewOf(this.user), drop.mailbox, doomed, this.id);
      const left = drop.mailbox.messages.length;
      result = ok(`Bye, ${outcome.removed.length} messages deleted, ${left} left`);
    } catch (error) {
      // RFC 1939 §6: -ERR when some deleted messages could not be removed.
      console.error(`rookery: POP3 session ${this.id}: UPDATE failed:`, error);
      result = err('Some deleted messages were not removed', 'SYS/TEMP');
    }
    this.emitSession('logout');
    return result;
  }

  // ------------------------------------------------------------ output

  /** A response (status line and body) through the response rules, or into a command rule's capture. */
  private respond(data: Buffer): void {
    if (this.capture) {
      this.capture.parts.push(data);
      return;
    }
    const action = this.fire('response', firstLine(data));
    if (action) this.applyOutput(action, data);
    else this.send([data]);
  }

  private endCapture(): void {
    const capture = this.capture;
    if (!capture) return;
    this.capture = null;
    this.applyOutput(capture.action, Buffer.concat(capture.parts));
  }

  /** Writes behind shaped output still going out. Every byte the session sends leaves here or through `rawWrite`. */
  private send(parts: readonly Buffer[]): void {
    if (this.conn.ended) return;
    // A client that reads nothing while output piles up is reset: it could not be told anything anyway.
    if (this.conn.unreadBeyond(this.server.options.maxOutputBuffer)) {
      this.conn.reset();
      return;
    }
    if (this.conn.queued) {
      this.conn.after(() => {
        for (const p of parts) this.rawWrite(p);
      });
      return;
    }
    this.conn.coalesce();
    for (const p of parts) this.conn.write(p);
  }

  private rawWrite(data: Buffer): void {
    if (this.conn.ended || data.length === 0) return;
    this.conn.write(data);
  }

  private endSocket(): void {
    if (this.ending) return;
    this.ending = true;
    if (this.conn.queued) this.conn.after(() => this.conn.close());
    else this.conn.close();
  }

  // ------------------------------------------------------------ script rules (on: "pop3")

  private fire(stage: Pop3Stage, text: string): ScriptAction | null {
    const script = this.server.script;
    if (!script.has('pop3')) return null;
    return script.fire(this.scriptContext(stage, text));
  }

  private scriptContext(stage: Pop3Stage, text: string): ScriptContext {
    const current = this.current;
    return {
      event: 'pop3',
      stage,
      session: this.id,
      tag: current ? String(current.seq) : null,
      command: current?.verb ?? null,
      state: STATE_NAMES[this.state],
      user: this.user,
      mailbox: this.maildrop ? 'INBOX' : null,
      text,
    };
  }

  /** Sends what a rule says instead of / around `normal` (null: the command did not run). */
  private applyOutput(action: ScriptAction, normal: Buffer | null): void {
    const rule = action.rule;
    const parts: Buffer[] = [];
    if (!rule.drop) {
      if (rule.before !== undefined) parts.push(Buffer.from(rule.before, 'latin1'));
      if (action.send) parts.push(withCrlf(action.send));
      if (normal && (!action.send || rule.run)) parts.push(normal);
      if (rule.after !== undefined) parts.push(Buffer.from(rule.after, 'latin1'));
    }
    const data = Buffer.concat(parts);
    if (rule.delay === undefined && rule.chunk === undefined && rule.truncate === undefined && !rule.close) {
      if (data.length > 0) this.send([data]);
      return;
    }
    this.shapedWrite(data, rule);
  }

  /** Writes `data` with a rule's delay, chunking, truncation and close; later output waits behind it. */
  private shapedWrite(data: Buffer, rule: ScriptRule): void {
    if (rule.truncate !== undefined || rule.close) this.quitting = true;
    this.conn.hold(async () => {
      if (rule.delay) await wait(rule.delay);
      const bytes = rule.truncate !== undefined && rule.truncate < data.length ? data.subarray(0, rule.truncate) : data;
      if (rule.chunk && bytes.length > rule.chunk) {
        for (let at = 0; at < bytes.length; at += rule.chunk) {
          if (at > 0) await wait(rule.chunkDelay ?? 0);
          this.rawWrite(bytes.subarray(at, at + rule.chunk));
        }
      } else this.rawWrite(bytes);
      if (rule.truncate !== undefined || rule.close) {
        if (rule.close === 'reset') {
          while (!this.conn.socket.destroyed && this.conn.socket.writableLength > 0) await wait(1);
          await wait(20);
          if (!this.conn.socket.destroyed) this.conn.reset();
        } else this.conn.close();
      }
    }, true);
  }

  // ------------------------------------------------------------ the store and the end

  private onStoreChange(change: StoreChange): void {
    switch (change.kind) {
      case 'expunge':
        if (this.maildrop && change.mailbox === this.maildrop.mailbox && change.origin !== this.id) this.maildrop.noteGone(change.messages);
        return;
      case 'reset':
        this.goodbyeWhenIdle('[SYS/TEMP] Server reset');
        return;
      case 'user':
        if (change.type === 'delete' && change.disconnect && change.name === this.user) this.goodbyeWhenIdle('[SYS/PERM] User was deleted');
        return;
      default:
        return;
    }
  }

  private emitSession(type: SessionEventType): void {
    this.server.emitSession(type, this.info());
  }

  private onClose(): void {
    if (this.closedDone) return;
    this.closedDone = true;
    this.checker.closed(this.quitting);
    this.tlsWatch?.closed();
    this.admission.closed();
    this.unsubscribe();
    this.admission.unregister(this.id);
    if (this.user !== null) this.host.releaseLogin(this.user, this.id);
    this.server.script.forgetSession(this.id);
    const waiter = this.lineWaiter;
    this.lineWaiter = null;
    waiter?.(null);
    this.conn.transcript?.close();
    this.emitSession('close');
  }
}

/** Seconds, or milliseconds for the short timeouts tests set. */
function idleText(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} seconds` : `${ms} ms`;
}

function firstLine(data: Buffer): string {
  const lf = data.indexOf(10);
  return data.subarray(0, lf < 0 ? data.length : lf + 1).toString('latin1');
}

/** A rule's `send` as a POP3 line: CRLF added when it has no line end. */
function withCrlf(send: Buffer): Buffer {
  return send.length > 0 && send[send.length - 1] === 10 ? send : Buffer.concat([send, Buffer.from('\r\n')]);
}

function hostnameOnce(): string {
  const name = hostname();
  // The timestamp is `<...@host>`: a name with characters outside that syntax is replaced.
  return /^[A-Za-z0-9.-]+$/.test(name) ? name : 'localhost';
}

function wait(ms: number | 'tick'): Promise<void> {
  return new Promise((resolve) => (ms === 'tick' || ms === 0 ? setImmediate(resolve) : setTimeout(resolve, ms)));
}

/** Most octets of a response's first line, CRLF included (RFC 1939 section 3, RFC 2449 section 4). */
const MAX_STATUS_LINE = 512;

/** The status line as sent: text that repeats a long argument is cut to fit, on a UTF-8 character boundary. */
function statusLine(head: string): Buffer {
  const bytes = Buffer.from(head, 'utf8');
  if (bytes.length <= MAX_STATUS_LINE) return bytes;
  let end = MAX_STATUS_LINE - '...\r\n'.length;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return Buffer.concat([bytes.subarray(0, end), Buffer.from('...\r\n')]);
}

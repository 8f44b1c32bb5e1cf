import type * as net from 'node:net';
import type { Duplex } from 'node:stream';
import type * as tls from 'node:tls';
import { Connection, OUTPUT_HIGH_WATER, type ConnectionHost, type TransportLayer } from '../connection/connection.js';
import { Admission } from '../connection/admission.js';
import { isServiceError } from '../errors.js';
import type { ScriptAction } from '../script/engine.js';
import type { ScriptContext, ScriptOn, ScriptRule } from '../script/rule.js';
import { ResponseShaper, type ShaperHost, type ShaperHostSource } from '../script/shaping.js';
import type { SessionEventType, SessionInfo, SessionState } from '../events.js';
import type { Server } from '../server.js';
import type { SessionHandle } from '../connection/registry.js';
import type { SessionRules } from '../extensions/extension.js';
import type { ChangeObserver, StoreChange } from '../store/changes.js';
import { EnabledCapabilities } from './enabled.js';
import type { Mailbox } from '../store/mailbox.js';
import type { MailboxView } from '../store/view.js';
import { CommandFailure, type CommandContext, type CommandResult, type CommandSpec, type ImapState } from './command.js';
import { decodeMutf7 } from '../store/mutf7.js';
import { imapProtocol } from './protocol.js';
import { SessionChecker } from '../client-check/session-checker.js';
import { hideCapabilities } from '../client-check/rules.js';
import { ArgParser, ParseError } from './parser.js';
import { SelectedMailbox } from './selected.js';
import { CommandReader, type LiteralInfo, type LiteralVerdict, type ReaderHooks, type RejectInfo, type Segment } from './wire/reader.js';
import { describeCommand, describeOutput } from './wire/log.js';
import { continuation, encodeResponseOf, encodeResponseTextOrBytes, statusText, tagged, untaggedStatus } from './wire/serializer.js';
import { fromStatus, fromValues } from '../script/response.js';
import { utf8Text, type ImapValue } from './wire/values.js';
import { failTlsHandshake, hasTransport, type SessionFaults, stripStartTlsFrom } from '../script/transport.js';
import { SessionTimers } from './timers.js';
import { SessionLimits } from '../session/limits.js';
import { attackGreeting, IMAP_DIALECT } from '../tls/attacks/imap-attack.js';
import type { TlsWatch } from '../tls/verdicts.js';

/** Size at which batched output is written out. */
const BATCH_BYTES = 256 * 1024;

// Moved to the protocol-neutral connection layer; exported here as before.
export { OUTPUT_HIGH_WATER, type TransportLayer };

/**
 * When the changes others make to the selected mailbox reach the client
 * (RFC 5465 NOTIFY sets it with `session.setSelectedUpdates`).
 */
export interface SelectedUpdatePolicy {
  /**
   * `command`: at the end of commands and inside IDLE (RFC 3501, the
   * default); `immediate`: also between commands, EXPUNGE at any time
   * (NOTIFY `selected`); `delayed`: also between commands, EXPUNGE only
   * where RFC 3501 §7.4.1 allows it (`selected-delayed`); `held`: not sent;
   * they wait until the policy changes, or until the session's own change
   * in the mailbox has to be reported (its view must stay in UID order).
   */
  readonly timing: 'command' | 'immediate' | 'delayed' | 'held';
  /** False: flag changes made by others are not reported (NOTIFY without FlagChange). */
  readonly flags: boolean;
}

const DEFAULT_UPDATES: SelectedUpdatePolicy = { timing: 'command', flags: true };

/**
 * Changes held back under the `held` policy above which they are let
 * through as in RFC 3501 (at the next command's end): what a session that
 * asked for no updates costs stays bounded.
 */
const HELD_LIMIT = 10_000;

/** What a running command's `segments` become once parsed (see runCommand). */
const NO_SEGMENTS: Segment[] = [];
/** What an idling command's frame keeps instead of its parser. */
const NO_ARGS = new ArgParser([]);
/** The hidden capabilities of a session that hides none. */
const NOTHING_HIDDEN: ReadonlySet<string> = new Set();

const STATE_NAMES: Record<ImapState | 'logout', SessionState> = {
  notAuthenticated: 'Not Authenticated',
  authenticated: 'Authenticated',
  selected: 'Selected',
  logout: 'Logout',
};

/** Maps a service error code to the RFC 5530 response code IMAP sends. */
function responseCodeOf(code: string): string {
  switch (code) {
    case 'INVALID':
      return 'CANNOT';
    case 'SERVERERROR':
      return 'SERVERBUG';
    case 'NOPERM':
    case 'NONEXISTENT':
    case 'ALREADYEXISTS':
    case 'CANNOT':
    case 'HASCHILDREN':
    case 'OVERQUOTA':
    case 'TOOBIG':
    case 'LIMIT':
    case 'USEATTR':
      return code;
    default:
      return 'CANNOT';
  }
}

/**
 * One IMAP connection: its state machine, its view of the selected
 * mailbox and the untagged updates it owes the client. Commands run one at
 * a time; input is read only when the session asks for it.
 */
export class ImapSession implements SessionHandle, ChangeObserver {
  readonly id: number;
  // First, together, what a change reaching an idling session reads: V8 lays an object's fields out in the
  // order they are declared, and the fan-out to 10,000 sessions is bound by fetches from memory (issue 37).
  selected: SelectedMailbox | null = null;
  /** True while IDLE waits for DONE: updates go out at once. */
  idling = false;
  private updatePolicy: SelectedUpdatePolicy = DEFAULT_UPDATES;
  /** New messages and flag changes by others in the selected mailbox, held under the `held` policy, in order. */
  private held: StoreChange[] | null = null;
  /** The protocol's `rules(session)` as last worked out; dropped when `enabled` changes (src/imap/protocol.ts). */
  rulesMemo: Readonly<Required<SessionRules>> | null = null;
  /** False while `enabled` is empty (most sessions): `hasEnabled` answers without reading the set. */
  private enabledAny = false;
  /**
   * The connection under the protocol (src/connection/): socket and layers,
   * write coalescing, backpressure, transport faults, the transcript.
   */
  private readonly conn: Connection;
  /** Script rules on structured responses (mutate, literals, defer, continuation): src/script/shaping.ts. */
  private readonly shaper: ResponseShaper;
  /** Output gathered by `batch()`, written when large or at the end. */
  private batchOpen = false;
  /**
   * What a batch gathered: the first part alone (most batches write one),
   * a list from the second on. No array per batch: a change reaches every
   * idling session through one (the IDLE fan-out).
   */
  private pendingOne: Buffer | null = null;
  private pendingMany: Buffer[] | null = null;
  private pendingBytes = 0;
  /** Output of a command a script rule shapes, gathered until it finishes. */
  private capture: { parts: Buffer[]; action: ScriptAction } | null = null;
  /** What this session, idling, was given to write in this turn (one notice, or more in order); written by `writeNotices`. */
  private notices: Buffer | Buffer[] | null = null;
  /** The running `quiet` rule timers; null when none runs (most sessions). */
  private quietTimers: NodeJS.Timeout[] | null = null;
  state: ImapState | 'logout' = 'notAuthenticated';
  user: string | null = null;
  /** The view of `mailboxes`, for the user it was made for. */
  private view: { user: string | null; names: MailboxView } | null = null;
  /** Last selected mailbox path; kept for the close event. */
  private lastMailbox: string | null = null;
  /** Capabilities the client ENABLEd (RFC 5161); extensions add to it. */
  readonly enabled = new EnabledCapabilities(this);
  private readonly reader: CommandReader;
  private lineWaiter: { resolve: (line: Buffer | null) => void; reject: (err: CommandFailure) => void } | null = null;
  /** The command being run, for IDLE-style waits and for flushing updates. */
  private current: { name: string; tag: string } | null = null;
  /** The command whose literal the reader is about to accept (a `+` for it may follow). */
  private literalOf: { name: string; tag: string } | null = null;
  /** Set by STARTTLS: the connection switches to TLS once the command's answer is out (after `before`, in plain text). */
  private tlsUpgrade: { wrap: ((plain: Duplex) => tls.TLSSocket) | null; before: Buffer | null } | null = null;
  /** The TLS bench's watch (src/tls/verdicts.ts) when the session meets an attack or a broken profile; else null. */
  readonly tlsWatch: TlsWatch | null;
  /** The TLS layer of the connection, once there is one (implicit TLS or STARTTLS). */
  private tlsSocket: tls.TLSSocket | null = null;

  /**
   * The user a client certificate names, when the listener asked for one
   * (`tls.requestCert`) and the test CA signed it; null otherwise. SASL
   * EXTERNAL (src/extensions/auth-external/) logs this user in.
   */
  get certificateUser(): string | null {
    return this.tlsSocket ? this.server.tlsFor('imap').certificateUser(this.tlsSocket) : null;
  }
  /** Set by a command (COMPRESS): a layer goes over the connection right after its answer. */
  private layerUpgrade: TransportLayer | null = null;
  /** Server-clock time at which an XOAUTH2 login's sessionTimeout ends the session. */
  private tokenExpiresAt: number | null = null;
  private tokenTimer: NodeJS.Timeout | null = null;
  /** The BYE text of a token that ended (src/oauth: the provider's words), or null for the sessionTimeout's. */
  private tokenEndText: string | null = null;
  /** The command whose tagged response is being written. */
  private finishing: { name: string; tag: string } | null = null;
  /** The login timeout, the count of unauthenticated connections and the sessions registry (src/connection/admission.ts). */
  private readonly admission: Admission;
  /** Set by a graceful shutdown: `* BYE` as soon as the running command has answered. */
  private byeAfterCommand: string | null = null;
  /** True from reading a command until the session reads the next one: no unsolicited output then. */
  private busy = false;
  private unsolicitedScheduled = false;
  private unsolicitedWaiting = false;
  /**
   * Capabilities (upper case) this session is not offered: the server's
   * `capabilities.hide`, the user's once logged in, and those a script rule
   * hid. They are not advertised and their commands are unknown.
   */
  get hiddenCapabilities(): ReadonlySet<string> {
    return this.hidden ?? NOTHING_HIDDEN;
  }
  /** Made when something is hidden: most sessions hide nothing, and idle sessions are many (issue 20). */
  private hidden: Set<string> | null = null;
  /** What script rules hid (kept across UNAUTHENTICATE, unlike a user's). */
  private scriptHidden: string[] | null = null;
  /** The client checker of this session; null when `clientCheck` is off (no cost then). */
  private readonly checker: SessionChecker | null;
  /** Server-clock timers (autologout, maximum IDLE, scheduled BYE; src/imap/timers.ts), null when none is set. */
  private readonly timers: SessionTimers | null;
  /** Connection limit per user and rate limits (src/session/limits.ts), null when none is set. */
  private readonly limits: SessionLimits | null;

  constructor(
    readonly server: Server,
    socket: net.Socket,
    secure: boolean,
    /** The TCP connection under `socket` when that is TLS or a layer: a reset has to go to it. */
    tcp: net.Socket = socket,
  ) {
    this.id = server.sessions.nextId();
    // One object serves the reader, the connection and the shaper: no closure per hook (issue 37).
    const ports = new ImapSession.Ports(this);
    this.shaper = new ResponseShaper(server.script, ports);
    const transcript = server.transcripts.open(this.id, socket.remoteAddress ?? null, this);
    this.conn = new Connection(ports, socket, secure, tcp, server.options.faults, transcript);
    if (secure && socket !== tcp) this.tlsSocket = socket as tls.TLSSocket;
    const options = server.options;
    this.hide(options.hideCapabilities);
    this.checker = options.clientCheck === 'off' ? null : new SessionChecker(server.clientFindings, this);
    this.reader = new CommandReader({ maxLineLength: options.maxLineLength, hooks: ports });
    // Server-clock timers of the options (issue 14).
    this.timers = SessionTimers.forSession(this);
    this.limits = SessionLimits.forSession(this);
    this.admission = new Admission(server, options.loginTimeout, () => {
      if (this.state === 'notAuthenticated') this.bye(`No login within ${options.loginTimeout / 1000} seconds`);
    });
    // The session is its own change observer (no closure: src/store/changes.ts ChangeObserver).
    server.store.onChange(this);
    this.admission.register(this);
    this.emitSession('open');
    const greetingText = (): Buffer => {
      const code = options.greetingCapabilities ? `[CAPABILITY ${this.announceCapabilities().join(' ')}] ` : '';
      return Buffer.from(`* OK ${code}${options.greeting}\r\n`);
    };
    const scripted = this.server.script.has('greeting') ? this.server.script.fire(this.scriptContext('greeting', greetingText())) : null;
    // After the greeting rules: one of them may choose this session's attacks (`attacks`).
    this.tlsWatch = server.tls.watch(this.id, 'imap', IMAP_DIALECT, () => new Set(this.announceCapabilities()), !secure, scripted?.rule.attacks);
    if (this.tlsWatch) {
      // The stripping attack is the stripStartTls fault from the first byte.
      if (this.tlsWatch.has('starttls-stripping')) this.faults.stripStartTls = true;
      if (secure && socket !== tcp) server.tls.follow(this.tlsWatch, 'imap', socket as tls.TLSSocket);
    }
    const attacked = (g: Buffer): Buffer => (this.tlsWatch ? attackGreeting(this.tlsWatch, g) : g);
    let greeting = attacked(greetingText());
    // A greeting rule that hides capabilities changes the greeting it was asked about.
    if (scripted && this.hideByRule(scripted.rule)) greeting = attacked(greetingText());
    if (scripted) this.applyOutput(scripted, greeting);
    else this.write(greeting);
    this.reader.next('command');
  }

  /** True when output not yet read by the client (queued or batched) is above the high-water mark. */
  outputPressure(): boolean {
    return this.conn.unreadBeyond(OUTPUT_HIGH_WATER, this.pendingBytes);
  }

  /**
   * Resolves when the client has read its output down to the low-water
   * mark (at once when it has). Long commands await it between messages so
   * that what a non-reading client costs stays bounded.
   */
  outputRoom(): Promise<void> | null {
    return this.conn.outputRoom();
  }

  /**
   * The connection the session talks over: the TCP socket, its TLS layer
   * after STARTTLS, or a transport layer over either (compression).
   */
  get socket(): Duplex {
    return this.conn.socket;
  }

  /** True once the connection is gone. */
  private get closed(): boolean {
    return this.conn.closed;
  }

  get secure(): boolean {
    return this.conn.secure;
  }

  get compressed(): boolean {
    return this.conn.compressed;
  }

  /** Transport faults of this session (issue 14; src/script/transport.ts). */
  get faults(): SessionFaults {
    return this.conn.faults;
  }

  /** Input from the connection (after the transcript recorded it). */
  private onData(chunk: Buffer): void {
    this.checker?.receivedBytes(chunk.length);
    this.tlsWatch?.received();
    this.touch();
    this.timers?.activity();
    this.reader.push(chunk);
  }

  /**
   * STARTTLS: after the command's tagged OK has gone out in plain text, the
   * connection continues over TLS, made by `wrap` (a listener's TLS, src/tls/),
   * after the plain-text bytes `before` (an attack's). Plain text the client sent after the
   * command is dropped (RFC 3501 §6.2.1 / RFC 2595: no injection across the
   * upgrade).
   */
  startTls(wrap: ((plain: Duplex) => tls.TLSSocket) | null, before: Buffer | null = null): void {
    // TLS cannot start under a transport layer (RFC 4978 §3); the states already forbid it.
    if (this.conn.layered) return;
    this.tlsUpgrade = { wrap, before };
  }

  /**
   * Puts `layer` over the connection once the running command's tagged
   * answer is written (COMPRESS). Input the client sent after the command
   * and before that answer is dropped, as for STARTTLS.
   */
  upgradeTransport(layer: TransportLayer): void {
    this.layerUpgrade = layer;
  }

  /** True once a transport layer (compression) is on. */
  get transportLayered(): boolean {
    return this.conn.layered;
  }

  private applyLayer(layer: TransportLayer): void {
    const wrapped = this.conn.addLayer(layer, () => this.reader.discardBuffered());
    // The answer that asked for the layer goes out as it was written; what follows is transformed.
    if (this.conn.queued) {
      // Later output queues behind the start, not just behind the answer.
      this.conn.hold(() => wrapped.start());
    } else {
      wrapped.start();
    }
  }

  private async upgrade(upgrade: { wrap: ((plain: Duplex) => tls.TLSSocket) | null; before: Buffer | null }): Promise<void> {
    this.flushOutput();
    if (this.conn.queued) await this.conn.queueDone;
    // Plain text an attack sends after the tagged OK (starttls-buffering), in the same write as the OK.
    if (upgrade.before) this.conn.write(upgrade.before);
    // No wrap: the attack answered OK and stays in plain text (starttls-no-handshake).
    if (upgrade.wrap === null) return;
    const refused = this.conn.startTls(upgrade.wrap, () => this.reader.discardBuffered());
    if (!refused) this.tlsSocket = this.conn.socket as tls.TLSSocket;
    if (refused) {
      // A `tlsFailure` fault: the handshake the client starts is refused with an alert.
      this.setState('logout');
      failTlsHandshake(refused);
      return;
    }
    this.checker?.tlsStarted();
  }

  /** Called by `enabled` when it changes: the rules worked out from it are worked out again when next asked for. */
  enabledChanged(): void {
    this.rulesMemo = null;
    this.enabledAny = this.enabled.size > 0;
  }

  /**
   * True when the client ENABLEd `capability` (upper case): `enabled.has`,
   * for the paths every change to an idling session takes (extensions'
   * update points), where most sessions enabled nothing.
   */
  hasEnabled(capability: string): boolean {
    return this.enabledAny && this.enabled.has(capability);
  }

  // ------------------------------------------------------------ what the control API sees

  info(): SessionInfo {
    return {
      session: this.id,
      user: this.user,
      state: STATE_NAMES[this.state],
      mailbox: this.selected ? this.mailboxes.nameOf(this.selected.mailbox) : this.state === 'logout' ? this.lastMailbox : null,
      readOnly: this.selected?.readOnly ?? false,
      enabled: [...this.enabled],
      secure: this.secure,
      compressed: this.compressed,
      remoteAddress: this.closed ? null : this.conn.remoteAddress,
      protocol: 'imap',
    };
  }

  disconnect(options: { text?: string; reset?: boolean }): void {
    if (options.reset) this.resetConnection();
    else this.bye(options.text ?? 'Disconnected by the server');
    // Gone from the listing once the control API has answered, not when the peer's FIN arrives.
    this.admission.unregister(this.id);
  }

  inject(data: Buffer): void {
    this.checker?.wrote(data);
    this.write(data);
  }

  // ------------------------------------------------------------ transport faults (issue 14)

  /** Applies a rule's transport actions; returns `normal` as it now goes out (STARTTLS stripped). */
  private applyTransport(rule: ScriptRule, normal: Buffer | null): Buffer | null {
    this.conn.applyFaults(rule);
    // The man in the middle rewrites IMAP's capability lists: the connection does not know them.
    if (rule.stripStartTls === true) {
      this.faults.stripStartTls = true;
      if (normal) normal = stripStartTlsFrom(normal);
    }
    return normal;
  }

  /** `halfClose`: FIN once this event's output (queued before it) is out. */
  private queueHalfClose(): void {
    this.conn.hold(() => this.conn.halfClose());
  }

  /** Caps the session's output at `rate` bytes per second (0: no cap). */
  setBandwidth(rate: number): void {
    this.conn.setBandwidth(rate);
  }

  /** Stops reading input: for good (`true`), for `ms`, or no longer (`false`). */
  stall(how: boolean | number): void {
    this.conn.stall(how);
  }

  // ------------------------------------------------------------ output

  /** Writes bytes to the client. Every byte the session sends goes through here. */
  write(data: Buffer): void {
    this.shaper.releaseNext();
    if (this.capture) {
      this.capture.parts.push(data);
      return;
    }
    if (this.server.script.has('response')) {
      // One line the rules can read as structure (the greeting, IDLE's `+`): mutate and defer act on it too.
      const structured = this.shaper.structureOf(data);
      if (structured) {
        this.shaper.respond(structured);
        return;
      }
      const ctx = this.scriptContext('response', data);
      ctx.untagged = this.shaper.typeOfText(ctx.text);
      const action = this.server.script.fire(ctx);
      if (action) {
        this.flushOutput();
        this.applyOutput(action, data);
        return;
      }
    }
    this.writeOut(data);
  }

  /** `write` past the response rules: a rule has seen (and shaped) these bytes already. */
  private writeOut(data: Buffer): void {
    if (this.capture) {
      this.capture.parts.push(data);
      return;
    }
    if (this.batchOpen) {
      if (this.pendingMany !== null) this.pendingMany.push(data);
      else if (this.pendingOne === null) this.pendingOne = data;
      else {
        this.pendingMany = [this.pendingOne, data];
        this.pendingOne = null;
      }
      this.pendingBytes += data.length;
      if (this.pendingBytes >= BATCH_BYTES) this.flushOutput();
      return;
    }
    this.socketWrite(data);
  }

  // ------------------------------------------------------------ script rules

  /** What the response shaper may do with this session (src/script/shaping.ts). */
  private scriptHost(): ShaperHost {
    return {
      context: (event, data) => this.scriptContext(event, data),
      capturing: () => this.capture !== null,
      endCapture: () => this.endCapture(),
      write: (data) => this.write(data),
      writeOut: (data) => this.writeOut(data),
      applyOutput: (action, data) => {
        this.flushOutput();
        this.applyOutput(action, data);
      },
      maxHeld: () => this.server.options.maxOutputBuffer,
    };
  }

  /**
   * Sends a continuation request (`+ text`): before a synchronizing
   * literal, in AUTHENTICATE, when IDLE starts. `continuation` rules see it.
   */
  continueRequest(text: string): void {
    if (this.conn.closed || this.conn.socket.destroyed) return;
    if (!this.shaper.active('continuation')) {
      this.write(continuation(text));
      return;
    }
    this.shaper.respond({ kind: 'continuation', text });
  }

  private scriptContext(event: ScriptOn, data: Buffer | null, tag?: string, command?: string): ScriptContext {
    const info = this.info();
    const running = this.current ?? this.finishing ?? this.literalOf;
    return {
      event,
      session: this.id,
      tag: tag ?? running?.tag ?? null,
      command: command ?? running?.name ?? null,
      state: info.state,
      user: this.user,
      mailbox: info.mailbox,
      text: data ? data.toString('latin1') : '',
    };
  }

  /** Writes behind any shaped output still going out. */
  private socketWrite(data: Buffer): void {
    this.touch();
    if (this.server.options.debug) this.logOutput(data);
    if (this.conn.queued) this.conn.after(() => this.rawWrite(data));
    else if (this.notices !== null) {
      if (Array.isArray(this.notices)) this.notices.push(data);
      else this.notices = [this.notices, data];
    }
    else if (this.idling && !this.conn.layered) {
      this.notices = data;
      queueNotices(this);
    } else {
      // A notice in IDLE is one write already: deferring it would only delay it behind every other session's.
      if (!this.idling) this.conn.coalesce();
      this.toSocket(data);
    }
  }


  /**
   * Writes the notices gathered in this turn. Every idling session's are
   * written in one run once the change that caused them has reached every
   * session (`queueNotices`), and before anything else this session sends or
   * does to its socket, so nothing overtakes them.
   */
  writeNotices(): void {
    const list = this.notices;
    if (list === null) return;
    this.notices = null;
    if (this.conn.ended) return;
    if (!Array.isArray(list)) this.toSocket(list);
    else for (const data of list) this.toSocket(data);
  }

  /**
   * Every byte the session writes to the connection leaves here (after
   * script shaping and batching), behind its notices. The connection's
   * checks are made here, once per write to it, not per response: a change
   * reaching 10,000 idling sessions read each one's socket state twice
   * before, once as each notice was made and again as it was written.
   */
  private toSocket(data: Buffer): void {
    if (this.notices !== null) this.writeNotices();
    // After a `halfClose` fault the sending side is gone: what the session still says is dropped.
    if (this.conn.ended) return;
    if (this.conn.unreadBeyond(this.server.options.maxOutputBuffer)) {
      // The client reads nothing while updates pile up: it cannot even be told BYE.
      this.resetConnection();
      return;
    }
    this.conn.write(data);
  }

  private rawWrite(data: Buffer): void {
    if (this.conn.ended || data.length === 0) return;
    this.touch();
    if (this.server.options.debug) this.logOutput(data);
    this.toSocket(data);
  }

  /** Ends the connection once queued output is out. */
  private endSocket(): void {
    if (this.conn.queued) this.conn.after(() => this.closeSocket());
    else this.closeSocket();
  }

  /** Sends FIN after the last queued byte and then closes for good (src/connection/connection.ts). */
  private closeSocket(): void {
    this.conn.close();
  }

  /** Sends what a rule says instead of / around `normal` (null: no normal output). */
  private applyOutput(action: ScriptAction, normal: Buffer | null): void {
    const rule = action.rule;
    // Transport faults (issue 14) take effect for the session before this output goes out.
    if (hasTransport(rule)) normal = this.applyTransport(rule, normal);
    const parts: Buffer[] = [];
    if (!rule.drop) {
      if (rule.before !== undefined) parts.push(Buffer.from(rule.before, 'latin1'));
      if (action.send) parts.push(action.send);
      // A capability list the rule sends itself is what the client was told.
      if (this.checker) for (const part of parts) this.checker.wrote(part);
      if (normal && (!action.send || rule.run)) parts.push(normal);
      if (rule.after !== undefined) parts.push(Buffer.from(rule.after, 'latin1'));
      if (this.checker && rule.after !== undefined) this.checker.wrote(parts[parts.length - 1]!);
    }
    const data = Buffer.concat(parts);
    if (hasTransport(rule) && rule.delay === undefined && rule.chunk === undefined && rule.truncate === undefined && !rule.close) {
      // Nothing to shape: written now (behind shaped output still going out), so it counts as
      // unread output at once and the backpressure check after the command sees it.
      if (data.length > 0 && !this.conn.ended) this.socketWrite(data);
    } else {
      this.shapedWrite(data, rule);
    }
    if (rule.halfClose === true) this.queueHalfClose();
  }

  /** Ends the connection with a TCP reset (RST), under TLS too. */
  private resetConnection(): void {
    this.conn.reset();
  }

  /** Writes `data` with a rule's delay, chunking, truncation and close; later output waits. */
  private shapedWrite(data: Buffer, rule: ScriptRule): void {
    const step = async (): Promise<void> => {
      if (rule.delay) await wait(rule.delay);
      const cut = rule.truncate !== undefined && rule.truncate < data.length;
      const bytes = cut ? data.subarray(0, rule.truncate) : data;
      if (rule.chunk && bytes.length > rule.chunk) {
        for (let at = 0; at < bytes.length; at += rule.chunk) {
          if (at > 0) await wait(rule.chunkDelay ?? 0);
          this.rawWrite(bytes.subarray(at, at + rule.chunk));
        }
      } else {
        this.rawWrite(bytes);
      }
      if (rule.truncate !== undefined || rule.close) {
        this.state = 'logout';
        if (rule.close === 'reset') {
          // Wait until the bytes have left Node's buffer, then reset.
          while (!this.conn.socket.destroyed && this.conn.socket.writableLength > 0) await wait(1);
          await wait(20);
          if (!this.conn.socket.destroyed) this.resetConnection();
        } else {
          this.closeSocket();
        }
      }
    };
    this.conn.hold(step, true);
  }

  /**
   * Asks the rules about a command. 'handled': a rule answered it (no
   * command event); otherwise its output may be gathered for shaping.
   */
  private scriptCommand(tag: string, name: string, segments: Segment[]): 'handled' | null {
    const script = this.server.script;
    if (!script.has('command')) return null;
    const text = Buffer.concat(segments.map((s) => (Buffer.isBuffer(s) ? s : s.data)));
    let command = name;
    if (name === 'AUTHENTICATE') {
      const m = /^\S+\s+AUTHENTICATE\s+(\S+)/i.exec(text.toString('latin1'));
      if (m) command = `AUTHENTICATE ${m[1]!.toUpperCase()}`;
    }
    const action = script.fire(this.scriptContext('command', text, tag, command));
    if (!action) return null;
    this.hideByRule(action.rule);
    if (action.rule.drop || (action.send && !action.rule.run)) {
      this.applyOutput(action, null);
      return 'handled';
    }
    // mutate, literals, defer: each of the command's untagged responses, as it goes out.
    if (this.shaper.startCommand(action.rule)) return null;
    this.capture = { parts: [], action };
    return null;
  }

  /** Sends the gathered output of a scripted command, shaped. */
  private endCapture(): void {
    const capture = this.capture;
    if (!capture) return;
    this.capture = null;
    // Only commands that also run are captured, so `send` (if any) goes before their output.
    this.applyOutput(capture.action, Buffer.concat(capture.parts));
  }

  private hide(names: readonly string[]): void {
    if (names.length > 0) hideCapabilities((this.hidden ??= new Set()), names);
  }

  /** Applies a rule's `hideCapabilities` to this session; true when it had some. */
  private hideByRule(rule: ScriptRule): boolean {
    const hide = rule.hideCapabilities;
    if (!hide || hide.length === 0) return false;
    this.hide(hide);
    const hidden = (this.scriptHidden ??= []);
    if (hidden.length < 1000) hidden.push(...hide);
    return true;
  }

  /** Continuation data (DONE, SASL responses): true when a rule consumed it. */
  private scriptInput(line: Buffer): boolean {
    const action = this.server.script.fire(this.scriptContext('input', line));
    if (!action) return false;
    this.applyOutput(action, null);
    if (action.rule.run) return false;
    queueMicrotask(() => {
      if (!this.closed) this.reader.next('line');
    });
    return true;
  }

  /** Restarts the quiet timers (any input or output). */
  private touch(): void {
    if (this.quietTimers !== null) {
      for (const t of this.quietTimers) clearTimeout(t);
      this.quietTimers = null;
    }
    if (this.closed || !this.server.script.has('quiet')) return;
    for (const ms of this.server.script.quietTimes()) {
      const timer = setTimeout(() => this.onQuiet(ms), ms);
      timer.unref();
      (this.quietTimers ??= []).push(timer);
    }
  }

  private onQuiet(ms: number): void {
    if (this.conn.closed || this.conn.socket.destroyed) return;
    // Quiet is between commands, or inside IDLE.
    if (this.current && !this.idling) return;
    const ctx = this.scriptContext('quiet', null);
    ctx.quietFor = ms;
    const action = this.server.script.fire(ctx);
    if (action) this.applyOutput(action, null);
  }

  /** Writes responses given as bytes (IMAP-safe, CRLF-terminated, never changed later: they may be shared). */
  writeBytes(bytes: Buffer): void {
    if (this.shaper.active()) this.shaper.respondText(bytes.toString('latin1'));
    else this.write(bytes);
  }

  /** Writes a response given as text (already IMAP-safe, CRLF-terminated). */
  writeText(text: string): void {
    if (this.shaper.active()) this.shaper.respondText(text);
    else this.writeString(text, 'latin1');
  }

  /**
   * Runs `fn` with output gathered into few large writes: a FETCH of
   * 100,000 messages becomes a few dozen socket writes, not 100,000.
   */
  batch<T>(fn: () => T): T {
    if (this.batchOpen) return fn();
    this.batchOpen = true;
    try {
      return fn();
    } finally {
      this.flushOutput();
      this.batchOpen = false;
    }
  }

  private flushOutput(): void {
    const many = this.pendingMany;
    const data = many !== null ? Buffer.concat(many, this.pendingBytes) : this.pendingOne;
    this.pendingOne = null;
    this.pendingMany = null;
    this.pendingBytes = 0;
    if (data === null || this.conn.ended) return;
    this.socketWrite(data);
  }

  /**
   * True once the session speaks UTF-8: an extension's `utf8` point says so
   * (ENABLE UTF8=ACCEPT, ENABLE IMAP4rev2, which includes it).
   */
  get utf8(): boolean {
    return imapProtocol(this.server).utf8(this);
  }

  /**
   * A mailbox name as this client sees it: the stored modified UTF-7 name,
   * or its UTF-8 form once the session speaks UTF-8 (RFC 6855 §3). Every
   * response that carries a mailbox name sends it through here.
   */
  mailboxName(path: string): ImapValue {
    if (!this.utf8) return path;
    return utf8Text(decodeMutf7(path) ?? path);
  }

  /** A mailbox's name in responses: the name this user knows it by (see `mailboxes`), as `mailboxName` sends it. */
  nameOf(mailbox: Mailbox): ImapValue {
    return this.mailboxName(this.mailboxes.nameOf(mailbox));
  }

  /**
   * The mailboxes of the logged-in user by name: every lookup of a mailbox
   * by name goes through here (the store itself with one tree for everyone;
   * with `userMailboxes` the user's own tree, Other Users and Shared).
   */
  get mailboxes(): MailboxView {
    if (this.view === null || this.view.user !== this.user) this.view = { user: this.user, names: this.server.viewOf(this.user) };
    return this.view.names;
  }

  /** Sends `* <values>`. */
  untagged(...values: ImapValue[]): void {
    this.untaggedList(values);
  }

  /** Sends `* <values>` for a list of any length (SEARCH results, long FETCH item lists). */
  untaggedList(values: readonly ImapValue[]): void {
    if (this.shaper.active()) {
      this.shaper.respond(fromValues(values));
      return;
    }
    const out = encodeResponseTextOrBytes('*', values);
    if (typeof out === 'string') this.writeString(out, 'utf8');
    else this.write(out);
  }

  /** Sends a status response (tagged, or untagged with `tag` null) through the rules that shape responses. */
  private status(tag: string | null, status: 'OK' | 'NO' | 'BAD' | 'BYE', code: string | undefined | null | { name: string; args?: readonly ImapValue[] }, text: string): void {
    if (this.shaper.active()) this.shaper.respond(fromStatus(tag, status, code, text));
    else if (tag === null) this.write(untaggedStatus(status, code, text));
    else {
      const line = statusText(tag, status, code, text);
      if (line !== null) this.writeString(line, 'utf8');
      else this.write(tagged(tag, status as 'OK' | 'NO' | 'BAD', code, text));
    }
  }

  /**
   * Writes response text without a buffer of its own when nothing stands
   * between the session and its connection's gathered turn (no capture, no
   * response rule, no open batch, no queued or idle notices, no debug log):
   * the text joins the turn's output and the connection encodes the turn
   * once (64 pipelined answers: one buffer, not 64). Otherwise as `write`.
   */
  private writeString(text: string, encoding: 'latin1' | 'utf8'): void {
    const conn = this.conn;
    // Gathered or held output takes `write`'s way, which releases deferred responses first itself (and reads
    // nothing of the socket: a change's notice to each of 10,000 idling sessions comes here).
    if (this.capture !== null || this.batchOpen || this.idling) {
      this.write(Buffer.from(text, encoding));
      return;
    }
    // Deferred responses a rule held for the next write go first (as in `write`; a second call there finds none).
    if (!conn.ended) this.shaper.releaseNext();
    if (this.notices !== null || conn.queued || conn.ended || this.server.options.debug || this.server.script.has('response')) {
      this.write(Buffer.from(text, encoding));
      return;
    }
    // What `write` and `socketWrite` do on the way, in their order.
    if (conn.unreadBeyond(this.server.options.maxOutputBuffer)) {
      this.resetConnection();
      return;
    }
    this.touch();
    conn.coalesce();
    conn.writeText(text, encoding);
  }

  /** Sends `* BYE <text>` and closes the connection. */
  bye(text: string): void {
    if (this.closed || this.state === 'logout') return;
    this.status(null, 'BYE', null, text);
    this.setState('logout');
    this.endSocket();
  }

  /**
   * Graceful shutdown: `* BYE` now when the session is between commands
   * (or in IDLE), else right after the running command's tagged answer.
   */
  byeWhenIdle(text: string): void {
    if (this.current && !this.idling) this.byeAfterCommand = text;
    else this.bye(text);
  }

  capabilities(): string[] {
    const caps = imapProtocol(this.server).capabilities(this);
    // A `stripStartTls` fault: the man in the middle takes STARTTLS out.
    return this.faults.stripStartTls ? caps.filter((c) => c !== 'STARTTLS') : caps;
  }

  /**
   * The capabilities, for a response that tells them to the client
   * (greeting, CAPABILITY, a `[CAPABILITY ...]` code): the client checker
   * judges later commands by the last list told.
   */
  announceCapabilities(): string[] {
    const caps = this.capabilities();
    this.checker?.advertised(caps);
    return caps;
  }

  // ------------------------------------------------------------ state

  private emitSession(type: SessionEventType, command?: string): void {
    this.server.emitSession(type, this.info(), command || undefined);
    // Server-clock timers follow the state (autologout per state, the start of IDLE).
    this.timers?.sessionEvent(type, command);
  }

  setState(state: ImapState | 'logout'): void {
    this.state = state;
  }

  /**
   * Called by LOGIN/AUTHENTICATE on success. `sessionTimeout` (ms, from an
   * XOAUTH2 token) ends the session with BYE when the server clock passes it,
   * so clients can test token refresh.
   */
  login(user: string, token: { sessionTimeout: number | null } = { sessionTimeout: null }): void {
    // `maxConnectionsPerUser` (issue 14): the login fails with the provider's text.
    const refusal = this.limits?.login(user);
    if (refusal) throw new CommandFailure(refusal);
    this.user = user;
    this.hide(this.server.options.users.get(user)?.hide ?? []);
    this.state = 'authenticated';
    this.admission.leaveUnauthenticated();
    const idle = this.server.options.idleTimeout;
    // RFC 3501 §5.4: an autologout timer of at least 30 minutes of inactivity (the option's default).
    if (idle > 0) {
      // One listener for the life of the connection: a login after UNAUTHENTICATE only re-arms the timer.
      this.conn.setIdleTimeout(idle, () => {
        if (!this.closed && this.user !== null) this.bye(`Autologout: idle for ${Math.round(idle / 1000)} seconds`);
      });
    }
    this.emitSession('login');
    if (token.sessionTimeout !== null) {
      this.tokenExpiresAt = this.server.now() + token.sessionTimeout;
      // Moving the server clock (advanceClock, POST /v1/clock) ends the session at once when the token is over.
      this.server.clockListeners.add((this.onClockMoved ??= () => void this.endIfTokenExpired()));
      this.armTokenTimer(token.sessionTimeout);
    }
  }

  /**
   * The timer follows real time, the expiry follows the server clock (the
   * `now` option): when the timer fires early by the server clock it waits
   * again, and every command checks the clock too, so a test that moves a
   * pinned clock sees BYE at its next command.
   */
  private armTokenTimer(ms: number): void {
    if (this.tokenTimer) clearTimeout(this.tokenTimer);
    this.tokenTimer = setTimeout(() => {
      this.tokenTimer = null;
      if (!this.endIfTokenExpired()) this.armTokenTimer(Math.max(1, this.tokenExpiresAt! - this.server.now()));
    }, ms);
    this.tokenTimer.unref();
  }

  /** The server clock's listener while a token's session time runs (made then: most sessions have none). */
  private onClockMoved: (() => void) | null = null;

  /** Sends BYE and returns true when the access token's session time is over. */
  private endIfTokenExpired(): boolean {
    if (this.tokenExpiresAt === null || this.closed || this.server.now() < this.tokenExpiresAt) return false;
    this.bye(this.tokenEndText ?? 'Access token expired, authenticate again');
    return true;
  }

  /** The user logged in now, or null: the token service checks a lease is still this login's (src/oauth/leases.ts). */
  leaseUser(): string | null {
    return this.user;
  }

  /**
   * The token service ended the login's token (expired or revoked): `* BYE
   * text` now (between commands and in IDLE) or after the running command,
   * or, as some providers do, in answer to the client's next command.
   */
  tokenEnded(text: string, atNextCommand: boolean): void {
    if (!atNextCommand) return this.byeWhenIdle(text);
    this.tokenEndText = text;
    this.tokenExpiresAt = this.server.now();
  }

  /** Selects a mailbox (SELECT / EXAMINE); any previous selection ends without EXPUNGEs (RFC 3501 §6.3.1). */
  select(mailbox: Mailbox, readOnly: boolean): SelectedMailbox {
    this.held = null;
    this.selected = new SelectedMailbox(mailbox, readOnly);
    this.selected.shape = imapProtocol(this.server).updateShape(this);
    // No \Recent for this session (IMAP4rev2): SELECT has still taken it from later sessions.
    if (!this.selected.shape.recent) this.selected.forgetRecent();
    this.lastMailbox = this.mailboxes.nameOf(mailbox);
    this.state = 'selected';
    this.emitSession('select');
    return this.selected;
  }

  /** LOGOUT: the session ends after the tagged OK. */
  logout(): void {
    this.state = 'logout';
    this.emitSession('logout');
  }

  /** Leaves the selected state (CLOSE, UNSELECT, a failed SELECT). */
  unselect(): void {
    if (!this.selected) return;
    this.held = null;
    this.selected = null;
    // The logout and close events that follow name no mailbox: none is selected any more.
    this.lastMailbox = null;
    this.state = 'authenticated';
    this.emitSession('unselect');
  }

  /**
   * UNAUTHENTICATE (RFC 8437): back to not authenticated on the same
   * connection (TLS and compression stay). The selected mailbox is left
   * without expunging (an `unselect` event), the user and what ENABLE
   * turned on are forgotten, the login's timers (autologout, token expiry)
   * stop, and an `unauthenticate` event follows.
   */
  unauthenticate(): void {
    this.unselect();
    this.user = null;
    this.state = 'notAuthenticated';
    this.updatePolicy = DEFAULT_UPDATES;
    this.enabled.clear();
    // The user's hidden capabilities go with the user.
    this.hidden = null;
    this.hide(this.server.options.hideCapabilities);
    if (this.scriptHidden !== null) this.hide(this.scriptHidden);
    if (this.tokenTimer) clearTimeout(this.tokenTimer);
    this.tokenTimer = null;
    this.tokenExpiresAt = null;
    this.tokenEndText = null;
    if (this.onClockMoved) this.server.clockListeners.delete(this.onClockMoved);
    this.conn.clearIdleTimeout();
    this.emitSession('unauthenticate');
  }

  /** Announces that the session waits for the client (IDLE). */
  waiting(command: string): void {
    if (command === 'IDLE') this.checker?.idleStarted();
    this.emitSession('waiting', command);
  }

  // ------------------------------------------------------------ input

  /**
   * Reads the next raw line (IDLE's DONE, a SASL response). Resolves with
   * null when the connection closes first.
   */
  readLine(): Promise<Buffer | null> {
    // A scripted command's output so far must reach the client before it can answer.
    this.endCapture();
    return new Promise((resolve, reject) => {
      this.lineWaiter = { resolve, reject };
      this.resumeInput();
      this.reader.next('line');
    });
  }

  private logOutput(data: Buffer): void {
    const log = this.server.options.debug!;
    for (const line of describeOutput(data)) log(`S${this.id} S: ${line}`);
  }

  private takeLine(line: Buffer): void {
    const log = this.server.options.debug;
    // A line inside a command: SASL data is a credential; IDLE's DONE is not.
    if (log) log(`S${this.id} C: ${this.current?.name.startsWith('AUTHENTICATE') ? '***' : describeCommand([line])}`);
    this.checker?.line(line, this.reader.bufferedBytes, this.idling);
    if (this.server.script.has('input') && this.scriptInput(line)) return;
    const waiter = this.lineWaiter;
    this.lineWaiter = null;
    waiter?.resolve(line);
  }

  /** The reader found a literal marker: accept or refuse it before its bytes are read. */
  private checkLiteral(info: LiteralInfo): LiteralVerdict {
    const options = this.server.options;
    // The go-ahead that may follow belongs to this command: continuation rules see its tag and name.
    this.literalOf = info.tag !== null && info.command !== null ? { tag: info.tag, name: info.command } : null;
    this.checker?.literal(info, this.reader.bufferedBytes);
    const before = this.state === 'notAuthenticated';
    const limit = before ? options.maxLiteralBeforeLogin : options.maxLiteral;
    if (info.size > limit) {
      return { ok: false, response: 'NO', code: 'TOOBIG', text: `Literal too big (limit ${limit} octets)` };
    }
    // Before login the whole command counts, so many small literals cannot add up to much.
    if (before && info.commandBytes + info.size > options.maxCommandBeforeLogin) {
      const text = `Command too large before login (limit ${options.maxCommandBeforeLogin} octets)`;
      return { ok: false, response: 'NO', code: 'TOOBIG', text };
    }
    // Extensions may refuse a literal before its bytes are read (APPENDLIMIT).
    const refused = imapProtocol(this.server).checkLiteral({ session: this, command: info.command?.toUpperCase() ?? null, size: info.size, index: info.index, sync: info.sync });
    if (refused) return { ok: false, response: refused.response ?? 'NO', code: refused.code, text: refused.text };
    return { ok: true };
  }

  /** The reader refused a command or line (framing limits, `checkLiteral`); its bytes are discarded. */
  private readerRejected(r: RejectInfo): void {
    this.literalOf = null;
    this.checker?.skipped(this.reader.bufferedBytes);
    // A line the reader refused inside IDLE or AUTHENTICATE ends that command with its
    // tagged BAD (RFC 3501 §6.2.2, §7.1.3); an untagged one would leave it pending.
    const waiter = this.lineWaiter;
    if (waiter && this.current && !r.fatal) {
      this.lineWaiter = null;
      this.reader.pause();
      waiter.reject(new CommandFailure({ status: r.response, ...(r.code ? { code: r.code } : {}), text: r.text }));
      return;
    }
    this.reject(r.tag, r.command, r.response, r.code, r.text);
    // The bytes that follow cannot be framed (a {n+} literal of unusable size).
    if (r.fatal) {
      this.reader.destroy();
      this.bye('Unable to read the command stream');
    }
  }

  /**
   * The session's side of its command reader, its connection and its
   * response shaper: one object with its methods on its prototype. Given
   * as closures, the hooks were nine functions and their context in every
   * session, most of them idle (issue 37's budget per session). Declared
   * in the class so it reaches the session's private members.
   */
  private static readonly Ports = class SessionPorts implements ReaderHooks, ConnectionHost, ShaperHostSource {
    constructor(private readonly session: ImapSession) {}
    onCommand(segments: Segment[]): void {
      void this.session.runCommand(segments);
    }
    onLine(line: Buffer): void {
      this.session.takeLine(line);
    }
    checkLiteral(info: LiteralInfo): LiteralVerdict {
      return this.session.checkLiteral(info);
    }
    sendContinuation(): void {
      this.session.continueRequest('OK');
      this.session.literalOf = null;
    }
    onReject(info: RejectInfo): void {
      this.session.readerRejected(info);
    }
    input(chunk: Buffer): void {
      this.session.onData(chunk);
    }
    bufferedInput(): number {
      return this.session.reader.bufferedBytes;
    }
    flushHeld(): void {
      this.session.writeNotices();
    }
    closed(): void {
      this.session.onClose();
    }
    scriptHost(): ShaperHost {
      return this.session.scriptHost();
    }
  };

  private reject(tag: string | null, command: string | null, response: 'BAD' | 'NO', code: string | undefined, text: string): void {
    this.status(tag, response, code, text);
    if (tag) this.checker?.answeredCommand(tag, command ?? '');
    if (tag) this.server.emitCommand(this.id, tag, command ?? '', response, this.user);
  }

  private async runCommand(segments: Segment[]): Promise<void> {
    this.literalOf = null;
    this.tlsWatch?.command(segments[0] as Buffer, this.secure);
    if (this.server.options.debug) this.server.options.debug(`S${this.id} C: ${describeCommand(segments)}`);
    const protocol = imapProtocol(this.server);
    const utf8 = protocol.utf8(this);
    const recent = !protocol.rules(this).noRecent;
    // A session that speaks UTF-8 (RFC 6855, IMAP4rev2) reads quoted UTF-8 and UTF-8 mailbox names;
    // one without \Recent (IMAP4rev2) has no RECENT/NEW/OLD in its grammar.
    let args = new ArgParser(segments, utf8 || !recent ? { ...protocol.parserOptions, utf8, recent } : protocol.parserOptions);
    let tag = '*';
    let name = '';
    let result: CommandResult;
    let spec: CommandSpec | undefined;
    let checked = false;
    try {
      tag = args.tag();
      args.singleSp();
      name = args.commandName();
      let uid = false;
      if (name === 'UID') {
        args.singleSp();
        name = `UID ${args.commandName()}`;
        uid = true;
      }

      this.shaper.commandStarted();
      if (this.scriptCommand(tag, name, segments) === 'handled') {
        // Still read by the checker: its offsets follow every command.
        this.checker?.command(segments, this.reader.bufferedBytes, protocol.commands.get(name), { tag, name });
        // The reader is still delivering this command: ask for the next one on a later turn.
        await Promise.resolve();
        if (this.closed) return;
        this.resumeInput();
        this.reader.next('command');
        return;
      }
      if (this.endIfTokenExpired()) return;
      this.busy = true;
      spec = protocol.commands.get(name);
      const verdict = this.checker ? this.checker.command(segments, this.reader.bufferedBytes, spec, { tag, name }) : null;
      checked = true;
      // A command of a hidden capability is unknown, as on a server without it.
      if (spec && this.hiddenCapabilities.size > 0 && protocol.commandHidden(name, this)) spec = undefined;
      this.current = { name, tag };
      // A connection or rate limit (issue 14) refuses the command before it runs.
      const limited = verdict ? null : (this.limits?.command(name) ?? null);
      if (verdict) result = verdict;
      else if (limited) result = limited;
      else if (!spec) result = { status: 'BAD', text: `Unknown command ${name}` };
      else if (this.state === 'logout' || !spec.states.includes(this.state)) result = this.wrongState(spec);
      else {
        if (!args.atEnd()) args.sp();
        const running = spec.run({ session: this, tag, name, uid, args } satisfies CommandContext);
        // A suspended async function keeps its parameters and locals: without this, an idling session
        // would keep its IDLE line's bytes, their parser and the context as long as it idles (issue 20).
        segments = NO_SEGMENTS;
        args = NO_ARGS;
        result = await running;
      }
    } catch (err) {
      // A command whose tag or name does not parse is checked too (a tag with a forbidden character).
      let verdict: CommandResult | null = null;
      try {
        if (!checked && this.checker) verdict = this.checker.command(segments, this.reader.bufferedBytes, undefined);
      } catch {
        // Outside the command's try: a checker failure here must not end the session.
      }
      result = verdict ?? this.errorResult(err);
    }
    // A finding made while the command ran (a line inside IDLE) answers it in strict mode.
    const late = this.checker?.takeVerdict();
    if (late) result = late;
    this.current = null;
    if (this.closed) {
      this.capture = null;
      this.shaper.endCommand();
      return;
    }
    // The updates a command flushes belong to it: script rules see its name and tag.
    this.finishing = { name, tag };
    // After `* BYE` only the tagged OK may follow (RFC 3501 §6.1.3, §7.1.5).
    if (this.state !== 'logout') this.flushUpdates(this.updatePolicy.timing === 'immediate' || !spec?.holdsExpunges);
    this.finish(tag, name, result);
    this.shaper.endCommand();
    this.endCapture();
    if (this.layerUpgrade) {
      const layer = this.layerUpgrade;
      this.layerUpgrade = null;
      // At once: a client that has read the answer sends through the layer.
      if (!this.closed && !this.conn.socket.destroyed) this.applyLayer(layer);
    }
    if (this.byeAfterCommand !== null) this.bye(this.byeAfterCommand);
    if (this.state === 'logout') {
      this.endSocket();
      return;
    }
    // A client that does not read its answers gets no further command read (RFC 3501 §5.5 allows it).
    const room = this.outputRoom();
    if (room) {
      await room;
      if (this.closed) return;
    }
    if (this.tlsUpgrade) {
      const context = this.tlsUpgrade;
      this.tlsUpgrade = null;
      await this.upgrade(context);
      if (this.closed) return;
    }
    this.busy = false;
    // What extensions owe the client (NOTIFY) goes after the answer, in the layer the answer asked for.
    this.deliverUnsolicited();
    this.resumeInput();
    this.reader.next('command');
  }

  private resumeInput(): void {
    this.conn.resumeInput();
  }

  private wrongState(spec: CommandSpec): CommandResult {
    if (this.state === 'notAuthenticated') return { status: 'BAD', text: `${spec.name} needs authentication first` };
    if (spec.states.includes('selected')) return { status: 'BAD', text: `${spec.name} needs a selected mailbox` };
    return { status: 'BAD', text: `${spec.name} is not allowed after authentication` };
  }

  private errorResult(err: unknown): CommandResult {
    if (err instanceof CommandFailure) return err.result;
    if (err instanceof ParseError) return { status: 'BAD', text: err.message };
    if (isServiceError(err)) return { status: 'NO', code: responseCodeOf(err.code), text: err.message };
    console.error(`rookery: session ${this.id}: command failed:`, err);
    return { status: 'NO', code: 'SERVERBUG', text: 'Internal error in the server; the session goes on' };
  }

  private finish(tag: string, name: string, result: CommandResult): void {
    this.finishing = { name, tag };
    this.status(tag, result.status, result.code, result.text);
    this.checker?.answeredCommand(tag, name);
    this.finishing = null;
    this.server.emitCommand(this.id, tag, name, result.status, this.user);
  }

  // ------------------------------------------------------------ live updates

  /** Sends the untagged updates owed to the client (EXPUNGE only where allowed). */
  flushUpdates(allowExpunge: boolean): void {
    const selected = this.selected;
    if (!selected) return;
    const protocol = imapProtocol(this.server);
    // batch(), without a closure per call: a change reaches every idle session through here.
    const outer = !this.batchOpen;
    this.batchOpen = true;
    try {
      if (selected.hasPending) {
        if (allowExpunge && selected.pendingExpunges.size > 0) {
          for (const line of protocol.updatesBeforeExpunges(this, selected.pendingExpunges)) this.untaggedList(line);
        }
        // Indexed loops: this runs for every idling session of a mailbox that changes (no iterator each).
        // Each item is read before it is written (a one-line drain is a shared list: SelectedMailbox.drain).
        const items = selected.drain(allowExpunge);
        for (let i = 0; i < items.length; i++) this.writeUpdate(items[i]!);
      }
      // What extensions derive from the now current view (CONTEXT's ADDTO/REMOVEFROM); held expunges leave it
      // unsettled, those NOTIFY holds back too.
      const after = protocol.updatesAfter(this, !selected.hasPending && selected.heldExpunges === 0);
      for (let i = 0; i < after.length; i++) this.untaggedList(after[i]!);
    } finally {
      if (outer) {
        this.flushOutput();
        this.batchOpen = false;
      }
    }
  }

  /** One response of a drain: ready-made text or bytes, or values. */
  private writeUpdate(item: string | Buffer | readonly ImapValue[]): void {
    if (typeof item === 'string') this.writeText(item);
    else if (Buffer.isBuffer(item)) this.writeBytes(item);
    else this.untaggedList(item);
  }

  /** How the selected mailbox's updates made by others reach the client. */
  get selectedUpdates(): SelectedUpdatePolicy {
    return this.updatePolicy;
  }

  /**
   * Sets when the selected mailbox's updates made by others reach the
   * client (NOTIFY). Held changes are let through when the policy no longer
   * holds them; they go out with the next flush.
   */
  setSelectedUpdates(policy: SelectedUpdatePolicy): void {
    this.updatePolicy = policy;
    if (policy.timing !== 'held') this.releaseHeld();
    this.wakeUnsolicited();
  }

  /**
   * Asks the session to send unsolicited responses (extensions' `unsolicited`
   * points, and the selected mailbox's updates under an `immediate` or
   * `delayed` policy) as soon as it may: at once between commands and inside
   * IDLE, after the tagged answer while a command runs, and once the client
   * has read its earlier output when it has not. Runs a microtask later, so
   * every listener of the change that caused it has run first.
   */
  wakeUnsolicited(): void {
    if (this.unsolicitedScheduled || this.closed) return;
    this.unsolicitedScheduled = true;
    queueMicrotask(() => {
      this.unsolicitedScheduled = false;
      this.deliverUnsolicited();
    });
  }

  private deliverUnsolicited(): void {
    if (this.conn.closed || this.conn.socket.destroyed || this.state === 'logout' || this.user === null) return;
    if (this.busy && !this.idling) return;
    // Nothing more for a client that has not read what it got: what is owed waits in the extensions, bounded.
    const room = this.outputRoom();
    if (room) {
      if (!this.unsolicitedWaiting) {
        this.unsolicitedWaiting = true;
        void room.then(() => {
          this.unsolicitedWaiting = false;
          this.wakeUnsolicited();
        });
      }
      return;
    }
    const timing = this.updatePolicy.timing;
    const lines = imapProtocol(this.server).unsolicited(this);
    this.batch(() => {
      // Between commands EXPUNGE may go out only under `selected` (RFC 5465 §5.3; RFC 3501 §7.4.1).
      if (timing === 'immediate' || timing === 'delayed') this.flushUpdates(timing === 'immediate' || this.idling);
      for (const line of lines) this.untaggedList(line);
    });
  }

  private releaseHeld(): void {
    this.selected?.releaseHeld();
    const held = this.held;
    if (held === null) return;
    this.held = null;
    // Flag changes the policy does not report are dropped: FETCH shows the flags as they are.
    for (const change of held) if (change.kind !== 'flags' || this.updatePolicy.flags) this.noteSelected(change);
  }

  /** Puts a change of the selected mailbox into its pending updates. */
  private noteSelected(change: StoreChange): void {
    const selected = this.selected;
    if (!selected) return;
    if (change.kind === 'append' && change.mailbox === selected.mailbox) selected.noteAppend(change.messages);
    else if (change.kind === 'expunge' && change.mailbox === selected.mailbox) selected.noteExpunge(change.uids);
    else if (change.kind === 'flags' && change.mailbox === selected.mailbox) selected.noteFlags(change.messages);
  }

  /** The store's change feed (src/store/store.ts `onChange`): how the session hears of others' changes. */
  storeChanged(change: StoreChange): void {
    const selected = this.selected;
    switch (change.kind) {
      case 'reset':
        this.bye('Server reset');
        return;
      case 'user':
        if (change.type === 'delete' && change.disconnect && change.name === this.user) this.bye('User was deleted');
        return;
      case 'mailbox':
        if (change.type === 'delete' && selected && change.mailbox === selected.mailbox) {
          this.bye('Selected mailbox was deleted, have to disconnect');
        }
        return;
      case 'uidvalidity':
        if (selected && change.mailbox === selected.mailbox) this.bye('Mailbox UIDVALIDITY changed, have to disconnect');
        return;
      case 'append':
      case 'expunge':
      case 'flags': {
        if (!selected || change.mailbox !== selected.mailbox) return;
        // A session's own non-silent STORE answers with FETCH itself.
        if (change.kind === 'flags' && change.origin === this.id) return;
        const policy = this.updatePolicy;
        if (change.origin !== this.id) {
          if (policy.timing === 'held') {
            // The view learns at once that the messages are gone (a STORE or FETCH must not touch them), the client later.
            if (change.kind === 'expunge') {
              selected.noteExpunge(change.uids, true);
              if (selected.heldExpunges > HELD_LIMIT) this.releaseHeld();
              return;
            }
            const held = (this.held ??= []);
            held.push(change);
            if (held.length > HELD_LIMIT) this.releaseHeld();
            return;
          }
          if (change.kind === 'flags' && !policy.flags) return;
        } else if (change.kind === 'append') {
          // The session's own new messages come after those it held, so the view stays in UID order.
          this.releaseHeld();
        }
        this.noteSelected(change);
        if (change.origin !== this.id && (policy.timing === 'immediate' || policy.timing === 'delayed')) this.wakeUnsolicited();
        break;
      }
    }
    if (this.idling) this.flushUpdates(true);
  }

  private onClose(): void {
    // Called once, by the connection, which is marked closed already.
    this.checker?.closed(this.state === 'logout');
    this.tlsWatch?.closed();
    if (this.state !== 'logout') this.state = 'logout';
    this.timers?.stop();
    if (this.onClockMoved) this.server.clockListeners.delete(this.onClockMoved);
    if (this.quietTimers !== null) for (const t of this.quietTimers) clearTimeout(t);
    this.quietTimers = null;
    if (this.tokenTimer) clearTimeout(this.tokenTimer);
    this.admission.closed();
    this.lastMailbox = this.selected ? this.mailboxes.nameOf(this.selected.mailbox) : this.lastMailbox;
    this.selected = null;
    this.server.store.offChange(this);
    this.admission.unregister(this.id);
    this.shaper.close();
    this.server.script.forgetSession(this.id);
    const waiter = this.lineWaiter;
    this.lineWaiter = null;
    waiter?.resolve(null);
    // Before the close event, so that a test waiting for it finds the transcript among the closed ones.
    this.conn.transcript?.close();
    this.emitSession('close');
  }
}

function wait(ms: number | 'tick'): Promise<void> {
  return new Promise((resolve) => (ms === 'tick' || ms === 0 ? setImmediate(resolve) : setTimeout(resolve, ms)));
}



/**
 * Sessions with notices to write (`ImapSession.writeNotices`). One change
 * (a control add, another session's APPEND) reaches every idling session
 * in one synchronous run; each queues its notice here and all are written
 * together right after it, in a microtask. Written as they were made, one
 * session's JavaScript between two writes, the fan-out to 10,000 idling
 * clients took half again as long as the same writes back to back (issue
 * 20's fan-out figure): the reading process, given time to go back to
 * sleep between two writes, had to be woken for every one.
 */
const noticeWriters: ImapSession[] = [];

function queueNotices(session: ImapSession): void {
  noticeWriters.push(session);
  if (noticeWriters.length === 1) queueMicrotask(writeAllNotices);
}

function writeAllNotices(): void {
  // A write can queue no new notices, but a session may join while this runs: the length is read each time.
  for (let i = 0; i < noticeWriters.length; i++) noticeWriters[i]!.writeNotices();
  noticeWriters.length = 0;
}

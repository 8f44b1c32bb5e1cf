import { EventEmitter } from 'node:events';
import * as net from 'node:net';
import type * as tls from 'node:tls';
import { ControlApi, type AppendCheck } from './control/control.js';
import { ClientFindingLog, type ClientReport } from './client-check/findings.js';
import { EventLog, type EventRecord } from './event-log.js';
import { conditionsOf, matchesAll } from './event-match.js';
import { CommandEventParts, SessionEventParts } from './event-parts.js';
import { EVENT_TYPES, type CommandEvent, type ServerEventMap, type ServerEvents, type ServerEventType, type SessionEvent, type SessionEventType, type SessionInfo, type SessionProtocol } from './events.js';
import { ServiceError } from './errors.js';
import { checkCondition, checkProducible, describeCondition, evaluate, type StateCondition, type StateReport } from './state-conditions.js';
import type { ExtensionApis } from './extensions/extension.js';
import { imapProtocol } from './imap/protocol.js';
import { ImapSession } from './imap/session.js';
import { RestServer } from './rest/rest.js';
import { ScriptEngine } from './script/engine.js';
import { acceptChannel } from './connection/listen.js';
import { ServerTls } from './tls/server-tls.js';
import type { ListenerTls } from './tls/listener-tls.js';
import type { TlsListener } from './tls/settings.js';
import { ScheduledBye } from './imap/timers.js';
import { OAuthService } from './oauth/service.js';
import { OAuthControl } from './oauth/control.js';
import { OAuthHttp } from './oauth/http.js';
import type { OAuthListener } from './oauth/listener.js';

/** Scheduled BYEs (control.scheduleBye) pending at once: each holds a timer and a clock listener. */
const MAX_SCHEDULED_BYES = 1000;
import { resolveOptions } from './options/resolve.js';
import type { ResolvedOptions, ServerOptions } from './options/types.js';
import { SessionRegistry } from './session/registry.js';
import { connectionCaps, type ConnectionCaps } from './session/descriptors.js';
import type { SmtpIntake } from './smtp/intake.js';
import type { Pop3Listener } from './pop3/listener.js';
import type { StoreChange } from './store/changes.js';
import { Store } from './store/store.js';
import { StoreBudget } from './store/budget.js';
import type { Mailbox } from './store/mailbox.js';
import { UserTrees } from './store/user-trees.js';
import { UserView } from './store/user-view.js';
import type { MailboxView } from './store/view.js';
import { Transcripts } from './transcript/transcripts.js';
import { Replayer } from './transcript/replay.js';
import type { Transcript } from './transcript/transcript.js';

/** Where a listener listens. */
export interface ListenAddress {
  host: string;
  port: number;
}

/** What `start()` opened. `rest`, `smtp` and `pop3` are null when their port is not configured. */
export interface ServerAddresses {
  imap: ListenAddress;
  rest: ListenAddress | null;
  smtp: ListenAddress | null;
  pop3: ListenAddress | null;
}

/** A 'close' listener that takes its socket (`this`) out of `sockets`. */
function deleterOf(sockets: Set<net.Socket>): (this: net.Socket) => void {
  return function forget(this: net.Socket): void {
    sockets.delete(this);
  };
}

/** What events without `userMailboxes` add for the user: nothing (shared, so an event costs no object for it). */
const NO_USER: Readonly<{ user?: string | null }> = Object.freeze({});

/**
 * A Rookery server: the mail store, its IMAP listener, the control API and
 * the typed event stream (`server.on('mailbox', ...)`).
 */
export class Server extends EventEmitter<ServerEventMap> {
  readonly options: ResolvedOptions;
  /** The one mail tree; with `userMailboxes`, the shared tree (shared namespaces) and the users. */
  readonly store: Store;
  /** With `userMailboxes`: every user's own tree; null with one tree for everyone. */
  readonly trees: UserTrees | null;
  readonly sessions = new SessionRegistry();
  readonly control: ControlApi;
  /** Script rules: make the server misbehave on purpose, repeatably. */
  readonly script: ScriptEngine;
  /**
   * Ad-hoc checks run before APPEND and before a message is added with
   * `checks: true`, beside the extensions' `checks.append` (throw a
   * ServiceError to refuse). Extensions use their `checks` point instead.
   */
  readonly appendChecks: AppendCheck[] = [];
  private imapListener: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  /** The 'close' listener of every IMAP socket (`this` is the socket): one function per server, not a closure per connection. */
  private readonly forgetSocket = deleterOf(this.sockets);
  /** Connections that have not logged in yet. */
  private unauthenticated = 0;
  /** The connection caps in force: the options' caps, lowered at start to fit the descriptor limit. */
  private caps: ConnectionCaps | null = null;
  private stopping: Promise<void> | null = null;
  private rest: RestServer | null = null;
  private smtp: SmtpIntake | null = null;
  private pop3: Pop3Listener | null = null;
  private markStopped!: () => void;
  /** Every event with its id; the backlog streams and waits read. */
  readonly eventLog: EventLog;
  /** Event types recorded in the log: worked out on the first event (extensions add theirs). */
  private loggedTypes: Set<string> | null = null;
  /** The client checker's findings (`clientCheck`), kept however the mode is set. */
  readonly clientFindings: ClientFindingLog;
  /** Per-session transcripts (the `transcript` option); `server.transcript(n)` reads one. */
  readonly transcripts: Transcripts;
  /** Serves the recording of `script: { replay }` instead of running commands, or null. */
  private readonly replayer: Replayer | null;
  /**
   * The token service (docs/oauth.md), made on first use: most servers a
   * suite builds never see a token, and making it was a tenth of building a
   * server (issue 37's create+start+stop row).
   */
  private oauthService: OAuthService | null = null;
  private oauthControl: OAuthControl | null = null;
  /** The OAuth endpoints on the REST listener; made on the first request. */
  private oauthEndpoints: OAuthHttp | null = null;
  /** The OAuth endpoints' own port (`oauth.port`), or null. */
  private oauthListener: OAuthListener | null = null;
  /** The TLS bench (docs/tls.md): the CA, each listener's profiles, the STARTTLS attacks and their verdicts. */
  readonly tls: ServerTls;
  /** Resolves when the server has stopped (stop(), shutdown, REST POST /v1/shutdown). */
  readonly stopped: Promise<void> = new Promise((resolve) => (this.markStopped = resolve));

  constructor(options: ServerOptions = {}) {
    super();
    this.options = resolveOptions(options);
    this.eventLog = new EventLog(this.options.events);
    this.tls = new ServerTls(this.options, () => this.now(), (verdict) => {
      if (verdict.verdict !== 'safe') {
        this.clientFindings.add({ session: verdict.session, user: null, tag: null, command: null, rule: verdict.verdict, protocol: verdict.listener, text: `${verdict.text} (${verdict.cases.join(', ')}); evidence: ${JSON.stringify(verdict.evidence)}` });
      }
      this.emit('verdict', verdict);
    });
    this.replayer = this.options.replay ? new Replayer(this.options.replay) : null;
    this.transcripts = new Transcripts(this.options.transcript, () => this.now(), () => String(this.address()?.port ?? 0));
    this.store = new Store(this.options.storage, this.options.users, new StoreBudget(this.options.maxMessages, this.options.maxStoreBytes));
    this.trees = this.options.userStorage ? new UserTrees(this.store, this.options.userStorage) : null;
    this.clientFindings = new ClientFindingLog(this.options.clientCheck, this.options.clientCheckRules, () => this.now(), (f) => this.emit('client', f));
    // Rules are checked against the command table (a `command` no one defines would never match).
    this.script = new ScriptEngine(this.options.scriptSeed, (firing) => this.emit('script', firing), () => imapProtocol(this).commands);
    // Extensions see every change before sessions and events do (quota usage, ACL of a new mailbox).
    this.store.onChange((change) => imapProtocol(this).onChange(change));
    this.store.onChange((change) => this.publish(change));
    // Appends make no event of their own: state waits are checked on every change.
    this.store.onChange(() => this.eventLog.poke());
    this.control = new ControlApi({
      store: this.store,
      trees: this.trees,
      sessions: this.sessions,
      now: () => this.now(),
      shutdown: (graceful) => this.shutdown(graceful),
      checkAppend: (mailbox, size) => {
        for (const check of this.appendChecks) check(mailbox, size);
        imapProtocol(this).checkAppend({ mailbox, size, session: null, before: { messages: 0, size: 0 } });
      },
      shownFields: () => imapProtocol(this).shownFields,
      clientFindings: () => this.clientFindings,
      hiddenCapabilities: () => this.options.hideCapabilities,
      advanceClock: (ms) => this.advanceClock(ms),
      scheduleBye: (at, text, session) => void this.scheduleBye(at, text, session),
      mark: (event) => {
        this.emit('mark', event);
        return this.lastEventId();
      },
      oauth: () => (this.oauthControl ??= new OAuthControl(this.oauth)),
    });
    // Extensions' per-server state (`setup`) is made now, so their control APIs exist from the start.
    imapProtocol(this);
    // Its faults are script rules: in place from the start, as every option's rules are.
    if (this.options.oauth.faults.length > 0) void this.oauth;
    // After the protocol: the `script` option's rules are checked against its command table.
    if (this.options.script.length > 0) this.script.addOptionRules(this.options.script);
  }

  /**
   * The token service (docs/oauth.md): the authorization server's flows and
   * `check`, the one question mail logins ask about a token.
   */
  get oauth(): OAuthService {
    return (this.oauthService ??= new OAuthService({
      options: this.options.oauth,
      seed: this.options.scriptSeed,
      now: () => this.now(),
      clockListeners: this.clockListeners,
      emit: (event) => this.emit('oauth', event),
      users: () => [...this.store.users.keys()],
      script: this.script,
      issuer: () => this.oauthIssuer(),
      sessionOpen: (id) => this.sessions.get(id) !== undefined,
    }));
  }

  /**
   * The control API of a loaded extension (what its `setup` returned), or
   * undefined when the plugin is not loaded: `server.extension('APPENDLIMIT')?.limit`.
   */
  extension<K extends keyof ExtensionApis>(name: K): ExtensionApis[K] | undefined;
  extension<T = unknown>(name: string): T | undefined;
  extension(name: string): unknown {
    return imapProtocol(this).api(name);
  }

  /**
   * What the client checker found in this run (docs/client-check.md): the
   * mode, the rules checked, the sessions seen and every finding kept;
   * `--client-report` writes the same when the server stops.
   */
  clientReport(): ClientReport {
    return this.clientFindings.report(this.tls.verdicts.list());
  }

  /** Event types this server emits: the spec's, then those its extensions declare (`events`). */
  eventTypes(): string[] {
    return [...new Set<string>([...EVENT_TYPES, ...imapProtocol(this).eventTypes])];
  }

  /**
   * Every server event goes through the log first (its id, the backlog,
   * waits), then to listeners. EventEmitter's own events (`newListener`,
   * `error`) are not server events and are not logged.
   */
  override emit<K>(eventName: K | keyof ServerEventMap, ...args: K extends keyof ServerEventMap ? ServerEventMap[K] : never): boolean;
  override emit(eventName: string | symbol, ...args: unknown[]): boolean {
    if (typeof eventName === 'string') {
      this.loggedTypes ??= new Set(this.eventTypes());
      if (this.loggedTypes.has(eventName)) this.eventLog.record(eventName, args[0]);
    }
    return (super.emit as (name: string | symbol, ...rest: unknown[]) => boolean)(eventName, ...args);
  }

  /**
   * Emits the `command` event of one answered command. Every command a
   * client sends makes one, so the log keeps it as its parts, not as JSON
   * made now (`EventLog.recordParts`); listeners get the same data.
   * Sessions emit through here; `emit('command', data)` does the same.
   */
  emitCommand(session: number, tag: string, command: string, status: 'OK' | 'NO' | 'BAD', user: string | null, protocol: SessionProtocol = 'imap'): void {
    // Kept packed when it can be (most of the time): the data object only for those who read it.
    const make = (): CommandEvent => ({ session, tag, command, status, user, protocol });
    if (this.eventLog.recordCommand(session, tag, command, status, user, protocol, make)) {
      if (this.listenerCount('command') > 0) (super.emit as (name: string, ...rest: unknown[]) => boolean)('command', make());
      return;
    }
    const data = make();
    if (!CommandEventParts.representable(session)) this.emit('command', data);
    else {
      this.eventLog.recordParts('command', new CommandEventParts(session, tag, command, status, user, protocol), data);
      (super.emit as (name: string, ...rest: unknown[]) => boolean)('command', data);
    }
  }

  /**
   * Emits a `session` event; the log keeps it as its parts (every connect,
   * login, SELECT and logout makes one). Sessions emit through here;
   * `emit('session', data)` does the same.
   */
  emitSession(type: SessionEventType, info: SessionInfo, command?: string): void {
    const data: SessionEvent = command === undefined ? { type, session: info } : { type, session: info, command };
    if (!SessionEventParts.representable(info)) this.emit('session', data);
    else {
      this.eventLog.recordParts('session', new SessionEventParts(type, info, command), data);
      (super.emit as (name: string, ...rest: unknown[]) => boolean)('session', data);
    }
  }

  /** Id of the newest event (0 before the first): a `since` for a later `waitFor` or stream. */
  lastEventId(): number {
    return this.eventLog.lastId;
  }

  /**
   * Resolves with the first event of `type` (or one of `types`) that passes
   * `predicate` (a function of the data, or fields to match as
   * GET /v1/events/wait's `match` does: `{ 'session.user': 'alice' }`).
   * With `since`, events of the backlog after that id count too, so
   * `const id = server.lastEventId(); act(); await server.waitFor(..., { since: id })`
   * cannot miss an event that came before the wait. Fails with TIMEOUT after
   * `timeout` ms (default 30000), EXPIRED when the backlog no longer holds
   * every event after `since`, LIMIT over `events.maxWaiters`, CANNOT when
   * the server stops or `signal` aborts.
   */
  waitFor<K extends ServerEventType>(
    type: K | readonly K[],
    predicate?: ((data: ServerEvents[K]) => boolean) | Readonly<Record<string, string | number | boolean | null>>,
    options?: { timeout?: number; since?: number; signal?: AbortSignal },
  ): Promise<EventRecord<ServerEvents[K]>>;
  waitFor(
    type: string | readonly string[],
    predicate?: ((data: unknown) => boolean) | Readonly<Record<string, string | number | boolean | null>>,
    options?: { timeout?: number; since?: number; signal?: AbortSignal },
  ): Promise<EventRecord>;
  waitFor(
    type: string | readonly string[],
    predicate?: ((data: never) => boolean) | Readonly<Record<string, string | number | boolean | null>>,
    options: { timeout?: number; since?: number; signal?: AbortSignal } = {},
  ): Promise<EventRecord> {
    try {
      const types = typeof type === 'string' ? [type] : [...type];
      const valid = this.eventTypes();
      if (types.length === 0) throw new ServiceError('INVALID', `waitFor: name at least one event type of ${valid.join(', ')}`);
      for (const t of types) {
        if (!valid.includes(t)) throw new ServiceError('INVALID', `waitFor: unknown event type ${JSON.stringify(t)}; valid types: ${valid.join(', ')}`);
      }
      const timeout = options.timeout ?? DEFAULT_WAIT_TIMEOUT;
      if (!(timeout >= 0)) throw new ServiceError('INVALID', `waitFor: timeout must be a number of milliseconds >= 0, got ${String(timeout)}`);
      if (options.since !== undefined && !(Number.isSafeInteger(options.since) && options.since >= 0)) {
        throw new ServiceError('INVALID', `waitFor: since must be an event id (an integer >= 0), got ${String(options.since)}`);
      }
      let test: (data: unknown) => boolean;
      if (typeof predicate === 'function') test = predicate as (data: unknown) => boolean;
      else if (predicate === undefined) test = () => true;
      else {
        const conditions = conditionsOf(predicate, types);
        test = (data) => matchesAll(data, conditions);
      }
      return this.eventLog.wait(types, test, { timeout, since: options.since, signal: options.signal });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Resolves once a state condition holds (at once when it already does):
   * `{ mailbox: 'INBOX', messages: 3 }` (at least 3 messages; a mailbox that
   * does not exist yet has none) or `{ session: 2, idling: true }` (session 2
   * is in IDLE). Resolves with what it found (`{ mailbox, messages }` with
   * the count, or `{ session, idling }`). Checked after every event and store
   * change. Fails like `waitFor`: TIMEOUT, INVALID, LIMIT, CANNOT.
   */
  waitUntil(condition: StateCondition, options: { timeout?: number; signal?: AbortSignal } = {}): Promise<StateReport> {
    try {
      const c = checkCondition(condition);
      checkProducible(c, this.options.extensions, this.options.hideCapabilities);
      const timeout = options.timeout ?? DEFAULT_WAIT_TIMEOUT;
      if (!(timeout >= 0)) throw new ServiceError('INVALID', `waitUntil: timeout must be a number of milliseconds >= 0, got ${String(timeout)}`);
      // The tree the mailbox is in (userMailboxes: the user's own), checked now so a bad user fails at once.
      const tree = () => ('mailbox' in c ? this.control.treeOf(c.user === undefined ? undefined : { user: c.user }, c.mailbox) : this.store);
      tree();
      return this.eventLog.waitState(() => evaluate(c, tree(), this.sessions), describeCondition(c), { timeout, signal: options.signal });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  // ------------------------------------------------------------ mailbox names (userMailboxes)

  /**
   * The mailboxes `user` sees by name: the store itself with one tree for
   * everyone; with `userMailboxes` the user's own tree, Other Users and
   * Shared. Every lookup by name of the IMAP core and the extensions goes
   * through here (`session.mailboxes`). With `userMailboxes`, `user` must be a
   * user (their tree is made on first use).
   */
  viewOf(user: string | null): MailboxView {
    if (this.trees === null || user === null) return this.store;
    return new UserView(user, this.trees, () => imapProtocol(this).controlsAccess);
  }

  /** The user whose own tree holds the mailbox; null for the one shared tree (and always without `userMailboxes`). */
  ownerOf(mailbox: Mailbox): string | null {
    return this.trees?.ownerOf(mailbox) ?? null;
  }

  /** Every mailbox of every tree: whole-server counts (quota, object ids). */
  everyMailbox(): Mailbox[] {
    return this.trees?.everyMailbox() ?? this.store.list();
  }

  /**
   * Session `n`'s transcript: every byte in and out so far (a live session)
   * or as it ended (one of the last `transcript.keepClosed` closed ones), or
   * undefined (no such session, transcripts off, or closed too long ago).
   * `.text()` is the form to paste into a bug report; docs/debugging.md.
   */
  transcript(session: number): Transcript | undefined {
    return this.transcripts.get(session);
  }

  /** The server clock in epoch milliseconds: the `now` option, plus what `advanceClock` added. */
  now(): number {
    return this.options.now() + this.clockOffset;
  }

  /** Ms `advanceClock` moved the clock past the `now` option (issue 14). */
  private clockOffset = 0;
  /** Called whenever the clock is moved: server-clock timers (autologout, IDLE limit, byeAt) check their deadlines. */
  readonly clockListeners = new Set<() => void>();

  /**
   * Moves the server clock forward by `ms` (a pinned `now` too) and lets
   * every server-clock timer that is now due fire; returns the new time.
   */
  /** BYEs set at run time (control.scheduleBye), at most MAX_SCHEDULED_BYES pending. */
  private readonly scheduledByes = new Set<ScheduledBye>();

  /**
   * `* BYE <text>` to every session (or session `session`) when the server
   * clock reaches `at` (at once when it has): each is told between commands,
   * or right after its running command's answer.
   */
  scheduleBye(at: number, text: string, session: number | null): ScheduledBye {
    for (const s of this.scheduledByes) if (s.at <= this.now()) this.scheduledByes.delete(s);
    if (this.scheduledByes.size >= MAX_SCHEDULED_BYES) throw new ServiceError('LIMIT', `At most ${MAX_SCHEDULED_BYES} scheduled BYEs may be pending`);
    const bye = new ScheduledBye({ now: () => this.now(), clockListeners: this.clockListeners, byeTargets: () => this.imapSessions() }, at, text, session);
    if (bye.at > this.now()) this.scheduledByes.add(bye);
    return bye;
  }

  advanceClock(ms: number): number {
    if (!(Number.isSafeInteger(ms) && ms >= 0)) throw new ServiceError('INVALID', `advance: expected an integer >= 0 (milliseconds), got ${String(ms)}`);
    this.clockOffset += ms;
    for (const listener of [...this.clockListeners]) listener();
    return this.now();
  }

  /** Turns store changes into the public events of the spec. */
  private publish(change: StoreChange): void {
    // With userMailboxes, events that name a mailbox say whose tree it is in (null: the shared tree).
    const user = this.trees ? { user: this.trees.userOf(change) } : NO_USER;
    switch (change.kind) {
      case 'mailbox':
        this.emit('mailbox', { type: change.type, path: change.path, oldPath: change.oldPath, origin: change.origin, ...user });
        break;
      case 'append':
        if (user === NO_USER && change.messages.length === 1) {
          // One message (every delivery): the log keeps the event as its parts, not as JSON made now.
          const uid = change.messages[0]!.uid;
          const data = { path: change.mailbox.path, uids: [uid], origin: change.origin };
          this.eventLog.recordAppend(data.path, uid, data.origin, data);
          (super.emit as (name: string, ...rest: unknown[]) => boolean)('append', data);
        } else this.emit('append', { path: change.mailbox.path, uids: change.messages.map((m) => m.uid), origin: change.origin, ...user });
        break;
      case 'expunge':
        this.emit('expunge', { path: change.mailbox.path, uids: [...change.uids], origin: change.origin, ...user });
        break;
      case 'flags':
        // IMAP clients' flag changes show as `command` events; `flags` is for the control API and REST.
        if (change.origin === null) {
          this.emit('flags', {
            path: change.mailbox.path,
            messages: change.messages.map((m) => ({ uid: m.uid, flags: [...m.flags] })),
            origin: null,
            ...user,
          });
        }
        break;
      case 'reset':
        this.script.reset();
        // A service not made yet holds nothing to forget.
        this.oauthService?.reset();
        this.clientFindings.clear();
        // A verdict is a finding of the TLS bench: the next test starts without the last one's.
        this.tls.verdicts.clear();
        this.emit('reset', {});
        break;
      default:
        break;
    }
  }

  // ------------------------------------------------------------ listeners

  /**
   * Opens every configured listener: IMAP always, REST and SMTP when their
   * port is configured. Resolves with their addresses. When one fails, those
   * already open are closed again.
   */
  async start(): Promise<ServerAddresses> {
    const o = this.options;
    this.caps = connectionCaps({ imap: o.maxConnections, rest: o.rest?.maxConnections ?? null, smtp: o.smtp ? o.maxConnections : null, pop3: o.pop3 ? o.maxConnections : null });
    const imap = await this.openImap(this.options.port, this.options.host).catch((err: unknown) => {
      throw listenError(err, 'IMAP', 'port', '--port / ROOKERY_PORT');
    });
    let rest: ListenAddress | null = null;
    const config = this.options.rest;
    if (config) {
      const pluginRoutes = imapProtocol(this).extensions.flatMap((e) => e.routes ?? []);
      const server = new RestServer(this, { ...config, maxConnections: this.caps.rest ?? config.maxConnections }, pluginRoutes);
      this.setMaxListeners(0);
      try {
        rest = await server.listen();
        this.rest = server;
      } catch (err) {
        await this.shutdown(false);
        throw listenError(err, 'REST', 'rest.port', '--rest-port / ROOKERY_REST_PORT');
      }
    }
    let smtp: ListenAddress | null = null;
    if (this.options.smtp) {
      // Loaded with the first SMTP listener: most servers have none.
      const { SmtpIntake } = await import('./smtp/intake.js');
      const intake = new SmtpIntake(this, this.options.smtp, this.caps.smtp ?? this.options.maxConnections);
      try {
        smtp = await intake.listen();
        this.smtp = intake;
      } catch (err) {
        await this.shutdown(false);
        throw listenError(err, 'SMTP', 'smtp.port', '--smtp-port / ROOKERY_SMTP_PORT');
      }
    }
    const oauthPort = this.options.oauth.listen;
    if (oauthPort) {
      const { OAuthListener } = await import('./oauth/listener.js');
      const listener = new OAuthListener(this.oauthHttp(), oauthPort.host, oauthPort.port);
      try {
        await listener.listen();
        this.oauthListener = listener;
      } catch (err) {
        await this.shutdown(false);
        throw listenError(err, 'OAuth', 'oauth.port', 'the oauth option');
      }
    }
    let pop3: ListenAddress | null = null;
    if (this.options.pop3) {
      // Loaded with the first POP3 listener: most servers have none.
      const { Pop3Listener } = await import('./pop3/listener.js');
      const listener = new Pop3Listener(this, this.options.pop3, this.caps.pop3 ?? this.options.maxConnections);
      try {
        pop3 = await listener.listen();
        this.pop3 = listener;
      } catch (err) {
        await this.shutdown(false);
        throw listenError(err, 'POP3', 'pop3.port', '--pop3-port / ROOKERY_POP3_PORT');
      }
    }
    return { imap, rest, smtp, pop3 };
  }

  /** Opens the IMAP listener only (never REST), like `net.Server#listen`. */
  listen(port = this.options.port, host: string | (() => void) = this.options.host, callback?: () => void): this {
    if (typeof host === 'function') {
      callback = host;
      host = this.options.host;
    }
    this.openImap(port, host).then(
      () => callback?.(),
      (err: unknown) => (this as EventEmitter).emit('error', err),
    );
    return this;
  }

  /**
   * The connection caps in force (GET /v1/health): those of the options,
   * lowered together at start when the process's descriptor limit could
   * not hold them all (src/session/descriptors.ts).
   */
  connectionCaps(): ConnectionCaps {
    return (this.caps ??= connectionCaps({ imap: this.options.maxConnections, rest: null, smtp: null, pop3: null }));
  }

  /** Connections open now per listener, with the REST body octets in flight (GET /v1/health). */
  connectionUsage(): { imap: number; rest: ReturnType<RestServer['usage']> | null; smtp: number | null; pop3: number | null } {
    return { imap: this.sockets.size, rest: this.rest?.usage() ?? null, smtp: this.smtp?.open ?? null, pop3: this.pop3?.open ?? null };
  }

  /** The recording of `script: { replay }` the listeners serve instead of running commands, or null. */
  replaying(): Replayer | null {
    return this.replayer;
  }

  /** Address of the POP3 listener, or null when it does not listen. */
  pop3Address(): ListenAddress | null {
    return this.pop3?.address() ?? null;
  }

  /** The issuer URL: `oauth.issuer`, else the REST listener's `http://host:port`, else null. */
  private oauthIssuer(): string | null {
    if (this.options.oauth.issuer !== null) return this.options.oauth.issuer;
    const a = this.oauthAddress() ?? this.restAddress();
    if (a === null) return null;
    return `http://${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;
  }

  /** Address of the OAuth endpoints' own listener (`oauth.port`), or null. */
  oauthAddress(): ListenAddress | null {
    return this.oauthListener?.address() ?? null;
  }

  /** The OAuth endpoints (src/oauth/http.ts), for the REST listener. */
  oauthHttp(): OAuthHttp {
    return (this.oauthEndpoints ??= new OAuthHttp(this.oauth));
  }

  /** Address of the REST listener, or null when it does not listen. */
  restAddress(): ListenAddress | null {
    return this.rest?.address() ?? null;
  }

  /** Address of the SMTP listener, or null when it does not listen. */
  smtpAddress(): ListenAddress | null {
    return this.smtp?.address() ?? null;
  }

  /** Address of the IMAP listener, or null before it listens. */
  address(): ListenAddress | null {
    const a = this.imapListener?.address();
    return a && typeof a === 'object' ? { host: a.address, port: a.port } : null;
  }

  /**
   * The secure context `listener` serves to clients without SNI, from the
   * `tls` option (its profile, or key and cert). Made once, when a listener
   * opens, so a bad key fails `start()` and not a client. `tlsFor` gives
   * the whole of a listener's TLS (SNI, client certificates, ALPN).
   */
  tlsContext(listener: TlsListener = 'imap'): tls.SecureContext {
    try {
      return this.tls.listener(listener).prepare();
    } catch (err) {
      throw new Error(`tls: the key or certificate cannot be used: ${(err as Error).message}`);
    }
  }

  /** The TLS of one listener: `wrap(plainSocket)` makes the server side of a TLS connection with every setting of the `tls` option. */
  tlsFor(listener: TlsListener): ListenerTls {
    return this.tls.listener(listener);
  }

  /** The CA certificate (PEM) that signs the profiles' certificates: TEST_CA unless `tls.freshCa`. */
  tlsCa(): string {
    return this.tls.authority.caPem;
  }

  private openImap(port: number, host: string): Promise<ListenAddress> {
    if (this.imapListener) throw new Error('The IMAP listener is already open');
    if (this.options.secure || this.options.starttls) {
      try {
        this.tlsContext();
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const listener = net.createServer((socket) => this.accept(socket));
    this.imapListener = listener;
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => {
        this.imapListener = null;
        reject(err);
      };
      listener.once('error', onError);
      listener.listen(port, host, () => {
        listener.off('error', onError);
        resolve(this.address()!);
      });
    });
  }

  private accept(socket: net.Socket): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    // The `faults.tlsFailure` option (issue 14) refuses every implicit-TLS handshake with an alert.
    const channel = acceptChannel(socket, this.options.secure, this.options.faults.tlsFailure, () => this.tlsFor('imap'));
    if (channel === null) return;
    const maxConnections = this.connectionCaps().imap;
    const maxUnauthenticated = Math.min(this.options.maxUnauthenticated, maxConnections);
    if (this.sockets.size >= maxConnections) {
      refuse(channel, socket, `Too many connections (limit ${maxConnections})`);
      return;
    }
    if (this.unauthenticated >= maxUnauthenticated) {
      refuse(channel, socket, `Too many connections waiting to log in (limit ${maxUnauthenticated})`);
      return;
    }
    this.sockets.add(socket);
    socket.on('close', this.forgetSocket);
    this.unauthenticated++;
    if (this.replayer) this.replayer.accept(this, channel, socket, this.options.secure, socket.remoteAddress ?? null);
    else new ImapSession(this, channel, this.options.secure, socket);
  }

  /** A session logged in or closed before it did: it no longer counts against `maxUnauthenticated`. */
  unauthenticatedLeft(): void {
    this.unauthenticated--;
  }

  /**
   * Stops the server. Graceful: stops accepting and waits until the last
   * client has gone. Not graceful: closes every session right away.
   */
  shutdown(graceful: boolean): Promise<void> {
    if (this.stopping) {
      // A forced stop during a graceful one (a second signal) closes what is left now.
      if (!graceful) this.forceClose();
      return this.stopping;
    }
    const waits = this.eventLog.waiting;
    // An error object costs a stack capture; most stops have no wait to fail.
    if (waits > 0) this.eventLog.cancelAll(new ServiceError('CANNOT', 'The server is stopping'));
    const listener = this.imapListener;
    const rest = this.rest;
    const smtp = this.smtp;
    const pop3 = this.pop3;
    const oauthListener = this.oauthListener;
    this.stopping = (async () => {
      // Long polls get their 409 CANNOT answer written before a forced close drops their connections.
      if (waits > 0 && rest) await new Promise<void>((resolve) => setImmediate(resolve));
      const restClosed = rest ? rest.close(graceful) : Promise.resolve();
      const smtpClosed = smtp ? smtp.close(graceful) : Promise.resolve();
      const pop3Closed = pop3 ? pop3.close(graceful) : Promise.resolve();
      const oauthClosed = oauthListener ? oauthListener.close() : Promise.resolve();
      const closed = listener ? new Promise<void>((r) => listener.close(() => r())) : Promise.resolve();
      if (graceful) {
        // Every client is told, idle ones too; those that stay past shutdownTimeout are closed.
        for (const s of this.imapSessions()) s.byeWhenIdle('Server shutting down');
        const timeout = this.options.shutdownTimeout;
        const timer = setTimeout(() => this.forceClose(), timeout);
        void closed.then(() => clearTimeout(timer));
      } else {
        this.forceClose();
      }
      await Promise.all([closed, restClosed, smtpClosed, pop3Closed, oauthClosed]);
      this.oauthListener = null;
      this.imapListener = null;
      this.rest = null;
      this.smtp = null;
      this.pop3 = null;
    })();
    void this.stopping.then(() => this.markStopped());
    return this.stopping;
  }

  private imapSessions(): ImapSession[] {
    return this.sessions.list().filter((s): s is ImapSession => s instanceof ImapSession);
  }

  /**
   * Closes every connection now: `* BYE` to each session, also in the middle
   * of a command, and the socket destroyed once that is written (or at once
   * when the client reads nothing).
   */
  private forceClose(): void {
    for (const s of this.sessions.list()) s.disconnect({ text: 'Server shutting down' });
    const sockets = [...this.sockets];
    if (sockets.length === 0) return;
    const timer = setTimeout(() => {
      for (const socket of sockets) socket.destroy();
    }, FORCE_GRACE_MS);
    timer.unref();
  }

  /** Closes every listener and session. Safe to call more than once. */
  async stop(): Promise<void> {
    await this.shutdown(false);
  }
}

/**
 * A listen failure that says which listener failed, which setting chose its
 * address and what to do (`listen EADDRINUSE: ...` alone names none of that).
 */
function listenError(err: unknown, listener: string, option: string, flags: string): unknown {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (!(err instanceof Error) || (e.code !== 'EADDRINUSE' && e.code !== 'EACCES' && e.code !== 'EADDRNOTAVAIL')) return err;
  const where = `${e.address ?? '?'}:${e.port ?? '?'}`;
  const why =
    e.code === 'EADDRINUSE'
      ? `${where} is already in use`
      : e.code === 'EACCES'
        ? `${where} needs privileges this process does not have`
        : `${e.address ?? 'the address'} is not an address of this machine`;
  const wrapped = new Error(
    `${listener} listener: ${why} (set by the ${option} option, ${flags}); use port 0 to let the system pick a free port`,
  );
  (wrapped as NodeJS.ErrnoException).code = e.code;
  return wrapped;
}

/** Milliseconds `waitFor` waits when no timeout is given. */
export const DEFAULT_WAIT_TIMEOUT = 30_000;

/** How long a forced stop lets a `* BYE` reach a client before it destroys the socket. */
const FORCE_GRACE_MS = 200;

/** Tells a connection over a limit why it is refused, and closes it. */
function refuse(channel: net.Socket, tcp: net.Socket, text: string): void {
  channel.on('error', () => undefined);
  channel.end(`* BYE [UNAVAILABLE] ${text}\r\n`, () => tcp.destroy());
  setTimeout(() => tcp.destroy(), FORCE_GRACE_MS).unref();
}

/** Builds a server from options; nothing listens until `start()` or `listen()`. */
export function createServer(options: ServerOptions = {}): Server {
  return new Server(options);
}

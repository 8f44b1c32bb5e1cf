/**
 * SMTP intake: Rookery's own listener accepts each connection, puts it on
 * the connection layer (./session.ts) and hands smtp-server a stream over
 * it, so caps, admission, faults, transcripts, events and the sessions
 * registry are the ones IMAP and POP3 use (docs/smtp.md says why this
 * way). Accepted mail goes through the control API's addMessage (the one
 * store path), so IMAP sessions see EXISTS and the event stream shows it
 * exactly as for any other delivery.
 */
import { acceptChannel, addressOf, listenOn } from '../connection/listen.js';
import * as net from 'node:net';
import type * as tls from 'node:tls';
import { checkToken } from '../auth/tokens.js';
import type { SessionRegistry } from '../connection/registry.js';
import type {
  SMTPServer,
  SMTPServerAddress,
  SMTPServerAuthentication,
  SMTPServerAuthenticationResponse,
  SMTPServerDataStream,
  SMTPServerOptions,
  SMTPServerSession,
} from 'smtp-server';
import type { ResolvedOptions } from '../options/types.js';
import type { ScriptRule } from '../script/rule.js';
import type { ListenAddress, Server } from '../server.js';
import { loadSmtpServer } from './load.js';
import { receivedHeader } from './received.js';
import { recipientUser } from './recipients.js';
import { refusalReply, scriptReply, smtpError } from './replies.js';
import { SmtpSession, type SmtpSessionHost } from './session.js';
import { smtpWireLog } from './wire-log.js';

export type SmtpConfig = NonNullable<ResolvedOptions['smtp']>;

type Done = (err?: Error | null) => void;

/** The mailbox deliveries go to. All users share one tree, so it is one INBOX. */
const INBOX = 'INBOX';

/** Longest timer Node runs (about 24.8 days). */
const MAX_TIMER = 2_147_483_647;

/** How long a forced stop lets the 421 reach a client before the socket goes. */
const FORCE_GRACE_MS = 200;

export class SmtpIntake implements SmtpSessionHost {
  private smtp: SMTPServer | null = null;
  private listener: net.Server | null = null;
  /** Live sessions by number; smtp-server's connection ids are these numbers. */
  private readonly live = new Map<number, SmtpSession>();
  private unauthenticated = 0;

  constructor(
    private readonly server: Server,
    private readonly config: SmtpConfig,
    /** Connections at once (`maxConnections`, lowered to fit the descriptor limit); one more gets 421. */
    private readonly maxClients: number,
  ) {}

  /** Connections open now (GET /v1/health): every live session, logged in or not. */
  get open(): number {
    return this.live.size;
  }

  /** Loads smtp-server (rejecting with one sentence when it is missing) and listens. */
  async listen(): Promise<ListenAddress> {
    const c = this.config;
    // A bad key or certificate fails here with the same message as for IMAP, not at a client's handshake.
    if (c.secure || c.starttls) this.server.tlsContext('smtp');
    const SMTPServerClass = await loadSmtpServer();
    const o = this.server.options;
    // The smtp listener's profile, versions and SNI certificates (src/tls/listener-tls.ts).
    const tlsOf = this.server.tlsFor('smtp');
    const { key, cert } = tlsOf.keyAndCert(null);
    const sni = tlsOf.socketOptions().SNICallback;
    const smtp = new SMTPServerClass({
      secure: c.secure,
      key,
      cert,
      ...tlsOf.contextOptions(),
      ...(sni ? { SNICallback: sni } : {}),
      name: c.name,
      banner: 'Rookery',
      size: this.sizeLimit(),
      // Over SIZE is refused with 552 whatever onData says, and nothing past the limit is kept.
      rejectOversized: true,
      authMethods: ['PLAIN', 'LOGIN', 'XOAUTH2'],
      authOptional: !c.auth,
      // A test server: AUTH over plain TCP is what many test set-ups do; TLS stays available.
      allowInsecureAuth: true,
      disabledCommands: c.starttls ? [] : ['STARTTLS'],
      disableReverseLookup: true,
      logger: o.debug ? (smtpWireLog(o.debug) as unknown as SMTPServerOptions['logger']) : false,
      // Rookery's accept() applies the caps before smtp-server sees the connection.
      maxClients: 0,
      // idleTimeout 0 is "never"; smtp-server's own default would be one minute.
      socketTimeout: o.idleTimeout > 0 ? o.idleTimeout : MAX_TIMER,
      closeTimeout: Math.max(1, o.shutdownTimeout),
      onConnect: (_session, done) => {
        // APPENDLIMIT can change at run time (setLimit); EHLO reads the limit per connection.
        smtp.options.size = this.sizeLimit();
        done();
      },
      onSecure: (socket, session, done) => {
        // Called for implicit TLS too, with the bridge (Rookery's TLS is under it): only STARTTLS needs the tap.
        const own = this.live.get(Number(session.id));
        if (own && (socket as unknown) !== own.bridge) own.tapStartTls(socket as tls.TLSSocket);
        done();
      },
      onAuth: (auth, session, done) => this.authenticate(auth, session, done),
      onMailFrom: (address, session, done) => this.mailFrom(address, session, done),
      onRcptTo: (address, session, done) => this.rcptTo(address, session, done),
      onData: (stream, session, done) => this.data(stream, session, done),
    });
    // Errors of single connections (a client that resets) must not become uncaught 'error' events.
    smtp.on('error', () => undefined);
    this.smtp = smtp;
    this.listener = await listenOn(this.config.port, this.config.host, (socket) => this.accept(socket));
    return this.address()!;
  }

  address(): ListenAddress | null {
    return addressOf(this.listener);
  }

  get sessions(): SessionRegistry {
    return this.server.sessions;
  }

  unauthenticatedLeft(): void {
    this.unauthenticated--;
  }

  forget(session: SmtpSession): void {
    this.live.delete(session.id);
  }

  /** The caps (421, RFC 5321 §3.8, in the greeting's place), implicit TLS, then the session and smtp-server. */
  private accept(socket: net.Socket): void {
    const smtp = this.smtp;
    if (this.listener === null || smtp === null) {
      socket.destroy();
      return;
    }
    const options = this.server.options;
    const channel = acceptChannel(socket, this.config.secure, options.faults.tlsFailure, () => this.server.tlsFor('smtp'));
    if (channel === null) return;
    const maxUnauthenticated = Math.min(options.maxUnauthenticated, this.maxClients);
    if (this.live.size >= this.maxClients) return refuse(channel, socket, `${this.config.name} Too many connected clients, try again in a moment`);
    if (this.unauthenticated >= maxUnauthenticated) return refuse(channel, socket, `${this.config.name} Too many connections waiting to log in (limit ${maxUnauthenticated})`);
    this.unauthenticated++;
    const session = new SmtpSession(this.server, this, channel, this.config.secure, socket, this.config.name);
    this.live.set(session.id, session);
    // smtp-server's connection id is the session number, so its callbacks find the session.
    smtp.connect(session.bridge as unknown as net.Socket, { id: String(session.id), remoteAddress: socket.remoteAddress, remotePort: socket.remotePort } as never);
  }

  /**
   * Stops listening. Graceful: a client in the middle of a mail transaction
   * may finish it within `shutdownTimeout`; the others get `421 Server
   * shutting down` now (RFC 5321 §3.8), as IMAP clients get BYE. Not
   * graceful: every client gets that 421 now.
   */
  close(graceful: boolean): Promise<void> {
    const smtp = this.smtp;
    const listener = this.listener;
    if (!smtp || !listener) return Promise.resolve();
    this.smtp = null;
    this.listener = null;
    const listenerClosed = new Promise<void>((resolve) => listener.close(() => resolve()));
    const sessionsClosed = new Promise<void>((resolve) => smtp.close(() => resolve()));
    for (const connection of [...smtp.connections]) {
      if (graceful && (connection.session.envelope.mailFrom || connection._dataStream)) continue;
      connection.send(421, 'Server shutting down');
      const session = this.live.get(Number(connection.id));
      setTimeout(() => session?.conn.tcp.destroy(), FORCE_GRACE_MS).unref();
    }
    return Promise.all([listenerClosed, sessionsClosed]).then(() => undefined);
  }

  /** SIZE: APPENDLIMIT's limit while that plugin is loaded, else the largest APPEND (`maxLiteral`). */
  private sizeLimit(): number {
    return this.server.extension('APPENDLIMIT')?.limit ?? this.server.options.maxLiteral;
  }

  private authenticate(
    auth: SMTPServerAuthentication,
    session: SMTPServerSession,
    reply: (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse) => void,
  ): void {
    const done = (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse): void => {
      if (!err && response?.user !== undefined) this.live.get(Number(session.id))?.loggedIn(name);
      reply(err, response);
    };
    const name = auth.username ?? '';
    const record = this.server.store.users.get(name);
    if (auth.method === 'XOAUTH2') {
      // The token check every mail login shares (src/auth/tokens.ts): a static token or the token service's verdict.
      const verdict = checkToken(this.server, name, auth.accessToken, 'XOAUTH2', null);
      if (verdict.ok) return done(null, { user: name });
      // The style's error JSON; smtp-server sends it as the 334 challenge, then 535.
      const { challenge } = verdict.refusal;
      return challenge ? done(null, { data: challenge }) : done(smtpError(535, '5.7.3 Authentication unsuccessful'));
    }
    if (record !== undefined && record.password !== null && auth.password === record.password) return done(null, { user: name });
    done(smtpError(535, 'Authentication credentials invalid'));
  }

  private mailFrom(address: SMTPServerAddress, session: SMTPServerSession, done: Done): void {
    this.ask('MAIL', () => `MAIL FROM:<${address.address}>`, session, done, () => {
      if (!this.config.auth) this.live.get(Number(session.id))?.began();
      done();
    });
  }

  private rcptTo(address: SMTPServerAddress, session: SMTPServerSession, done: Done): void {
    this.ask('RCPT', () => `RCPT TO:<${address.address}>`, session, done, () => {
      const user = recipientUser(address.address, this.config, this.server.store.users);
      if (user === null) return done(smtpError(550, `No such user here: <${address.address}>`));
      done();
    });
  }

  private data(stream: SMTPServerDataStream, session: SMTPServerSession, done: Done): void {
    const chunks: Buffer[] = [];
    let length = 0;
    stream.on('data', (chunk: Buffer) => {
      // Past SIZE smtp-server answers 552 itself; keeping the rest would only cost memory.
      if (stream.sizeExceeded) return;
      chunks.push(chunk);
      length += chunk.length;
    });
    stream.once('end', () => {
      if (stream.sizeExceeded) return done(smtpError(552, 'Message exceeds fixed maximum message size'));
      const message = Buffer.concat(chunks, length);
      this.ask('DATA', () => message.toString('latin1'), session, done, () => this.deliver(message, session, done));
    });
  }

  /** Stores the message once (every accepted recipient shares the one INBOX) with a Received: header. */
  private deliver(message: Buffer, session: SMTPServerSession, done: (err?: Error | null, reply?: string) => void): void {
    const to = session.envelope.rcptTo.map((r) => r.address);
    const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const trace = receivedHeader({
      // smtp-server leaves these false until HELO/EHLO, whatever the declared type says.
      helo: typeof session.hostNameAppearsAs === 'string' && session.hostNameAppearsAs !== '' ? session.hostNameAppearsAs : null,
      remoteAddress: session.remoteAddress,
      name: this.config.name,
      protocol: session.transmissionType || 'SMTP',
      id: session.id,
      recipients: to,
      now: this.server.now(),
    });
    const raw = Buffer.concat([Buffer.from(trace, 'latin1'), message]);
    if (this.server.trees) return this.deliverPerUser(raw, from, to, done);
    let uid: number;
    try {
      ({ uid } = this.server.control.addMessage(INBOX, { raw, checks: true }));
    } catch (err) {
      return done(refusalReply(err, this.largerThanQuota(raw.length)));
    }
    this.server.emit('delivery', { from, to, mailbox: INBOX, uid });
    done(null, `OK: stored in ${INBOX} as UID ${uid}`);
  }

  /**
   * userMailboxes: one copy in each recipient user's own INBOX (a user named
   * by several recipients gets one). Recipients a catch-all accepted that
   * name no user have no tree to go to: their copy is dropped.
   */
  private deliverPerUser(raw: Buffer, from: string, to: string[], done: (err?: Error | null, reply?: string) => void): void {
    const users = new Map<string, string[]>();
    for (const address of to) {
      const user = recipientUser(address, this.config, this.server.store.users);
      if (user === null || user === '') continue;
      const list = users.get(user);
      if (list) list.push(address);
      else users.set(user, [address]);
    }
    const stored: { user: string; to: string[]; uid: number }[] = [];
    for (const [user, addresses] of users) {
      try {
        const { uid } = this.server.control.addMessage(INBOX, { raw, checks: true }, { user });
        stored.push({ user, to: addresses, uid });
      } catch (err) {
        // Copies already stored stay (as with any MTA that delivered to some recipients); the client hears the refusal.
        for (const s of stored) this.server.emit('delivery', { from, to: s.to, mailbox: INBOX, uid: s.uid, user: s.user });
        return done(refusalReply(err, this.largerThanQuota(raw.length)));
      }
    }
    for (const s of stored) this.server.emit('delivery', { from, to: s.to, mailbox: INBOX, uid: s.uid, user: s.user });
    done(null, `OK: stored in ${stored.length} ${stored.length === 1 ? 'INBOX' : 'INBOXes'}`);
  }

  /** True when a message of `size` octets exceeds the STORAGE quota, or the store's whole budget, even in an empty store. */
  private largerThanQuota(size: number): boolean {
    const storage = this.server.extension('QUOTA')?.getQuota().limits.STORAGE;
    const budget = this.server.store.budget?.maxBytes ?? null;
    return (storage !== undefined && size > storage * 1024) || (budget !== null && size > budget);
  }

  /**
   * Asks the `on: "smtp"` script rules about a command. Without an acting
   * rule `proceed` runs; a rule may delay, answer with its `send` reply
   * instead, close the connection, act on the transport (bandwidth,
   * stall, slowClose; halfClose once the reply is out), or several of these.
   */
  private ask(command: 'MAIL' | 'RCPT' | 'DATA', text: () => string, session: SMTPServerSession, done: Done, proceed: () => void): void {
    const script = this.server.script;
    if (!script.has('smtp')) return proceed();
    const user = typeof session.user === 'string' ? session.user : null;
    const own = this.live.get(Number(session.id));
    // The session number lets `session` rules and `seedScope: "session"` streams single out one SMTP connection.
    const action = script.fire({ event: 'smtp', session: own?.id ?? null, tag: null, command, state: null, user, mailbox: null, text: text() });
    if (!action) return proceed();
    const rule: ScriptRule = action.rule;
    const act = (): void => {
      own?.conn.applyFaults(rule);
      // smtp-server may answer a turn later: the FIN goes after whatever it writes next, this command's reply.
      if (rule.halfClose === true && own) own.halfCloseAfterReply();
      if (action.send) done(scriptReply(action.send.toString('latin1')));
      if (rule.close === true || rule.close === 'reset') this.closeConnection(session.id, rule.close);
      else if (!action.send) proceed();
    };
    if (rule.delay) setTimeout(act, rule.delay);
    else act();
  }

  /** Ends one SMTP connection: FIN after what was written (`true`) or a TCP reset. */
  private closeConnection(id: string, how: true | 'reset'): void {
    const session = this.live.get(Number(id));
    if (!session) return;
    if (how === 'reset') return session.conn.reset();
    for (const connection of this.smtp?.connections ?? []) if (connection.id === id) return connection.close();
  }
}

/** Tells a connection over a cap why it is refused (the greeting's place), and closes it. */
function refuse(channel: net.Socket | tls.TLSSocket, tcp: net.Socket, text: string): void {
  channel.on('error', () => undefined);
  channel.end(`421 ${text}\r\n`, () => tcp.destroy());
  setTimeout(() => tcp.destroy(), FORCE_GRACE_MS).unref();
}

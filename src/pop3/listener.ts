/**
 * The POP3 listener (like the SMTP intake: made by src/server.ts when
 * `pop3.port` is set): accepts connections (implicit TLS with `pop3.secure`),
 * applies the connection caps, and keeps what POP3 sessions share: the
 * users' locks (`pop3.exclusive`, `[IN-USE]`) and their last logins
 * (`pop3.loginDelay`, `[LOGIN-DELAY]`).
 */
import { acceptChannel, addressOf, listenOn } from '../connection/listen.js';
import * as net from 'node:net';
import type { ResolvedPop3 } from '../options/types.js';
import type { ListenAddress, Server } from '../server.js';
import type { SessionRegistry } from '../connection/registry.js';
import { loginDelayFor } from './capabilities.js';
import { err, type Pop3Reply } from './commands/types.js';
import { Pop3Session, type Pop3Host } from './session.js';

/** How long a refused or force-closed connection gets to read its `-ERR` before the socket goes. */
const FORCE_GRACE_MS = 200;

export class Pop3Listener implements Pop3Host {
  private listener: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private unauthenticated = 0;
  /** Sessions per user in TRANSACTION (by session number): the `exclusive` lock. */
  private readonly holders = new Map<string, Set<number>>();
  /** Server-clock time of each user's last login, for LOGIN-DELAY. User names are client input: a Map. */
  private readonly lastLogin = new Map<string, number>();

  constructor(
    private readonly server: Server,
    readonly config: ResolvedPop3,
    /** Connections at once (`maxConnections`, lowered to fit the descriptor limit). */
    private readonly maxConnections: number,
  ) {}

  get sessions(): SessionRegistry {
    return this.server.sessions;
  }

  async listen(): Promise<ListenAddress> {
    // A bad key or certificate fails here, not at a client's handshake.
    if (this.config.secure || this.config.stls) this.server.tlsContext('pop3');
    this.listener = await listenOn(this.config.port, this.config.host, (socket) => this.accept(socket));
    return this.address()!;
  }

  address(): ListenAddress | null {
    return addressOf(this.listener);
  }

  /** Connections open now (GET /v1/health). */
  get open(): number {
    return this.sockets.size;
  }

  /**
   * Stops listening. Graceful: each session gets `-ERR` and is closed
   * once its running command has answered (nothing is deleted: no UPDATE);
   * the server's shutdownTimeout ends what is left. Not graceful: at once.
   */
  close(graceful: boolean): Promise<void> {
    const listener = this.listener;
    if (!listener) return Promise.resolve();
    this.listener = null;
    const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
    for (const s of this.server.sessions.list()) {
      if (!(s instanceof Pop3Session)) continue;
      if (graceful) s.goodbyeWhenIdle('[SYS/TEMP] Server shutting down');
      else s.disconnect({ text: '[SYS/TEMP] Server shutting down' });
    }
    if (!graceful) {
      const sockets = [...this.sockets];
      setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, FORCE_GRACE_MS).unref();
    }
    return closed;
  }

  private accept(socket: net.Socket): void {
    if (this.listener === null) {
      socket.destroy();
      return;
    }
    const options = this.server.options;
    // The `tls.pop3` settings (profile, SNI, client certificates, versions, ALPN `pop3`): src/tls/listener-tls.ts.
    const channel = acceptChannel(socket, this.config.secure, options.faults.tlsFailure, () => this.server.tlsFor('pop3'));
    if (channel === null) return;
    const maxUnauthenticated = Math.min(options.maxUnauthenticated, this.maxConnections);
    if (this.sockets.size >= this.maxConnections) {
      refuse(channel, socket, `[SYS/TEMP] Too many connections (limit ${this.maxConnections})`);
      return;
    }
    if (this.unauthenticated >= maxUnauthenticated) {
      refuse(channel, socket, `[SYS/TEMP] Too many connections waiting to log in (limit ${maxUnauthenticated})`);
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    this.unauthenticated++;
    // `script: { replay }` serves the recording as POP3 here (src/transcript/replay.ts).
    const replayer = this.server.replaying();
    if (replayer) replayer.accept(this.server, channel, socket, this.config.secure, socket.remoteAddress ?? null, 'pop3', () => this.unauthenticatedLeft());
    else new Pop3Session(this.server, this, channel, this.config.secure, socket);
  }

  unauthenticatedLeft(): void {
    this.unauthenticated--;
  }

  admitLogin(user: string, session: number): Pop3Reply | null {
    const holders = this.holders.get(user);
    // RFC 2449 §8.1.1: IN-USE, the maildrop is locked by another session.
    if (this.config.exclusive && holders && holders.size > 0) return err('Mailbox is locked by another POP3 session', 'IN-USE');
    const now = this.server.now();
    const seconds = loginDelayFor(this.config, user);
    const delay = seconds * 1000;
    const last = this.lastLogin.get(user);
    // RFC 2449 §8.1.2: LOGIN-DELAY, the user logged in again sooner than the server allows.
    if (delay > 0 && last !== undefined && now - last < delay) return err(`Logins are allowed only every ${seconds} seconds`, 'LOGIN-DELAY');
    this.lastLogin.set(user, now);
    if (holders) holders.add(session);
    else this.holders.set(user, new Set([session]));
    return null;
  }

  releaseLogin(user: string, session: number): void {
    const holders = this.holders.get(user);
    if (!holders) return;
    holders.delete(session);
    if (holders.size === 0) this.holders.delete(user);
  }
}

/** Tells a connection over a limit why it is refused (the greeting's place), and closes it. */
function refuse(channel: net.Socket, tcp: net.Socket, text: string): void {
  channel.on('error', () => undefined);
  channel.end(`-ERR ${text}\r\n`, () => tcp.destroy());
  setTimeout(() => tcp.destroy(), FORCE_GRACE_MS).unref();
}

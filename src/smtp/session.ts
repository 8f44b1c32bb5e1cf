/**
 * One SMTP intake connection on the protocol-neutral connection layer
 * (src/connection/): Rookery accepts the socket, puts it on a Connection
 * (faults, backpressure, close and reset) and hands smtp-server a
 * stream over it (./bridge.ts). The session is listed in the sessions
 * registry, counted by admission, recorded by the transcript and reported
 * in session and command events; smtp-server runs the protocol itself.
 */
import type * as net from 'node:net';
import type * as tls from 'node:tls';
import { Admission, type AdmissionServer } from '../connection/admission.js';
import { Connection } from '../connection/connection.js';
import type { SessionHandle } from '../connection/registry.js';
import type { SessionEventType, SessionInfo } from '../events.js';
import type { Server } from '../server.js';
import { attackSmtpGreeting, attackStartTls, bufferedAfterStartTls, isStartTls, SMTP_DIALECT, SMTP_GARBAGE, SmtpCommandLines, stripStartTls } from '../tls/attacks/smtp-attack.js';
import type { TlsWatch } from '../tls/verdicts.js';
import type { SessionRecorder } from '../transcript/transcripts.js';
import { SmtpBridge } from './bridge.js';
import { replyStatus, SmtpWireTracker } from './wire-tracker.js';

/** What a session needs of the intake. */
export interface SmtpSessionHost extends AdmissionServer {
  /** The session is gone: the intake forgets it. */
  forget(session: SmtpSession): void;
}

export class SmtpSession implements SessionHandle {
  readonly id: number;
  user: string | null = null;
  readonly conn: Connection;
  readonly bridge: SmtpBridge;
  private readonly admission: Admission;
  private readonly tracker: SmtpWireTracker;
  private readonly transcript: SessionRecorder | null;
  /** smtp-server's TLS after STARTTLS: the cleartext is above it, so the transcript and tracker read there. */
  private starttls: tls.TLSSocket | null = null;
  /** Between the `220` to STARTTLS and the tap on smtp-server's TLS socket the bytes are TLS records. */
  private encrypted = false;
  private closedDone = false;
  private halfCloseNext = false;
  private goingAway = false;
  /** The TLS bench's watch when this session meets a STARTTLS attack or a broken profile (docs/tls.md). */
  readonly tlsWatch: TlsWatch | null;
  /** The client's command lines for the watch (null without one). */
  private readonly watchLines: SmtpCommandLines | null;
  private greeted = false;
  /** The session answered STARTTLS itself (an attack): its `220` starts no TLS. */
  private ownStartTls = false;
  /** The first bytes after smtp-server's `220` to STARTTLS were looked at (they should be a ClientHello). */
  private helloSeen = false;

  constructor(
    private readonly server: Server,
    private readonly host: SmtpSessionHost,
    channel: net.Socket,
    secure: boolean,
    tcp: net.Socket,
    /** The server's name, which starts a 421 (RFC 5321 §4.2: `421 <domain> ...`). */
    private readonly name: string,
  ) {
    this.id = server.sessions.nextId();
    // The transcript is kept here, not by the Connection: after STARTTLS the bytes on the Connection are
    // smtp-server's TLS records, and the cleartext is read on its TLS socket instead (tapStartTls).
    this.transcript = server.transcripts.open(this.id, tcp.remoteAddress ?? null, this, 'smtp');
    this.tracker = new SmtpWireTracker(({ seq, verb, code }) => {
      server.emitCommand(this.id, String(seq), verb, replyStatus(code), this.user, 'smtp');
      if (verb === 'STARTTLS' && code === 220 && !this.ownStartTls) this.encrypted = true;
      if (verb === 'DATA' && code !== 354) this.watchLines?.dataRefused();
    });
    this.conn = new Connection(
      {
        input: (chunk) => this.onInput(chunk),
        bufferedInput: () => this.bridge.readableLength,
        flushHeld: () => undefined,
        closed: () => this.onClose(),
      },
      channel,
      secure,
      tcp,
      server.options.faults,
      null,
    );
    this.bridge = new SmtpBridge(this.conn, (chunk) => this.onOutput(chunk), tcp, secure ? (channel as tls.TLSSocket) : null);
    this.admission = new Admission(host, server.options.loginTimeout, () => {
      if (this.user === null) this.disconnect({ text: `No login within ${server.options.loginTimeout / 1000} seconds` });
    });
    this.admission.register(this);
    // STARTTLS attacks meet plain-text sessions of a listener that offers STARTTLS.
    const offered = (): ReadonlySet<string> => new Set(['AUTH PLAIN', 'AUTH LOGIN', 'AUTH XOAUTH2', ...(this.starttls ? [] : ['STARTTLS'])]);
    this.tlsWatch = server.tls.watch(this.id, 'smtp', SMTP_DIALECT, offered, !secure && server.options.smtp?.starttls === true);
    const watch = this.tlsWatch;
    this.watchLines = watch ? new SmtpCommandLines((line, tls) => watch.command(line, tls)) : null;
    this.emitSession('open');
  }

  info(): SessionInfo {
    const closed = this.conn.closed;
    return {
      session: this.id,
      user: this.user,
      state: closed ? 'Logout' : this.user === null ? 'Not Authenticated' : 'Authenticated',
      mailbox: null,
      readOnly: false,
      enabled: [],
      secure: this.conn.secure || this.starttls !== null,
      compressed: false,
      remoteAddress: closed ? null : this.conn.remoteAddress,
      protocol: 'smtp',
    };
  }

  /** `421 <text>` and the close (RFC 5321 §3.8: the server may end any session so), or a TCP reset. */
  disconnect(options: { text?: string; reset?: boolean }): void {
    this.admission.unregister(this.id);
    if (options.reset) return this.conn.reset();
    if (this.goingAway || this.conn.closed) return;
    this.goingAway = true;
    const text = options.text ?? 'Disconnected by the server';
    this.inject(Buffer.from(`421 ${this.name} ${text}\r\n`, 'latin1'));
    if (this.starttls) this.starttls.end();
    else this.conn.close();
  }

  /** Bytes to the client, past smtp-server (inside its TLS after STARTTLS). */
  inject(data: Buffer): void {
    if (this.conn.closed) return;
    if (this.starttls) this.starttls.write(data);
    else this.onOutput(data);
  }

  /** AUTH succeeded (smtp-server's onAuth): the session leaves the unauthenticated. */
  loggedIn(user: string): void {
    this.user = user;
    this.admission.leaveUnauthenticated();
    this.emitSession('login');
  }

  /** Without required AUTH, a sender that begins a transaction is no longer waiting to log in. */
  began(): void {
    this.admission.leaveUnauthenticated();
  }

  /**
   * smtp-server's own TLS after STARTTLS: what it reads and writes there
   * is the cleartext the transcript and the command events follow.
   */
  tapStartTls(socket: tls.TLSSocket): void {
    if (this.starttls) return;
    this.starttls = socket;
    this.encrypted = false;
    const watch = this.tlsWatch;
    if (watch) {
      // smtp-server calls onSecure once the handshake is done: the profile served is known now.
      // smtp-server made this socket (not ListenerTls.wrap): the profile is the one its SNI name selects.
      const sni = (socket as { servername?: unknown }).servername;
      watch.handshake(this.server.tlsFor('smtp').keyAndCert(typeof sni === 'string' ? sni.toLowerCase() : null).profile);
      if (watch.has('starttls-garbage')) watch.armGarbage(() => this.conn.write(SMTP_GARBAGE));
      // Before smtp-server's own reader, so that the garbage goes out ahead of the answer.
      socket.prependListener('data', (chunk: Buffer) => this.watchLines?.feed(chunk, true));
    }
    socket.on('data', (chunk: Buffer) => this.observeClient(chunk));
    const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
    socket.write = ((chunk: unknown, ...rest: unknown[]): boolean => {
      if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) this.observeServer(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, 'utf8'));
      return write(chunk, ...rest);
    }) as typeof socket.write;
  }

  /** `halfClose`: FIN right after smtp-server's next write (the reply to the rule's command); reading goes on. */
  halfCloseAfterReply(): void {
    this.halfCloseNext = true;
  }

  private onInput(chunk: Buffer): void {
    const plain = !this.encrypted && this.starttls === null;
    const watch = this.tlsWatch;
    if (watch) {
      watch.received();
      if (plain) this.watchLines?.feed(chunk, false);
      else if (this.starttls === null && !this.helloSeen) {
        this.helloSeen = true;
        watch.plainInsteadOfHello(chunk);
      }
    }
    if (plain) this.observeClient(chunk);
    if (watch && plain && isStartTls(chunk)) {
      const own = attackStartTls(watch);
      if (own) {
        // smtp-server never sees this STARTTLS: the session stays in plain text under it.
        this.ownStartTls = true;
        this.onOutput(own.reply);
        this.ownStartTls = false;
        return;
      }
    }
    this.bridge.deliver(chunk);
  }

  private onOutput(chunk: Buffer): void {
    // After a halfClose the sending side is gone: replies smtp-server still makes are dropped, reading goes on.
    if (this.conn.ended) return;
    const plain = !this.encrypted && this.starttls === null;
    if (plain && this.tlsWatch) chunk = this.attackReply(chunk);
    if (plain) this.observeServer(chunk);
    // The `220` to STARTTLS just went past the tracker: buffering sends plain text in the same write.
    const buffered = plain && this.encrypted && this.tlsWatch ? bufferedAfterStartTls(this.tlsWatch, this.name) : null;
    if (buffered) {
      this.transcript?.fromServer(buffered);
      chunk = Buffer.concat([chunk, buffered]);
    }
    this.conn.write(chunk);
    if (this.halfCloseNext) {
      this.halfCloseNext = false;
      this.conn.halfClose();
    }
  }

  /** A plain-text reply as the attacks rewrite it: the greeting, and EHLO answers under stripping. */
  private attackReply(chunk: Buffer): Buffer {
    const watch = this.tlsWatch!;
    if (!this.greeted) {
      this.greeted = true;
      return attackSmtpGreeting(watch, chunk, this.name);
    }
    return watch.has('starttls-stripping') ? stripStartTls(chunk) : chunk;
  }

  private observeClient(chunk: Buffer): void {
    this.transcript?.fromClient(chunk);
    this.tracker.client(chunk);
  }

  private observeServer(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.transcript?.fromServer(chunk);
    this.tracker.server(chunk);
  }

  private emitSession(type: SessionEventType): void {
    this.server.emitSession(type, this.info());
  }

  private onClose(): void {
    if (this.closedDone) return;
    this.closedDone = true;
    this.admission.closed();
    this.admission.unregister(this.id);
    this.tlsWatch?.closed();
    this.bridge.gone();
    this.starttls?.destroy();
    this.transcript?.close();
    this.host.forget(this);
    this.emitSession('close');
  }
}

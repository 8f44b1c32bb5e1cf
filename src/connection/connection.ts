import type * as net from 'node:net';
import type { Duplex } from 'node:stream';
import type * as tls from 'node:tls';
import { nodeTls } from '../tls/node-tls.js';
import { SessionFaults, ThrottledTransport, type ResolvedFaults, type TransportRuleFields } from '../script/transport.js';
import type { SessionRecorder } from '../transcript/transcripts.js';
import { IdleTimer, type TrafficClock } from './idle-timer.js';

/** Unread input above which the socket is paused until the protocol catches up. */
export const INPUT_HIGH_WATER = 1024 * 1024;

/**
 * Unsent output above which a session reads no further command (and long
 * commands wait between messages) until the client has read down to
 * `OUTPUT_LOW_WATER`: a client that pipelines and never reads costs about
 * this much, not the size of everything it asked for.
 */
export const OUTPUT_HIGH_WATER = 1024 * 1024;
export const OUTPUT_LOW_WATER = 256 * 1024;
/** Gathered output up to this size is copied into one buffer; above it the parts go to the stream as they are. */
const CONCAT_MAX = 64 * 1024;

/** The queue of shaped output before anything was queued. */
const SETTLED: Promise<void> = Promise.resolve();

/** Socket errors end in 'close', which ends the connection: the error itself needs no handling, only a listener. */
function ignoreError(): void {}

/** `setImmediate`'s callback for a connection that gathered output: no closure per connection. */
function uncorkGathered(connection: Connection): void {
  connection.uncork();
}

/** How long the server waits for the client's FIN after its own before it closes for good. */
const CLOSE_GRACE_MS = 2000;

/**
 * A layer a session can put over its connection after a command (RFC
 * 4978 compression is one): `wrap` gets the current connection (plain or
 * TLS) and returns the stream the session reads and writes from then on.
 * Input goes through the layer from the moment of `wrap` (right after the
 * command's answer was written); output only from `start()`, which the
 * session calls once that answer has gone out, so the answer itself is not
 * transformed. `writableLength` of the layer must count everything still
 * waiting in it and under it (output backpressure).
 */
export interface TransportLayer {
  wrap(connection: Duplex): Duplex & { start(): void };
  /** The session info shows `compressed: true` once this layer is on. */
  readonly compresses: boolean;
}

/** What the protocol on top of a connection supplies to it. */
export interface ConnectionHost {
  /** Bytes the client sent, decrypted and unwrapped, after the transcript recorded them. */
  input(chunk: Buffer): void;
  /** Input the protocol holds unparsed: above `INPUT_HIGH_WATER` the socket is paused. */
  bufferedInput(): number;
  /** Output the protocol holds back that must go out before the connection ends or half-closes. */
  flushHeld(): void;
  /** The connection is gone (called once). */
  closed(): void;
}

/**
 * One client connection, whatever the protocol: the socket and the layers
 * put over it (TLS, a protocol's layer such as compression, a bandwidth
 * cap), writes gathered into one system call per turn, output backpressure,
 * the transport faults of src/script/transport.ts, the transcript's view of
 * the bytes, and the ways a connection ends (FIN with a grace period, a
 * reset, a half-close). The protocol owns framing and state, and talks to
 * the client only through `write`.
 */
export class Connection implements TrafficClock {
  /**
   * The stream the protocol talks over: the TCP socket, its TLS layer
   * after an upgrade, or a layer over either (compression, throttling).
   */
  socket: Duplex;
  /** True once set by `close` handling: nothing more is read or written. */
  closed = false;
  /** True once a protocol layer (compression) is on: TLS can no longer start under it. */
  layered = false;
  compressed = false;
  /** Transport faults of this connection (issue 14; src/script/transport.ts). */
  readonly faults: SessionFaults;
  readonly remoteAddress: string | null;
  /** The bandwidth cap's layer, once a cap was set. */
  private throttle: ThrottledTransport | null = null;
  /** Waiters for the client to read its output down to the low-water mark. */
  private drainWaiters: (() => void)[] | null = null;
  /** The stream `coalesce` gathers output for, until the end of this turn of the event loop. */
  private corked: Duplex | null = null;
  /**
   * What was written while gathering, in order, and its size: sent as one
   * buffer by `uncork`. The first part alone (most turns write one), a list
   * from the second on: no array per turn, none held by an idle connection.
   */
  private gatheredOne: Buffer | null = null;
  private gatheredMany: Buffer[] | null = null;
  private gatheredBytes = 0;
  /**
   * Text written while gathering after the last buffer part (`writeText`),
   * in the encoding `gatheredTextEncoding`: made into one buffer when a
   * buffer follows it or the turn ends, so many small answers cost one
   * encoding, not a buffer each.
   */
  private gatheredText = '';
  private gatheredTextEncoding: 'latin1' | 'utf8' = 'latin1';
  /**
   * Shaped output (delays, chunks, the FIN of a fault): later output waits
   * behind `outTail` while `outBusy` > 0. Null until something is queued:
   * most connections never shape output.
   */
  private outTail: Promise<void> | null = null;
  private outBusy = 0;
  /** The autologout timer while one is set (`setIdleTimeout`); it reads `lastActive`. */
  private idle: IdleTimer | null = null;
  /** `performance.now()` of the last traffic either way, kept while an idle timer is set (TrafficClock). */
  lastActive = 0;
  /** The first `setIdleTimeout`'s callback: later calls only change the time. */
  private onIdle: (() => void) | null = null;

  constructor(
    private readonly host: ConnectionHost,
    socket: net.Socket,
    public secure: boolean,
    /** The TCP connection under `socket` when that is TLS or a layer: a reset has to go to it. */
    readonly tcp: net.Socket,
    faults: ResolvedFaults,
    /** Records the bytes at the socket boundary, or null when transcripts are off. */
    readonly transcript: SessionRecorder | null,
  ) {
    this.socket = socket;
    this.remoteAddress = socket.remoteAddress ?? null;
    this.faults = new SessionFaults(faults);
    socket.setNoDelay(true);
    this.listen(socket);
    if (this.faults.bandwidth > 0) this.setBandwidth(this.faults.bandwidth);
  }

  private listen(socket: Duplex): void {
    socket.on('data', this.onData);
    socket.on('error', ignoreError);
    socket.on('close', this.onClose);
    socket.on('drain', this.onDrain);
  }

  /** Stops reading from the current stream, before a layer goes over it; returns it. */
  private detach(): Duplex {
    this.uncork();
    const under = this.socket;
    under.off('data', this.onData);
    return under;
  }

  /**
   * The socket boundary, inbound: every byte the client sends arrives here,
   * decrypted (TLS) and decompressed (COMPRESS), before anything parses it.
   */
  private readonly onData = (chunk: Buffer): void => {
    if (this.idle !== null) this.lastActive = performance.now();
    this.transcript?.fromClient(chunk);
    this.host.input(chunk);
    // A client that pipelines faster than commands run waits in TCP, not in our memory.
    if (this.host.bufferedInput() > INPUT_HIGH_WATER) this.socket.pause();
  };

  private readonly onClose = (): void => {
    if (this.closed) return;
    this.closed = true;
    this.idle?.stop();
    this.idle = null;
    this.faults.clear();
    const drainWaiters = this.drainWaiters;
    this.drainWaiters = null;
    if (drainWaiters !== null) for (const w of drainWaiters) w();
    this.host.closed();
  };

  private readonly onDrain = (): void => {
    if (this.socket.writableLength > OUTPUT_LOW_WATER) return;
    const waiters = this.drainWaiters;
    if (waiters === null) return;
    this.drainWaiters = null;
    for (const w of waiters) w();
  };

  /** True when the sending side is gone (closed, destroyed, errored, or ended by a half-close). */
  get ended(): boolean {
    // `writable` reads the writable side's state alone; `destroyed` of a duplex reads both sides' (one more
    // object fetched from memory per write, where a change reaches 10,000 idling sessions).
    return this.closed || !this.socket.writable;
  }

  // ------------------------------------------------------------ output

  /**
   * The socket boundary, outbound: every byte written to the connection
   * leaves here, before compression and encryption. The transcript records
   * exactly these bytes.
   */
  write(data: Buffer): void {
    if (this.corked !== null) {
      if (this.gatheredText !== '') this.settleText();
      this.gather(data);
      return;
    }
    if (this.idle !== null) this.lastActive = performance.now();
    this.transcript?.fromServer(data);
    this.socket.write(data);
  }

  /**
   * Writes response text: while gathering, joined to the turn's output as
   * text (see `gatheredText`); else at once, as bytes. The transcript and
   * the stream see the same bytes as from `write`.
   */
  writeText(text: string, encoding: 'latin1' | 'utf8'): void {
    if (this.corked === null) {
      this.write(Buffer.from(text, encoding));
      return;
    }
    if (this.gatheredText !== '' && encoding !== this.gatheredTextEncoding) this.settleText();
    this.gatheredText += text;
    this.gatheredTextEncoding = encoding;
  }

  /** The gathered text becomes a buffer part, after the parts before it. */
  private settleText(): void {
    const data = Buffer.from(this.gatheredText, this.gatheredTextEncoding);
    this.gatheredText = '';
    this.gather(data);
  }

  private gather(data: Buffer): void {
    if (this.gatheredOne === null) this.gatheredOne = data;
    else (this.gatheredMany ??= [this.gatheredOne]).push(data);
    this.gatheredBytes += data.length;
  }

  /**
   * Gathers what is written during this turn of the event loop (a
   * command's untagged lines and its tagged answer, several commands of one
   * read) into one write of one buffer, made in the same turn: a SELECT
   * was nine writes, and a write costs more than the command. Gathered
   * here rather than corked in the stream: 64 pipelined answers cost one
   * stream write, one transcript record, one system call.
   */
  coalesce(): void {
    // A compression layer batches by itself, and its backpressure reads its own buffer, which gathering would hide.
    if (this.corked !== null || this.layered) return;
    this.corked = this.socket;
    setImmediate(uncorkGathered, this);
  }

  /** Sends what `coalesce` gathered; before a transport change or the end too, so those bytes go out as they were. */
  uncork(): void {
    const socket = this.corked;
    if (socket === null) return;
    if (this.gatheredText !== '') this.settleText();
    this.corked = null;
    const one = this.gatheredOne;
    if (one === null) return;
    const parts = this.gatheredMany;
    const bytes = this.gatheredBytes;
    this.gatheredOne = null;
    this.gatheredMany = null;
    this.gatheredBytes = 0;
    if (socket.destroyed) return;
    if (this.idle !== null) this.lastActive = performance.now();
    if (parts === null || bytes <= CONCAT_MAX) {
      const data = parts === null ? one : Buffer.concat(parts, bytes);
      this.transcript?.fromServer(data);
      socket.write(data);
      return;
    }
    // Large output (a message body among the parts) is not copied into one buffer: the stream writes the parts together.
    socket.cork();
    for (const data of parts) {
      this.transcript?.fromServer(data);
      socket.write(data);
    }
    socket.uncork();
  }

  /**
   * True when more than `limit` bytes (plus `extra` the protocol holds)
   * wait for the client to read them. Bytes gathered this turn are not
   * unread yet: they are sent first, and only what the kernel would not
   * take counts.
   */
  unreadBeyond(limit: number, extra = 0): boolean {
    // Gathered text counts by its length: its octets in latin1, a lower bound in UTF-8.
    if (this.socket.writableLength + this.gatheredBytes + this.gatheredText.length + extra <= limit) return false;
    this.uncork();
    return this.socket.writableLength + extra > limit;
  }

  /**
   * Resolves when the client has read its output down to the low-water
   * mark; null when there is no need to wait.
   */
  outputRoom(): Promise<void> | null {
    if (this.closed || this.socket.destroyed || !this.unreadBeyond(OUTPUT_HIGH_WATER)) return null;
    return new Promise((resolve) => (this.drainWaiters ??= []).push(resolve));
  }

  // ------------------------------------------------------------ the output queue

  /** True while queued output is still going out: later writes must queue behind it (`after`). */
  get queued(): boolean {
    return this.outBusy > 0;
  }

  /** Resolves once the output queued so far is out. */
  get queueDone(): Promise<void> {
    return this.outTail ?? SETTLED;
  }

  /**
   * Runs `step` once the output queued before it is out; until it has run,
   * `queued` is true, so later output waits for it too. With `swallow`, a
   * failed step (or one before it) does not stop the queue.
   */
  hold(step: () => unknown, swallow = false): void {
    this.outBusy++;
    const next = (this.outTail ?? SETTLED).then(step);
    this.outTail = (swallow ? next.catch(() => undefined) : next).finally(() => {
      this.outBusy--;
    }) as Promise<void>;
  }

  /** Runs `step` once the output queued before it is out (a write, or the end, behind shaped output). */
  after(step: () => unknown): void {
    this.outTail = (this.outTail ?? SETTLED).then(step) as Promise<void>;
  }

  // ------------------------------------------------------------ layers

  /**
   * Switches to TLS: input still buffered in plain text is for the caller to
   * drop (`discard`, called after reading from the plain socket stops). With
   * a `tlsFailure` fault the handshake is not made and the plain socket is
   * returned for the caller to refuse it.
   */
  startTls(context: tls.SecureContext | ((plain: Duplex) => tls.TLSSocket), discard: () => void): Duplex | null {
    const plain = this.detach();
    discard();
    if (this.faults.tlsFailure) return plain;
    // A function is a listener's whole TLS (src/tls/listener-tls.ts: SNI, client certificates, ALPN).
    const secure = typeof context === 'function' ? context(plain) : new (nodeTls().TLSSocket)(plain, { isServer: true, secureContext: context });
    this.socket = secure;
    this.secure = true;
    this.listen(secure);
    if (plain.isPaused()) plain.resume();
    return null;
  }

  /** Puts a protocol layer (compression) over the connection; the caller starts its output. */
  addLayer(layer: TransportLayer, discard: () => void): Duplex & { start(): void } {
    const under = this.detach();
    discard();
    const wrapped = layer.wrap(under);
    this.socket = wrapped;
    this.layered = true;
    if (layer.compresses) this.compressed = true;
    this.listen(wrapped);
    if (under.isPaused()) under.resume();
    return wrapped;
  }

  // ------------------------------------------------------------ transport faults (issue 14)

  /**
   * A rule's transport actions that act on the connection itself:
   * bandwidth, slowClose, tlsFailure and stall. (`stripStartTls` rewrites
   * a protocol's capability list, so the protocol applies it; `halfClose`
   * waits for the rule's output, so it is queued with `halfClose`.)
   */
  applyFaults(rule: TransportRuleFields): void {
    if (rule.bandwidth !== undefined) this.setBandwidth(rule.bandwidth);
    if (rule.slowClose !== undefined) this.faults.slowClose = rule.slowClose;
    if (rule.tlsFailure === true) this.faults.tlsFailure = true;
    if (rule.stall !== undefined) this.stall(rule.stall);
  }

  /** Caps the output at `rate` bytes per second (0: no cap). */
  setBandwidth(rate: number): void {
    this.faults.bandwidth = rate;
    if (this.throttle) {
      this.throttle.setRate(rate);
      return;
    }
    if (rate <= 0 || this.closed) return;
    // Bytes gathered this turn go out on the connection they were written to.
    const throttle = new ThrottledTransport(this.detach(), rate);
    this.throttle = throttle;
    this.socket = throttle;
    this.listen(throttle);
  }

  /** Stops reading input: for good (`true`), for `ms`, or no longer (`false`). */
  stall(how: boolean | number): void {
    const faults = this.faults;
    if (faults.stallTimer) clearTimeout(faults.stallTimer);
    faults.stallTimer = null;
    if (how === false) {
      faults.stalled = false;
      this.resumeInput();
      return;
    }
    faults.stalled = true;
    this.socket.pause();
    if (typeof how === 'number') {
      faults.stallTimer = setTimeout(() => {
        faults.stallTimer = null;
        faults.stalled = false;
        if (!this.closed) this.resumeInput();
      }, how);
      faults.stallTimer.unref();
    }
  }

  /** Reads input again, unless stalled or the protocol has too much of it unparsed. */
  resumeInput(): void {
    if (this.faults.stalled) return;
    if (this.socket.isPaused() && this.host.bufferedInput() <= INPUT_HIGH_WATER) this.socket.resume();
  }

  /** Sends FIN and keeps reading (`halfClose`). */
  halfClose(): void {
    if (this.ended) return;
    this.host.flushHeld();
    this.faults.halfClosed = true;
    this.uncork();
    this.socket.end();
  }

  // ------------------------------------------------------------ timers

  /**
   * Calls `onTimeout` after `ms` without input or output on the connection
   * (an autologout timer); a later call only changes the time. After it
   * fired, the next traffic starts a new wait.
   */
  setIdleTimeout(ms: number, onTimeout: () => void): void {
    this.onIdle ??= onTimeout;
    if (this.closed) return;
    // Like a socket's setTimeout: the time counts from now.
    this.lastActive = performance.now();
    if (this.idle === null) this.idle = new IdleTimer(this, ms, this.onIdle);
    else this.idle.restart(ms);
  }

  /** Stops the idle timeout (its callback stays, for a later `setIdleTimeout`). */
  clearIdleTimeout(): void {
    this.idle?.stop();
    this.idle = null;
  }

  // ------------------------------------------------------------ the end

  /**
   * Sends FIN after the last written byte and then closes for good, when
   * the client's FIN arrives or after CLOSE_GRACE_MS at the latest: a client
   * that keeps its socket open cannot hold the session, or `stop()`, for
   * longer. Input that still arrives is read and dropped meanwhile.
   */
  close(): void {
    this.host.flushHeld();
    const socket = this.socket;
    if (socket.destroyed) return;
    socket.off('data', this.onData);
    socket.on('data', () => undefined);
    socket.resume();
    if (this.faults.slowClose > 0) {
      // A `slowClose` fault: the FIN (and the end of the session) comes that much later.
      const delay = this.faults.slowClose;
      this.faults.slowClose = 0;
      setTimeout(() => this.close(), delay).unref();
      return;
    }
    this.uncork();
    // Destroyed only when the client has closed its side too (or after a grace period): closing
    // while its input still arrives makes the kernel send a reset, which can destroy the last
    // answers in flight.
    const destroy = (): void => {
      clearTimeout(timer);
      socket.destroy();
      if (this.tcp !== socket) this.tcp.destroy();
    };
    const timer = setTimeout(destroy, CLOSE_GRACE_MS);
    socket.once('end', destroy);
    socket.end();
  }

  /** Ends the connection with a TCP reset (RST), under TLS too. */
  reset(): void {
    this.host.flushHeld();
    this.uncork();
    if (!this.tcp.destroyed) this.tcp.resetAndDestroy();
    if (this.socket !== this.tcp) this.socket.destroy();
  }
}

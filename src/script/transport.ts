/**
 * Transport faults (issue 14): what a slow, stuck or tampered-with link does
 * to an IMAP connection. Each is a script-rule action (it takes effect for
 * the session when the rule fires) and, where one makes sense for every
 * connection, a field of the `faults` server option.
 *
 * - `bandwidth`: bytes per second the session's output may use (0 lifts the
 *   cap). Output waits in the session's write queue, so output backpressure
 *   (and the limits built on it) sees the throttled bytes as unread.
 * - `stall`: the server stops reading the connection (`true`: for good; a
 *   number: for that many ms), so the client's writes back up in TCP.
 * - `halfClose`: after the event's output the server sends FIN and keeps
 *   reading; what the session answers from then on is dropped.
 * - `slowClose`: ms the server waits before its FIN whenever it closes.
 * - `tlsFailure`: the next TLS handshake (STARTTLS, or implicit TLS with the
 *   option) is answered with a fatal handshake_failure alert.
 * - `stripStartTls`: STARTTLS is taken out of every CAPABILITY the session
 *   sends and the command is refused as unknown, as a man in the middle does.
 */
import { Duplex } from 'node:stream';
import type * as net from 'node:net';

/** Longest timer Node can run (2^31 - 1 ms). */
const MAX_TIMER = 2_147_483_647;

/** The transport fields of a script rule. */
export interface TransportRuleFields {
  /** Bytes per second for the session's output from now on; 0 lifts the cap. */
  bandwidth?: number;
  /** Stop reading input: `true` for the rest of the connection, a number of ms for that long. */
  stall?: boolean | number;
  /** Send FIN after this event's output and keep reading; later output is dropped. */
  halfClose?: boolean;
  /** Wait this many ms before the FIN whenever the server closes the connection. */
  slowClose?: number;
  /** Answer the next TLS handshake (STARTTLS) with a fatal handshake_failure alert. */
  tlsFailure?: boolean;
  /** Remove STARTTLS from CAPABILITY and refuse the command, from this event on. */
  stripStartTls?: boolean;
}

/** The `faults` server option: transport faults every session starts with. */
export interface FaultsOption {
  /** Bytes per second for each session's output. */
  bandwidth?: number;
  /** Ms before the server's FIN whenever it closes a connection. */
  slowClose?: number;
  /** STARTTLS and implicit TLS handshakes fail with a handshake_failure alert. */
  tlsFailure?: boolean;
  /** STARTTLS is left out of CAPABILITY and refused as an unknown command. */
  stripStartTls?: boolean;
}

export type ResolvedFaults = Required<FaultsOption>;

export const NO_FAULTS: ResolvedFaults = Object.freeze({ bandwidth: 0, slowClose: 0, tlsFailure: false, stripStartTls: false });

export const FAULT_OPTION_KEYS = ['bandwidth', 'slowClose', 'tlsFailure', 'stripStartTls'] as const;

type Check = (value: unknown) => string | null;

const ms: Check = (v) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_TIMER ? null : `an integer from 0 to ${MAX_TIMER} (milliseconds)`);
const rate: Check = (v) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? null : 'an integer >= 0 (bytes per second; 0 lifts the cap)');
const yes: Check = (v) => (typeof v === 'boolean' ? null : 'a boolean');

/** Checks of the rule fields, for validate.ts's table. */
export const TRANSPORT_FIELD_CHECKS: Readonly<Record<keyof TransportRuleFields, Check>> = {
  bandwidth: rate,
  stall: (v) => (typeof v === 'boolean' || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 && v <= MAX_TIMER) ? null : `true, false or an integer from 1 to ${MAX_TIMER} (milliseconds)`),
  halfClose: yes,
  slowClose: ms,
  tlsFailure: yes,
  stripStartTls: yes,
};

export const TRANSPORT_FIELDS = Object.keys(TRANSPORT_FIELD_CHECKS) as (keyof TransportRuleFields)[];

/** True when a rule carries a transport action (a cheap test on the output path). */
export function hasTransport(rule: TransportRuleFields): boolean {
  return (
    rule.bandwidth !== undefined ||
    rule.stall !== undefined ||
    rule.halfClose === true ||
    rule.slowClose !== undefined ||
    rule.tlsFailure === true ||
    rule.stripStartTls === true
  );
}

/** Why a rule's transport fields do not fit its event, or null. */
export function transportProblem(rule: Record<string, unknown>): { field: string; message: string } | null {
  const on = rule.on;
  if (on === 'smtp') return null; // the SMTP field list refuses them
  if (rule.halfClose === true && (rule.close !== undefined && rule.close !== false)) return { field: 'halfClose', message: 'cannot be combined with close' };
  if (rule.halfClose === true && rule.truncate !== undefined) return { field: 'halfClose', message: 'cannot be combined with truncate (which closes)' };
  return null;
}

/**
 * The TLS record of a fatal handshake_failure alert (RFC 8446 §6, RFC 5246
 * §7.2: content type 21, legacy version 3.3, length 2, level 2 = fatal,
 * description 40 = handshake_failure). A client that sent its ClientHello
 * reads it as the server refusing every offered parameter.
 */
export const HANDSHAKE_FAILURE_ALERT = Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]);

/**
 * Fails the TLS handshake on `socket`: waits for the client's first bytes
 * (its ClientHello), answers with the alert and closes. A client that sends
 * nothing within `graceMs` gets the alert anyway.
 */
export function failTlsHandshake(socket: net.Socket | Duplex, graceMs = 5000): void {
  let done = false;
  const fail = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    if (socket.destroyed) return;
    socket.on('data', () => undefined);
    socket.end(HANDSHAKE_FAILURE_ALERT);
    // The client closes on the alert; a client that does not is cut off.
    setTimeout(() => socket.destroy(), 2000).unref();
  };
  const timer = setTimeout(fail, graceMs);
  timer.unref();
  socket.once('data', fail);
  socket.resume();
}

/**
 * Takes STARTTLS out of the CAPABILITY lists in `data` (an untagged
 * CAPABILITY response or a `[CAPABILITY ...]` response code), as a man in
 * the middle rewrites them; other bytes are kept.
 */
export function stripStartTlsFrom(data: Buffer): Buffer {
  const text = data.toString('latin1');
  if (!/STARTTLS/i.test(text)) return data;
  const out = text.replace(/(CAPABILITY(?: [^\r\n\]]*)?)/gi, (caps) => caps.replace(/ STARTTLS(?=[ \]\r\n]|$)/gi, ''));
  return out === text ? data : Buffer.from(out, 'latin1');
}

/** What a rule or the option turned on for one session. */
export class SessionFaults {
  bandwidth = 0;
  slowClose = 0;
  tlsFailure = false;
  stripStartTls = false;
  /** True while input is not read. */
  stalled = false;
  /** True once the server's side is closed by `halfClose`. */
  halfClosed = false;
  stallTimer: NodeJS.Timeout | null = null;

  constructor(option: ResolvedFaults) {
    this.bandwidth = option.bandwidth;
    this.slowClose = option.slowClose;
    this.tlsFailure = option.tlsFailure;
    this.stripStartTls = option.stripStartTls;
  }

  clear(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = null;
  }
}

/** The stream's own `writableLength` (Writable's getter), before a subclass instance shadows it. */
function writableLengthOf(stream: Duplex): () => number {
  let proto: object | null = Object.getPrototypeOf(stream) as object | null;
  while (proto !== null) {
    const d = Object.getOwnPropertyDescriptor(proto, 'writableLength');
    if (d?.get) {
      const get = d.get;
      return () => get.call(stream) as number;
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return () => 0;
}

/**
 * Output at a capped rate: the session writes into this layer, which passes
 * the bytes to the connection under it in slices, at most `rate` bytes per
 * second. `writableLength` counts what waits here and below, so the
 * session's output backpressure holds throttled bytes as unread. Input
 * passes through unchanged. It is not a protocol layer: TLS (STARTTLS) and
 * compression can still go over it.
 */
export class ThrottledTransport extends Duplex {
  private queue: Buffer[] = [];
  private queued = 0;
  private pumping = false;
  private timer: NodeJS.Timeout | null = null;
  private finalCallback: ((error?: Error | null) => void) | null = null;
  /**
   * Start of the current busy period and the bytes sent in it: each slice
   * waits until the time the cap allows for everything sent so far, so late
   * timers do not add up to a slower rate.
   */
  private epoch = 0;
  private sent = 0;

  constructor(
    private readonly connection: Duplex,
    private rate: number,
  ) {
    super({ allowHalfOpen: true });
    // What Duplex itself holds (writes while corked), the throttle's queue and what waits below.
    const own = writableLengthOf(this);
    Object.defineProperty(this, 'writableLength', {
      get: () => own() + this.queued + this.connection.writableLength,
    });
    connection.on('data', this.onData);
    connection.on('end', () => this.push(null));
    connection.on('close', () => this.destroy());
    connection.on('error', () => undefined);
    connection.on('drain', () => this.pump());
  }

  private readonly onData = (chunk: Buffer): void => {
    if (!this.push(chunk)) this.connection.pause();
  };

  /** Changes the cap; 0 lets queued and later bytes through at once. */
  setRate(rate: number): void {
    this.rate = rate;
    this.epoch = performance.now();
    this.sent = 0;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      this.pumping = false;
    }
    this.pump();
  }

  override _read(): void {
    this.connection.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.queue.push(chunk);
    this.queued += chunk.length;
    this.pump();
    // Accepted at once: the queue is the buffer, and writableLength reports it.
    callback();
  }

  private pump(): void {
    if (this.pumping || this.destroyed) return;
    while (this.queue.length > 0) {
      if (this.connection.writableLength > 64 * 1024) return; // resumes on the connection's drain
      if (this.rate <= 0) {
        const all = this.queue.length === 1 ? this.queue[0]! : Buffer.concat(this.queue);
        this.queue = [];
        this.queued = 0;
        this.connection.write(all);
        break;
      }
      const now = performance.now();
      // A new busy period after a pause: the idle time earns no credit.
      if (now > this.epoch + (this.sent * 1000) / this.rate) {
        this.epoch = now;
        this.sent = 0;
      }
      // Slices of a twentieth of a second's worth keep the rate even without many timers.
      const slice = Math.max(1, Math.ceil(this.rate / 20));
      const head = this.queue[0]!;
      const piece = head.subarray(0, slice);
      if (piece.length === head.length) this.queue.shift();
      else this.queue[0] = head.subarray(piece.length);
      this.queued -= piece.length;
      this.connection.write(piece);
      this.sent += piece.length;
      this.pumping = true;
      const due = this.epoch + (this.sent * 1000) / this.rate;
      this.timer = setTimeout(() => {
        this.timer = null;
        this.pumping = false;
        this.pump();
      }, Math.max(0, Math.round(due - performance.now())));
      return;
    }
    if (this.queue.length === 0) {
      this.emit('drain');
      if (this.finalCallback) {
        const cb = this.finalCallback;
        this.finalCallback = null;
        this.connection.end();
        cb();
      }
    }
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.queue.length === 0 && !this.pumping) {
      this.connection.end();
      callback();
      return;
    }
    this.finalCallback = callback;
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue = [];
    this.queued = 0;
    this.connection.off('data', this.onData);
    this.connection.destroy();
    callback(error);
  }
}

/**
 * The stream smtp-server talks over: one end of a pipe whose other end is
 * Rookery's Connection (src/connection/). What the client sends comes in
 * through `deliver`; what smtp-server writes goes to `send`, which puts it
 * on the Connection (and so through the bandwidth cap, the transcript and
 * the output backpressure). smtp-server reads a few socket properties and
 * calls `setTimeout`, so those are here as well.
 */
import { Duplex } from 'node:stream';
import type * as tls from 'node:tls';
import type { Connection } from '../connection/connection.js';

export class SmtpBridge extends Duplex {
  /** smtp-server writes only while this says `open`. */
  readyState: 'open' | 'closed' = 'open';
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  /** The SNI name of an implicit-TLS connection (smtp-server copies it into the session). */
  readonly servername: string | undefined;
  private onIdle: (() => void) | null = null;

  constructor(
    private readonly conn: Connection,
    /** Puts a chunk smtp-server wrote on the connection (the session records and tracks it first). */
    private readonly send: (chunk: Buffer) => void,
    tcp: { remoteAddress?: string | undefined; remotePort?: number | undefined; localAddress?: string | undefined; localPort?: number | undefined },
    private readonly tlsSocket: tls.TLSSocket | null,
  ) {
    super({ allowHalfOpen: false });
    this.remoteAddress = tcp.remoteAddress;
    this.remotePort = tcp.remotePort;
    this.localAddress = tcp.localAddress;
    this.localPort = tcp.localPort;
    const name = (tlsSocket as { servername?: unknown } | null)?.servername;
    this.servername = typeof name === 'string' ? name : undefined;
  }

  /** Client bytes for smtp-server. */
  deliver(chunk: Buffer): void {
    if (!this.destroyed) this.push(chunk);
  }

  /** The connection is gone. */
  gone(): void {
    this.readyState = 'closed';
    if (this.destroyed) return;
    this.push(null);
    this.destroy();
  }

  override _read(): void {
    this.conn.resumeInput();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.send(chunk);
    // A client that does not read holds smtp-server's next write, not our memory.
    const room = this.conn.outputRoom();
    if (room) room.then(() => callback(), callback);
    else callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.readyState = 'closed';
    this.conn.close();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.readyState = 'closed';
    // smtp-server destroys a socket to end it at once (its close timer, a failed upgrade).
    if (!this.conn.closed) this.conn.tcp.destroy();
    callback(error);
  }

  /** smtp-server's idle timeout, on the TCP connection's activity. */
  setTimeout(ms: number, onIdle?: () => void): this {
    if (onIdle) this.onIdle = onIdle;
    if (ms > 0) this.conn.setIdleTimeout(ms, () => this.onIdle?.());
    else this.conn.clearIdleTimeout();
    return this;
  }

  /** The cipher of implicit TLS (Rookery's own TLS under this stream); false on plain TCP. */
  getCipher(): tls.CipherNameAndProtocol | false {
    return this.tlsSocket ? this.tlsSocket.getCipher() : false;
  }
}

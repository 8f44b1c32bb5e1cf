/**
 * A DEFLATE layer over a connection (raw deflate, RFC 1951, window 2^15, as
 * RFC 4978 asks): what is read from the connection is inflated before the
 * session's command reader sees it, and what the session writes is deflated
 * and sync-flushed after every write, so the peer can inflate each write as
 * soon as it arrives and never waits for output held in the compressor.
 *
 * It knows nothing of IMAP: the session layers it over its socket (plain or
 * TLS) like a TLS upgrade. Output stays plain until `start()`, so the
 * answer that switched compression on can still go out uncompressed behind
 * other queued output, while input is inflated from the moment of `wrap`.
 *
 * `writableLength` counts every byte still waiting: plain bytes not yet
 * compressed, compressed bytes not yet handed to the socket, and the
 * socket's own buffer. 'drain' is emitted when the socket or the compressor
 * drains, so a writer waiting for room learns of both.
 */
import { Duplex } from 'node:stream';
import * as zlib from 'node:zlib';

export class DeflateTransport extends Duplex {
  private readonly inflater: zlib.InflateRaw;
  private readonly deflater: zlib.DeflateRaw;
  private compressing = false;
  /** Bytes the session wrote (before compression) and bytes that went to the socket after it. */
  plainOut = 0;
  wireOut = 0;
  /** Bytes read from the socket (compressed) and what they inflated to. */
  wireIn = 0;
  plainIn = 0;

  constructor(private readonly connection: Duplex) {
    super({ allowHalfOpen: true });
    this.inflater = zlib.createInflateRaw({ windowBits: 15 });
    this.deflater = zlib.createDeflateRaw({ windowBits: 15 });
    // The Duplex's own write buffer is always empty (writes go straight to the compressor):
    // what waits is in the compressor and the socket.
    Object.defineProperty(this, 'writableLength', {
      get: () => this.deflater.writableLength + this.deflater.readableLength + this.connection.writableLength,
    });

    // Input: socket -> inflate -> this.
    connection.on('data', this.onWireData);
    this.inflater.on('data', (chunk: Buffer) => {
      this.plainIn += chunk.length;
      if (!this.push(chunk)) this.inflater.pause();
    });
    this.inflater.on('drain', () => {
      if (!this.destroyed) connection.resume();
    });
    // A corrupt stream from the peer cannot be read any further: the connection ends.
    this.inflater.on('error', (err) => this.destroy(err));
    connection.on('end', () => {
      // The peer's deflate stream need not be finished: flush what it sent and end the input.
      if (this.destroyed) return;
      this.inflater.flush(zlib.constants.Z_SYNC_FLUSH, () => this.push(null));
    });
    connection.on('close', () => this.destroy());
    connection.on('error', () => undefined);

    // Output: this -> deflate -> socket.
    this.deflater.on('data', (chunk: Buffer) => {
      this.wireOut += chunk.length;
      if (!connection.write(chunk)) this.deflater.pause();
    });
    this.deflater.on('error', (err) => this.destroy(err));
    this.deflater.on('drain', () => this.emit('drain'));
    connection.on('drain', () => {
      this.deflater.resume();
      this.emit('drain');
    });
  }

  private readonly onWireData = (chunk: Buffer): void => {
    this.wireIn += chunk.length;
    if (!this.inflater.write(chunk)) this.connection.pause();
  };

  /** True once output is being compressed. */
  get started(): boolean {
    return this.compressing;
  }

  /** Compresses every write from now on (earlier writes went out plain). */
  start(): void {
    this.compressing = true;
  }

  override _read(): void {
    this.inflater.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.plainOut += chunk.length;
    if (!this.compressing) {
      this.wireOut += chunk.length;
      this.connection.write(chunk);
    } else {
      this.deflater.write(chunk);
      // Z_SYNC_FLUSH: the peer can inflate everything written so far at once.
      this.deflater.flush(zlib.constants.Z_SYNC_FLUSH);
    }
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.compressing) {
      this.connection.end();
      callback();
      return;
    }
    // The last compressed bytes go out, then FIN.
    this.deflater.once('end', () => {
      this.connection.end();
      callback();
    });
    this.deflater.end();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.connection.off('data', this.onWireData);
    this.inflater.destroy();
    this.deflater.destroy();
    this.connection.destroy();
    callback(error);
  }
}

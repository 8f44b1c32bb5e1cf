/**
 * A client over a real socket (plain or TLS) that keeps every byte it
 * sends and receives, to compare with a server transcript. Importing it
 * does nothing.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';

export class WireClient {
  readonly sent: Buffer[] = [];
  readonly received: Buffer[] = [];
  private unread = '';
  private waiters: (() => void)[] = [];
  closed = false;
  /** Where writes go: the socket, or a compression layer over it. */
  private out: Duplex;

  /**
   * The stream the client reads from: the socket, or the layer over it. The
   * client is closed when this one ends, not when the socket does: an
   * inflate layer can still hold the server's last lines after the socket's
   * 'close' (a LOGOUT's tagged OK arrived with the BYE and was read as
   * unread-and-closed in CI).
   */
  private reader: Duplex;

  private constructor(readonly socket: Duplex) {
    this.out = socket;
    this.reader = socket;
    this.listen(socket);
    socket.on('close', () => {
      if (this.reader === socket) this.markClosed();
      // A layer that never saw the socket's end (an abrupt close) is ended
      // here, so it gives up what it holds and then ends itself.
      else if (!this.reader.writableEnded) this.reader.end();
    });
    socket.on('error', () => undefined);
  }

  private markClosed(): void {
    this.closed = true;
    this.wake();
  }

  private listen(stream: Duplex): void {
    stream.on('data', (chunk: Buffer) => {
      this.received.push(chunk);
      this.unread += chunk.toString('latin1');
      this.wake();
    });
  }

  static async connect(port: number, secure = false): Promise<WireClient> {
    const socket = secure ? tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once(secure ? 'secureConnect' : 'connect', () => resolve());
      socket.once('error', reject);
    });
    return new WireClient(socket);
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  send(data: string | Buffer): void {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.sent.push(bytes);
    this.out.write(bytes);
  }

  /** Reads what arrived up to and including the first match of `pattern` (waits for it). */
  async until(pattern: RegExp, timeoutMs = 5000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(this.unread);
      if (m) {
        const end = m.index + m[0].length;
        const text = this.unread.slice(0, end);
        this.unread = this.unread.slice(end);
        return text;
      }
      if (this.closed) throw new Error(`closed; unread ${JSON.stringify(this.unread)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${pattern}; unread ${JSON.stringify(this.unread)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** STARTTLS: TLS over the connection from now on; the kept bytes stay the plain ones. */
  async startTls(): Promise<void> {
    this.socket.removeAllListeners('data');
    const secure = tls.connect({ socket: this.socket as net.Socket, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', () => resolve());
      secure.once('error', reject);
    });
    secure.on('error', () => undefined);
    this.listen(secure);
    this.out = secure;
  }

  /** Runs reads and writes through `layer` from now on (COMPRESS=DEFLATE): the kept bytes stay the plain ones. */
  layer(inflate: Duplex, deflate: Duplex & { flush(cb: () => void): void }): void {
    this.socket.removeAllListeners('data');
    this.socket.pipe(inflate);
    this.reader = inflate;
    this.listen(inflate);
    inflate.on('end', () => this.markClosed());
    inflate.on('error', () => this.markClosed());
    deflate.pipe(this.socket);
    const plainWrite = deflate;
    this.out = {
      write: (b: Buffer) => {
        plainWrite.write(b);
        deflate.flush(() => undefined);
        return true;
      },
    } as unknown as Duplex;
  }

  async closedByServer(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('not closed');
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  bytesSent(): Buffer {
    return Buffer.concat(this.sent);
  }

  bytesReceived(): Buffer {
    return Buffer.concat(this.received);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

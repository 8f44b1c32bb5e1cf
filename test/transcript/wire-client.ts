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

  private constructor(readonly socket: Duplex) {
    this.out = socket;
    this.listen(socket);
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
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
    this.listen(inflate);
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

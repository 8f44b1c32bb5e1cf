/** A line reader over a TLS socket, for the TLS bench's tests. */
import net from 'node:net';
import tls from 'node:tls';

export class TlsLines {
  private text = '';
  private waiters: (() => void)[] = [];
  error: NodeJS.ErrnoException | null = null;
  closed = false;

  constructor(readonly socket: tls.TLSSocket) {
    socket.on('data', (d: Buffer) => {
      this.text += d.toString('latin1');
      this.wake();
    });
    socket.on('error', (e) => {
      this.error = e;
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Lines up to and including the one that starts with `tag ` (or the first line for `*`). */
  async until(tag: string, timeoutMs = 3000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lines = this.text.split('\r\n');
      const at = lines.findIndex((l) => l.startsWith(`${tag} `));
      if (at >= 0) {
        this.text = lines.slice(at + 1).join('\r\n');
        return lines.slice(0, at + 1);
      }
      if (this.closed || this.error) throw new Error(`connection ended before ${tag}: ${this.error?.code ?? 'closed'}`);
      if (Date.now() > deadline) throw new Error(`no ${tag} line in ${JSON.stringify(this.text)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  command(tag: string, text: string): Promise<string[]> {
    this.socket.write(`${tag} ${text}\r\n`);
    return this.until(tag);
  }
}

/** Connects with TLS (implicit) and resolves once the handshake is done, or rejects with its error. */
export function tlsConnect(port: number, options: tls.ConnectionOptions = {}): Promise<TlsLines> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ...options }, () => resolve(new TlsLines(socket)));
    socket.once('error', reject);
  });
}

/** STARTTLS over a plain socket that has read the greeting, then the handshake. */
export function startTls(plain: net.Socket, options: tls.ConnectionOptions = {}): Promise<TlsLines> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ socket: plain, servername: 'localhost', ...options }, () => resolve(new TlsLines(socket)));
    socket.once('error', reject);
  });
}

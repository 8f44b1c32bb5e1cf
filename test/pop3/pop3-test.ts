/**
 * What the POP3 tests share: a server with a POP3 listener, Python run
 * without blocking the event loop the server answers on, and a small
 * line client that keeps every byte the server sent (for framing checks).
 */
import { execFile } from 'node:child_process';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { createServer, type Server } from '../../src/index.js';
import type { Pop3Options, ServerOptions } from '../../src/options/types.js';

export async function startPop3(options: ServerOptions = {}, pop3: Pop3Options = {}): Promise<{ server: Server; imap: number; pop3: number }> {
  const server = createServer({ port: 0, ...options, pop3: { port: 0, ...pop3 } });
  const addresses = await server.start();
  return { server, imap: addresses.imap.port, pop3: addresses.pop3!.port };
}

/** Runs a Python program; resolves with its stdout (rejects with stderr when it fails). */
export function python(code: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.env.PYTHON ?? 'python3', ['-c', code], { env: { ...process.env, ...env }, timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`python failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** A POP3 client that reads raw bytes: `line()` one response line, `multi()` a multi-line body up to its `.` line. */
export class WireClient {
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  ended = false;
  /** Everything the server sent. */
  received = Buffer.alloc(0);

  private constructor(readonly socket: net.Socket | tls.TLSSocket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.received = Buffer.concat([this.received, chunk]);
      this.wake();
    });
    socket.on('end', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  static connect(port: number, secure = false): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const socket = secure ? tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : net.connect(port, '127.0.0.1');
      socket.once(secure ? 'secureConnect' : 'connect', () => resolve(new WireClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Upgrades to TLS over the same connection (after STLS's +OK). */
  async startTls(): Promise<void> {
    const plain = this.socket;
    plain.removeAllListeners('data');
    const secure = tls.connect({ socket: plain as net.Socket, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', () => resolve());
      secure.once('error', reject);
    });
    (this as { socket: net.Socket | tls.TLSSocket }).socket = secure;
    secure.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.received = Buffer.concat([this.received, chunk]);
      this.wake();
    });
  }

  send(text: string | Buffer): void {
    this.socket.write(text);
  }

  /** Reads until `n` octets are there (or the connection ended); returns them. */
  async bytes(n: number, timeout = 5000): Promise<Buffer> {
    const deadline = Date.now() + timeout;
    while (this.buffer.length < n && !this.ended) await this.wait(deadline);
    const out = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(out.length);
    return out;
  }

  /** One line without its CRLF; null when the connection ended first. */
  async line(timeout = 5000): Promise<string | null> {
    const deadline = Date.now() + timeout;
    for (;;) {
      const i = this.buffer.indexOf('\r\n');
      if (i >= 0) {
        const line = this.buffer.subarray(0, i).toString('latin1');
        this.buffer = this.buffer.subarray(i + 2);
        return line;
      }
      if (this.ended) return null;
      await this.wait(deadline);
    }
  }

  /** The raw bytes of a multi-line body up to and including its terminating `.` line. */
  async multi(timeout = 5000): Promise<Buffer> {
    const deadline = Date.now() + timeout;
    for (;;) {
      const end = this.buffer[0] === 0x2e && this.buffer[1] === 13 && this.buffer[2] === 10 ? 0 : this.buffer.indexOf('\r\n.\r\n');
      if (end >= 0) {
        const n = end === 0 && this.buffer[0] === 0x2e ? 3 : end + 5;
        const out = this.buffer.subarray(0, n);
        this.buffer = this.buffer.subarray(n);
        return out;
      }
      if (this.ended) throw new Error(`connection ended inside a multi-line answer: ${JSON.stringify(this.buffer.toString('latin1'))}`);
      await this.wait(deadline);
    }
  }

  /** Sends a command and reads its status line. */
  async command(text: string): Promise<string | null> {
    this.send(`${text}\r\n`);
    return this.line();
  }

  /** Resolves once the server has closed the connection. */
  async closed(timeout = 5000): Promise<void> {
    const deadline = Date.now() + timeout;
    while (!this.ended) await this.wait(deadline);
  }

  private wait(deadline: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const left = deadline - Date.now();
      if (left <= 0) {
        reject(new Error(`timed out; have ${JSON.stringify(this.buffer.toString('latin1').slice(0, 200))}`));
        return;
      }
      const timer = setTimeout(() => reject(new Error(`timed out; have ${JSON.stringify(this.buffer.toString('latin1').slice(0, 200))}`)), left);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Logs in with USER/PASS after reading the greeting. */
export async function loggedIn(port: number, user = 'testuser', password = 'testpass'): Promise<WireClient> {
  const c = await WireClient.connect(port);
  await c.line();
  await c.command(`USER ${user}`);
  const answer = await c.command(`PASS ${password}`);
  if (!answer?.startsWith('+OK')) throw new Error(`login failed: ${answer}`);
  return c;
}

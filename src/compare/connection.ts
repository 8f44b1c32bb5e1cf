/**
 * An IMAP connection that compare drives: it sends units as given and hands
 * back the server's response units (a line with its literals, as
 * src/transcript/framer.ts cuts them), one at a time. Memory is bounded:
 * responses are taken as they come, and a server that sends more than
 * `maxUnit` in one response or `maxQueued` unread is cut off with an error.
 */
import net from 'node:net';
import { UnitFramer, type WireUnit } from '../transcript/framer.js';

export interface Endpoint {
  host: string;
  port: number;
}

export class ServerConnection {
  private readonly framer: UnitFramer;
  private readonly queue: WireUnit[] = [];
  private queued = 0;
  private wake: (() => void) | null = null;
  private failure: Error | null = null;
  closed = false;

  private constructor(
    private readonly socket: net.Socket,
    readonly name: string,
    private readonly maxQueued: number,
    maxUnit: number,
  ) {
    this.framer = new UnitFramer('server', maxUnit);
    socket.on('data', (chunk: Buffer) => {
      for (const unit of this.framer.push(chunk)) {
        this.queue.push(unit);
        this.queued += unit.bytes.length;
      }
      if (this.framer.overflow) this.fail(`${name} sent a response larger than ${maxUnit} bytes`);
      else if (this.queued > this.maxQueued) this.fail(`${name} sent over ${this.maxQueued} bytes nobody read`);
      this.notify();
    });
    socket.on('close', () => {
      this.closed = true;
      this.notify();
    });
    socket.on('error', (err) => {
      this.failure ??= new Error(`${name}: ${err.message}`);
      this.notify();
    });
  }

  static async open(endpoint: Endpoint, name: string, maxUnit = 256 * 1024 * 1024, maxQueued = 512 * 1024 * 1024): Promise<ServerConnection> {
    const socket = net.connect(endpoint.port, endpoint.host);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', (err) => reject(new Error(`cannot connect to ${name} at ${endpoint.host}:${endpoint.port}: ${err.message}`)));
    });
    return new ServerConnection(socket, name, maxQueued, maxUnit);
  }

  private fail(message: string): void {
    this.failure ??= new Error(message);
    this.socket.destroy();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  send(data: Buffer): void {
    if (!this.closed) this.socket.write(data);
  }

  /** The next response unit; null when the server closed the connection or `timeoutMs` passed without one. */
  async next(timeoutMs: number): Promise<WireUnit | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.failure) throw this.failure;
      const unit = this.queue.shift();
      if (unit) {
        this.queued -= unit.bytes.length;
        return unit;
      }
      if (this.closed) return null;
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

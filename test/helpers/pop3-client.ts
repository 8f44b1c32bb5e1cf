/**
 * A raw POP3 client over a real socket, for tests that must see the exact
 * bytes a POP3 server sends (Rookery or a reference server alike): single-
 * line answers, multi-line answers with the dot-stuffing undone and the
 * wire bytes kept, pipelining (write many commands, then read the answers
 * in order), implicit TLS and the STLS upgrade (RFC 2595).
 *
 * It checks nothing itself beyond the framing RFC 1939 section 3 fixes, so
 * a test can look at a broken answer instead of meeting an exception.
 */
import net from 'node:net';
import tls from 'node:tls';
import { createServer, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';

export interface Pop3ConnectOptions {
  host?: string;
  /** Implicit TLS from the first byte (995-style); any certificate is accepted unless options say otherwise. */
  tls?: boolean | tls.ConnectionOptions;
  /** Read the greeting before resolving (default true). */
  greeting?: boolean;
  timeoutMs?: number;
}

/** A multi-line answer (RFC 1939 section 3). */
export interface MultiLine {
  /** The status line without its CRLF (`+OK ...` or `-ERR ...`). */
  status: string;
  ok: boolean;
  /** The exact octets after the status line up to and including the terminating `.CRLF`; empty after `-ERR`. */
  raw: Buffer;
  /** The body with the byte-stuffing undone and without the terminating line: the message as the server stored it. */
  body: Buffer;
  /** The body's lines (latin1, byte-stuffing undone, without CRLF). */
  lines: string[];
}

const CRLF = Buffer.from('\r\n');
const TERMINATOR = Buffer.from('\r\n.\r\n');

/** Undoes RFC 1939's byte-stuffing of a multi-line body (without its terminating line). */
export function unstuff(stuffed: Buffer): Buffer {
  const parts: Buffer[] = [];
  let start = 0;
  // A line begins at 0 and after every CRLF; a leading "." there is the stuffing octet.
  for (let at = 0; at < stuffed.length; ) {
    if (stuffed[at] === 0x2e) {
      parts.push(stuffed.subarray(start, at));
      start = at + 1;
    }
    const next = stuffed.indexOf(CRLF, at);
    if (next < 0) break;
    at = next + 2;
  }
  parts.push(stuffed.subarray(start));
  return Buffer.concat(parts);
}

/** The lines of a CRLF-separated buffer, without the CRLFs (a trailing CRLF adds no empty line). */
function linesOf(body: Buffer): string[] {
  if (body.length === 0) return [];
  const text = body.toString('latin1');
  const lines = text.split('\r\n');
  if (text.endsWith('\r\n')) lines.pop();
  return lines;
}

export class Pop3Client {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private waiters: (() => void)[] = [];
  /** Where the search for a multi-line terminator goes on: chunk index, its offset, the octets before it. */
  private scan = { chunk: 0, base: 0, carry: Buffer.alloc(0) };
  closed = false;
  /** The greeting line, when connect() read it. */
  greeting = '';
  /** Every octet received, when `record` is on (for transcripts in failing tests). */
  record = false;
  readonly received: Buffer[] = [];

  private constructor(public socket: net.Socket) {
    this.attach(socket);
  }

  private attach(socket: net.Socket): void {
    socket.on('data', (chunk: Buffer) => {
      if (this.record) this.received.push(chunk);
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static async connect(port: number, options: Pop3ConnectOptions = {}): Promise<Pop3Client> {
    const host = options.host ?? '127.0.0.1';
    let socket: net.Socket;
    if (options.tls) {
      const extra = typeof options.tls === 'object' ? options.tls : {};
      socket = tls.connect({ port, host, rejectUnauthorized: false, ...extra });
      await once(socket, 'secureConnect');
    } else {
      socket = net.connect(port, host);
      await once(socket, 'connect');
    }
    const client = new Pop3Client(socket);
    if (options.greeting !== false) client.greeting = await client.line(options.timeoutMs);
    return client;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private joined(): Buffer {
    if (this.chunks.length > 1) {
      this.chunks = [Buffer.concat(this.chunks)];
      this.scan = { chunk: 0, base: 0, carry: Buffer.alloc(0) };
    }
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  private consume(n: number): Buffer {
    const all = this.joined();
    const taken = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.buffered = rest.length;
    this.scan = { chunk: 0, base: 0, carry: Buffer.alloc(0) };
    return taken;
  }

  private async waitFor<T>(take: () => T | undefined, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = take();
      if (value !== undefined) return value;
      if (this.closed) throw new Error(`connection closed; unread: ${this.preview()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; unread: ${this.preview()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private preview(): string {
    return JSON.stringify(this.joined().subarray(0, 300).toString('latin1'));
  }

  /** The next CRLF-terminated line, without its CRLF. */
  async line(timeoutMs = 5000): Promise<string> {
    return this.waitFor(() => {
      const at = this.joined().indexOf(CRLF);
      if (at < 0) return undefined;
      return this.consume(at + 2).subarray(0, at).toString('latin1');
    }, timeoutMs);
  }

  /** Writes bytes as given (several commands at once to pipeline, or broken input). */
  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Sends one command line (CRLF added) and reads its single-line answer. */
  async command(line: string, timeoutMs = 5000): Promise<string> {
    this.write(`${line}\r\n`);
    return this.line(timeoutMs);
  }

  /** Sends one command line and reads its answer as a multi-line one (only the status line after `-ERR`). */
  async multi(line: string, timeoutMs = 5000): Promise<MultiLine> {
    this.write(`${line}\r\n`);
    return this.readMulti(timeoutMs);
  }

  /** Reads the next answer as a multi-line one: a status line, then, after `+OK`, the body up to the `.` line. */
  async readMulti(timeoutMs = 5000): Promise<MultiLine> {
    const status = await this.line(timeoutMs);
    const ok = status.startsWith('+OK');
    if (!ok) return { status, ok, raw: Buffer.alloc(0), body: Buffer.alloc(0), lines: [] };
    const raw = await this.readBody(timeoutMs);
    const body = unstuff(raw.subarray(0, raw.length - 3));
    return { status, ok, raw, body, lines: linesOf(body) };
  }

  /** The octets of a multi-line body up to and including its terminating `.CRLF`. */
  async readBody(timeoutMs = 5000): Promise<Buffer> {
    return this.waitFor(() => {
      if (this.buffered < 3) return undefined;
      const head = this.chunks[0]!.length >= 3 ? this.chunks[0]! : this.joined();
      if (head[0] === 0x2e && head[1] === 0x0d && head[2] === 0x0a) return this.consume(3);
      const end = this.findTerminator();
      return end < 0 ? undefined : this.consume(end);
    }, timeoutMs);
  }

  /**
   * The end offset of the first CRLF.CRLF in what is buffered, or -1.
   * Each chunk is searched once, with the last octets of the one before it,
   * so a body of many chunks costs linear time.
   */
  private findTerminator(): number {
    while (this.scan.chunk < this.chunks.length) {
      const chunk = this.chunks[this.scan.chunk]!;
      const window = this.scan.carry.length ? Buffer.concat([this.scan.carry, chunk]) : chunk;
      const at = window.indexOf(TERMINATOR);
      if (at >= 0) return this.scan.base - this.scan.carry.length + at + TERMINATOR.length;
      this.scan.carry = Buffer.from(window.subarray(Math.max(0, window.length - TERMINATOR.length + 1)));
      this.scan.base += chunk.length;
      this.scan.chunk++;
    }
    return -1;
  }

  /**
   * Sends STLS and, on `+OK`, negotiates TLS over the same socket (RFC 2595
   * section 4). `leftover` is what arrived after the `+OK` line in clear
   * text: it must be empty, and a test can say so.
   */
  async stls(options: tls.ConnectionOptions = {}, timeoutMs = 5000): Promise<{ status: string; leftover: Buffer }> {
    const status = await this.command('STLS', timeoutMs);
    if (!status.startsWith('+OK')) return { status, leftover: Buffer.alloc(0) };
    const leftover = this.consume(this.buffered);
    const plain = this.socket;
    plain.removeAllListeners('data');
    plain.removeAllListeners('close');
    const secure = tls.connect({ socket: plain, rejectUnauthorized: false, ...options });
    await once(secure, 'secureConnect');
    this.socket = secure;
    this.attach(secure);
    return { status, leftover };
  }

  /** Resolves when the server closes the connection. */
  async closedByServer(timeoutMs = 5000): Promise<void> {
    await this.waitFor(() => (this.closed ? true : undefined), timeoutMs).catch(() => {
      throw new Error(`server did not close the connection; unread: ${this.preview()}`);
    });
  }

  /** Everything received and not read yet, without waiting. */
  pending(): Buffer {
    return this.consume(this.buffered);
  }

  close(): void {
    this.socket.destroy();
  }
}

function once(socket: net.Socket, event: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const fail = (e: Error): void => {
      socket.off(event, ok);
      reject(e);
    };
    const ok = (): void => {
      socket.off('error', fail);
      resolve();
    };
    socket.once(event, ok);
    socket.once('error', fail);
  });
}

/** Opens a session and logs in with USER/PASS; throws with the server's answer when it refuses. */
export async function pop3Login(port: number, user: string, password: string, options: Pop3ConnectOptions = {}): Promise<Pop3Client> {
  const c = await Pop3Client.connect(port, options);
  if (!c.greeting.startsWith('+OK')) throw new Error(`greeting: ${c.greeting}`);
  const u = await c.command(`USER ${user}`);
  if (!u.startsWith('+OK')) throw new Error(`USER: ${u}`);
  const p = await c.command(`PASS ${password}`, 20_000);
  if (!p.startsWith('+OK')) throw new Error(`PASS: ${p}`);
  return c;
}

/** Starts a Rookery with its POP3 listener on a free loopback port (IMAP too); the test must stop it. */
export async function startPop3Server(options: ServerOptions = {}): Promise<{ server: Server; pop3: number; imap: number }> {
  const server = createServer({ port: 0, ...options, pop3: { port: 0, ...options.pop3 } });
  const { imap, pop3 } = await server.start();
  return { server, pop3: pop3!.port, imap: imap.port };
}

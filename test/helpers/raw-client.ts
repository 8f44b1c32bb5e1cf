/**
 * A raw IMAP client over a real socket, for protocol tests that must see
 * the exact bytes: it sends what it is given and collects the response
 * lines up to the tagged one.
 */
import net from 'node:net';

export class RawClient {
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  closed = false;
  private tagCounter = 0;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static async connect(port: number, host = '127.0.0.1'): Promise<RawClient> {
    const socket = net.connect(port, host);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new RawClient(socket);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private async waitFor<T>(take: () => T | undefined, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = take();
      if (value !== undefined) return value;
      if (this.closed) throw new Error(`connection closed; unread: ${JSON.stringify(this.buffer.toString('latin1'))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; unread: ${JSON.stringify(this.buffer.toString('latin1'))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The next CRLF-terminated line (without CRLF), literals included as raw bytes in the text. */
  async line(timeoutMs = 5000): Promise<string> {
    return this.waitFor(() => {
      const at = this.buffer.indexOf('\r\n');
      if (at < 0) return undefined;
      let line = this.buffer.subarray(0, at).toString('latin1');
      let end = at + 2;
      // Pull literals into the line: `{n}\r\n<n bytes>` then the rest of the line.
      for (let m = /\{(\d+)\}$/.exec(line); m; m = /\{(\d+)\}$/.exec(line)) {
        const size = Number(m[1]);
        if (this.buffer.length < end + size) return undefined;
        line += '\r\n' + this.buffer.subarray(end, end + size).toString('latin1');
        const next = this.buffer.indexOf('\r\n', end + size);
        if (next < 0) return undefined;
        line += this.buffer.subarray(end + size, next).toString('latin1');
        end = next + 2;
      }
      this.buffer = this.buffer.subarray(end);
      return line;
    }, timeoutMs);
  }

  /** Everything received so far and not read, without waiting. */
  pending(): string {
    const text = this.buffer.toString('latin1');
    this.buffer = Buffer.alloc(0);
    return text;
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Sends `<tag> <command>\r\n` and returns every line up to and including the tagged one. */
  async command(command: string, timeoutMs = 5000): Promise<string[]> {
    const tag = `T${++this.tagCounter}`;
    this.write(`${tag} ${command}\r\n`);
    return this.until(tag, timeoutMs);
  }

  /** Reads lines until one starts with `<tag> `. */
  async until(tag: string, timeoutMs = 5000): Promise<string[]> {
    const lines: string[] = [];
    for (;;) {
      const line = await this.line(timeoutMs);
      lines.push(line);
      if (line.startsWith(`${tag} `)) return lines;
    }
  }

  /** Resolves when the server closes the connection. */
  async closedByServer(timeoutMs = 5000): Promise<void> {
    await this.waitFor(() => (this.closed ? true : undefined), timeoutMs).catch(() => {
      throw new Error('server did not close the connection');
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The last line of a command's response: the tagged status. */
export const tagged = (lines: string[]): string => lines[lines.length - 1]!;

/**
 * A raw SMTP client over node:net for exact replies: each `command()`
 * resolves with the whole reply (all lines of a multi-line one).
 */
import * as net from 'node:net';

export interface Reply {
  code: number;
  lines: string[];
  text: string;
}

export class RawSmtp {
  private buffer = '';
  private waiting: (() => void) | null = null;
  closed = false;

  private constructor(private readonly socket: net.Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buffer += d;
      this.waiting?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
    socket.on('error', () => undefined);
  }

  static async connect(port: number): Promise<{ client: RawSmtp; greeting: Reply }> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new RawSmtp(socket);
    return { client, greeting: await client.reply() };
  }

  /** The next complete reply; rejects when the connection closes first or after `ms`. */
  async reply(ms = 5000): Promise<Reply> {
    const deadline = Date.now() + ms;
    for (;;) {
      const m = /^(?:\d{3}-[^\r\n]*\r\n)*(\d{3})(?: [^\r\n]*)?\r\n/.exec(this.buffer);
      if (m) {
        this.buffer = this.buffer.slice(m[0].length);
        const lines = m[0].split('\r\n').filter(Boolean);
        return { code: Number(m[1]), lines, text: lines.map((l) => l.slice(4)).join('\n') };
      }
      if (this.closed) throw new Error(`connection closed; unread ${JSON.stringify(this.buffer)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no reply; unread ${JSON.stringify(this.buffer)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(t);
          this.waiting = null;
          resolve();
        };
      });
    }
  }

  async command(line: string): Promise<Reply> {
    this.socket.write(`${line}\r\n`);
    return this.reply();
  }

  /** Sends a message after DATA's 354 (dot-stuffed, with the end-of-data line). */
  async data(message: string): Promise<Reply> {
    const stuffed = message.replace(/^\./gm, '..');
    this.socket.write(`${stuffed}${stuffed.endsWith('\r\n') ? '' : '\r\n'}.\r\n`);
    return this.reply();
  }

  /** Resolves once the server has closed the connection. */
  async waitClosed(ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('still open');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** EHLO, MAIL FROM, RCPT TO each expected to succeed; resolves with DATA's reply. */
export async function transaction(client: RawSmtp, from: string, to: readonly string[]): Promise<Reply> {
  const ehlo = await client.command('EHLO client.test');
  if (ehlo.code !== 250) throw new Error(`EHLO: ${ehlo.lines.join(' | ')}`);
  const mail = await client.command(`MAIL FROM:<${from}>`);
  if (mail.code !== 250) throw new Error(`MAIL: ${mail.lines.join(' | ')}`);
  for (const rcpt of to) {
    const r = await client.command(`RCPT TO:<${rcpt}>`);
    if (r.code !== 250) throw new Error(`RCPT ${rcpt}: ${r.lines.join(' | ')}`);
  }
  return client.command('DATA');
}

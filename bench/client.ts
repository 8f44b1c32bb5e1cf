/** Minimal raw-socket IMAP client for the benchmarks (no parsing beyond tags and literals). */
import net from 'node:net';

export interface Reply {
  /** Untagged and continuation lines (literal bytes are skipped). */
  lines: string[];
  /** The tagged status line. */
  status: string;
}

interface Pending {
  tag: string;
  lines: string[];
  resolve: (r: Reply) => void;
  reject: (e: Error) => void;
  onContinue?: () => void;
}

export class RawClient {
  private sock!: net.Socket;
  private buf: Buffer = Buffer.alloc(0);
  private skip = 0;
  private n = 0;
  private pending: Pending | null = null;
  private greeting!: (line: string) => void;
  /** Keep untagged lines (off for huge responses to save memory). */
  keepLines = true;

  static async connect(host: string, port: number): Promise<RawClient> {
    const c = new RawClient();
    await new Promise<void>((resolve, reject) => {
      c.greeting = () => resolve();
      c.sock = net.connect({ host, port });
      c.sock.setNoDelay(true);
      c.sock.on('data', (d: Buffer) => c.onData(d));
      c.sock.on('error', (e) => {
        reject(e);
        c.pending?.reject(e);
      });
      c.sock.on('close', () => c.pending?.reject(new Error('connection closed')));
    });
    return c;
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    let pos = 0;
    for (;;) {
      if (this.skip > 0) {
        const take = Math.min(this.skip, this.buf.length - pos);
        this.skip -= take;
        pos += take;
        if (this.skip > 0) break;
      }
      const eol = this.buf.indexOf('\r\n', pos, 'latin1');
      if (eol < 0) break;
      const line = this.buf.toString('latin1', pos, eol);
      pos = eol + 2;
      const lit = /\{(\d+)\+?\}$/.exec(line);
      if (lit) this.skip = Number(lit[1]);
      this.onLine(line);
    }
    this.buf = pos >= this.buf.length ? Buffer.alloc(0) : this.buf.subarray(pos);
  }

  private onLine(line: string): void {
    if (this.greeting) {
      const g = this.greeting;
      this.greeting = undefined as never;
      g(line);
      return;
    }
    const p = this.pending;
    if (!p) return;
    if (line.startsWith('+') && p.onContinue) {
      const f = p.onContinue;
      p.onContinue = undefined;
      f();
      return;
    }
    if (line.startsWith(p.tag + ' ')) {
      this.pending = null;
      p.resolve({ lines: p.lines, status: line.slice(p.tag.length + 1) });
      return;
    }
    if (this.keepLines) p.lines.push(line);
  }

  /** Sends one command; `literal` is sent after the server's continuation request. */
  command(text: string, literal?: Buffer | string): Promise<Reply> {
    if (this.pending) throw new Error('command already pending');
    const tag = 'T' + ++this.n;
    return new Promise<Reply>((resolve, reject) => {
      const p: Pending = { tag, lines: [], resolve, reject };
      this.pending = p;
      if (literal === undefined) {
        this.sock.write(`${tag} ${text}\r\n`);
      } else {
        const lit = typeof literal === 'string' ? Buffer.from(literal, 'utf8') : literal;
        p.onContinue = () => {
          this.sock.write(lit);
          this.sock.write('\r\n');
        };
        this.sock.write(`${tag} ${text} {${lit.length}}\r\n`);
      }
    });
  }

  /** Like `command`, but throws unless the status is OK. */
  async ok(text: string, literal?: Buffer | string): Promise<Reply> {
    const r = await this.command(text, literal);
    if (!r.status.startsWith('OK')) throw new Error(`${text.slice(0, 60)} -> ${r.status}`);
    return r;
  }

  close(): void {
    this.sock.destroy();
  }
}

/** Median of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * A positive number given as `--name=N`, else in the environment variable
 * `env` (when one is named), else `def`; anything else is refused.
 */
export function positiveOption(args: string[], name: string, def: number, env?: string): number {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  const v = a ? a.slice(name.length + 3) : env === undefined ? undefined : process.env[env];
  const n = v === undefined ? def : Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`bad --${name}${env === undefined ? '' : ` / ${env}`}: ${v}`);
  return n;
}

export function ms(startNs: bigint): number {
  return Number(process.hrtime.bigint() - startNs) / 1e6;
}

export function fmt(x: number, digits = 2): string {
  return x.toFixed(digits);
}

/** Prints rows as an aligned table. */
export function table(title: string, rows: string[][]): void {
  console.log(`\n== ${title} ==`);
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
}

export function message(i: number, bodySize = 40): string {
  const body = 'x'.repeat(Math.max(0, bodySize));
  return (
    `From: Sender ${i} <sender${i}@example.com>\r\nTo: Test User <testuser@example.com>\r\n` +
    `Subject: Message ${i}\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\nMessage-ID: <m${i}@example.com>\r\n\r\n${body}\r\n`
  );
}

/** A message of exactly `size` bytes (ASCII). */
export function messageOfSize(i: number, size: number): string {
  const head = message(i, 0);
  const rest = size - head.length - 2;
  const line = 'y'.repeat(76) + '\r\n';
  let body = '';
  while (body.length + line.length <= rest) body += line;
  body += 'z'.repeat(Math.max(0, rest - body.length));
  return head + body + '\r\n';
}

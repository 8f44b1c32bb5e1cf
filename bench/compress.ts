/**
 * COMPRESS=DEFLATE (RFC 4978) on a 10 MB FETCH: bytes on the wire and
 * throughput with compression next to the same FETCH uncompressed, for a
 * text body (compresses well) and a base64 attachment of random bytes (the
 * worst realistic case). The server runs in this process; the client reads
 * over loopback and inflates with node:zlib, so the throughput includes
 * both ends' (de)compression on one machine.
 *
 * `npm run bench -- compress [rounds=5] [size=10]` (size in MB).
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import zlib from 'node:zlib';
import { createServer } from '../src/index.js';

interface Figures {
  wireBytes: number;
  plainBytes: number;
  ms: number;
}

/** A client that logs in, optionally turns COMPRESS on, and times FETCHes of message 1. */
class BenchClient {
  private socket!: net.Socket;
  private inflater: zlib.InflateRaw | null = null;
  private deflater: zlib.DeflateRaw | null = null;
  private tail = '';
  private plain = 0;
  private waiting: { marker: string; resolve: () => void } | null = null;

  static async connect(port: number): Promise<BenchClient> {
    const c = new BenchClient();
    c.socket = net.connect(port, '127.0.0.1');
    c.socket.setNoDelay(true);
    c.socket.on('data', (d: Buffer) => {
      if (c.inflater) c.inflater.write(d);
      else c.take(d);
    });
    await new Promise<void>((resolve, reject) => {
      c.socket.once('connect', resolve);
      c.socket.once('error', reject);
    });
    await c.expect('* OK');
    return c;
  }

  private take(d: Buffer): void {
    this.plain += d.length;
    // Only the end matters (the tagged line); a 10 MB body is never kept.
    this.tail = (this.tail + d.subarray(Math.max(0, d.length - 256)).toString('latin1')).slice(-256);
    if (this.waiting && this.tail.includes(this.waiting.marker)) {
      const w = this.waiting;
      this.waiting = null;
      this.tail = '';
      w.resolve();
    }
  }

  private expect(marker: string): Promise<void> {
    return new Promise((resolve) => {
      this.waiting = { marker, resolve };
      if (this.tail.includes(marker)) {
        this.waiting = null;
        this.tail = '';
        resolve();
      }
    });
  }

  private send(text: string): void {
    const bytes = Buffer.from(text, 'latin1');
    if (!this.deflater) {
      this.socket.write(bytes);
      return;
    }
    this.deflater.write(bytes);
    this.deflater.flush(zlib.constants.Z_SYNC_FLUSH);
  }

  async command(tag: string, text: string): Promise<void> {
    const done = this.expect(`${tag} OK`);
    this.send(`${tag} ${text}\r\n`);
    await done;
  }

  async compress(): Promise<void> {
    await this.command('Z', 'COMPRESS DEFLATE');
    this.inflater = zlib.createInflateRaw();
    this.inflater.on('data', (d: Buffer) => this.take(d));
    this.deflater = zlib.createDeflateRaw();
    this.deflater.on('data', (d: Buffer) => this.socket.write(d));
  }

  async fetch(tag: string): Promise<Figures> {
    const wire0 = this.socket.bytesRead;
    const plain0 = this.plain;
    const start = process.hrtime.bigint();
    await this.command(tag, 'FETCH 1 BODY.PEEK[]');
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    return { wireBytes: this.socket.bytesRead - wire0, plainBytes: this.plain - plain0, ms };
  }

  close(): void {
    this.socket.destroy();
  }
}

function textBody(size: number): string {
  const words = ['mailbox', 'server', 'the', 'message', 'of', 'a', 'test', 'suite', 'client', 'fetch', 'IMAP', 'header', 'flag', 'seen', 'draft', 'answered', 'compress', 'deflate', 'window', 'literal'];
  const bytes = randomBytes(size);
  const lines: string[] = [];
  let length = 0;
  let line = '';
  for (let i = 0; length < size; i++) {
    line += (line ? ' ' : '') + words[bytes[i % bytes.length]! % words.length]! + (bytes[(i * 7) % bytes.length]! % 13 === 0 ? ` ${i}` : '');
    if (line.length > 70) {
      lines.push(line);
      length += line.length + 2;
      line = '';
    }
  }
  return lines.join('\r\n');
}

function base64Body(size: number): string {
  return (randomBytes(Math.ceil((size * 3) / 4)).toString('base64').match(/.{1,76}/g) ?? []).join('\r\n');
}

const mb = (n: number): string => (n / 1e6).toFixed(2);

async function measure(port: number, compressed: boolean, rounds: number): Promise<Figures> {
  const c = await BenchClient.connect(port);
  await c.command('L', 'LOGIN testuser testpass');
  if (compressed) await c.compress();
  await c.command('S', 'EXAMINE INBOX');
  await c.fetch('W'); // warm-up
  const all: Figures[] = [];
  for (let i = 0; i < rounds; i++) all.push(await c.fetch(`F${i}`));
  c.close();
  all.sort((a, b) => a.ms - b.ms);
  return all[Math.floor(all.length / 2)]!;
}

export async function run(args: string[]): Promise<void> {
  const rounds = Number(args.find((a) => a.startsWith('rounds='))?.slice(7) ?? 5);
  const size = Number(args.find((a) => a.startsWith('size='))?.slice(5) ?? 10) * 1e6;
  console.log(`\nCOMPRESS=DEFLATE: FETCH 1 BODY.PEEK[] of a ${mb(size)} MB message over loopback, median of ${rounds} rounds`);
  console.log('body            mode          wire MB   plain MB  wire/plain   ms      plain MB/s');
  for (const [kind, body] of [
    ['text', textBody(size)],
    ['base64 random', base64Body(size)],
  ] as const) {
    const raw = `From: bench@example.com\r\nSubject: ${kind}\r\nContent-Type: text/plain\r\n\r\n${body}\r\n`;
    const server = createServer({ port: 0, plugins: ['COMPRESS'], storage: { INBOX: { messages: [raw] } } });
    const { imap } = await server.start();
    try {
      for (const compressed of [false, true]) {
        const f = await measure(imap.port, compressed, rounds);
        const mode = compressed ? 'COMPRESS' : 'plain';
        console.log(
          `${kind.padEnd(15)} ${mode.padEnd(12)} ${mb(f.wireBytes).padStart(8)} ${mb(f.plainBytes).padStart(9)} ${(f.wireBytes / f.plainBytes).toFixed(3).padStart(10)} ${f.ms.toFixed(1).padStart(8)} ${(f.plainBytes / 1e6 / (f.ms / 1000)).toFixed(1).padStart(12)}`,
        );
      }
    } finally {
      await server.stop();
    }
  }
}

/**
 * COMPRESS=DEFLATE (RFC 4978) over real sockets with a raw client that
 * deflates and inflates itself with node:zlib: the exact bytes before and
 * after COMPRESS, COMPRESSIONACTIVE, unknown mechanisms, the state rules
 * (no STARTTLS after it), sync flushes after every answer, output
 * backpressure counting the compressor's buffer, and script rules on a
 * compressed session (they shape the plain IMAP bytes; see docs/script-rules.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import zlib from 'node:zlib';
import { collect, startServer } from '../helpers/server.js';
import type { ServerOptions } from '../../src/options/types.js';

const SYNC_FLUSH_TAIL = Buffer.from([0x00, 0x00, 0xff, 0xff]);

/** A client that speaks plain IMAP until `startCompression()`, then raw DEFLATE both ways. */
class DeflateClient {
  /** Plain (or inflated) bytes not yet read as lines. */
  private text = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  private inflater: zlib.InflateRaw | null = null;
  private deflater: zlib.DeflateRaw | null = null;
  /** Compressed chunks as they came off the socket, after compression started. */
  readonly wireChunks: Buffer[] = [];
  /** Inflated pieces with the time they became readable. */
  readonly pieces: { at: number; data: Buffer }[] = [];
  closed = false;
  /** The socket has closed; the inflater may still be giving up what it holds. */
  private closing = false;
  error: string | null = null;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      if (this.inflater) {
        this.wireChunks.push(chunk);
        this.inflater.write(chunk);
      } else {
        this.append(chunk);
      }
    });
    socket.on('close', () => {
      // zlib inflates on the thread pool: lines it still holds come after
      // the socket's 'close', so the client is closed when the inflater ends.
      this.closing = true;
      if (this.inflater) this.inflater.end();
      else this.markClosed();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      this.error = err.code ?? err.message;
      this.wake();
    });
  }

  static async connect(port: number): Promise<DeflateClient> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new DeflateClient(socket);
  }

  private append(data: Buffer): void {
    this.text = Buffer.concat([this.text, data]);
    this.wake();
  }

  private markClosed(): void {
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Switches both directions to raw DEFLATE; bytes already read past the OK are compressed ones. */
  startCompression(): void {
    const rest = this.text;
    this.text = Buffer.alloc(0);
    this.inflater = zlib.createInflateRaw();
    this.inflater.on('data', (data: Buffer) => {
      this.pieces.push({ at: Date.now(), data });
      this.append(data);
    });
    this.inflater.on('error', (err) => {
      // The server never ends its DEFLATE stream, so ending the inflater
      // after the socket closed reports an unexpected end: not the peer's error.
      if (!this.closing) this.error = `inflate: ${err.message}`;
      this.markClosed();
    });
    this.inflater.on('end', () => this.markClosed());
    this.deflater = zlib.createDeflateRaw();
    this.deflater.on('data', (data: Buffer) => this.socket.write(data));
    if (rest.length > 0) {
      this.wireChunks.push(rest);
      this.inflater.write(rest);
    }
  }

  write(data: string | Buffer): void {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
    if (!this.deflater) {
      this.socket.write(bytes);
      return;
    }
    this.deflater.write(bytes);
    this.deflater.flush(zlib.constants.Z_SYNC_FLUSH);
  }

  async line(timeoutMs = 5000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.text.indexOf('\r\n');
      if (at >= 0) {
        const line = this.text.subarray(0, at).toString('latin1');
        this.text = this.text.subarray(at + 2);
        return line;
      }
      if (this.closed || this.error) throw new Error(`connection ended (${this.error ?? 'closed'}); pending ${JSON.stringify(this.pending())}`);
      if (Date.now() > deadline) throw new Error(`timeout; pending ${JSON.stringify(this.pending())}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** Lines up to the tagged answer of `tag`. */
  async until(tag: string, timeoutMs = 5000): Promise<string[]> {
    const out: string[] = [];
    for (;;) {
      const line = await this.line(timeoutMs);
      out.push(line);
      if (line.startsWith(`${tag} `)) return out;
    }
  }

  async command(tag: string, command: string): Promise<string[]> {
    this.write(`${tag} ${command}\r\n`);
    return this.until(tag);
  }

  /** Raw bytes received and not yet read as lines. */
  pending(): string {
    return this.text.toString('latin1');
  }

  async ended(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && !this.error) {
      if (Date.now() > deadline) throw new Error('the server did not close the connection');
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    // Inflated bytes of the last chunks may still be on their way out of zlib.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  close(): void {
    this.socket.destroy();
  }
}

async function compressedSession(port: number): Promise<DeflateClient> {
  const c = await DeflateClient.connect(port);
  await c.line();
  const login = await c.command('L1', 'LOGIN testuser testpass');
  assert.match(login[login.length - 1]!, /^L1 OK/);
  assert.deepEqual(await c.command('Z1', 'COMPRESS DEFLATE'), ['Z1 OK DEFLATE active']);
  c.startCompression();
  return c;
}

const STORAGE_BODY = 'Subject: one\r\n\r\nHello compressed world\r\n';
const STORAGE: ServerOptions['storage'] = {
  INBOX: { messages: [STORAGE_BODY] },
};

test('RFC 4978 §3: COMPRESS DEFLATE answered in plain, then both directions are raw DEFLATE, each answer sync-flushed', async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'], storage: STORAGE });
  try {
    const c = await DeflateClient.connect(port);
    assert.match(await c.line(), /^\* OK \[CAPABILITY IMAP4rev1 COMPRESS=DEFLATE\] /);
    assert.deepEqual(await c.command('L1', 'LOGIN testuser testpass'), ['L1 OK [CAPABILITY IMAP4rev1 COMPRESS=DEFLATE] Logged in']);
    assert.deepEqual(server.control.sessions().map((s) => s.compressed), [false]);
    c.write('Z1 COMPRESS DEFLATE\r\n');
    assert.equal(await c.line(), 'Z1 OK DEFLATE active');
    // Nothing follows the OK in plain text.
    assert.equal(c.pending(), '');
    c.startCompression();
    assert.deepEqual(server.control.sessions().map((s) => s.compressed), [true]);

    c.write('N1 NOOP\r\n');
    assert.deepEqual(await c.until('N1'), ['N1 OK NOOP completed']);
    // The answer came as raw DEFLATE (no zlib header) ending in a sync flush: inflatable alone.
    const wire = Buffer.concat(c.wireChunks);
    assert.ok(wire.subarray(-4).equals(SYNC_FLUSH_TAIL), `sync flush marker at the end: ${wire.toString('hex')}`);
    assert.equal(zlib.inflateRawSync(wire, { finishFlush: zlib.constants.Z_SYNC_FLUSH }).toString('latin1'), 'N1 OK NOOP completed\r\n');

    assert.deepEqual(await c.command('S1', 'SELECT INBOX'), [
      '* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)',
      '* 1 EXISTS',
      '* 0 RECENT',
      '* OK [UNSEEN 1] First unseen.',
      '* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen \\*)] Flags permitted.',
      `* OK [UIDVALIDITY ${server.control.listMailboxes().find((m) => m.path === 'INBOX')!.uidvalidity}] UIDs valid`,
      '* OK [UIDNEXT 2] Predicted next UID',
      'S1 OK [READ-WRITE] Select completed',
    ]);
    const body = STORAGE_BODY;
    c.write('F1 FETCH 1 BODY.PEEK[]\r\n');
    assert.equal(await c.line(), `* 1 FETCH (BODY[] {${body.length}}`);
    assert.deepEqual(await c.until('F1'), ['Subject: one', '', 'Hello compressed world', ')', 'F1 OK Fetch completed']);

    // A second COMPRESS: NO [COMPRESSIONACTIVE], still compressed.
    assert.deepEqual(await c.command('Z2', 'COMPRESS DEFLATE'), ['Z2 NO [COMPRESSIONACTIVE] DEFLATE is already active']);
    // STARTTLS under compression is not possible (it is a not-authenticated command anyway).
    assert.match((await c.command('T1', 'STARTTLS'))[0]!, /^T1 BAD /);

    const events = collect(server, 'session');
    assert.deepEqual(await c.command('X1', 'LOGOUT'), ['* BYE Logging out', 'X1 OK Logout completed']);
    await c.ended();
    assert.equal(c.error, null);
    assert.ok(events.some((e) => e.type === 'close' && e.session.compressed === true));
  } finally {
    await server.stop();
  }
});

test('COMPRESS before login is BAD; an unknown mechanism is BAD and leaves the session plain; COMPRESS needs its argument', async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'] });
  try {
    const c = await DeflateClient.connect(port);
    await c.line();
    assert.deepEqual(await c.command('Z0', 'COMPRESS DEFLATE'), ['Z0 BAD COMPRESS needs authentication first']);
    await c.command('L1', 'LOGIN testuser testpass');
    assert.deepEqual(await c.command('Z1', 'COMPRESS LZW'), ['Z1 BAD Unknown compression mechanism LZW; this server has DEFLATE']);
    assert.match((await c.command('Z2', 'COMPRESS'))[0]!, /^Z2 BAD /);
    assert.match((await c.command('Z3', 'COMPRESS DEFLATE EXTRA'))[0]!, /^Z3 BAD /);
    // Still plain text.
    assert.deepEqual(await c.command('N1', 'NOOP'), ['N1 OK NOOP completed']);
    assert.equal(server.control.sessions()[0]!.compressed, false);
    // Lower case works (atoms are case-insensitive).
    assert.deepEqual(await c.command('Z4', 'compress deflate'), ['Z4 OK DEFLATE active']);
    c.startCompression();
    assert.deepEqual(await c.command('N2', 'NOOP'), ['N2 OK NOOP completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('without the plugin: no capability, COMPRESS is an unknown command', async () => {
  const { server, port } = await startServer({ plugins: [] });
  try {
    const c = await DeflateClient.connect(port);
    assert.doesNotMatch(await c.line(), /COMPRESS/);
    await c.command('L1', 'LOGIN testuser testpass');
    assert.deepEqual(await c.command('Z1', 'COMPRESS DEFLATE'), ['Z1 BAD Unknown command COMPRESS']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('COMPRESS over implicit TLS: the session is secure and compressed', async () => {
  const tlsMod = await import('node:tls');
  const { server, port } = await startServer({ plugins: ['COMPRESS'], secure: true, storage: STORAGE });
  try {
    const socket = tlsMod.connect({ port, host: '127.0.0.1', rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', resolve);
      socket.once('error', reject);
    });
    // Reuse the client logic over the TLS socket.
    const c = new (DeflateClient as unknown as new (s: net.Socket) => DeflateClient)(socket);
    await c.line();
    await c.command('L1', 'LOGIN testuser testpass');
    assert.deepEqual(await c.command('Z1', 'COMPRESS DEFLATE'), ['Z1 OK DEFLATE active']);
    c.startCompression();
    assert.deepEqual(await c.command('N1', 'NOOP'), ['N1 OK NOOP completed']);
    const info = server.control.sessions()[0]!;
    assert.equal(info.secure, true);
    assert.equal(info.compressed, true);
    c.close();
  } finally {
    await server.stop();
  }
});

test('pipelined input right after COMPRESS is read through the inflater (client sends as soon as it sees the OK)', async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'] });
  try {
    const c = await compressedSession(port);
    // Several commands in one compressed write.
    c.write('P1 NOOP\r\nP2 NOOP\r\nP3 CAPABILITY\r\n');
    assert.deepEqual(await c.until('P3'), ['P1 OK NOOP completed', 'P2 OK NOOP completed', '* CAPABILITY IMAP4rev1 COMPRESS=DEFLATE', 'P3 OK Capability completed']);
    // A literal inside the compressed stream.
    c.write('A1 APPEND INBOX {5+}\r\nhello\r\n');
    assert.match((await c.until('A1')).at(-1)!, /^A1 OK/);
    assert.equal(server.control.listMessages('INBOX').length, 1);
    c.close();
  } finally {
    await server.stop();
  }
});

test('a corrupt DEFLATE stream from the client ends the connection', async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'] });
  try {
    const c = await compressedSession(port);
    // 0xff is an invalid block type for raw DEFLATE.
    c.socket.write(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    await c.ended();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(server.control.sessions(), []);
  } finally {
    await server.stop();
  }
});

test('a compression bomb (a 64 MiB line in 64 KiB of DEFLATE) is refused like any overlong line, and the session goes on', { timeout: 30000 }, async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'] });
  try {
    const c = await compressedSession(port);
    const bomb = zlib.deflateRawSync(Buffer.concat([Buffer.from('B1 NOOP '), Buffer.alloc(64 * 1024 * 1024, 0x61), Buffer.from('\r\n')]), {
      finishFlush: zlib.constants.Z_SYNC_FLUSH,
    });
    // Measured after the client made its bomb (the 64 MiB it compressed is the client's, not the server's).
    const rss = process.memoryUsage().rss;
    assert.ok(bomb.length < 100 * 1024);
    c.socket.write(bomb);
    const refused = await c.line(20000);
    assert.match(refused, /^(\*|B1) BAD /);
    // The line was dropped as it was inflated, not kept: far less than its 64 MiB stayed in memory.
    assert.ok(process.memoryUsage().rss - rss < 48 * 1024 * 1024, `rss grew by ${((process.memoryUsage().rss - rss) / 1e6).toFixed(0)} MB`);
    assert.deepEqual(await c.command('N1', 'NOOP'), ['N1 OK NOOP completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('output backpressure holds under compression: the compressor\'s buffer counts, commands wait while output is unread', { timeout: 30000 }, async () => {
  // Incompressible 2 MB body: compression cannot hide the volume.
  const random = randomBytes(2 * 1024 * 1024);
  for (let i = 0; i < random.length; i++) random[i] = 0x20 + (random[i]! % 94);
  const raw = `Subject: big\r\n\r\n${random.toString('latin1')}\r\n`;
  const { server, port } = await startServer({ plugins: ['COMPRESS'], storage: { INBOX: { messages: [raw] } } });
  try {
    const c = await compressedSession(port);
    await c.command('S1', 'SELECT INBOX');
    const done = collect(server, 'command');
    c.socket.pause();
    for (let i = 1; i <= 12; i++) c.write(`F${i} FETCH 1 BODY.PEEK[]\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 800));
    const fetchedBeforeReading = done.filter((e) => e.command === 'FETCH').length;
    assert.ok(fetchedBeforeReading < 12, `the server went on reading commands: ${fetchedBeforeReading} FETCHes answered while nothing was read`);
    c.socket.resume();
    for (let i = 1; i <= 12; i++) {
      const lines = await c.until(`F${i}`, 20000);
      assert.equal(lines.at(-1), `F${i} OK Fetch completed`);
      assert.equal(lines[0], `* 1 FETCH (BODY[] {${raw.length}}`);
    }
    c.close();
  } finally {
    await server.stop();
  }
});

test('script rules shape the plain bytes of a compressed session: each chunk is deflated and flushed on its own', async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'] });
  try {
    server.script.add({ on: 'command', command: 'NOOP', run: true, chunk: 5, chunkDelay: 30 });
    const c = await compressedSession(port);
    const wireBefore = c.wireChunks.length;
    const start = Date.now();
    c.write('N1 NOOP\r\n');
    // The client inflates exactly the plain answer.
    assert.deepEqual(await c.until('N1'), ['N1 OK NOOP completed']);
    // 'N1 OK NOOP completed\r\n' is 22 bytes: 5 chunks of at most 5 plain bytes, 4 pauses of 30 ms.
    assert.ok(Date.now() - start >= 4 * 30 - 5, `answered after ${Date.now() - start} ms`);
    // Each chunk ends in its own sync flush (00 00 ff ff), however TCP groups them on the way.
    const wire = Buffer.concat(c.wireChunks.slice(wireBefore));
    let flushes = 0;
    for (let at = wire.indexOf(SYNC_FLUSH_TAIL); at >= 0; at = wire.indexOf(SYNC_FLUSH_TAIL, at + 1)) flushes++;
    assert.equal(flushes, 5);
    // Each flushed piece inflates alone to the chunk's plain bytes.
    const inflater = zlib.createInflateRaw();
    const pieces: string[] = [];
    inflater.on('data', (d: Buffer) => pieces.push(d.toString('latin1')));
    for (let from = 0, at = wire.indexOf(SYNC_FLUSH_TAIL); at >= 0; from = at + 4, at = wire.indexOf(SYNC_FLUSH_TAIL, from)) {
      await new Promise<void>((resolve) => inflater.write(wire.subarray(from, at + 4), () => resolve()));
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.deepEqual(pieces, ['N1 OK', ' NOOP', ' comp', 'leted', '\r\n']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('script rules on a compressed session: delay holds the answer back', async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'] });
  try {
    server.script.add({ on: 'command', command: 'NOOP', run: true, delay: 200 });
    const c = await compressedSession(port);
    const start = Date.now();
    assert.deepEqual(await c.command('N1', 'NOOP'), ['N1 OK NOOP completed']);
    assert.ok(Date.now() - start >= 180, `answered after ${Date.now() - start} ms`);
    // Output after the delayed answer still comes, compressed, in order.
    assert.deepEqual(await c.command('C1', 'CAPABILITY'), ['* CAPABILITY IMAP4rev1 COMPRESS=DEFLATE', 'C1 OK Capability completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('script rules on a compressed session: truncate cuts the plain answer, the client inflates exactly that prefix, then FIN', async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'], storage: STORAGE });
  try {
    server.script.add({ on: 'command', command: 'FETCH', run: true, match: 'BODY', truncate: 30 });
    const c = await compressedSession(port);
    await c.command('S1', 'SELECT INBOX');
    c.write('F1 FETCH 1 BODY.PEEK[]\r\n');
    await c.ended();
    assert.equal(c.error, null, 'a FIN, not a reset');
    assert.equal(c.pending(), '* 1 FETCH (BODY[] {40}\r\nSubjec');
  } finally {
    await server.stop();
  }
});

test('script rules on a compressed session: close "reset" still resets the TCP connection after the (compressed) bytes', async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'] });
  try {
    server.script.add({ on: 'command', command: 'NOOP', send: '* OK going\r\n', close: 'reset' });
    const c = await compressedSession(port);
    c.write('R1 NOOP\r\n');
    assert.equal(await c.line(), '* OK going');
    await c.ended();
    assert.equal(c.error, 'ECONNRESET');
  } finally {
    await server.stop();
  }
});

test('a rule that shapes the COMPRESS answer itself: the OK is delayed and plain, compression starts after it', async () => {
  const { server, port } = await startServer({ plugins: ['COMPRESS'] });
  try {
    server.script.add({ on: 'command', command: 'COMPRESS', run: true, delay: 100, chunk: 4, chunkDelay: 'tick' });
    const c = await DeflateClient.connect(port);
    await c.line();
    await c.command('L1', 'LOGIN testuser testpass');
    assert.deepEqual(await c.command('Z1', 'COMPRESS DEFLATE'), ['Z1 OK DEFLATE active']);
    c.startCompression();
    assert.deepEqual(await c.command('N1', 'NOOP'), ['N1 OK NOOP completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

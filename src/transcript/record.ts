/**
 * `rookery record`: a TCP proxy in front of a real IMAP server that writes
 * each connection's traffic as a transcript (the text form of
 * docs/debugging.md), ready for `rookery replay` or a bug report. The
 * bytes must stay readable, so the proxy takes STARTTLS and COMPRESS=...
 * out of the server's capability lists and answers a client that asks for
 * either with NO itself; everything else passes unchanged, by whole lines.
 * With `protocol: 'pop3'` it proxies POP3 the same way (record-pop3.ts):
 * lines, STLS off, credentials filtered as POP3's.
 */
import { appendFileSync } from 'node:fs';
import net from 'node:net';
import { UnitFramer } from './framer.js';
import { LineFramer } from './line-framer.js';
import { CapaFilter, refusePop3Layer } from './record-pop3.js';
import type { Transcript } from './transcript.js';
import { NO_USER_SOURCE, Transcripts } from './transcripts.js';

export interface RecorderOptions {
  upstream: { host: string; port: number };
  /** What the upstream speaks: `imap` (default) or `pop3`. */
  protocol?: 'imap' | 'pop3';
  /** Where the proxy listens. Default 127.0.0.1, port 0 (a free one). */
  listen?: { host?: string; port?: number };
  /** File each finished session is appended to; without it, `onSession` only. */
  out?: string;
  /** Keep credentials instead of `***`. Default false. */
  keepCredentials?: boolean;
  /** Bytes kept per session. Default 64 MiB. */
  maxBytes?: number;
  /** Called with each session's transcript when its connection has closed. */
  onSession?: (transcript: Transcript) => void;
}

export interface Recorder {
  readonly address: { host: string; port: number };
  /** Sessions recorded and finished so far. */
  readonly sessions: Transcript[];
  close(): Promise<void>;
}

/** Starts the recording proxy; resolves once it listens. */
export async function startRecorder(options: RecorderOptions): Promise<Recorder> {
  const transcripts = new Transcripts(
    { enabled: true, maxBytes: options.maxBytes ?? 64 * 1024 * 1024, maxTotalBytes: Number.MAX_SAFE_INTEGER, keepClosed: 0, dir: null, redact: !options.keepCredentials },
    () => Date.now(),
    () => 'record',
  );
  const sessions: Transcript[] = [];
  const sockets = new Set<net.Socket>();
  let next = 0;
  const listener = net.createServer((client) => {
    const id = ++next;
    const upstream = net.connect(options.upstream.port, options.upstream.host);
    sockets.add(client);
    sockets.add(upstream);
    const pop3 = options.protocol === 'pop3';
    const recorder = transcripts.open(id, client.remoteAddress ?? null, NO_USER_SOURCE, pop3 ? 'pop3' : 'imap')!;
    // Both directions go through by whole lines (and literals), so that the proxy can keep the
    // connection readable: no STARTTLS or COMPRESS offered, and a client that asks anyway is refused.
    const fromClient = pop3 ? new LineFramer(MAX_UNIT) : new UnitFramer('client', MAX_UNIT);
    const fromServer = pop3 ? new LineFramer(MAX_UNIT) : new UnitFramer('server', MAX_UNIT);
    const capa = pop3 ? new CapaFilter() : null;
    client.on('data', (chunk: Buffer) => {
      for (const unit of fromClient.push(chunk)) {
        recorder.fromClient(unit.bytes);
        capa?.fromClient(unit.bytes);
        const refused = !unit.starts ? null : pop3 ? refusePop3Layer(unit.bytes) : refuseLayer(unit.bytes);
        if (refused) {
          recorder.fromServer(refused);
          client.write(refused);
        } else {
          upstream.write(unit.bytes);
        }
      }
      if (fromClient.overflow) client.destroy();
    });
    upstream.on('data', (chunk: Buffer) => {
      for (const unit of fromServer.push(chunk)) {
        const bytes = capa ? capa.fromServer(unit.bytes) : unit.starts ? withoutLayerOffers(unit.bytes) : unit.bytes;
        if (bytes === null) continue;
        recorder.fromServer(bytes);
        client.write(bytes);
      }
      if (fromServer.overflow) upstream.destroy();
    });
    // A side that ends passes its FIN on; the session is written once both connections are gone.
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    let open = 2;
    const gone = (socket: net.Socket): void => {
      sockets.delete(socket);
      if (--open > 0) return;
      recorder.close();
      const transcript = recorder.snapshot();
      sessions.push(transcript);
      if (options.out) appendFileSync(options.out, transcript.text());
      options.onSession?.(transcript);
    };
    client.on('close', () => gone(client));
    upstream.on('close', () => gone(upstream));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  const host = options.listen?.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.listen?.port ?? 0, host, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  const a = listener.address() as net.AddressInfo;
  return {
    address: { host: a.address, port: a.port },
    sessions,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        listener.close(() => resolve());
      }),
  };
}

/** A line or literal larger than this ends the proxied connection (nothing real sends one). */
const MAX_UNIT = 256 * 1024 * 1024;

/** `tag NO` for a client command that would make the traffic unreadable (STARTTLS, COMPRESS), else null. */
export function refuseLayer(unit: Buffer): Buffer | null {
  const m = /^(\S+) (STARTTLS|COMPRESS)\b/i.exec(unit.subarray(0, 64).toString('latin1'));
  if (!m) return null;
  return Buffer.from(`${m[1]} NO [CANNOT] ${m[2]!.toUpperCase()} is off while rookery record records this connection\r\n`, 'latin1');
}

/** A capability list (CAPABILITY response or code) without STARTTLS and COMPRESS=...; other lines as they are. */
export function withoutLayerOffers(unit: Buffer): Buffer {
  const head = unit.subarray(0, 32).toString('latin1');
  if (!/^(\* CAPABILITY |\S+ (OK|PREAUTH) \[CAPABILITY )/i.test(head)) return unit;
  const text = unit.toString('latin1');
  const out = text.replace(/ (STARTTLS|COMPRESS=[^ \]\r\n]+)(?=[ \]\r\n])/gi, '');
  return out === text ? unit : Buffer.from(out, 'latin1');
}

/**
 * `rookery record`: a TCP proxy in front of a real IMAP server that writes
 * each connection's traffic as a transcript (the text form of
 * docs/debugging.md), ready for `rookery replay` or a bug report. It sees
 * the bytes as they pass: a connection that turns on STARTTLS or COMPRESS
 * is recorded up to there and unreadable after (use a client without them).
 */
import { appendFileSync } from 'node:fs';
import net from 'node:net';
import type { Transcript } from './transcript.js';
import { Transcripts } from './transcripts.js';

export interface RecorderOptions {
  upstream: { host: string; port: number };
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
    { enabled: true, maxBytes: options.maxBytes ?? 64 * 1024 * 1024, keepClosed: 0, dir: null, redact: !options.keepCredentials },
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
    const recorder = transcripts.open(id, client.remoteAddress ?? null, () => null)!;
    client.on('data', (chunk: Buffer) => {
      recorder.fromClient(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      recorder.fromServer(chunk);
      client.write(chunk);
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

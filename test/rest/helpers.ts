import http from 'node:http';
import type { Readable } from 'node:stream';
import { createServer, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';

export interface Rest {
  server: Server;
  base: string;
  imapPort: number;
  restPort: number;
}

export async function startRest(options: ServerOptions = {}, setup?: (s: Server) => void): Promise<Rest> {
  const server = createServer({ port: 0, rest: { port: 0, ...(options.rest ?? {}) }, ...withoutRest(options) });
  setup?.(server);
  const { imap, rest } = await server.start();
  return { server, base: `http://127.0.0.1:${rest!.port}`, imapPort: imap.port, restPort: rest!.port };
}

function withoutRest(options: ServerOptions): ServerOptions {
  const { rest: _rest, ...others } = options;
  return others;
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

/** A raw HTTP request (so Host and other headers can be anything). */
export function request(
  port: number,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer; json?: unknown } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
  }
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) headers['Content-Length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** Text arriving on a stream, and a bounded wait for a pattern in it. */
export interface TextWatch {
  text(): string;
  /** Resolves with the first match of `re` in all text so far; fails when the stream ends first or after `ms`. */
  waitFor(re: RegExp, ms?: number): Promise<string>;
}

export function watchText(source: Readable, ended: () => boolean): TextWatch {
  let buffer = '';
  const waiters: (() => void)[] = [];
  const wake = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  source.setEncoding('utf8');
  source.on('data', (c: string) => {
    buffer += c;
    wake();
  });
  source.on('end', wake);
  source.on('close', wake);
  return {
    text: () => buffer,
    async waitFor(re: RegExp, ms = 3000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const m = re.exec(buffer);
        if (m) return m[0];
        if (ended()) throw new Error(`stream ended; got ${JSON.stringify(buffer)}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out waiting for ${re}; got ${JSON.stringify(buffer)}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
    },
  };
}

/** An open SSE stream over a raw request; `waitFor()` waits for text matching a pattern. */
export async function openEvents(port: number, path = '/v1/events', headers: Record<string, string> = {}) {
  return new Promise<{ status: number; res: http.IncomingMessage; waitFor(re: RegExp, ms?: number): Promise<string>; text(): string; close(): void }>(
    (resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'GET', path, headers, agent: false }, (res) => {
        const watch = watchText(res, () => res.readableEnded);
        resolve({ status: res.statusCode!, res, text: watch.text, waitFor: watch.waitFor, close: () => req.destroy() });
      });
      req.on('error', reject);
      req.end();
    },
  );
}

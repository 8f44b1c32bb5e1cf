/** What the OAuth tests share: a server with REST, form posts, and following an authorization redirect. */
import { createServer, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';

export interface OAuthServer {
  server: Server;
  /** The issuer and REST base, `http://127.0.0.1:<port>`. */
  base: string;
  imapPort: number;
}

export async function startOAuth(options: ServerOptions = {}): Promise<OAuthServer> {
  const server = createServer({ port: 0, ...options, rest: { port: 0, ...(options.rest ?? {}) } });
  const { imap, rest } = await server.start();
  return { server, base: `http://127.0.0.1:${rest!.port}`, imapPort: imap.port };
}

export interface FormReply {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
  text: string;
}

/** POSTs a form, with HTTP Basic client authentication when `basic` is given. */
export async function postForm(url: string, form: Record<string, string>, basic?: [string, string]): Promise<FormReply> {
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (basic) headers.Authorization = `Basic ${Buffer.from(`${encodeURIComponent(basic[0])}:${encodeURIComponent(basic[1])}`).toString('base64')}`;
  const res = await fetch(url, { method: 'POST', headers, body: new URLSearchParams(form).toString() });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON (an HTML 500): the test looks at text.
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** JSON to a /v1 route. */
export async function rest(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined && method === 'GET' ? {} : { 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? null : JSON.parse(text) };
}

/** Opens an authorization URL as a browser would and returns where it was sent back to (the Location). */
export async function followAuthorization(url: URL | string): Promise<URL> {
  const res = await fetch(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (res.status !== 302 || location === null) throw new Error(`authorization answered ${res.status}: ${await res.text()}`);
  return new URL(location);
}

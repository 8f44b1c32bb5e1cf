/**
 * The token service's costs (issue 35):
 *
 *   npm run bench -- oauth [--count N]
 *
 * - token endpoint: client_credentials and refresh-with-rotation requests
 *   per second over one keep-alive connection (fetch), opaque and JWT;
 * - `server.oauth.check()` per call, the question every token login asks,
 *   with many grants held (it is a Map lookup, so the figure should not
 *   grow with them);
 * - AUTHENTICATE XOAUTH2 logins per second, a static token against one of
 *   the token service (the lease on the session included).
 */
import * as net from 'node:net';
import { createServer, type Server } from '../src/index.js';
import { fmt, table } from './client.js';

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const n = Number(i < 0 ? fallback : args[i + 1]);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`--${name}: not a positive integer`);
  return n;
}

const BASIC = `Basic ${Buffer.from('testclient:testsecret').toString('base64')}`;

async function form(base: string, body: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}/oauth/token`, { method: 'POST', headers: { Authorization: BASIC, 'Content-Type': 'application/x-www-form-urlencoded' }, body });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function endpointRates(count: number, tokenFormat: 'opaque' | 'jwt'): Promise<[number, number]> {
  const server = createServer({ port: 0, rest: { port: 0 }, oauth: { tokenFormat } });
  const { rest } = await server.start();
  const base = `http://127.0.0.1:${rest!.port}`;
  try {
    let t0 = performance.now();
    for (let i = 0; i < count; i++) await form(base, 'grant_type=client_credentials');
    const cc = count / ((performance.now() - t0) / 1000);
    let refresh = String(server.control.oauth.issue('testuser', { client: 'testclient' }).refresh_token);
    t0 = performance.now();
    for (let i = 0; i < count; i++) refresh = String((await form(base, `grant_type=refresh_token&refresh_token=${refresh}`)).refresh_token);
    return [cc, count / ((performance.now() - t0) / 1000)];
  } finally {
    await server.stop();
  }
}

function checkCost(grants: number): number {
  const server = createServer({});
  const tokens: string[] = [];
  for (let i = 0; i < grants; i++) tokens.push(server.control.oauth.issue('testuser', { refresh: false }).access_token);
  const n = 400_000;
  let ok = 0;
  // A warm-up pass first: the figure is the steady cost, not the compiler's.
  for (let i = 0; i < n; i++) server.oauth.check('testuser', tokens[i % tokens.length]!, 'XOAUTH2');
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) if (server.oauth.check('testuser', tokens[i % tokens.length]!, 'XOAUTH2').ok) ok++;
  const ns = Number(process.hrtime.bigint() - t0) / n;
  if (ok !== n) throw new Error('check refused a live token');
  return ns;
}

/** Logins per second: connect, AUTHENTICATE XOAUTH2 with an initial response, LOGOUT, `count` times one after another. */
async function loginRate(server: Server, port: number, token: () => string, count: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const auth = Buffer.from(`user=testuser\x01auth=Bearer ${token()}\x01\x01`).toString('base64');
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let seen = '';
      socket.on('data', (d) => {
        seen += d.toString('latin1');
        if (seen.includes('\r\n') && !seen.includes('a ')) socket.write(`a AUTHENTICATE XOAUTH2 ${auth}\r\nb LOGOUT\r\n`);
        if (/^a OK /m.test(seen) && /^b OK /m.test(seen)) socket.end();
        if (/^a NO /m.test(seen)) reject(new Error(`login refused: ${seen}`));
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
  }
  void server;
  return count / ((performance.now() - t0) / 1000);
}

export async function run(args: string[] = []): Promise<void> {
  const count = option(args, 'count', 1000);
  const [ccOpaque, refreshOpaque] = await endpointRates(count, 'opaque');
  const [ccJwt, refreshJwt] = await endpointRates(count, 'jwt');
  const small = checkCost(100);
  const large = checkCost(10_000);
  const server = createServer({ port: 0, plugins: ['AUTH=XOAUTH2', 'SASL-IR'] });
  const { imap } = await server.start();
  let staticRate: number;
  let serviceRate: number;
  try {
    staticRate = await loginRate(server, imap.port, () => 'testtoken', count);
    const issued = server.control.oauth.issue('testuser').access_token;
    serviceRate = await loginRate(server, imap.port, () => issued, count);
  } finally {
    await server.stop();
  }
  table('oauth', [
    ['client_credentials requests/s (opaque / JWT)', `${fmt(ccOpaque, 0)} / ${fmt(ccJwt, 0)}`],
    ['refresh with rotation requests/s (opaque / JWT)', `${fmt(refreshOpaque, 0)} / ${fmt(refreshJwt, 0)}`],
    ['server.oauth.check() ns/call, 100 / 10,000 grants', `${fmt(small, 0)} / ${fmt(large, 0)}`],
    ['XOAUTH2 logins/s, static token / token service', `${fmt(staticRate, 0)} / ${fmt(serviceRate, 0)}`],
  ]);
}

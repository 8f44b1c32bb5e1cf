/**
 * The REST API: node:http with a small router over the route tables,
 * bearer/loopback security, JSON bodies with limits, and the SSE stream.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net from 'node:net';
import { isServiceError, ServiceError, type ErrorCode } from '../errors.js';
import { EVENT_TYPES, type ServerEventType } from '../events.js';
import type { ListenAddress, Server } from '../server.js';
import { openApiDocument } from './openapi.js';
import type { Method, Route, RouteContext } from './route.js';
import { BUILTIN_ROUTES } from './routes.js';
import { validate } from './schema.js';

export const MAX_BODY = 64 * 1024 * 1024;
export const DEFAULT_PING_INTERVAL = 15_000;

export interface RestConfig {
  port: number;
  host: string;
  token: string | null;
  /** Milliseconds between `: ping` comments on event streams. Default 15000. */
  pingInterval?: number;
}

const STATUS: Partial<Record<ErrorCode, number>> = {
  INVALID: 400, UNAUTHORIZED: 401, NONEXISTENT: 404, NOTFOUND: 404, METHOD: 405, TOOBIG: 413, UNSUPPORTED: 415, SERVERERROR: 500,
};

export function statusOf(code: ErrorCode): number {
  return STATUS[code] ?? 409;
}

/** True for `localhost`, 127.0.0.0/8 and ::1. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (net.isIPv6(h)) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}

/** The host name of a Host header without its port. */
function hostName(header: string): string {
  if (header.startsWith('[')) {
    const end = header.indexOf(']');
    return end < 0 ? header : header.slice(0, end + 1);
  }
  const colon = header.lastIndexOf(':');
  return colon < 0 ? header : header.slice(0, colon);
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

interface CompiledRoute {
  route: Route;
  segments: string[];
  params: number;
}

function compile(route: Route): CompiledRoute {
  const segments = route.path.split('/').slice(1);
  return { route, segments, params: segments.filter((s) => s.startsWith('{')).length };
}

/** Routes by segment count, each list ordered by parameter count (literal paths first). */
type RouteTable = ReadonlyMap<number, readonly CompiledRoute[]>;

function buildTable(routes: readonly Route[]): RouteTable {
  const table = new Map<number, CompiledRoute[]>();
  for (const c of routes.map(compile)) {
    const list = table.get(c.segments.length) ?? [];
    list.push(c);
    table.set(c.segments.length, list);
  }
  for (const list of table.values()) list.sort((a, b) => a.params - b.params);
  return table;
}

/**
 * The route of `table` for a request, the methods allowed on its path when
 * none has `method`, or null. Among routes matching the path, those with the
 * fewest parameters win (`/v1/script/rules` before `/v1/script/{id}`).
 */
function matchIn(table: RouteTable, method: string, segments: readonly string[]): { route: Route } | { allow: string[] } | null {
  const list = table.get(segments.length);
  if (!list) return null;
  let params = -1;
  const allow: string[] = [];
  for (const c of list) {
    if (params >= 0 && c.params > params) break;
    // A parameter needs a value: `/v1/users/` is not `/v1/users/{name}`.
    if (!c.segments.every((s, i) => (s.startsWith('{') ? segments[i] !== '' : s === segments[i]))) continue;
    if (c.route.method === method) return { route: c.route };
    params = c.params;
    allow.push(c.route.method);
  }
  return params < 0 ? null : { allow };
}

export class RestServer {
  private readonly http: http.Server;
  private readonly routes: readonly Route[];
  private readonly builtinTable: RouteTable;
  private readonly pluginTable: RouteTable;
  /** Host header → loopback or not, so the check costs a lookup per request (bounded). */
  private readonly loopbackHosts = new Map<string, boolean>();
  private readonly streams = new Set<ServerResponse>();
  private readonly tokenDigest: Buffer | null;
  private readonly pingInterval: number;
  private closing = false;

  constructor(
    private readonly server: Server,
    private readonly config: RestConfig,
    /** Routes of loaded plugins, served after the built-in ones. */
    pluginRoutes: readonly Route[] = [],
  ) {
    this.tokenDigest = config.token === null ? null : digest(config.token);
    this.pingInterval = config.pingInterval ?? DEFAULT_PING_INTERVAL;
    this.routes = [...BUILTIN_ROUTES, ...pluginRoutes];
    this.builtinTable = buildTable(BUILTIN_ROUTES);
    this.pluginTable = buildTable(pluginRoutes);
    this.http = http.createServer((req, res) => {
      this.dispatch(req, res).catch((err: unknown) => this.fail(res, err));
    });
  }

  /** Every route this server serves (for the OpenAPI document). */
  get routeTable(): Route[] {
    return [...this.routes];
  }

  listen(): Promise<ListenAddress> {
    const { host, port, token } = this.config;
    if (!isLoopbackHost(host) && (token === null || token === '')) {
      return Promise.reject(
        new Error(`The REST API controls the whole server, including every user's mail; listening on the non-loopback host ${host} needs a token (rest.token)`),
      );
    }
    if (token === '') return Promise.reject(new Error('The REST API controls the whole server and needs a non-empty token'));
    return new Promise((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(port, host, () => {
        this.http.off('error', reject);
        const a = this.http.address() as net.AddressInfo;
        resolve({ host: a.address, port: a.port });
      });
    });
  }

  address(): ListenAddress | null {
    const a = this.http.address();
    return a && typeof a === 'object' ? { host: a.address, port: a.port } : null;
  }

  /** Ends open event streams and closes the listener; not graceful also drops open connections. */
  close(graceful = true): Promise<void> {
    this.closing = true;
    for (const res of this.streams) res.end();
    this.streams.clear();
    return new Promise((resolve) => {
      if (!this.http.listening) return resolve();
      this.http.close(() => resolve());
      this.http.closeIdleConnections();
      if (!graceful) this.http.closeAllConnections();
      else setTimeout(() => this.http.closeAllConnections(), 1000).unref();
    });
  }

  // ------------------------------------------------------------ responses

  private send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.headersSent) {
      res.end();
      return;
    }
    const text = JSON.stringify(body === undefined ? null : body);
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      'Cache-Control': 'no-store',
      ...headers,
    });
    res.end(text);
  }

  private fail(res: ServerResponse, err: unknown, headers: Record<string, string> = {}): void {
    const e = isServiceError(err) ? err : new ServiceError('SERVERERROR', `Unexpected error: ${err instanceof Error ? err.message : String(err)}`);
    this.send(res, statusOf(e.code), { error: { code: e.code, message: e.message } }, headers);
  }

  // ------------------------------------------------------------ request handling

  private authorize(req: IncomingMessage): ServiceError | null {
    if (this.tokenDigest) {
      const header = req.headers.authorization ?? '';
      const m = /^Bearer\s+(.+)$/i.exec(header.trim());
      const given = digest(m ? m[1]! : '');
      if (!m || !timingSafeEqual(given, this.tokenDigest)) return new ServiceError('UNAUTHORIZED', 'Missing or wrong bearer token');
      return null;
    }
    const host = req.headers.host;
    let loopback = host === undefined ? false : this.loopbackHosts.get(host);
    if (loopback === undefined) {
      loopback = isLoopbackHost(hostName(host!));
      if (this.loopbackHosts.size >= 64) this.loopbackHosts.clear();
      this.loopbackHosts.set(host!, loopback);
    }
    if (!loopback) {
      return new ServiceError('UNAUTHORIZED', 'Without a REST token, requests must use a loopback host name (localhost, 127.0.0.1 or [::1])');
    }
    return null;
  }

  /**
   * Finds the route for a request: built-in routes first, then plugin
   * routes, so a plugin can add to the API but never shadow it. Within one
   * table a literal segment beats a parameter (`/v1/script/rules` before
   * `/v1/script/{id}`).
   */
  private match(method: string, pathname: string): { route: Route; raw: string[] } | ServiceError {
    const segments = pathname.split('/').slice(1);
    const allow: string[] = [];
    for (const table of [this.builtinTable, this.pluginTable]) {
      const found = matchIn(table, method, segments);
      if (found && 'route' in found) return { route: found.route, raw: segments };
      if (found) allow.push(...found.allow);
    }
    if (allow.length === 0) return new ServiceError('NOTFOUND', `No such endpoint: ${pathname}`);
    const methods = [...new Set(allow)].join(', ');
    const e = new ServiceError('METHOD', `${method} is not allowed on ${pathname}; allowed: ${methods}`);
    (e as ServiceError & { allow?: string }).allow = methods;
    return e;
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const denied = this.authorize(req);
    if (denied) return this.fail(res, denied, { 'WWW-Authenticate': 'Bearer' });
    // The path is split by hand, not by the URL parser: it would drop `%2E%2E` and
    // `%2E` segments as `..` and `.`, and those are mailbox names like any other.
    const target = req.url ?? '/';
    const at = target.search(/[?#]/);
    const pathname = at < 0 ? target : target.slice(0, at);
    const search = at >= 0 && target[at] === '?' ? target.slice(at + 1).split('#')[0]! : '';
    const found = this.match(req.method ?? 'GET', pathname);
    if (found instanceof ServiceError) {
      const allow = (found as ServiceError & { allow?: string }).allow;
      return this.fail(res, found, allow ? { Allow: allow } : {});
    }
    const { route, raw } = found;
    const params: Record<string, string | number> = {};
    const patternSegments = route.path.split('/').slice(1);
    for (let i = 0; i < patternSegments.length; i++) {
      const s = patternSegments[i]!;
      if (!s.startsWith('{')) continue;
      const name = s.slice(1, -1);
      let value: string;
      try {
        value = decodeURIComponent(raw[i]!);
      } catch {
        return this.fail(res, new ServiceError('INVALID', `${name}: bad URL encoding: ${raw[i]}`));
      }
      const def = route.params?.find((p) => p.name === name);
      if (def?.type === 'integer') {
        if (!/^[0-9]{1,15}$/.test(value)) return this.fail(res, new ServiceError('INVALID', `${name}: expected an integer, got ${JSON.stringify(value)}`));
        params[name] = Number(value);
      } else params[name] = value;
    }
    const read = this.readBody(req, res, route);
    const body = read instanceof Promise ? await read : read;
    if (body === NO_BODY) return;
    const ctx: RouteContext = { server: this.server, params, query: new URLSearchParams(search), body, req, res };
    if (route.stream) return this.openStream(ctx);
    if (route.path === '/v1/openapi.json') return this.send(res, 200, openApiDocument(this.routeTable, '5.0.0'));
    const handled = route.handle(ctx);
    const result = typeof (handled as PromiseLike<unknown> | null)?.then === 'function' ? await handled : handled;
    this.send(res, route.status, result);
    if (route.after) res.once('finish', () => route.after!(ctx));
  }

  /**
   * Reads and parses the JSON body; answers the error itself and returns
   * NO_BODY on failure. Without a body to read it answers at once, else with
   * a promise.
   */
  private readBody(req: IncomingMessage, res: ServerResponse, route: Route): unknown {
    const length = req.headers['content-length'];
    const chunked = length === undefined && req.headers['transfer-encoding'] !== undefined;
    const hasBody = (length !== undefined && length !== '0') || chunked;
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const json = type === 'application/json';
    const unsupported = (): ServiceError => new ServiceError('UNSUPPORTED', 'Request bodies must be sent as Content-Type: application/json');
    // A chunked PUT/DELETE may turn out empty, and then it has no body: it is checked once read.
    if (!json && (req.method === 'POST' || (hasBody && !chunked))) {
      this.reject(req, res, unsupported());
      return NO_BODY;
    }
    if (length !== undefined && Number(length) > MAX_BODY) {
      this.reject(req, res, new ServiceError('TOOBIG', `Request body larger than ${MAX_BODY} bytes`));
      return NO_BODY;
    }
    const parse = (text: string): unknown => {
      let body: unknown = {};
      if (text.trim() !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          this.fail(res, new ServiceError('INVALID', 'Request body is not valid JSON'));
          return NO_BODY;
        }
      }
      const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
      if (!isObject && !(route.allowArray && Array.isArray(body))) {
        this.fail(res, new ServiceError('INVALID', route.allowArray ? 'Request body must be a JSON object or array' : 'Request body must be a JSON object'));
        return NO_BODY;
      }
      try {
        if (route.body) validate(body, route.body);
      } catch (err) {
        this.fail(res, err);
        return NO_BODY;
      }
      return body;
    };
    // Without Content-Length or Transfer-Encoding there is no body to wait for
    // (event streams still read to the end, as they always have).
    if (!hasBody && !route.stream) return parse('');
    const chunks: Buffer[] = [];
    let size = 0;
    return new Promise<boolean>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        size += chunk.length;
        if (size > MAX_BODY) {
          req.off('data', onData);
          chunks.length = 0;
          resolve(true);
          return;
        }
        chunks.push(chunk);
      };
      req.on('data', onData);
      req.once('end', () => resolve(false));
      req.once('error', reject);
    }).then((tooBig) => {
      if (tooBig) {
        this.reject(req, res, new ServiceError('TOOBIG', `Request body larger than ${MAX_BODY} bytes`));
        return NO_BODY;
      }
      if (!json && size > 0) {
        this.fail(res, unsupported());
        return NO_BODY;
      }
      return parse(Buffer.concat(chunks).toString('utf8'));
    });
  }

  /**
   * Answers an error without reading the body, then discards (never buffers)
   * what the client still sends for a moment so it can read the answer, and
   * drops the connection.
   */
  private reject(req: IncomingMessage, res: ServerResponse, err: ServiceError): void {
    req.resume();
    this.fail(res, err);
    res.once('finish', () => {
      const timer = setTimeout(() => req.socket.destroy(), 2000);
      timer.unref();
      req.once('end', () => clearTimeout(timer));
    });
  }

  // ------------------------------------------------------------ event stream

  private openStream(ctx: RouteContext): void {
    const { res, req, query } = ctx;
    let types: ServerEventType[] = [...EVENT_TYPES];
    // `types=a,b` and `types=a&types=b` both work; an empty list would be a stream that never says anything.
    const wanted = query.getAll('types');
    if (wanted.length > 0) {
      const names = wanted.flatMap((v) => v.split(',')).map((s) => s.trim()).filter((s) => s !== '');
      if (names.length === 0) {
        return this.fail(res, new ServiceError('INVALID', `types: empty list; name at least one of ${EVENT_TYPES.join(', ')}, or leave types out for all`));
      }
      for (const name of names) {
        if (!(EVENT_TYPES as readonly string[]).includes(name)) {
          return this.fail(res, new ServiceError('INVALID', `Unknown event type ${JSON.stringify(name)}; valid types: ${EVENT_TYPES.join(', ')}`));
        }
      }
      types = [...new Set(names)] as ServerEventType[];
    }
    if (this.closing) return this.fail(res, new ServiceError('CANNOT', 'The server is stopping'));
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    res.write(': connected\n\n');
    this.streams.add(res);
    const listeners = types.map((type) => {
      const fn = (data: unknown): void => {
        res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
      };
      (this.server as unknown as NodeJS.EventEmitter).on(type, fn);
      return [type, fn] as const;
    });
    const ping = setInterval(() => res.write(': ping\n\n'), this.pingInterval);
    ping.unref();
    const cleanup = (): void => {
      clearInterval(ping);
      this.streams.delete(res);
      for (const [type, fn] of listeners) (this.server as unknown as NodeJS.EventEmitter).off(type, fn);
    };
    res.once('close', cleanup);
    req.once('close', cleanup);
  }
}

const NO_BODY = Symbol('no body');

export type { Method, Route };

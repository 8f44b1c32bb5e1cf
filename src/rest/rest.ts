/**
 * The REST API: node:http with a small router over the route tables,
 * bearer/loopback security, JSON bodies with limits, and the SSE stream.
 */
import { nodeCrypto } from '../util/node-crypto.js';
import * as http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as net from 'node:net';
import type { Duplex } from 'node:stream';
import { isDashboardPath, serveDashboard } from '../dashboard/assets.js';
import { isServiceError, ServiceError, type ErrorCode } from '../errors.js';
import type { LoggedEvent } from '../event-log.js';
import type { ServerEventType } from '../events.js';
import type { ListenAddress, Server } from '../server.js';
import { hostVerdict, isLoopbackHost, parseHost, type HostVerdict } from './host.js';
import { openApiDocument } from './openapi.js';
import type { Method, Route, RouteContext } from './route.js';
import { BUILTIN_ROUTES, VERSION } from './routes.js';
import { validate, type Schema } from './schema.js';
import { BodyBudget, type BodyHold } from './body-budget.js';
import { isOAuthPath } from '../oauth/http.js';

export const MAX_BODY = 64 * 1024 * 1024;
export const DEFAULT_PING_INTERVAL = 15_000;
export const DEFAULT_MAX_EVENT_STREAMS = 100;
export const DEFAULT_MAX_STREAM_BUFFER = 1024 * 1024;
/** Node's limit on the request line and headers together. */
const MAX_HEADER_SIZE = 16 * 1024;

export interface RestConfig {
  port: number;
  host: string;
  token: string | null;
  /** Milliseconds between `: ping` comments on event streams. Default 15000. */
  pingInterval?: number;
  /** Event streams open at once; one more gets 503 LIMIT. Default 100. */
  maxEventStreams?: number;
  /**
   * Bytes an event stream may have queued (written but not yet taken by
   * the client); a stream over it is closed, and the client may reconnect.
   * Default 1 MiB.
   */
  maxStreamBuffer?: number;
  /** Milliseconds a client has to send the request headers (Node's `headersTimeout`); then 408 TIMEOUT. Default 20000. */
  headersTimeout?: number;
  /** Milliseconds a client has to send the whole request (Node's `requestTimeout`, 0: none); then 408 TIMEOUT. Default 30000. */
  requestTimeout?: number;
  /** Milliseconds a body may go without a byte (0: none); then 408 TIMEOUT. Default 10000. */
  bodyTimeout?: number;
  /** Connections open at once, half-sent requests included; one more gets a minimal 503 and is closed. Default 1000. */
  maxConnections?: number;
  /** Octets of bodies in flight across requests; see BodyBudget. Default 128 MiB. */
  maxBodyBytesInFlight?: number;
}

export const DEFAULT_HEADERS_TIMEOUT = 20_000;
export const DEFAULT_REQUEST_TIMEOUT = 30_000;
export const DEFAULT_BODY_TIMEOUT = 10_000;
export const DEFAULT_MAX_CONNECTIONS = 1000;
export const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT = 128 * 1024 * 1024;
/** Refusals of connections over the cap being written at once; past it a connection over the cap is dropped unanswered. */
const MAX_REFUSING = 64;
/** How long a refused connection may take to read its 503 before it goes. */
const REFUSAL_GRACE_MS = 1000;

export { isLoopbackHost };

const STATUS: Partial<Record<ErrorCode, number>> = {
  INVALID: 400, UNAUTHORIZED: 401, NONEXISTENT: 404, NOTFOUND: 404, METHOD: 405, TIMEOUT: 408, EXPIRED: 410, TOOBIG: 413, UNSUPPORTED: 415, SERVERERROR: 500,
};

export function statusOf(code: ErrorCode): number {
  return STATUS[code] ?? 409;
}

const digest = (s: string): Buffer => nodeCrypto().createHash('sha256').update(s, 'utf8').digest();

/** The body of a route that declares none: `{}` (or no body at all); any key is an unknown field. */
const NO_FIELDS: Schema = { type: 'object', properties: {}, additionalProperties: false };

/**
 * A PUT, POST or DELETE route without a body schema takes `{}`: said so in
 * its schema, so the OpenAPI document shows what validation does. (A GET
 * body is checked against the same, but a GET has no request body to show.)
 */
function withBody(route: Route): Route {
  return route.body || route.method === 'GET' ? route : { ...route, body: NO_FIELDS };
}

/** A path parameter's place in the path, worked out once per route. */
interface ParamSlot {
  /** Index into the request's segments (as `matchIn` gets them). */
  index: number;
  name: string;
  integer: boolean;
}

interface CompiledRoute {
  route: Route;
  segments: string[];
  /** Per segment: true for a parameter (`{name}`), false for a literal. */
  isParam: boolean[];
  params: number;
  slots: ParamSlot[];
  /**
   * A request without a body may be answered without validating `{}`
   * against the schema: the schema takes `{}` (it requires no field).
   * Worked out once, so a GET costs no schema walk.
   */
  emptyBodyValid: boolean;
}

function compile(route: Route): CompiledRoute {
  const segments = route.path.split('/').slice(1);
  const isParam = segments.map((s) => s.startsWith('{'));
  const slots: ParamSlot[] = [];
  segments.forEach((s, index) => {
    if (!isParam[index]) return;
    const name = s.slice(1, -1);
    slots.push({ index, name, integer: route.params?.find((p) => p.name === name)?.type === 'integer' });
  });
  let emptyBodyValid = true;
  try {
    validate({}, route.body ?? NO_FIELDS);
  } catch {
    emptyBodyValid = false;
  }
  return { route, segments, isParam, params: slots.length, slots, emptyBodyValid };
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

/** True when a request's segments (`segments`, the first of which is before the path's first `/`) fit `c`'s pattern. */
function fits(c: CompiledRoute, segments: readonly string[]): boolean {
  const pattern = c.segments;
  for (let i = 0; i < pattern.length; i++) {
    const given = segments[i + 1]!;
    // A parameter needs a value: `/v1/users/` is not `/v1/users/{name}`.
    if (c.isParam[i] ? given === '' : given !== pattern[i]) return false;
  }
  return true;
}

/**
 * The route of `table` for a request, the methods allowed on its path when
 * none has `method`, or null. Among routes matching the path, those with the
 * fewest parameters win (`/v1/script/rules` before `/v1/script/{id}`).
 * `segments` is the path split at `/`, the (empty) part before the first
 * `/` included, so the split costs one array per request.
 */
function matchIn(table: RouteTable, method: string, segments: readonly string[]): CompiledRoute | { allow: string[] } | null {
  const list = table.get(segments.length - 1);
  if (!list) return null;
  let params = -1;
  let allow: string[] | null = null;
  for (const c of list) {
    if (params >= 0 && c.params > params) break;
    if (!fits(c, segments)) continue;
    if (c.route.method === method) return c;
    params = c.params;
    (allow ??= []).push(c.route.method);
  }
  return allow === null ? null : { allow };
}

/** An open event stream: its response and the event types it wants. */
interface EventStream {
  res: ServerResponse;
  types: readonly ServerEventType[];
  ping: NodeJS.Timeout;
  /**
   * Event texts held while the socket is above its high-water mark, written
   * at once on 'drain'. They are the same strings for every stream, so a
   * stream that does not read costs a pointer per event, not a copy.
   */
  pending: string[];
  pendingBytes: number;
  /** Frames carry `id:` lines (the client asked for a position: `since` or `Last-Event-ID`). */
  ids: boolean;
  /** Bytes it may have queued: maxStreamBuffer, plus the backlog replayed to it at the start. */
  limit: number;
}

/** What an error answer carries, for a ServerResponse or a raw socket alike. */
interface ErrorReply {
  status: number;
  body: { error: { code: ErrorCode; message: string } };
  headers: Record<string, string>;
}

/** Messages for llhttp's parse errors (clientError `code`s), beyond its own `reason`. */
const PARSE_ERRORS: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: `request line and headers larger than ${MAX_HEADER_SIZE} bytes`,
  HPE_INVALID_METHOD: 'invalid method (methods are case-sensitive: GET, POST, PUT, DELETE)',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'more than one Content-Length, or Content-Length with Transfer-Encoding',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding with Content-Length, or not ending in chunked',
  HPE_PAUSED_H2_UPGRADE: 'HTTP/2 is not supported; use HTTP/1.1',
};

export class RestServer {
  private readonly http: http.Server;
  private readonly routes: readonly Route[];
  private readonly builtinTable: RouteTable;
  private readonly pluginTable: RouteTable;
  /** Host header → verdict, so the check costs a lookup per request (bounded). */
  private readonly hostVerdicts = new Map<string, HostVerdict>();
  private readonly routedTargets = new RoutedTargets();
  private readonly streams = new Set<EventStream>();
  /** Sockets answered by `failRaw`, until they close. */
  private readonly rawSockets = new Set<Duplex>();
  /** Streams by event type; one event-log listener (`relay`) feeds them all. */
  private readonly subscribers = new Map<string, Set<EventStream>>();
  /** Stops relaying the event log to the streams (on close). */
  private stopRelay: (() => void) | null = null;
  private readonly tokenDigest: Buffer | null;
  private readonly pingInterval: number;
  private readonly maxEventStreams: number;
  private readonly maxStreamBuffer: number;
  private readonly bodyTimeout: number;
  private readonly maxConnections: number;
  private readonly bodyBudget: BodyBudget;
  /** Connections open now (counted from accept to close, whatever state their request is in). */
  private openConnections = 0;
  /** Connections over the cap whose 503 is being written. */
  private refusing = 0;
  /** The refusal of a connection over the cap: one string, made once. */
  private readonly refusal: string;
  private closing = false;

  constructor(
    private readonly server: Server,
    private readonly config: RestConfig,
    /** Routes of loaded plugins, served after the built-in ones. */
    pluginRoutes: readonly Route[] = [],
  ) {
    this.tokenDigest = config.token === null ? null : digest(config.token);
    this.pingInterval = config.pingInterval ?? DEFAULT_PING_INTERVAL;
    this.maxEventStreams = config.maxEventStreams ?? DEFAULT_MAX_EVENT_STREAMS;
    this.maxStreamBuffer = config.maxStreamBuffer ?? DEFAULT_MAX_STREAM_BUFFER;
    const builtin = BUILTIN_ROUTES.map(withBody);
    const plugins = pluginRoutes.map(withBody);
    this.routes = [...builtin, ...plugins];
    this.builtinTable = buildTable(builtin);
    this.pluginTable = buildTable(plugins);
    const requestTimeout = config.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT;
    const headersTimeout = config.headersTimeout ?? (requestTimeout > 0 ? Math.min(DEFAULT_HEADERS_TIMEOUT, requestTimeout) : DEFAULT_HEADERS_TIMEOUT);
    this.bodyTimeout = config.bodyTimeout ?? DEFAULT_BODY_TIMEOUT;
    this.maxConnections = config.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    this.bodyBudget = new BodyBudget(config.maxBodyBytesInFlight ?? DEFAULT_MAX_BODY_BYTES_IN_FLIGHT);
    const shortest = requestTimeout > 0 ? Math.min(headersTimeout, requestTimeout) : headersTimeout;
    this.http = http.createServer(
      {
        // A missing Host is answered by `hostProblem` with the spec's error object, not Node's empty 400.
        requireHostHeader: false,
        maxHeaderSize: MAX_HEADER_SIZE,
        headersTimeout,
        requestTimeout,
        connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(shortest / 4))),
      },
      (req, res) => this.dispatch(req, res),
    );
    const text = JSON.stringify({
      error: { code: 'LIMIT', message: `Too many REST connections: the limit is ${this.maxConnections} (rest.maxConnections); retry later` },
    });
    this.refusal = [
      'HTTP/1.1 503 Service Unavailable',
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(text)}`,
      'Cache-Control: no-store',
      'Retry-After: 1',
      'Connection: close',
      '',
      text,
    ].join('\r\n');
    // Node's own connection handling runs only for connections under the cap; the others never
    // get a parser, so a flood of them costs a descriptor each for a moment and nothing more.
    const accept = this.http.listeners('connection') as ((socket: net.Socket) => void)[];
    this.http.removeAllListeners('connection');
    this.http.on('connection', (socket: net.Socket) => this.admit(socket, accept));
    // Every malformed request gets the spec's error object, never Node's plain-text answer.
    this.http.on('clientError', (err: NodeJS.ErrnoException & { reason?: string }, socket: Duplex) => this.clientError(err, socket));
    // Without a listener Node closes CONNECT requests silently; they get an answer like any other method.
    this.http.on('connect', (req: IncomingMessage, socket: Duplex) => this.connectRequest(req, socket));
  }

  /**
   * Counts a new connection against `maxConnections`, a request whose
   * headers never end included (it holds a descriptor like any other), and
   * hands it to Node's HTTP handling, or refuses it: a minimal 503 with the
   * error object, then the connection closes.
   */
  private admit(socket: net.Socket, accept: readonly ((socket: net.Socket) => void)[]): void {
    if (this.openConnections >= this.maxConnections || this.closing) return this.refuseConnection(socket);
    this.openConnections++;
    socket.once('close', () => this.openConnections--);
    for (const listener of accept) listener.call(this.http, socket);
  }

  private refuseConnection(socket: net.Socket): void {
    socket.on('error', () => undefined);
    // Under a flood the refusals themselves are bounded: past MAX_REFUSING the connection goes unanswered.
    if (this.refusing >= MAX_REFUSING) {
      socket.destroy();
      return;
    }
    this.refusing++;
    this.rawSockets.add(socket);
    socket.once('close', () => {
      this.refusing--;
      this.rawSockets.delete(socket);
    });
    // What the client sends is read and dropped, so that closing sends no reset that could eat the 503.
    socket.on('data', () => undefined);
    socket.end(this.refusal);
    setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS).unref();
  }

  /** Connections open and body octets in flight now (GET /v1/health, tests, benchmarks). */
  usage(): { connections: number; maxConnections: number; bodyBytesInFlight: number; bodiesWaiting: number } {
    return {
      connections: this.openConnections,
      maxConnections: this.maxConnections,
      bodyBytesInFlight: this.bodyBudget.inFlight,
      bodiesWaiting: this.bodyBudget.waiting,
    };
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
    this.stopRelay?.();
    this.stopRelay = null;
    for (const stream of [...this.streams]) {
      this.unsubscribe(stream);
      stream.res.end();
    }
    const dropAll = (): void => {
      this.http.closeAllConnections();
      for (const socket of this.rawSockets) socket.destroy();
    };
    return new Promise((resolve) => {
      if (!this.http.listening) return resolve();
      // Not unref'd: with nothing else alive, an unref'd timer would never fire and close() never end.
      const timer = setTimeout(dropAll, graceful ? 1000 : 0);
      this.http.close(() => {
        clearTimeout(timer);
        resolve();
      });
      this.http.closeIdleConnections();
      if (!graceful) dropAll();
    });
  }

  /** Open event streams and the bytes each has queued (for tests and benchmarks). */
  streamStats(): { streams: number; queued: number[] } {
    return { streams: this.streams.size, queued: [...this.streams].map((s) => s.res.writableLength + s.pendingBytes) };
  }

  // ------------------------------------------------------------ responses

  private send(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = NO_HEADERS): void {
    if (!this.canAnswer(res)) return;
    this.sendJson(res, status, JSON.stringify(body === undefined ? null : body), headers);
  }

  /**
   * False when `res` takes no (further) answer, so there is nothing to
   * serialize: the client went away (a long poll it gave up on), or an
   * answer has begun (then it is ended).
   */
  private canAnswer(res: ServerResponse): boolean {
    if (res.destroyed) return false;
    if (res.headersSent) {
      res.end();
      return false;
    }
    return true;
  }

  /** Sends `text`, a JSON body already serialized, with the usual three headers and `headers`; see canAnswer. */
  private sendJson(res: ServerResponse, status: number, text: string, headers: Readonly<Record<string, string>> = NO_HEADERS): void {
    const length = Buffer.byteLength(text);
    res.writeHead(
      status,
      // A flat list spares Node's for-in over an object's keys; the header bytes are the same.
      headers === NO_HEADERS
        ? ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', length, 'Cache-Control', 'no-store']
        : { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': length, 'Cache-Control': 'no-store', ...headers },
    );
    res.end(text);
  }

  private sendText(res: ServerResponse, status: number, text: string): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
    res.end(text);
  }

  /** The error answer for `err`: its status by the spec's table (or `status`), the error object, and headers. */
  private errorReply(err: unknown, headers: Record<string, string> = {}, status?: number): ErrorReply {
    const e = isServiceError(err) ? err : new ServiceError('SERVERERROR', `Unexpected error: ${err instanceof Error ? err.message : String(err)}`);
    const extra = { ...headers };
    const allow = (e as ServiceError & { allow?: string }).allow;
    if (allow) extra.Allow = allow;
    if (e.code === 'UNAUTHORIZED') extra['WWW-Authenticate'] = 'Bearer';
    // A limit on something that frees up by itself (streams, waits) is 503 with Retry-After, not the 409 of a state.
    const retry = (e as ServiceError & { retryAfter?: number }).retryAfter;
    if (retry !== undefined) {
      extra['Retry-After'] = String(retry);
      status ??= 503;
    }
    return { status: status ?? statusOf(e.code), body: { error: { code: e.code, message: e.message } }, headers: extra };
  }

  private fail(res: ServerResponse, err: unknown, headers: Record<string, string> = {}, status?: number): void {
    const reply = this.errorReply(err, headers, status);
    this.send(res, reply.status, reply.body, reply.headers);
  }

  /**
   * Writes an error answer straight to a socket (malformed requests and
   * CONNECT have no ServerResponse) and closes the connection.
   */
  private failRaw(socket: Duplex, err: unknown): void {
    if (socket.destroyed || !socket.writable) {
      socket.destroy();
      return;
    }
    // Sockets Node no longer tracks as HTTP connections (CONNECT) are closed by close() from here.
    this.rawSockets.add(socket);
    socket.once('close', () => this.rawSockets.delete(socket));
    // Read and discard what the client still sends, so its end arrives and the socket closes.
    socket.on('data', () => undefined);
    socket.resume();
    const reply = this.errorReply(err);
    const text = JSON.stringify(reply.body);
    const lines = [
      `HTTP/1.1 ${reply.status} ${http.STATUS_CODES[reply.status] ?? 'Error'}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(text)}`,
      'Cache-Control: no-store',
      ...Object.entries(reply.headers).map(([k, v]) => `${k}: ${v}`),
      'Connection: close',
    ];
    socket.end(`${lines.join('\r\n')}\r\n\r\n${text}`);
    // A client that never reads must not keep the socket: it goes after a moment either way.
    setTimeout(() => socket.destroy(), 2000).unref();
  }

  /** A request Node's parser refused (or one that timed out): answered with the error object, then closed. */
  private clientError(err: NodeJS.ErrnoException & { reason?: string }, socket: Duplex): void {
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || socket.destroyed) {
      socket.destroy();
      return;
    }
    const known = err.code !== undefined && Object.hasOwn(PARSE_ERRORS, err.code) ? PARSE_ERRORS[err.code] : undefined;
    const what = known ?? (err.reason || err.message || 'malformed request').replace(/^Parse Error: /, '');
    // Node's headers and request timeouts (RFC 9110 §15.5.9: 408, the request did not come in time).
    const error =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ServiceError('TIMEOUT', 'The request was not received in time (rest.headersTimeout, rest.requestTimeout)')
        : new ServiceError('INVALID', `Malformed HTTP request: ${what}`);
    // An answer still being written on this connection (pipelining) goes out first.
    const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (pending && !pending.writableFinished) {
      if (!pending.headersSent && !pending.req.complete) {
        // The request it answers is the broken one (a bad chunk in its body): answer it now.
        this.fail(pending, error, { Connection: 'close' });
        pending.once('finish', () => setTimeout(() => socket.destroy(), 2000).unref());
      } else if ([...this.streams].some((s) => s.res === pending)) {
        socket.destroy();
      } else {
        pending.once('finish', () => this.failRaw(socket, error));
        pending.once('close', () => socket.destroy());
      }
      return;
    }
    this.failRaw(socket, error);
  }

  /** CONNECT gets what any other unsupported method gets: 400/401, 404 NOTFOUND or 405 METHOD. */
  private connectRequest(req: IncomingMessage, socket: Duplex): void {
    socket.on('error', () => socket.destroy());
    const found = this.route(req);
    this.failRaw(socket, found instanceof ServiceError ? found : new ServiceError('METHOD', 'CONNECT is not supported'));
  }

  // ------------------------------------------------------------ request handling

  /**
   * The Host rule of RFC 7230 §5.4: exactly one Host header on HTTP/1.1 (at
   * most one on HTTP/1.0), with a valid `uri-host [":" port]` value. Returns
   * the host value that the loopback rule looks at (the authority of an
   * absolute-form target wins over Host), or an error.
   */
  private hostOf(req: IncomingMessage, authority: string | null): { value: string | undefined } | ServiceError {
    const raw = req.rawHeaders;
    let count = 0;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!;
      if (name.length === 4 && name.toLowerCase() === 'host') count++;
    }
    if (count > 1) return new ServiceError('INVALID', 'More than one Host header');
    const host = req.headers.host;
    if (host === undefined && req.httpVersion !== '1.0' && req.httpVersion !== '0.9') return new ServiceError('INVALID', 'Missing Host header');
    if (host !== undefined && this.verdict(host) === 'invalid') {
      return new ServiceError('INVALID', `Invalid Host header ${JSON.stringify(host)}: expected host[:port] (port digits only, IPv6 in brackets)`);
    }
    if (authority !== null) {
      if (authority.includes('@') || parseHost(authority) === null) return new ServiceError('INVALID', `Invalid authority in the request target: ${JSON.stringify(authority)}`);
      return { value: authority };
    }
    return { value: host };
  }

  private verdict(host: string): HostVerdict {
    let verdict = this.hostVerdicts.get(host);
    if (verdict === undefined) {
      verdict = hostVerdict(host);
      if (this.hostVerdicts.size >= 64) this.hostVerdicts.clear();
      this.hostVerdicts.set(host, verdict);
    }
    return verdict;
  }

  private authorize(host: string | undefined, req: IncomingMessage): ServiceError | null {
    if (this.tokenDigest) {
      const header = req.headers.authorization ?? '';
      const m = /^Bearer\s+(.+)$/i.exec(header.trim());
      const given = digest(m ? m[1]! : '');
      if (!m || !nodeCrypto().timingSafeEqual(given, this.tokenDigest)) return new ServiceError('UNAUTHORIZED', 'Missing or wrong bearer token');
      return null;
    }
    if (host === undefined || this.verdict(host) !== 'loopback') {
      return new ServiceError('UNAUTHORIZED', 'Without a REST token, requests must use a loopback host name (localhost, 127.0.0.1 or [::1])');
    }
    return null;
  }

  /**
   * Finds the route for a request: built-in routes first, then plugin
   * routes, so a plugin can add to the API but never shadow it. Within one
   * table a literal segment beats a parameter (`/v1/script/rules` before
   * `/v1/script/{id}`). `segments` is the path split at `/` (see matchIn).
   */
  private match(method: string, pathname: string, segments: readonly string[]): CompiledRoute | ServiceError {
    const builtin = matchIn(this.builtinTable, method, segments);
    if (builtin !== null && !('allow' in builtin)) return builtin;
    const plugin = matchIn(this.pluginTable, method, segments);
    if (plugin !== null && !('allow' in plugin)) return plugin;
    const allow = [...(builtin?.allow ?? []), ...(plugin?.allow ?? [])];
    if (allow.length === 0) return new ServiceError('NOTFOUND', `No such endpoint: ${pathname}`);
    const methods = [...new Set(allow)].join(', ');
    const e = new ServiceError('METHOD', `${method} is not allowed on ${pathname}; allowed: ${methods}`);
    (e as ServiceError & { allow?: string }).allow = methods;
    return e;
  }

  /** Host, authorization and routing of a request: its route, path segments and query, or the error to answer. */
  private route(req: IncomingMessage): RoutedRequest | ServiceError {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    // Host and authorization are checked for every request, before any routing answer (400/401 before 404).
    const known = this.routedTargets.get(method, url);
    const target = known === undefined ? splitTarget(url) : null;
    const host = this.hostOf(req, target === null ? null : target.authority);
    if (host instanceof ServiceError) return host;
    const denied = this.authorize(host.value, req);
    if (denied) return denied;
    if (known !== undefined) return known;
    const { authority, pathname, search } = target!;
    const segments = pathname.split('/');
    const found = this.match(method, pathname, segments);
    if (found instanceof ServiceError) return found;
    const routed: RoutedRequest = { compiled: found, segments, search };
    // Only origin form: an absolute-form target's authority is checked per request.
    if (authority === null) this.routedTargets.remember(method, url, routed);
    return routed;
  }

  /**
   * The dashboard's files (src/dashboard) at `/` and `/dashboard/*`. They
   * need no token (a browser opening the URL cannot send one; the page asks
   * for it and sends it with each API request); without a token they follow
   * the API's loopback Host rule, so a DNS-rebinding page cannot load them.
   * False when the request is not for the dashboard.
   */
  private dashboard(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? '/';
    // The API's requests pass by without parsing their target twice.
    if (url.startsWith('/v1/')) return false;
    const { authority, pathname } = splitTarget(url);
    if (!isDashboardPath(pathname)) return false;
    const host = this.hostOf(req, authority);
    const denied = host instanceof ServiceError ? host : this.tokenDigest ? null : this.authorize(host.value, req);
    try {
      if (denied) throw denied;
      serveDashboard(req, res, pathname);
    } catch (err) {
      this.fail(res, err, isServiceError(err) && err.code === 'INVALID' ? { Connection: 'close' } : {});
    }
    return true;
  }

  /**
   * The OAuth endpoints (`/oauth/*`, `/.well-known/*`; src/oauth/http.ts)
   * follow OAuth's rules, not the API's: an OAuth client has no REST token,
   * so none is asked for; without a REST token the loopback Host rule
   * holds, as for the dashboard. False when the request is not for them.
   */
  private oauthEndpoint(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? '/';
    if (url.startsWith('/v1/')) return false;
    const { authority, pathname, search } = splitTarget(url);
    if (!isOAuthPath(pathname)) return false;
    const host = this.hostOf(req, authority);
    const denied = host instanceof ServiceError ? host : this.tokenDigest ? null : this.authorize(host.value, req);
    if (denied) this.fail(res, denied, denied.code === 'INVALID' ? { Connection: 'close' } : {});
    else void this.server.oauthHttp().serve(req, res, pathname, search);
    return true;
  }

  /**
   * Answers one request. Synchronous as far as it can be: a request with no
   * body to wait for and a handler that answers at once costs no promise.
   */
  private dispatch(req: IncomingMessage, res: ServerResponse): void {
    let pending: Promise<void> | void;
    try {
      pending = this.serve(req, res);
    } catch (err) {
      this.fail(res, err);
      return;
    }
    if (pending !== undefined) pending.catch((err: unknown) => this.fail(res, err));
  }

  private serve(req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    if (this.oauthEndpoint(req, res)) return;
    if (this.dashboard(req, res)) return;
    const found = this.route(req);
    // A malformed request (bad Host) also ends the connection.
    if (found instanceof ServiceError) return this.fail(res, found, found.code === 'INVALID' ? { Connection: 'close' } : {});
    const { compiled, segments, search } = found;
    const params: Record<string, string | number> = {};
    for (const slot of compiled.slots) {
      const given = segments[slot.index + 1]!;
      let value: string;
      try {
        value = given.includes('%') ? decodeURIComponent(given) : given;
      } catch {
        return this.fail(res, new ServiceError('INVALID', `${slot.name}: bad URL encoding: ${given}`));
      }
      if (slot.integer) {
        if (!INTEGER.test(value)) return this.fail(res, new ServiceError('INVALID', `${slot.name}: expected an integer, got ${JSON.stringify(value)}`));
        params[slot.name] = Number(value);
      } else params[slot.name] = value;
    }
    const body = this.readBody(req, res, compiled);
    if (body instanceof Promise) return body.then((b) => this.answer(compiled.route, req, res, params, search, b));
    return this.answer(compiled.route, req, res, params, search, body);
  }

  /** Runs a route's handler on a request whose body has been read, and sends what it returns. */
  private answer(
    route: Route,
    req: IncomingMessage,
    res: ServerResponse,
    params: Record<string, string | number>,
    search: string,
    body: unknown,
  ): Promise<void> | void {
    if (body === NO_BODY) return;
    const ctx: RouteContext = { server: this.server, params, query: new URLSearchParams(search), body, req, res };
    if (route.stream) return this.openStream(ctx);
    if (route.path === '/v1/openapi.json') return this.send(res, 200, openApiDocument(this.routeTable, VERSION));
    const handled = route.handle(ctx);
    if (typeof (handled as PromiseLike<unknown> | null)?.then === 'function') {
      return Promise.resolve(handled).then((result) => this.result(route, ctx, result));
    }
    this.result(route, ctx, handled);
  }

  private result(route: Route, ctx: RouteContext, result: unknown): void {
    if (route.text && wantsText(ctx.req, ctx.query)) this.sendText(ctx.res, route.status, route.text(result));
    else if (route.json) {
      if (this.canAnswer(ctx.res)) this.sendJson(ctx.res, route.status, route.json(result));
    }
    else this.send(ctx.res, route.status, result);
    if (route.after) ctx.res.once('finish', () => route.after!(ctx));
  }

  /**
   * Reads and parses the JSON body; answers the error itself and returns
   * NO_BODY on failure. Without a body to read it answers at once, else with
   * a promise.
   */
  private readBody(req: IncomingMessage, res: ServerResponse, compiled: CompiledRoute): unknown {
    const route = compiled.route;
    const headers = req.headers;
    const length = headers['content-length'];
    const chunked = length === undefined && headers['transfer-encoding'] !== undefined;
    const hasBody = (length !== undefined && length !== '0') || chunked;
    // Without Content-Length or Transfer-Encoding there is no body to wait for
    // (event streams still read to the end, as they always have). A GET is
    // refused nothing here: a body-less request with no Content-Type is fine.
    if (!hasBody && !route.stream && req.method !== 'POST' && compiled.emptyBodyValid) return {};
    const json = isJson(headers['content-type']);
    // A chunked PUT/DELETE may turn out empty, and then it has no body: it is checked once read.
    if (!json && (req.method === 'POST' || (hasBody && !chunked))) {
      this.reject(req, res, unsupportedBody(req.method ?? '', hasBody, headers['content-type']));
      return NO_BODY;
    }
    if (length !== undefined && Number(length) > MAX_BODY) {
      this.reject(req, res, new ServiceError('TOOBIG', `Request body larger than ${MAX_BODY} bytes`));
      return NO_BODY;
    }
    if (!hasBody && !route.stream) return this.parseBody(res, compiled, '');
    if (!hasBody) return readAll(req, null, 0).then((read) => (read instanceof Buffer ? this.parseBody(res, compiled, read.toString('utf8')) : NO_BODY));
    // A declared length is held whole before a byte is read; a chunked body holds what has come.
    const declared = chunked ? 0 : Number(length);
    const hold = this.bodyBudget.tryHold(declared);
    if (hold) return this.readHeld(req, res, compiled, json, hold);
    // It waits unread (TCP holds the client back) as long as a body may be silent.
    const waiting = this.bodyBudget.wait(declared, this.bodyTimeout || DEFAULT_BODY_TIMEOUT);
    req.once('close', waiting.cancel);
    return waiting.hold.then((held) => {
      req.off('close', waiting.cancel);
      if (held) return this.readHeld(req, res, compiled, json, held);
      if (!res.destroyed) this.reject(req, res, this.bodyLimit(declared));
      return NO_BODY;
    });
  }

  /** The refusal of a body that found no room in `rest.maxBodyBytesInFlight`: 503 LIMIT, retry in a second. */
  private bodyLimit(bytes: number): ServiceError {
    const { inFlight, max } = this.bodyBudget;
    const e = new ServiceError(
      'LIMIT',
      `Too many request body octets in flight: ${inFlight} are held, the limit is ${max} (rest.maxBodyBytesInFlight), and ${bytes} more did not fit in time; retry later`,
    );
    (e as ServiceError & { retryAfter?: number }).retryAfter = 1;
    return e;
  }

  /** Reads a body that holds its share of the budget; the share goes back when the response is done. */
  private readHeld(req: IncomingMessage, res: ServerResponse, compiled: CompiledRoute, json: boolean, hold: BodyHold): Promise<unknown> {
    res.once('close', () => hold.release());
    return readAll(req, hold, this.bodyTimeout).then((read) => {
      // An event stream's body is done with once read: the stream may stay open for hours.
      if (compiled.route.stream) hold.release();
      if (read === 'aborted') return NO_BODY;
      if (read === 'timeout') {
        this.reject(req, res, new ServiceError('TIMEOUT', `No byte of the request body came for ${this.bodyTimeout} ms (rest.bodyTimeout)`));
        return NO_BODY;
      }
      if (read === 'limit') {
        this.reject(req, res, this.bodyLimit(0));
        return NO_BODY;
      }
      if (read === 'toobig') {
        this.reject(req, res, new ServiceError('TOOBIG', `Request body larger than ${MAX_BODY} bytes`));
        return NO_BODY;
      }
      if (!json && read.length > 0) {
        this.fail(res, unsupportedBody(req.method ?? '', true, req.headers['content-type']));
        return NO_BODY;
      }
      return this.parseBody(res, compiled, read.toString('utf8'));
    });
  }

  /** The JSON body of `text`, checked against the route's schema; answers the error itself and returns NO_BODY on failure. */
  private parseBody(res: ServerResponse, compiled: CompiledRoute, text: string): unknown {
    const route = compiled.route;
    let body: unknown = {};
    if (text.trim() !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        this.fail(res, new ServiceError('INVALID', 'Request body is not valid JSON'));
        return NO_BODY;
      }
    } else if (compiled.emptyBodyValid) return body;
    const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
    if (!isObject && !(route.allowArray && Array.isArray(body))) {
      this.fail(res, new ServiceError('INVALID', route.allowArray ? 'Request body must be a JSON object or array' : 'Request body must be a JSON object'));
      return NO_BODY;
    }
    try {
      // Arrays only reach here for routes that declare them (script rules), with a schema.
      validate(body, route.body ?? NO_FIELDS);
    } catch (err) {
      this.fail(res, err);
      return NO_BODY;
    }
    return body;
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
    // The spec's types and those loaded extensions declare (`events`).
    const valid = this.server.eventTypes();
    let types = valid as ServerEventType[];
    // `types=a,b` and `types=a&types=b` both work; an empty list would be a stream that never says anything.
    const wanted = query.getAll('types');
    if (wanted.length > 0) {
      const names = wanted.flatMap((v) => v.split(',')).map((s) => s.trim()).filter((s) => s !== '');
      if (names.length === 0) {
        return this.fail(res, new ServiceError('INVALID', `types: empty list; name at least one of ${valid.join(', ')}, or leave types out for all`));
      }
      for (const name of names) {
        if (!valid.includes(name)) {
          return this.fail(res, new ServiceError('INVALID', `Unknown event type ${JSON.stringify(name)}; valid types: ${valid.join(', ')}`));
        }
      }
      types = [...new Set(names)] as ServerEventType[];
    }
    const log = this.server.eventLog;
    let since: number | null;
    try {
      since = streamPosition(query, req.headers['last-event-id'], log.lastId);
    } catch (err) {
      return this.fail(res, err);
    }
    if (this.closing) return this.fail(res, new ServiceError('CANNOT', 'The server is stopping'));
    if (this.streams.size >= this.maxEventStreams) {
      const error = new ServiceError(
        'LIMIT',
        `Too many event streams: ${this.streams.size} are open, the limit is ${this.maxEventStreams} (rest.maxEventStreams); close one and retry`,
      );
      return this.fail(res, error, { 'Retry-After': '1' }, 503);
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    res.write(': connected\n\n');
    res.on('error', () => undefined);
    // The backlog after the client's position, written before any live event (all of this is synchronous).
    let replayBytes = 0;
    if (since !== null) {
      const parts: string[] = [];
      let from = since;
      if (since > log.lastId || log.lost(since)) {
        // An id from another server run, or older than the backlog: say so, then send all that is kept.
        parts.push(`event: gap\ndata: ${JSON.stringify({ since, oldest: log.oldestId, last: log.lastId })}\n\n`);
        from = 0;
      }
      const wantedTypes = new Set<string>(types);
      for (const e of log.after(from)) {
        if (e.json !== null && wantedTypes.has(e.type)) parts.push(`id: ${e.id}\nevent: ${e.type}\ndata: ${e.json}\n\n`);
      }
      // `since=now` names a moment, not an id: an id-only block (no event, per the SSE
      // spec it only sets the last event id) lets a reconnect resume from here.
      if (parts.length === 0 && query.get('since') === 'now') parts.push(`id: ${since}\n\n`);
      const text = parts.join('');
      replayBytes = Buffer.byteLength(text);
      if (text !== '') res.write(text);
    }
    const stream: EventStream = {
      res,
      types,
      ping: setInterval(() => this.deliver(stream, ': ping\n\n', 8), this.pingInterval),
      pending: [],
      pendingBytes: 0,
      ids: since !== null,
      limit: this.maxStreamBuffer + replayBytes,
    };
    stream.ping.unref();
    this.streams.add(stream);
    // One log listener for all streams: each event is serialized once, however many streams want it.
    this.stopRelay ??= log.listen((event) => this.relay(event));
    for (const type of types) {
      let set = this.subscribers.get(type);
      if (!set) this.subscribers.set(type, (set = new Set()));
      set.add(stream);
    }
    const cleanup = (): void => this.unsubscribe(stream);
    res.once('close', cleanup);
    req.once('close', cleanup);
  }

  /** Sends a logged event to the streams that want its type. */
  private relay(event: LoggedEvent): void {
    const subscribers = this.subscribers.get(event.type);
    if (!subscribers || event.json === null) return; // never let a stream break the operation that emitted the event
    let plain: string | null = null;
    let withId: string | null = null;
    for (const s of subscribers) {
      if (s.ids) {
        withId ??= `id: ${event.id}\nevent: ${event.type}\ndata: ${event.json}\n\n`;
        this.deliver(s, withId, Buffer.byteLength(withId));
      } else {
        plain ??= `event: ${event.type}\ndata: ${event.json}\n\n`;
        this.deliver(s, plain, Buffer.byteLength(plain));
      }
    }
  }

  /**
   * Writes to a stream unless the client has fallen behind: a stream whose
   * queued bytes (in the socket and held here) passed `maxStreamBuffer` is
   * closed instead, so a client that does not read costs at most the limit
   * plus one event. The client may reconnect (EventSource does).
   */
  private deliver(stream: EventStream, text: string, bytes: number): void {
    const { res } = stream;
    if (res.destroyed || res.writableEnded) return this.unsubscribe(stream);
    if (res.writableLength + stream.pendingBytes > stream.limit) {
      this.unsubscribe(stream);
      res.destroy();
      return;
    }
    if (stream.pending.length === 0 && !res.writableNeedDrain) {
      res.write(text);
      return;
    }
    if (stream.pending.length === 0) res.once('drain', () => this.flush(stream));
    stream.pending.push(text);
    stream.pendingBytes += bytes;
  }

  /** Writes what a stream held while its socket was full, as one chunk. */
  private flush(stream: EventStream): void {
    const text = stream.pending.join('');
    stream.pending = [];
    stream.pendingBytes = 0;
    if (!stream.res.destroyed && !stream.res.writableEnded) stream.res.write(text);
  }

  private unsubscribe(stream: EventStream): void {
    if (!this.streams.delete(stream)) return;
    clearInterval(stream.ping);
    stream.pending = [];
    stream.pendingBytes = 0;
    for (const type of stream.types) {
      const set = this.subscribers.get(type);
      if (!set) continue;
      set.delete(stream);
      if (set.size === 0) this.subscribers.delete(type);
    }
  }
}

/**
 * The position a stream starts after: `Last-Event-ID` (a reconnecting
 * EventSource) wins over `since`; `since=now` is the newest id (live events
 * only, but with ids). Null: neither given, a plain stream of live events
 * without ids, as the spec shows it.
 */
function streamPosition(query: URLSearchParams, header: string | string[] | undefined, last: number): number | null {
  const lastEventId = Array.isArray(header) ? header[0] : header;
  if (lastEventId !== undefined && lastEventId.trim() !== '') {
    const t = lastEventId.trim();
    if (!INTEGER.test(t)) throw new ServiceError('INVALID', `Last-Event-ID: expected an event id (digits), got ${JSON.stringify(t)}`);
    return Number(t);
  }
  const given = query.getAll('since');
  if (given.length === 0) return null;
  if (given.length > 1) throw new ServiceError('INVALID', 'since: given more than once');
  const v = given[0]!;
  if (v === 'now') return last;
  if (!INTEGER.test(v)) throw new ServiceError('INVALID', `since: expected an event id (digits) or now, got ${JSON.stringify(v)}`);
  return Number(v);
}

/**
 * The parts of a request target. The path is split by hand, not by the URL
 * parser: it would drop `%2E%2E` and `%2E` segments as `..` and `.`, and
 * those are mailbox names like any other. In absolute form
 * (`GET http://localhost:8025/v1/users`) the authority is the host (RFC 7230 §5.4).
 */
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;
const QUERY_OR_FRAGMENT = /[?#]/;

function splitTarget(url: string): { authority: string | null; pathname: string; search: string } {
  let target = url;
  let authority: string | null = null;
  // Origin form (`/v1/...`), what every client but a proxy sends, has no scheme to look for.
  const absolute = url.charCodeAt(0) === 0x2f ? null : ABSOLUTE.exec(target);
  if (absolute) {
    authority = absolute[1]!;
    target = target.slice(absolute[0].length);
    if (!target.startsWith('/')) target = `/${target}`;
  }
  const at = target.search(QUERY_OR_FRAGMENT);
  const pathname = at < 0 ? target : target.slice(0, at);
  const search = at >= 0 && target[at] === '?' ? target.slice(at + 1).split('#')[0]! : '';
  return { authority, pathname, search };
}

const NO_BODY = Symbol('no body');

/** No headers beyond the usual three (a shared object: `send` tells it apart by identity). */
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

const INTEGER = /^[0-9]{1,15}$/;

/** What `route` found for a request: its route, the path split at `/` (see matchIn) and the query. */
interface RoutedRequest {
  readonly compiled: CompiledRoute;
  readonly segments: readonly string[];
  readonly search: string;
}

/** Targets longer than this are routed afresh every time (a long query is rarely repeated). */
const MAX_REMEMBERED_TARGET = 512;
const MAX_REMEMBERED_TARGETS = 256;

/**
 * Routed origin-form targets, by method and target string. Clients repeat
 * their targets (a test polls the same mailbox), and what a target routes
 * to depends on nothing else, so one seen before is not split and matched
 * again. Bounded in entries and key length so that odd targets cannot
 * grow it; cleared when full, like the Host verdicts.
 */
class RoutedTargets {
  private readonly byMethod = new Map<string, Map<string, RoutedRequest>>();
  private size = 0;

  get(method: string, url: string): RoutedRequest | undefined {
    return this.byMethod.get(method)?.get(url);
  }

  /** Shared by every later request with this target: frozen, as nothing may change it. */
  remember(method: string, url: string, routed: RoutedRequest): void {
    if (url.length > MAX_REMEMBERED_TARGET) return;
    if (this.size >= MAX_REMEMBERED_TARGETS) {
      this.byMethod.clear();
      this.size = 0;
    }
    let urls = this.byMethod.get(method);
    if (urls === undefined) this.byMethod.set(method, (urls = new Map()));
    Object.freeze(routed.segments);
    urls.set(url, Object.freeze(routed));
    this.size++;
  }
}

/** True for a Content-Type of `application/json`, with or without parameters, in any case. */
function isJson(contentType: string | undefined): boolean {
  if (contentType === 'application/json') return true;
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/**
 * The 415 in words: what was sent, and that a POST needs the header even
 * without a body (the spec's rule, which a `curl -X POST` without `-H`
 * breaks).
 */
function unsupportedBody(method: string, hasBody: boolean, contentType: string | undefined): ServiceError {
  const sent = contentType === undefined ? 'no Content-Type' : `Content-Type ${JSON.stringify(contentType.slice(0, 100))}`;
  const rule =
    method === 'POST' && !hasBody
      ? 'Every POST must carry Content-Type: application/json, even one without a body'
      : 'Request bodies must be sent as Content-Type: application/json';
  return new ServiceError('UNSUPPORTED', `${rule}, got ${sent} (curl: -H 'Content-Type: application/json')`);
}

/**
 * The whole body of a request, or why there is none: `toobig` past
 * MAX_BODY (what came is dropped, the rest is not read), `aborted` when the
 * request breaks off (a parse error in its body, the connection gone; the
 * clientError handler or the closed socket takes care of the answer),
 * `timeout` when no byte came for `idle` ms (0: no limit), `limit` when a
 * chunked body's next chunk found no room in the budget (`hold` grows by
 * each chunk of a body without a declared length; a declared one holds its
 * length already).
 */
function readAll(req: IncomingMessage, hold: BodyHold | null, idle: number): Promise<Buffer | 'toobig' | 'aborted' | 'timeout' | 'limit'> {
  const grows = hold !== null && hold.bytes === 0;
  return new Promise((resolve) => {
    let first: Buffer | null = null;
    let chunks: Buffer[] | null = null;
    let size = 0;
    let timer: NodeJS.Timeout | null = null;
    const stop = (why: 'toobig' | 'timeout' | 'limit'): void => {
      req.off('data', onData);
      if (timer) clearTimeout(timer);
      first = null;
      chunks = null;
      resolve(why);
    };
    const arm = (): void => {
      if (idle <= 0) return;
      if (timer) timer.refresh();
      else timer = setTimeout(() => stop('timeout'), idle);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MAX_BODY) return stop('toobig');
      if (grows && !hold.grow(chunk.length)) return stop('limit');
      arm();
      // Most bodies come in one chunk: no list and no copy for them.
      if (first === null) first = chunk;
      else (chunks ??= [first]).push(chunk);
    };
    const done = (result: Buffer | 'aborted'): void => {
      if (timer) clearTimeout(timer);
      resolve(result);
    };
    arm();
    req.on('data', onData);
    req.once('end', () => done(chunks !== null ? Buffer.concat(chunks) : (first ?? EMPTY)));
    req.once('error', () => done('aborted'));
    req.once('close', () => done('aborted'));
  });
}

const EMPTY = Buffer.alloc(0);

export type { Method, Route };

/**
 * True when the request asks for `text/plain` over JSON: `?format=text`, or
 * an Accept header whose quality for text/plain is above that of
 * application/json (RFC 9110 §12.5.1; the more specific range wins). Equal
 * or absent: JSON, the API's default.
 */
function wantsText(req: IncomingMessage, query: URLSearchParams): boolean {
  const format = query.get('format');
  if (format !== null) return format === 'text';
  const accept = req.headers.accept;
  if (!accept) return false;
  return acceptQuality(accept, 'text', 'plain') > acceptQuality(accept, 'application', 'json');
}

function acceptQuality(accept: string, type: string, subtype: string): number {
  let best = -1;
  let quality = 0;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const [t, s] = range.trim().split('/');
    const specificity = t === type && s === subtype ? 2 : t === type && s === '*' ? 1 : t === '*' && s === '*' ? 0 : -1;
    if (specificity <= best) continue;
    best = specificity;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find((m) => m)?.[1];
    quality = q === undefined ? 1 : Number(q) || 0;
  }
  return quality;
}

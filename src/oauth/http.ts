/**
 * The OAuth endpoints on the REST listener. They follow OAuth's rules, not
 * the REST spec's: form-encoded requests (JSON is taken too), errors as
 * RFC 6749 section 5.2 `{ error, error_description }` (the authorization endpoint
 * redirects its errors, section 4.1.2.1), no REST bearer token (an OAuth client
 * has none; clients authenticate with their own credentials). The
 * `/v1/oauth/...` control routes are REST routes (src/oauth/routes.ts).
 *
 * Bodies are read up to MAX_FORM octets with an idle limit, so a peer that
 * floods or stalls costs bounded memory and time.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ScriptRule } from '../script/rule.js';
import { GRANT_COMMANDS, OAuthError, type AuthorizationRequest, type OAuthService, type TokenResponse } from './service.js';
import type { GrantType } from './options.js';
import { GRANT_TYPES } from './options.js';

export const MAX_FORM = 64 * 1024;
const BODY_IDLE_MS = 10_000;

export const OAUTH_PATHS = [
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
  '/oauth/authorize',
  '/oauth/token',
  '/oauth/device_authorization',
  '/oauth/device',
  '/oauth/revoke',
  '/oauth/introspect',
  '/oauth/jwks',
] as const;

/** True for a request target the OAuth endpoints answer (the path and all below /oauth/). */
export function isOAuthPath(pathname: string): boolean {
  return pathname.startsWith('/oauth/') || pathname === '/oauth' || pathname.startsWith('/.well-known/');
}

type Params = Map<string, string>;

interface Answer {
  status: number;
  body: string;
  type: string;
  headers?: Record<string, string>;
}

const json = (status: number, value: unknown, headers: Record<string, string> = {}): Answer => ({
  status, body: JSON.stringify(describedAsRfc(value)), type: 'application/json; charset=utf-8', headers,
});

/**
 * RFC 6749 section 5.2: `error_description` holds only %x20-21 / %x23-5B / %x5D-7E
 * (no `"`, no backslash, nothing past ASCII). Our texts cite sections with
 * a section sign and quote names with JSON: both are rewritten here, once,
 * for every error this server answers.
 */
export function oauthDescription(text: string): string {
  return text.replace(/\u00a7/g, 'section ').replace(/"/g, "'").replace(/\\/g, '/').replace(/[^\x20-\x7e]/g, '?');
}

function describedAsRfc(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, 'error_description')) return value;
  const described = (value as { error_description: unknown }).error_description;
  return typeof described === 'string' ? { ...value, error_description: oauthDescription(described) } : value;
}

function errorAnswer(err: OAuthError): Answer {
  const headers: Record<string, string> = {};
  // RFC 6749 section 5.2: invalid_client from the token endpoint is 401 with WWW-Authenticate (a must when Basic was tried).
  if (err.status === 401) headers['WWW-Authenticate'] = 'Basic realm="rookery"';
  if (err.status === 503) headers['Retry-After'] = '1';
  return json(err.status, { error: err.error, error_description: err.description }, headers);
}

const STATUS_OF: Readonly<Record<string, number>> = { invalid_client: 401, temporarily_unavailable: 503, server_error: 500 };

export class OAuthHttp {
  constructor(private readonly service: OAuthService) {}

  /** Answers one request to an OAuth path. Never throws: every failure is an answer. */
  async serve(req: IncomingMessage, res: ServerResponse, pathname: string, search: string): Promise<void> {
    let answer: Answer;
    try {
      answer = await this.route(req, res, pathname, new URLSearchParams(search));
    } catch (err) {
      answer = err instanceof OAuthError ? errorAnswer(err) : json(500, { error: 'server_error', error_description: `Unexpected error: ${(err as Error).message}` });
    }
    const delay = this.service.settings.delay;
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    send(res, answer);
  }

  private async route(req: IncomingMessage, res: ServerResponse, pathname: string, query: URLSearchParams): Promise<Answer> {
    const method = req.method ?? 'GET';
    const only = (...methods: string[]): Answer | null =>
      methods.includes(method) ? null : json(405, { error: 'invalid_request', error_description: `${method} is not allowed on ${pathname}; allowed: ${methods.join(', ')}` }, { Allow: methods.join(', ') });
    switch (pathname) {
      case '/.well-known/oauth-authorization-server':
        return only('GET') ?? json(200, this.metadata(false));
      case '/.well-known/openid-configuration':
        return only('GET') ?? json(200, this.metadata(true));
      case '/oauth/jwks':
        return only('GET') ?? json(200, this.service.jwt.jwks());
      case '/oauth/authorize': {
        // RFC 6749 section 3.1: GET must work, POST may.
        const refused = only('GET', 'POST');
        if (refused) return refused;
        const params = method === 'POST' ? await readParams(req) : toMap(query);
        return this.authorize(params, res);
      }
      case '/oauth/device': {
        const refused = only('GET', 'POST');
        if (refused) return refused;
        return this.verificationPage(method === 'POST' ? await readParams(req) : toMap(query), method === 'POST');
      }
      case '/oauth/token':
      case '/oauth/device_authorization':
      case '/oauth/revoke':
      case '/oauth/introspect': {
        const refused = only('POST');
        if (refused) return refused;
        const params = await readParams(req);
        return this.postEndpoint(pathname, req, params);
      }
      default:
        return json(404, { error: 'invalid_request', error_description: `No such OAuth endpoint: ${pathname}; the endpoints are in /.well-known/oauth-authorization-server` });
    }
  }

  /** RFC 8414 section 2 metadata; OpenID discovery adds what its clients insist on. */
  metadata(openid: boolean): Record<string, unknown> {
    const issuer = this.service.issuer();
    const auth = ['client_secret_basic', 'client_secret_post', 'none'];
    return {
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      device_authorization_endpoint: `${issuer}/oauth/device_authorization`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      introspection_endpoint: `${issuer}/oauth/introspect`,
      jwks_uri: `${issuer}/oauth/jwks`,
      scopes_supported: [...this.service.scopes],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: [...GRANT_TYPES],
      token_endpoint_auth_methods_supported: auth,
      revocation_endpoint_auth_methods_supported: auth,
      introspection_endpoint_auth_methods_supported: auth,
      code_challenge_methods_supported: ['S256', 'plain'],
      authorization_response_iss_parameter_supported: true,
      ...(openid ? { subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['ES256'] } : {}),
    };
  }

  private async authorize(params: Params, res: ServerResponse): Promise<Answer> {
    const get = (k: string): string | null => params.get(k) ?? null;
    const req: AuthorizationRequest = {
      clientId: get('client_id') ?? '', redirectUri: get('redirect_uri'), scope: get('scope'), state: get('state'),
      codeChallenge: get('code_challenge'), codeChallengeMethod: get('code_challenge_method'), loginHint: get('login_hint'), responseType: get('response_type'),
    };
    // Errors about the client or the redirect URI are shown, not redirected (RFC 6749 section 4.1.2.1).
    let target;
    try {
      if (req.clientId === '') throw new OAuthError('invalid_request', 'client_id is required');
      target = this.service.authorizationTarget(req);
    } catch (err) {
      if (err instanceof OAuthError) {
        this.service.emitEvent('rejected', req.clientId || null, null, null, 'authorize', `${err.error}: ${err.description}`);
        return errorAnswer(new OAuthError(err.error, err.description, 400));
      }
      throw err;
    }
    const back = (values: Record<string, string>): Answer => {
      const url = new URL(target.redirectUri);
      for (const [k, v] of Object.entries(values)) url.searchParams.set(k, k === 'error_description' ? oauthDescription(v) : v);
      if (req.state !== null) url.searchParams.set('state', req.state);
      // RFC 9207: the issuer in the answer, so a client talking to several servers cannot be mixed up.
      url.searchParams.set('iss', this.service.issuer());
      return { status: 302, body: '', type: 'text/plain; charset=utf-8', headers: { Location: url.toString() } };
    };
    const fault = await this.fault('authorize', req.loginHint, paramsText(params));
    if (fault === 'http_500') return internalError();
    if (fault !== null && fault !== 'no_refresh_token' && fault !== 'revoke_refresh_token') return back({ error: fault, error_description: 'injected fault (on: "oauth" rule)' });
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    try {
      return back(await this.service.authorize(req, target.client, target.redirectUri, gone.signal));
    } catch (err) {
      if (err instanceof OAuthError) {
        this.service.emitEvent('rejected', target.client.id, null, null, 'authorize', `${err.error}: ${err.description}`);
        return back({ error: err.error, error_description: err.description });
      }
      throw err;
    }
  }

  /** The device flow's verification page (RFC 8628 section 3.3): shows the request; a POST approves or denies it. */
  private verificationPage(params: Params, post: boolean): Answer {
    const code = params.get('user_code');
    const page = (status: number, text: string): Answer => ({ status, body: `<!doctype html><title>Rookery device login</title><p>${escapeHtml(text)}</p>`, type: 'text/html; charset=utf-8' });
    if (code === undefined) return page(200, 'Enter the code shown on your device: GET /oauth/device?user_code=XXXX-XXXX');
    let info;
    try {
      if (post) {
        const action = params.get('action') ?? 'approve';
        const user = params.get('user');
        this.service.settleDevice(code, { decision: action === 'deny' ? 'deny' : 'approve', ...(user ? { user } : {}) });
      }
      info = this.service.device(code);
    } catch (err) {
      return page(404, (err as Error).message);
    }
    if (info.state !== 'pending') return page(200, `Device code ${info.userCode}: ${info.state}. You may close this page.`);
    return {
      status: 200,
      type: 'text/html; charset=utf-8',
      body: `<!doctype html><title>Rookery device login</title><p>Client ${escapeHtml(info.client)} asks for ${escapeHtml(info.scope.join(' '))}.</p>` +
        `<form method="post"><input type="hidden" name="user_code" value="${escapeHtml(info.userCode)}"><input name="user" placeholder="user">` +
        `<button name="action" value="approve">Approve</button><button name="action" value="deny">Deny</button></form>`,
    };
  }

  private async postEndpoint(pathname: string, req: IncomingMessage, params: Params): Promise<Answer> {
    try {
      const { id, secret } = clientCredentials(req, params);
      const grantType = params.get('grant_type') ?? null;
      const command =
        pathname === '/oauth/token'
          ? grantType !== null && (GRANT_TYPES as readonly string[]).includes(grantType) ? GRANT_COMMANDS[grantType as GrantType] : 'token'
          : pathname.slice('/oauth/'.length);
      const fault = await this.fault(command, null, paramsText(params));
      if (fault === 'http_500') return internalError();
      if (fault === 'revoke_refresh_token') {
        const t = params.get('refresh_token') ?? params.get('token');
        if (t !== undefined) this.service.revokeBehindBack(t);
      } else if (fault !== null && fault !== 'no_refresh_token' && !(fault === 'slow_down' && command === 'device_code')) {
        throw new OAuthError(fault, 'injected fault (on: "oauth" rule)', STATUS_OF[fault] ?? 400);
      }
      const verb = pathname.slice('/oauth/'.length);
      const client = this.service.authenticateClient(id, secret, command);
      if (verb === 'device_authorization') return json(200, this.service.deviceAuthorization(client, params.get('scope') ?? null), NO_STORE);
      if (verb === 'revoke') {
        const token = params.get('token');
        if (token === undefined) throw new OAuthError('invalid_request', 'token is required (RFC 7009 section 2.1)');
        this.service.revokeToken(client, token, params.get('token_type_hint') ?? null);
        return json(200, {}, NO_STORE);
      }
      if (verb === 'introspect') {
        const token = params.get('token');
        if (token === undefined) throw new OAuthError('invalid_request', 'token is required (RFC 7662 section 2.1)');
        return json(200, this.service.introspect(token), NO_STORE);
      }
      let response: TokenResponse;
      switch (grantType) {
        case 'authorization_code':
          response = this.service.exchangeCode(client, params.get('code') ?? null, params.get('redirect_uri') ?? null, params.get('code_verifier') ?? null);
          break;
        case 'refresh_token':
          response = this.service.refresh(client, params.get('refresh_token') ?? null, params.get('scope') ?? null, fault === 'no_refresh_token');
          break;
        case 'client_credentials':
          response = this.service.clientCredentials(client, params.get('scope') ?? null);
          break;
        case 'urn:ietf:params:oauth:grant-type:device_code':
          response = this.service.pollDevice(client, params.get('device_code') ?? null, performance.now(), fault === 'slow_down');
          break;
        case null:
          throw new OAuthError('invalid_request', 'grant_type is required');
        default:
          throw new OAuthError('unsupported_grant_type', `grant_type ${JSON.stringify(grantType.slice(0, 100))}: one of ${GRANT_TYPES.join(', ')}`);
      }
      if (fault === 'no_refresh_token') delete response.refresh_token;
      return json(200, response, NO_STORE);
    } catch (err) {
      if (err instanceof OAuthError) return errorAnswer(err);
      throw err;
    }
  }

  /** The acting on: "oauth" rule's fault after its delay, or null. */
  private async fault(command: string, user: string | null, text: string): Promise<string | null> {
    const rule: ScriptRule | null = this.service.fault(command, user, text);
    if (!rule) return null;
    if (rule.delay) await new Promise((resolve) => setTimeout(resolve, rule.delay));
    return typeof rule.send === 'string' ? rule.send : null;
  }
}

const NO_STORE = { Pragma: 'no-cache' };

function internalError(): Answer {
  return { status: 500, body: '<html><body><h1>500 Internal Server Error</h1></body></html>', type: 'text/html; charset=utf-8' };
}

function send(res: ServerResponse, answer: Answer): void {
  if (res.destroyed || res.headersSent) return;
  const length = Buffer.byteLength(answer.body);
  // RFC 6749 section 5.1: token answers must not be cached; no other answer here should be either.
  res.writeHead(answer.status, { 'Content-Type': answer.type, 'Content-Length': length, 'Cache-Control': 'no-store', ...answer.headers });
  res.end(answer.body);
}

function toMap(query: URLSearchParams): Params {
  const out: Params = new Map();
  for (const [k, v] of query) {
    // RFC 6749 section 3.1: a parameter sent twice is an error; the first stays and the request fails in parse below.
    if (out.has(k)) throw new OAuthError('invalid_request', `parameter ${JSON.stringify(k.slice(0, 64))} is given more than once (RFC 6749 section 3.1)`);
    out.set(k, v);
  }
  return out;
}

/** The request's parameters as text for a rule's `match` (secrets left out). */
function paramsText(params: Params): string {
  return [...params].filter(([k]) => k !== 'client_secret').map(([k, v]) => `${k}=${v}`).join('&');
}

/**
 * Client credentials (RFC 6749 section 2.3.1): HTTP Basic with the form-encoded
 * id and secret, or `client_id` / `client_secret` in the body, never both.
 */
function clientCredentials(req: IncomingMessage, params: Params): { id: string | null; secret: string | null } {
  const header = req.headers.authorization;
  const bodyId = params.get('client_id') ?? null;
  const bodySecret = params.get('client_secret') ?? null;
  if (typeof header === 'string' && /^basic /i.test(header)) {
    if (bodySecret !== null) throw new OAuthError('invalid_request', 'client authentication both by Basic and in the body (RFC 6749 section 2.3: one method only)');
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const at = decoded.indexOf(':');
    if (at < 0) throw new OAuthError('invalid_client', 'Basic credentials without a colon', 401);
    let id: string;
    let secret: string;
    try {
      id = decodeURIComponent(decoded.slice(0, at).replace(/\+/g, ' '));
      secret = decodeURIComponent(decoded.slice(at + 1).replace(/\+/g, ' '));
    } catch {
      throw new OAuthError('invalid_client', 'Basic credentials are not form-encoded', 401);
    }
    if (bodyId !== null && bodyId !== id) throw new OAuthError('invalid_request', 'client_id differs from the Basic credentials');
    return { id, secret };
  }
  return { id: bodyId, secret: bodySecret };
}

/**
 * A POST body as parameters: `application/x-www-form-urlencoded` (what
 * RFC 6749 section 3.2 prescribes) or a JSON object of strings (some clients
 * send it). Bounded in size and in the time between bytes.
 */
function readParams(req: IncomingMessage): Promise<Params> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_FORM) {
    req.resume();
    return Promise.reject(new OAuthError('invalid_request', `request body larger than ${MAX_FORM} octets`, 413));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err: OAuthError | null, value?: Params): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      if (err) {
        req.resume();
        reject(err);
      } else resolve(value!);
    };
    const timer = setTimeout(() => finish(new OAuthError('invalid_request', `no byte of the body came for ${BODY_IDLE_MS} ms`, 408)), BODY_IDLE_MS);
    timer.unref();
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MAX_FORM) return finish(new OAuthError('invalid_request', `request body larger than ${MAX_FORM} octets`, 413));
      chunks.push(chunk);
      timer.refresh();
    };
    req.on('data', onData);
    req.once('error', () => finish(new OAuthError('invalid_request', 'the request broke off')));
    req.once('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        if (text.trim() === '') return finish(null, new Map());
        if (type === 'application/json') return finish(null, jsonParams(text));
        if (type !== 'application/x-www-form-urlencoded') {
          return finish(new OAuthError('invalid_request', `Content-Type ${JSON.stringify(type.slice(0, 100))}: send application/x-www-form-urlencoded (RFC 6749 section 3.2)`, 415));
        }
        finish(null, toMap(new URLSearchParams(text)));
      } catch (err) {
        finish(err instanceof OAuthError ? err : new OAuthError('invalid_request', (err as Error).message));
      }
    });
  });
}

function jsonParams(text: string): Params {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new OAuthError('invalid_request', 'the body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new OAuthError('invalid_request', 'a JSON body must be an object of parameters');
  const out: Params = new Map();
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string') out.set(k, v);
    else if (typeof v === 'number' || typeof v === 'boolean') out.set(k, String(v));
    else throw new OAuthError('invalid_request', `parameter ${JSON.stringify(k.slice(0, 64))}: expected a string`);
  }
  return out;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

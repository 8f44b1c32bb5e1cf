/**
 * The OAuth endpoints' fuzzer: seeded requests to /oauth/* with bodies
 * form-encoded or JSON (and broken: bad encoding, repeated parameters,
 * huge values, `__proto__` keys, wrong content types), every parameter
 * drawn from good values, near misses and junk. Each request is rebuilt
 * from (seed, index) alone, so a finding names all a replay needs.
 *
 * Checks on every answer (OAuth's rules, RFC 6749 §5.2, not the REST
 * spec's): no 5xx (no faults are set), `Cache-Control: no-store`; an error
 * is a JSON object with `error` from the RFC codes and a string
 * `error_description`; a 401 carries WWW-Authenticate; a 302 comes only
 * from /oauth/authorize and goes to a loopback URI; a 200 from the token
 * endpoint is a token response.
 *
 * Used by test/fuzz/oauth-fuzz.test.ts (a short run) and bench/fuzz-rest.ts.
 */
import { Prng } from '../../src/util/prng.js';

export interface OAuthFinding {
  seed: number;
  index: number;
  problem: string;
  request: string;
  response: string;
}

const ERRORS = new Set([
  'invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope',
  'access_denied', 'unsupported_response_type', 'server_error', 'temporarily_unavailable', 'authorization_pending', 'slow_down', 'expired_token',
]);

const JUNK = ['', ' ', '%', '%zz', '\u0000', 'ü', 'x'.repeat(5000), '__proto__', 'constructor', 'a b', '+', '&', '=', '"', '<script>'];
const GRANTS = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code', 'password', 'implicit', 'Refresh_Token', ''];
const CLIENTS = ['testclient', 'testpublic', 'nobody', 'testclient:', ''];
const SECRETS = ['testsecret', 'wrong', ''];
const SCOPES = ['https://mail.google.com/', 'openid', 'https://mail.google.com/ offline_access', 'nope', '  ', 'openid  email'];
const REDIRECTS = ['http://127.0.0.1:5000/cb', 'http://[::1]:1/x', 'http://localhost/cb', 'https://evil.example/cb', 'http://127.0.0.1/cb#frag', 'not a uri', ''];
const CHALLENGES = ['E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', 'short', 'x'.repeat(129), ''];
const ENDPOINTS = ['/oauth/token', '/oauth/token', '/oauth/token', '/oauth/revoke', '/oauth/introspect', '/oauth/device_authorization', '/oauth/authorize', '/oauth/device', '/oauth/nope', '/.well-known/openid-configuration', '/oauth/jwks'];
const TYPES = ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded', 'application/json', 'text/plain', '', 'application/x-www-form-urlencoded; charset=utf-8', 'multipart/form-data; boundary=x'];
const METHODS = ['POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE', 'HEAD'];

class Gen {
  readonly rng: Prng;
  constructor(seed: number) {
    this.rng = new Prng(seed);
  }
  chance(p: number): boolean {
    return this.rng.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.rng.below(items.length)]!;
  }
}

/** One request: method, target, headers, body; `tokens` are good token strings the run has seen (for refresh, revoke, introspect). */
export interface OAuthRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export function buildOAuthRequest(seed: number, index: number, tokens: readonly string[]): OAuthRequest {
  const g = new Gen((seed * 7919 + index * 104729) >>> 0);
  const path = g.pick(ENDPOINTS);
  const method = path === '/oauth/authorize' || path === '/oauth/device' || path.startsWith('/.well') || path === '/oauth/jwks' ? g.pick(['GET', 'GET', 'POST', 'PUT']) : g.pick(METHODS);
  const value = (list: readonly string[]): string => (g.chance(0.15) ? g.pick(JUNK) : g.chance(0.2) && tokens.length > 0 ? g.pick(tokens) : g.pick(list));
  const params: [string, string][] = [];
  const add = (k: string, list: readonly string[], p = 0.8): void => {
    if (g.chance(p)) params.push([k, value(list)]);
  };
  add('grant_type', GRANTS);
  add('client_id', CLIENTS, 0.5);
  add('client_secret', SECRETS, 0.3);
  add('scope', SCOPES, 0.4);
  add('code', tokens.length ? tokens : ['ac_x'], 0.3);
  add('refresh_token', tokens.length ? tokens : ['rt_x'], 0.4);
  add('device_code', tokens.length ? tokens : ['dc_x'], 0.2);
  add('redirect_uri', REDIRECTS, 0.4);
  add('code_verifier', CHALLENGES, 0.2);
  add('code_challenge', CHALLENGES, 0.3);
  add('code_challenge_method', ['S256', 'plain', 's256', 'md5'], 0.2);
  add('response_type', ['code', 'token', 'id_token', ''], 0.6);
  add('token', tokens.length ? tokens : ['at_x'], 0.3);
  add('token_type_hint', ['access_token', 'refresh_token', 'bogus'], 0.2);
  add('state', ['s', 'a&b', 'ü'], 0.3);
  add('user_code', ['BCDF-GHJK', 'bcdfghjk', 'x'], 0.2);
  if (g.chance(0.1)) params.push([g.pick(['__proto__', 'constructor', 'hasOwnProperty']), 'x']);
  if (g.chance(0.1) && params.length > 0) params.push(params[0]!);
  const type = g.pick(TYPES);
  let body = '';
  if (method !== 'GET' && method !== 'HEAD') {
    if (type === 'application/json') {
      body = g.chance(0.1) ? g.pick(['[', '[]', 'null', '{"a":{}}', '{"grant_type":5}', '"x"']) : JSON.stringify(Object.fromEntries(params));
    } else {
      body = params.map(([k, v]) => `${encodeURIComponent(k)}=${g.chance(0.05) ? '%zz' : encodeURIComponent(v)}`).join('&');
    }
  }
  const query = method === 'GET' ? `?${params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}` : '';
  const headers: Record<string, string> = {};
  if (body !== '' || g.chance(0.5)) headers['Content-Type'] = type;
  if (g.chance(0.3)) {
    const id = g.pick(CLIENTS);
    const secret = g.pick(SECRETS);
    headers.Authorization = g.chance(0.1) ? g.pick(['Basic', 'Basic !!!', 'Bearer x', `Basic ${Buffer.from('nocolon').toString('base64')}`]) : `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  }
  return { method, path: `${path}${query}`, headers, body };
}

/** The problems of one answer, by OAuth's rules; none: []. */
export function checkOAuthAnswer(req: OAuthRequest, status: number, headers: Headers, text: string): string[] {
  const problems: string[] = [];
  if (status >= 500) problems.push(`status ${status} without a fault set`);
  if (headers.get('cache-control') !== 'no-store') problems.push(`Cache-Control ${headers.get('cache-control')}`);
  if (headers.get('access-control-allow-origin') !== null) problems.push('a CORS header');
  if (status === 302) {
    if (!req.path.startsWith('/oauth/authorize')) problems.push('302 from another endpoint than /oauth/authorize');
    const location = headers.get('location') ?? '';
    let host = '';
    try {
      host = new URL(location).hostname;
    } catch {
      problems.push(`302 to an unparsable Location ${JSON.stringify(location)}`);
    }
    if (!['127.0.0.1', '[::1]', 'localhost'].includes(host)) problems.push(`302 to a non-loopback URI ${location}`);
    return problems;
  }
  if (status === 401 && !headers.get('www-authenticate')) problems.push('401 without WWW-Authenticate');
  if (req.method === 'HEAD' || (headers.get('content-type') ?? '').startsWith('text/html')) return problems;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    problems.push(`not JSON: ${text.slice(0, 80)}`);
    return problems;
  }
  if (status >= 400 && !(status === 401 && typeof json === 'object' && json !== null && 'error' in json && typeof (json as { error: unknown }).error === 'object')) {
    const e = json as Record<string, unknown>;
    if (typeof e.error !== 'string' || !ERRORS.has(e.error)) problems.push(`error ${JSON.stringify(e.error)} is not an RFC 6749 code`);
    if (typeof e.error_description !== 'string') problems.push('error without error_description');
  }
  if (status === 200 && req.path === '/oauth/token') {
    const t = json as Record<string, unknown>;
    if (typeof t.access_token !== 'string' || t.token_type !== 'Bearer' || typeof t.expires_in !== 'number') problems.push('200 from the token endpoint without a token response');
  }
  return problems;
}

export interface OAuthFuzzResult {
  requests: number;
  findings: OAuthFinding[];
  statuses: Map<number, number>;
}

/** Runs `requests` requests against `base`, `concurrency` at a time. */
export async function fuzzOAuth(base: string, seed: number, requests: number, concurrency = 4, start = 0): Promise<OAuthFuzzResult> {
  const findings: OAuthFinding[] = [];
  const statuses = new Map<number, number>();
  const tokens: string[] = [];
  let next = start;
  const worker = async (): Promise<void> => {
    while (next < start + requests) {
      const index = next++;
      const req = buildOAuthRequest(seed, index, tokens);
      let status = 0;
      let text = '';
      let headers = new Headers();
      try {
        const res = await fetch(`${base}${req.path}`, { method: req.method, headers: req.headers, redirect: 'manual', ...(req.body !== '' ? { body: req.body } : {}) });
        status = res.status;
        headers = res.headers;
        text = await res.text();
      } catch (err) {
        findings.push({ seed, index, problem: `no answer: ${(err as Error).message}`, request: JSON.stringify(req), response: '' });
        continue;
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      for (const problem of checkOAuthAnswer(req, status, headers, text)) findings.push({ seed, index, problem, request: JSON.stringify(req).slice(0, 500), response: text.slice(0, 300) });
      // Tokens and codes the server gave go back into later requests, so refresh, revoke and introspect reach real ones.
      const found = text.match(/\b(?:at|rt|ac|dc)_[A-Za-z0-9_-]{43}\b/g) ?? [];
      const location = headers.get('location');
      const code = location ? /code=([^&]+)/.exec(location)?.[1] : undefined;
      for (const t of [...found, ...(code ? [decodeURIComponent(code)] : [])]) if (tokens.length < 64) tokens.push(t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { requests, findings, statuses };
}

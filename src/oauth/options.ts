/**
 * The `oauth` option: the test authorization server's clients, scopes,
 * lifetimes, approval mode, token format, the mail side's provider style
 * and its faults. Every key is checked (an unknown one is a problem naming
 * it, with a "did you mean"), and everything is copied.
 */
import { childPath, describeValue, indexPath, isPlainObject, type Problems } from '../options/problems.js';
import { suggestKey } from '../options/typos.js';
import type { ScriptRule } from '../script/rule.js';
import { validateRule } from '../script/validate.js';

/** The grant types of the token endpoint (RFC 6749 section 4, RFC 8628 section 3.4). */
export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

/**
 * How the mail side refuses a token and ends a session whose token is over,
 * after a provider (src/oauth/styles.ts cites the sources).
 */
export const OAUTH_STYLES = ['rfc', 'gmail', 'outlook'] as const;
export type OAuthStyle = (typeof OAUTH_STYLES)[number];

export interface OAuthClientOption {
  /** client_id. */
  id: string;
  /** A confidential client's secret; without it the client is public (PKCE required, RFC 8252 section 8.1). */
  secret?: string;
  /**
   * Registered redirect URIs. A loopback one (`http://127.0.0.1/cb`,
   * `http://[::1]/cb`) matches any port (RFC 8252 section 7.3). Left out: any
   * loopback URI (a test client picks its port and path).
   */
  redirectUris?: string[];
  /** Grant types it may use; default all. */
  grants?: GrantType[];
  /** Scopes it may ask for; default every scope of `oauth.scopes`. */
  scopes?: string[];
}

export interface OAuthOptions {
  /** The issuer URL (RFC 8414 section 2); default the OAuth listener's or the REST listener's `http://host:port`. */
  issuer?: string;
  /** A port of their own for the OAuth endpoints (0: a free one); without it they are on the REST listener. */
  port?: number;
  /** Address of that port; default 127.0.0.1. */
  host?: string;
  /** The mail side's provider: refusals and session ends (docs/oauth.md). Default `rfc`; presets set theirs. */
  style?: OAuthStyle;
  /** Registered clients; default `testclient` (secret `testsecret`) and the public `testpublic`. */
  clients?: OAuthClientOption[];
  /** Scopes the server knows (a request for another is `invalid_scope`); the mail scope and `offline_access` are always among them. */
  scopes?: string[];
  /** The scope a mail login's token must carry; default by style (`https://mail.google.com/` for rfc and gmail, `https://outlook.office.com/IMAP.AccessAsUser.All`). */
  mailScope?: string;
  /** The user an authorization approved at once is for (a request's `login_hint` wins); default `testuser`, else the first user. */
  user?: string;
  /** `auto`: authorization requests and device codes are approved at once; `manual`: they wait for control.oauth / REST. Default `auto`. */
  approval?: 'auto' | 'manual';
  /** `opaque` (default) or `jwt` access tokens (RFC 9068, ES256, keys at /oauth/jwks). */
  tokenFormat?: 'opaque' | 'jwt';
  /** A refresh returns a new refresh token and the old one is spent; a spent one used again revokes the grant. Default true. */
  rotation?: boolean;
  /** Milliseconds an access token lives; default 3600000 (one hour). */
  accessTokenLifetime?: number;
  /** Milliseconds a refresh token lives; default null (until revoked). */
  refreshTokenLifetime?: number | null;
  /** Milliseconds an authorization code lives; default 60000 (RFC 6749 section 4.1.2: 10 minutes at most). */
  codeLifetime?: number;
  /** Milliseconds a device code lives; default 600000. */
  deviceCodeLifetime?: number;
  /** Seconds a device client must wait between polls (RFC 8628 section 3.2); default 5. */
  deviceInterval?: number;
  /**
   * Milliseconds the token service's clock is ahead of the mail server's
   * (negative: behind): tokens say they live `expires_in` seconds, but the
   * mail server sees them end `clockSkew` ms sooner (later when negative).
   */
  clockSkew?: number;
  /** Milliseconds every answer of the OAuth endpoints is held back (a slow token service). */
  delay?: number;
  /** Script rules of `on: "oauth"` (without `on`): faults of the token service (docs/oauth.md). */
  faults?: Omit<ScriptRule, 'on'>[];
}

export interface OAuthClient {
  id: string;
  secret: string | null;
  redirectUris: string[] | null;
  grants: ReadonlySet<GrantType>;
  scopes: ReadonlySet<string> | null;
}

export interface ResolvedOAuth {
  issuer: string | null;
  /** The OAuth endpoints' own listener, or null (they are on the REST listener). */
  listen: { port: number; host: string } | null;
  style: OAuthStyle;
  clients: OAuthClient[];
  scopes: string[];
  mailScope: string;
  user: string | null;
  approval: 'auto' | 'manual';
  tokenFormat: 'opaque' | 'jwt';
  rotation: boolean;
  accessTokenLifetime: number;
  refreshTokenLifetime: number | null;
  codeLifetime: number;
  deviceCodeLifetime: number;
  deviceInterval: number;
  clockSkew: number;
  delay: number;
  faults: ScriptRule[];
}

const KEYS = [
  'issuer', 'port', 'host', 'style', 'clients', 'scopes', 'mailScope', 'user', 'approval', 'tokenFormat', 'rotation', 'accessTokenLifetime',
  'refreshTokenLifetime', 'codeLifetime', 'deviceCodeLifetime', 'deviceInterval', 'clockSkew', 'delay', 'faults',
] as const;
const CLIENT_KEYS = ['id', 'secret', 'redirectUris', 'grants', 'scopes'] as const;

export const MAIL_SCOPES: Readonly<Record<OAuthStyle, string>> = {
  // The scope most mail clients already ask for, and what the XOAUTH2 challenge has always named here.
  rfc: 'https://mail.google.com/',
  gmail: 'https://mail.google.com/',
  outlook: 'https://outlook.office.com/IMAP.AccessAsUser.All',
};

/** The clients a server has when `oauth.clients` is left out. */
export const DEFAULT_CLIENTS: readonly OAuthClientOption[] = [{ id: 'testclient', secret: 'testsecret' }, { id: 'testpublic' }];

const MAX_TIMER = 2_147_483_647;
/** A scope token (RFC 6749 section 3.3): printable ASCII without space, `"` or `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

function unknownKeys(value: Record<string, unknown>, known: readonly string[], path: string, problems: Problems): void {
  for (const key of Object.keys(value)) {
    if ((known as readonly string[]).includes(key) || value[key] === undefined) continue;
    const hint = suggestKey(key, known);
    problems.add(childPath(path, key), hint !== undefined ? `unknown key; did you mean ${JSON.stringify(hint)}?` : `unknown key; known keys: ${known.join(', ')}`);
  }
}

function ms(problems: Problems, value: unknown, path: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= MAX_TIMER) return value;
  problems.expected(path, `an integer from ${min} to ${MAX_TIMER} (milliseconds)`, value);
  return fallback;
}

function oneOf<T extends string>(problems: Problems, value: unknown, path: string, list: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (list as readonly string[]).includes(value)) return value as T;
  const hint = typeof value === 'string' ? suggestKey(value, list) : undefined;
  problems.add(path, `expected one of ${list.join(', ')}, got ${describeValue(value)}${hint !== undefined ? `; did you mean ${JSON.stringify(hint)}?` : ''}`);
  return fallback;
}

function scopeList(problems: Problems, value: unknown, path: string): string[] | null {
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string' && SCOPE_TOKEN.test(s))) {
    problems.expected(path, 'an array of scope names (printable ASCII, no spaces)', value);
    return null;
  }
  return [...new Set(value as string[])];
}

/** True for an absolute http(s) URI without a fragment (RFC 6749 section 3.1.2). */
function redirectUri(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:' || /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(u.protocol)) && u.hash === '' && !text.includes('#');
  } catch {
    return false;
  }
}

export function resolveClient(problems: Problems, value: unknown, path: string): OAuthClient | null {
  if (!isPlainObject(value)) {
    problems.expected(path, 'an object ({id, secret?, redirectUris?, grants?, scopes?})', value);
    return null;
  }
  unknownKeys(value, CLIENT_KEYS, path, problems);
  const id = value.id;
  if (typeof id !== 'string' || !/^[\x20-\x7e]+$/.test(id) || id.includes(':')) {
    problems.expected(childPath(path, 'id'), 'a client id (printable ASCII, no colon: RFC 6749 section 2.3.1 puts it before one)', id);
    return null;
  }
  let secret: string | null = null;
  if (value.secret !== undefined) {
    if (typeof value.secret === 'string' && value.secret !== '' && /^[\x20-\x7e]+$/.test(value.secret)) secret = value.secret;
    else problems.expected(childPath(path, 'secret'), 'a non-empty string of printable ASCII', value.secret);
  }
  let redirectUris: string[] | null = null;
  if (value.redirectUris !== undefined) {
    const list = value.redirectUris;
    if (!Array.isArray(list)) problems.expected(childPath(path, 'redirectUris'), 'an array of absolute URIs', list);
    else {
      redirectUris = [];
      list.forEach((u, i) => {
        if (typeof u === 'string' && redirectUri(u)) redirectUris!.push(u);
        else problems.expected(indexPath(childPath(path, 'redirectUris'), i), 'an absolute URI without a fragment (RFC 6749 section 3.1.2)', u);
      });
    }
  }
  let grants: Set<GrantType> = new Set(GRANT_TYPES);
  if (value.grants !== undefined) {
    const list = value.grants;
    if (!Array.isArray(list)) problems.expected(childPath(path, 'grants'), `an array of ${GRANT_TYPES.join(', ')}`, list);
    else {
      grants = new Set();
      list.forEach((g, i) => grants.add(oneOf(problems, g, indexPath(childPath(path, 'grants'), i), GRANT_TYPES, 'authorization_code')));
    }
  }
  const scopes = value.scopes === undefined ? null : scopeList(problems, value.scopes, childPath(path, 'scopes'));
  return { id, secret, redirectUris, grants, scopes: scopes && new Set(scopes) };
}

/** The `oauth` option, resolved. Always a value: the token service exists on every server (it costs nothing until used). */
export function resolveOAuth(problems: Problems, value: unknown, users: readonly string[]): ResolvedOAuth {
  const o: Record<string, unknown> = value === undefined ? {} : isPlainObject(value) ? value : {};
  if (value !== undefined && !isPlainObject(value)) problems.expected('oauth', 'an object (docs/oauth.md)', value);
  unknownKeys(o, KEYS, 'oauth', problems);
  const style = oneOf(problems, o.style, 'oauth.style', OAUTH_STYLES, 'rfc');
  let issuer: string | null = null;
  if (o.issuer !== undefined) {
    // RFC 8414 section 2: a URL with no query or fragment.
    let ok = typeof o.issuer === 'string';
    if (ok) {
      try {
        const u = new URL(o.issuer as string);
        ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.search === '' && u.hash === '';
      } catch {
        ok = false;
      }
    }
    if (ok) issuer = (o.issuer as string).replace(/\/+$/, '');
    else problems.expected('oauth.issuer', 'an http(s) URL without query or fragment (RFC 8414 section 2)', o.issuer);
  }
  let mailScope = MAIL_SCOPES[style];
  if (o.mailScope !== undefined) {
    if (typeof o.mailScope === 'string' && SCOPE_TOKEN.test(o.mailScope)) mailScope = o.mailScope;
    else problems.expected('oauth.mailScope', 'a scope name (printable ASCII, no spaces)', o.mailScope);
  }
  const given = o.scopes === undefined ? ['openid', 'email', 'profile'] : (scopeList(problems, o.scopes, 'oauth.scopes') ?? []);
  const scopes = [...new Set([mailScope, 'offline_access', ...given])];
  const clients: OAuthClient[] = [];
  const list = o.clients === undefined ? DEFAULT_CLIENTS : o.clients;
  if (!Array.isArray(list)) problems.expected('oauth.clients', 'an array of clients ({id, secret?, redirectUris?, grants?, scopes?})', list);
  else {
    const seen = new Set<string>();
    list.forEach((c, i) => {
      const client = resolveClient(problems, c, indexPath('oauth.clients', i));
      if (!client) return;
      if (seen.has(client.id)) problems.add(indexPath('oauth.clients', i), `client id ${JSON.stringify(client.id)} is given twice`);
      seen.add(client.id);
      for (const s of client.scopes ?? []) {
        if (!scopes.includes(s)) problems.add(childPath(indexPath('oauth.clients', i), 'scopes'), `unknown scope ${JSON.stringify(s)}; oauth.scopes: ${scopes.join(' ')}`);
      }
      clients.push(client);
    });
  }
  let user: string | null = users.includes('testuser') ? 'testuser' : (users[0] ?? null);
  if (o.user !== undefined) {
    if (typeof o.user === 'string' && users.includes(o.user)) user = o.user;
    else problems.add('oauth.user', `expected a user name of the users option (${users.join(', ')}), got ${describeValue(o.user)}`);
  }
  const refreshTokenLifetime = o.refreshTokenLifetime === null ? null : ms(problems, o.refreshTokenLifetime, 'oauth.refreshTokenLifetime', -1);
  let deviceInterval = 5;
  if (o.deviceInterval !== undefined) {
    if (typeof o.deviceInterval === 'number' && Number.isSafeInteger(o.deviceInterval) && o.deviceInterval >= 0 && o.deviceInterval <= 3600) deviceInterval = o.deviceInterval;
    else problems.expected('oauth.deviceInterval', 'an integer from 0 to 3600 (seconds)', o.deviceInterval);
  }
  let clockSkew = 0;
  if (o.clockSkew !== undefined) {
    if (typeof o.clockSkew === 'number' && Number.isSafeInteger(o.clockSkew) && Math.abs(o.clockSkew) <= MAX_TIMER) clockSkew = o.clockSkew;
    else problems.expected('oauth.clockSkew', `an integer from -${MAX_TIMER} to ${MAX_TIMER} (milliseconds)`, o.clockSkew);
  }
  let rotation = true;
  if (o.rotation !== undefined) {
    if (typeof o.rotation === 'boolean') rotation = o.rotation;
    else problems.expected('oauth.rotation', 'a boolean', o.rotation);
  }
  const faults: ScriptRule[] = [];
  if (o.faults !== undefined) {
    if (!Array.isArray(o.faults)) problems.expected('oauth.faults', 'an array of on: "oauth" rules without on (docs/oauth.md)', o.faults);
    else {
      o.faults.forEach((f, i) => {
        try {
          if (isPlainObject(f) && Object.hasOwn(f, 'on')) throw new Error('leave out on: every oauth.faults rule is on: "oauth"');
          faults.push(validateRule({ ...(isPlainObject(f) ? f : {}), on: 'oauth' }, ''));
        } catch (err) {
          problems.add(indexPath('oauth.faults', i), (err as Error).message);
        }
      });
    }
  }
  let listen: ResolvedOAuth['listen'] = null;
  if (o.port !== undefined) {
    if (typeof o.port === 'number' && Number.isInteger(o.port) && o.port >= 0 && o.port <= 65535) listen = { port: o.port, host: '127.0.0.1' };
    else problems.expected('oauth.port', 'an integer from 0 to 65535', o.port);
  }
  if (o.host !== undefined) {
    if (typeof o.host !== 'string' || o.host === '') problems.expected('oauth.host', 'a non-empty string', o.host);
    else if (listen) listen.host = o.host;
    else problems.add('oauth.host', 'needs oauth.port (without it the endpoints are on the REST listener)');
  }
  return {
    issuer,
    listen,
    style,
    clients,
    scopes,
    mailScope,
    user,
    approval: oneOf(problems, o.approval, 'oauth.approval', ['auto', 'manual'] as const, 'auto'),
    tokenFormat: oneOf(problems, o.tokenFormat, 'oauth.tokenFormat', ['opaque', 'jwt'] as const, 'opaque'),
    rotation,
    accessTokenLifetime: ms(problems, o.accessTokenLifetime, 'oauth.accessTokenLifetime', 3_600_000),
    refreshTokenLifetime: refreshTokenLifetime === -1 ? null : refreshTokenLifetime,
    codeLifetime: ms(problems, o.codeLifetime, 'oauth.codeLifetime', 60_000),
    deviceCodeLifetime: ms(problems, o.deviceCodeLifetime, 'oauth.deviceCodeLifetime', 600_000),
    deviceInterval,
    clockSkew,
    delay: ms(problems, o.delay, 'oauth.delay', 0, 0),
    faults,
  };
}

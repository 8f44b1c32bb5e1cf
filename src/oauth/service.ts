/**
 * The token service: the flows of the authorization server (RFC 6749 code
 * and client credentials grants, RFC 7636 PKCE, RFC 8628 device flow,
 * refresh with rotation and reuse detection, RFC 7009 revocation, RFC 7662
 * introspection), the control operations a test drives it with, and the
 * one check mail logins ask (`check`). Lifetimes run on the server clock.
 * HTTP is src/oauth/http.ts; this module knows nothing of requests.
 */
import { nodeCrypto } from '../util/node-crypto.js';
import { ServiceError } from '../errors.js';
import type { ScriptEngine } from '../script/engine.js';
import type { ScriptRule } from '../script/rule.js';
import { JwtSigner } from './jwt.js';
import { normalizeUserCode, TokenIds } from './ids.js';
import { resolveClient, type GrantType, type OAuthClient, type OAuthStyle, type ResolvedOAuth } from './options.js';
import { Problems } from '../options/problems.js';
import { SessionLeases, type LeasedSession } from './leases.js';
import { TokenStore, type AccessToken, type Grant } from './store.js';
import type { Mechanism } from './styles.js';

/** Why the mail side refuses a token. */
export type TokenRefusal = 'unknown' | 'expired' | 'revoked' | 'scope' | 'user';

/** The answer of `check`: a token a mail login may use, or why not. */
export type TokenCheck =
  | { ok: true; user: string; client: string; grant: number; scope: string[]; expiresAt: number }
  | { ok: false; reason: TokenRefusal; client: string | null; grant: number | null };

export type OAuthEventType = 'issued' | 'refreshed' | 'revoked' | 'expired' | 'rejected';

/** The `oauth` event. */
export interface OAuthEvent {
  type: OAuthEventType;
  client: string | null;
  user: string | null;
  grant: number | null;
  /** The grant type or endpoint concerned (`authorization_code`, `refresh_token`, `login`, `revoke`, ...). */
  via: string;
  /** For rejected and revoked: why (`invalid_grant: code already used`, `reuse`, `expired`, ...). */
  reason: string | null;
  /** The mail session concerned, or null. */
  session: number | null;
}

/** An OAuth error answer (RFC 6749 section 5.2, section 4.1.2.1; RFC 8628 section 3.5). */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(`${error}: ${description}`);
  }
}

/** The JSON body of a successful token response (RFC 6749 section 5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string | null;
  scope: string | null;
  state: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  loginHint: string | null;
  responseType: string | null;
}

/** What a test decided for an authorization request (control.oauth.decide, approve, deny). */
export interface Decision {
  decision: 'approve' | 'deny' | 'wait';
  /** The user it is approved for (default: login_hint, then oauth.user). */
  user?: string;
  /** Scopes granted, fewer than asked ("the user unticked some"); default all asked for. */
  scope?: string[];
  /** Milliseconds before the answer. */
  delay?: number;
}

/** An authorization request waiting for a test's decision (approval `manual`, or a `wait` decision). */
export interface PendingAuthorization {
  id: number;
  client: string;
  scope: string[];
  loginHint: string | null;
  /** Server-clock ms. */
  since: number;
}

export interface OAuthSettings {
  approval: 'auto' | 'manual';
  tokenFormat: 'opaque' | 'jwt';
  rotation: boolean;
  accessTokenLifetime: number;
  refreshTokenLifetime: number | null;
  clockSkew: number;
  delay: number;
  style: OAuthStyle;
  mailScope: string;
}

/** What the service needs of the server. */
export interface OAuthContext {
  options: ResolvedOAuth;
  seed: number;
  now(): number;
  clockListeners: Set<() => void>;
  emit(event: OAuthEvent): void;
  users(): readonly string[];
  script: ScriptEngine;
  /** The issuer URL, or null before the REST listener is open (then `oauth.issuer` alone). */
  issuer(): string | null;
  /** True while session `id` is open. */
  sessionOpen(id: number): boolean;
}

export const MAX_PENDING = 100;
export const MAX_DECISIONS = 100;
export const DEVICE_GRANT: GrantType = 'urn:ietf:params:oauth:grant-type:device_code';
/** The `command` names of on: "oauth" rules for the token endpoint's grant types. */
export const GRANT_COMMANDS: Readonly<Record<GrantType, string>> = {
  authorization_code: 'authorization_code',
  refresh_token: 'refresh_token',
  client_credentials: 'client_credentials',
  'urn:ietf:params:oauth:grant-type:device_code': 'device_code',
};

const digest = (s: string): Buffer => nodeCrypto().createHash('sha256').update(s, 'utf8').digest();
const sameSecret = (a: string, b: string): boolean => nodeCrypto().timingSafeEqual(digest(a), digest(b));

export class OAuthService {
  readonly store = new TokenStore();
  readonly jwt = new JwtSigner();
  private readonly ids: TokenIds;
  private clients = new Map<string, OAuthClient>();
  private settingsNow: OAuthSettings;
  private readonly decisions: Decision[] = [];
  private readonly pendingById = new Map<number, { info: PendingAuthorization; settle: (d: Decision) => void }>();
  private nextPending = 1;
  readonly leases: SessionLeases;

  constructor(private readonly ctx: OAuthContext) {
    this.ids = new TokenIds(ctx.seed);
    this.settingsNow = this.initialSettings();
    for (const c of ctx.options.clients) this.clients.set(c.id, c);
    this.leases = new SessionLeases(ctx, (event) => ctx.emit(event));
    for (const rule of ctx.options.faults) ctx.script.add(rule);
  }

  private initialSettings(): OAuthSettings {
    const o = this.ctx.options;
    return {
      approval: o.approval, tokenFormat: o.tokenFormat, rotation: o.rotation, accessTokenLifetime: o.accessTokenLifetime,
      refreshTokenLifetime: o.refreshTokenLifetime, clockSkew: o.clockSkew, delay: o.delay, style: o.style, mailScope: o.mailScope,
    };
  }

  /** Back to the options (server reset): tokens, grants, codes and decisions are forgotten; waiting requests are denied. */
  reset(): void {
    this.store.clear();
    this.ids.reset();
    this.settingsNow = this.initialSettings();
    this.clients = new Map(this.ctx.options.clients.map((c) => [c.id, c]));
    this.decisions.length = 0;
    for (const p of [...this.pendingById.values()]) p.settle({ decision: 'deny' });
    this.leases.clear();
  }

  get settings(): OAuthSettings {
    return { ...this.settingsNow };
  }

  /** Changes settings at run time (PUT /v1/oauth/settings); what is left out stays. */
  configure(change: Partial<OAuthSettings>): OAuthSettings {
    const next = { ...this.settingsNow };
    for (const [key, value] of Object.entries(change)) {
      if (value !== undefined) (next as Record<string, unknown>)[key] = value;
    }
    this.settingsNow = next;
    return this.settings;
  }

  issuer(): string {
    return this.ctx.issuer() ?? 'http://127.0.0.1';
  }

  /** The issuer, or null while it is unknown (no `oauth.issuer` and no REST listener). */
  knownIssuer(): string | null {
    return this.ctx.issuer();
  }

  get scopes(): readonly string[] {
    return this.ctx.options.scopes.includes(this.settingsNow.mailScope) ? this.ctx.options.scopes : [this.settingsNow.mailScope, ...this.ctx.options.scopes];
  }

  // ------------------------------------------------------------ clients

  listClients(): { id: string; public: boolean; redirectUris: string[] | null; grants: string[]; scopes: string[] | null }[] {
    return [...this.clients.values()].map((c) => ({
      id: c.id, public: c.secret === null, redirectUris: c.redirectUris && [...c.redirectUris], grants: [...c.grants], scopes: c.scopes && [...c.scopes],
    }));
  }

  addClient(value: unknown): { id: string } {
    const problems = new Problems();
    const client = resolveClient(problems, value, 'client');
    problems.throwIfAny();
    if (this.clients.has(client!.id)) throw new ServiceError('ALREADYEXISTS', `Client ${JSON.stringify(client!.id)} exists already`);
    for (const s of client!.scopes ?? []) {
      if (!this.scopes.includes(s)) throw new ServiceError('INVALID', `client.scopes: unknown scope ${JSON.stringify(s)}; scopes: ${this.scopes.join(' ')}`);
    }
    if (this.clients.size >= 1000) throw new ServiceError('LIMIT', 'At most 1000 OAuth clients');
    this.clients.set(client!.id, client!);
    return { id: client!.id };
  }

  deleteClient(id: string): { deleted: true } {
    if (!this.clients.delete(id)) throw new ServiceError('NONEXISTENT', `No client ${JSON.stringify(id)}`);
    for (const g of this.store.grants.values()) if (g.client === id && !g.revoked) this.revoke(g, 'client deleted', 'control', null);
    return { deleted: true };
  }

  client(id: string): OAuthClient | undefined {
    return this.clients.get(id);
  }

  /**
   * The client a token, revocation or introspection request is from
   * (RFC 6749 section 2.3.1): a confidential client must prove its secret; a
   * public one names itself. `secret` null: none was sent.
   */
  authenticateClient(id: string | null, secret: string | null, via: string): OAuthClient {
    const client = id === null ? undefined : this.clients.get(id);
    if (!client) throw this.reject(new OAuthError('invalid_client', id === null ? 'no client_id and no client authentication' : `unknown client ${JSON.stringify(id)}`, 401), via, id, null);
    if (client.secret !== null && (secret === null || !sameSecret(secret, client.secret))) {
      throw this.reject(new OAuthError('invalid_client', secret === null ? 'this client must authenticate (client_secret_basic or client_secret_post)' : 'wrong client secret', 401), via, id, null);
    }
    return client;
  }

  // ------------------------------------------------------------ scopes

  /** The scopes a request asks for, checked against the server's and the client's; none asked: the mail scope (RFC 6749 section 3.3 default). */
  private requestedScope(client: OAuthClient, scope: string | null): string[] {
    const asked = scope === null || scope.trim() === '' ? [this.settingsNow.mailScope] : [...new Set(scope.trim().split(/ +/))];
    for (const s of asked) {
      if (!this.scopes.includes(s)) throw new OAuthError('invalid_scope', `unknown scope ${JSON.stringify(s)}`);
      if (client.scopes && !client.scopes.has(s)) throw new OAuthError('invalid_scope', `client ${client.id} may not ask for ${JSON.stringify(s)}`);
    }
    return asked;
  }

  private checkGrantType(client: OAuthClient, grant: GrantType): void {
    if (!client.grants.has(grant)) throw new OAuthError('unauthorized_client', `client ${client.id} may not use ${grant}`);
  }

  // ------------------------------------------------------------ authorization endpoint

  /**
   * Checks the parts of an authorization request that decide whether the
   * user agent may be sent back at all (client and redirect URI, RFC 6749
   * section 4.1.2.1): their errors are shown, never redirected. Returns the
   * redirect URI to use.
   */
  authorizationTarget(req: AuthorizationRequest): { client: OAuthClient; redirectUri: string } {
    const client = this.clients.get(req.clientId);
    if (!client) throw new OAuthError('invalid_client', `unknown client ${JSON.stringify(req.clientId)}`);
    const redirectUri = req.redirectUri ?? (client.redirectUris?.length === 1 ? client.redirectUris[0]! : null);
    if (redirectUri === null) throw new OAuthError('invalid_request', 'redirect_uri is required (the client has no single registered one)');
    if (!redirectAllowed(client, redirectUri)) throw new OAuthError('invalid_request', `redirect_uri ${JSON.stringify(redirectUri)} is not registered for client ${client.id}`);
    return { client, redirectUri };
  }

  /**
   * The rest of an authorization request, once the redirect URI is known
   * good: its errors go back to the client in the redirect. Resolves with
   * the code's query parameters (`code`, or `error`), without `state`.
   */
  async authorize(req: AuthorizationRequest, client: OAuthClient, redirectUri: string, gone: AbortSignal): Promise<Record<string, string>> {
    if (req.responseType !== 'code') throw new OAuthError('unsupported_response_type', 'only response_type=code is supported');
    this.checkGrantType(client, 'authorization_code');
    const scope = this.requestedScope(client, req.scope);
    const method = req.codeChallengeMethod ?? (req.codeChallenge === null ? null : 'plain');
    if (method !== null && method !== 'S256' && method !== 'plain') throw new OAuthError('invalid_request', `code_challenge_method ${JSON.stringify(method)}: S256 or plain`);
    if (req.codeChallenge === null && req.codeChallengeMethod !== null) throw new OAuthError('invalid_request', 'code_challenge_method without code_challenge');
    // RFC 7636 section 4.2: 43 to 128 characters of the unreserved set.
    if (req.codeChallenge !== null && !/^[A-Za-z0-9._~-]{43,128}$/.test(req.codeChallenge)) throw new OAuthError('invalid_request', 'code_challenge: 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 section 4.2)');
    // RFC 8252 section 8.1: native apps are public clients, and a server SHOULD refuse them without PKCE.
    if (client.secret === null && req.codeChallenge === null) throw new OAuthError('invalid_request', 'a public client must use PKCE (code_challenge, RFC 7636; RFC 8252 section 8.1)');
    const decision = await this.decide(client, scope, req.loginHint, gone);
    if (decision.decision === 'deny') {
      this.emitEvent('rejected', client.id, null, null, 'authorize', 'access_denied: the user denied the request');
      return { error: 'access_denied', error_description: 'The user denied the request' };
    }
    const user = decision.user ?? this.defaultUser(req.loginHint);
    if (user === null) throw new OAuthError('access_denied', 'the server has no user to approve for');
    const granted = decision.scope ? scope.filter((s) => decision.scope!.includes(s)) : scope;
    const now = this.ctx.now();
    this.store.roomForCode(now);
    const code = this.ids.token('ac_');
    this.store.codes.set(code, {
      code, client: client.id, user, scope: granted, redirectUri, redirectGiven: req.redirectUri !== null,
      challenge: req.codeChallenge, method: (method ?? 'plain') as 'S256' | 'plain', expiresAt: now + this.ctx.options.codeLifetime, grant: null,
    });
    return { code };
  }

  private defaultUser(hint: string | null): string | null {
    if (hint !== null && this.ctx.users().includes(hint)) return hint;
    const u = this.ctx.options.user;
    return u !== null && this.ctx.users().includes(u) ? u : (this.ctx.users()[0] ?? null);
  }

  /** The decision for an authorization request: the next queued one, else approve (auto) or wait for a test (manual). */
  private async decide(client: OAuthClient, scope: string[], loginHint: string | null, gone: AbortSignal): Promise<Decision> {
    let decision = this.decisions.shift() ?? (this.settingsNow.approval === 'auto' ? { decision: 'approve' as const } : { decision: 'wait' as const });
    if (decision.delay) await sleep(decision.delay, gone);
    if (decision.decision === 'wait') decision = await this.waitForDecision(client, scope, loginHint, gone);
    return decision;
  }

  private waitForDecision(client: OAuthClient, scope: string[], loginHint: string | null, gone: AbortSignal): Promise<Decision> {
    if (this.pendingById.size >= MAX_PENDING) throw new OAuthError('temporarily_unavailable', `${MAX_PENDING} authorization requests are waiting for a decision already`, 503);
    const id = this.nextPending++;
    return new Promise<Decision>((resolve) => {
      const settle = (d: Decision): void => {
        this.pendingById.delete(id);
        gone.removeEventListener('abort', onGone);
        resolve(d);
      };
      const onGone = (): void => settle({ decision: 'deny' });
      gone.addEventListener('abort', onGone);
      this.pendingById.set(id, { info: { id, client: client.id, scope, loginHint, since: this.ctx.now() }, settle });
    });
  }

  /** Queues the decision for the next authorization request (control.oauth.decide). */
  queueDecision(d: Decision): { queued: number } {
    if (this.decisions.length >= MAX_DECISIONS) throw new ServiceError('LIMIT', `At most ${MAX_DECISIONS} decisions may be queued`);
    this.checkDecision(d);
    this.decisions.push({ ...d, ...(d.scope ? { scope: [...d.scope] } : {}) });
    return { queued: this.decisions.length };
  }

  private checkDecision(d: Decision): void {
    if (d.user !== undefined && !this.ctx.users().includes(d.user)) throw new ServiceError('NONEXISTENT', `No user ${JSON.stringify(d.user)}`);
  }

  pending(): PendingAuthorization[] {
    return [...this.pendingById.values()].map((p) => ({ ...p.info, scope: [...p.info.scope] }));
  }

  /** Approves or denies a waiting authorization request. */
  settlePending(id: number, d: Decision): { settled: true } {
    const p = this.pendingById.get(id);
    if (!p) throw new ServiceError('NONEXISTENT', `No authorization request ${id} is waiting`);
    if (d.decision === 'wait') throw new ServiceError('INVALID', 'decision: approve or deny');
    this.checkDecision(d);
    p.settle(d);
    return { settled: true };
  }

  // ------------------------------------------------------------ token endpoint

  private accessLifetime(): number {
    return this.settingsNow.accessTokenLifetime;
  }

  /** Makes an access token (and a refresh token when `refresh`) for a grant; the answer of the token endpoint. */
  private issue(grant: Grant, refresh: boolean, scope: string[] = grant.scope): TokenResponse {
    const now = this.ctx.now();
    const lifetime = this.accessLifetime();
    // The mail server's clock runs clockSkew ms ahead of the token service's: it sees the token end that much sooner.
    const expiresAt = now + lifetime - this.settingsNow.clockSkew;
    let token = this.ids.token('at_');
    if (this.settingsNow.tokenFormat === 'jwt') {
      const issued = Math.floor((now - this.settingsNow.clockSkew) / 1000);
      token = this.jwt.sign({
        iss: this.issuer(), sub: grant.user ?? grant.client, aud: this.issuer(), exp: issued + Math.ceil(lifetime / 1000), iat: issued,
        jti: token, client_id: grant.client, scope: scope.join(' '),
      });
    }
    const access: AccessToken = { token, grant: grant.id, scope, issuedAt: now, expiresAt, revoked: false };
    this.store.addAccess(grant, access);
    const response: TokenResponse = { access_token: token, token_type: 'Bearer', expires_in: Math.ceil(lifetime / 1000), scope: scope.join(' ') };
    if (refresh) {
      const rt = this.ids.token('rt_');
      const life = this.settingsNow.refreshTokenLifetime;
      this.store.setRefresh(grant, { token: rt, grant: grant.id, expiresAt: life === null ? null : now + life, state: 'active' });
      response.refresh_token = rt;
    }
    return response;
  }

  /** grant_type=authorization_code (RFC 6749 section 4.1.3, RFC 7636 section 4.6). */
  exchangeCode(client: OAuthClient, code: string | null, redirectUri: string | null, verifier: string | null): TokenResponse {
    const via = 'authorization_code';
    try {
      this.checkGrantType(client, 'authorization_code');
      if (code === null) throw new OAuthError('invalid_request', 'code is required');
      const c = this.store.codes.get(code);
      if (!c || c.client !== client.id) throw new OAuthError('invalid_grant', 'unknown authorization code, or issued to another client');
      if (c.grant !== null) {
        // RFC 6749 section 4.1.2: a code used twice; what was issued for it SHOULD be revoked.
        const first = this.store.grants.get(c.grant);
        if (first && !first.revoked) this.revoke(first, 'authorization code used twice', via, null);
        throw new OAuthError('invalid_grant', 'authorization code already used (the tokens issued for it are revoked)');
      }
      if (this.ctx.now() >= c.expiresAt) throw new OAuthError('invalid_grant', 'authorization code expired');
      if (c.redirectGiven && redirectUri !== c.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request (RFC 6749 section 4.1.3)');
      if (c.challenge !== null) {
        if (verifier === null) throw new OAuthError('invalid_grant', 'code_verifier is required (the authorization request had a code_challenge)');
        if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) throw new OAuthError('invalid_grant', 'code_verifier: 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 section 4.1)');
        const derived = c.method === 'S256' ? nodeCrypto().createHash('sha256').update(verifier, 'ascii').digest('base64url') : verifier;
        if (!sameSecret(derived, c.challenge)) throw new OAuthError('invalid_grant', `code_verifier does not match the code_challenge (${c.method})`);
      } else if (verifier !== null) throw new OAuthError('invalid_grant', 'code_verifier given but the authorization request had no code_challenge');
      const grant = this.store.addGrant(client.id, c.user, c.scope, this.ctx.now(), via);
      c.grant = grant.id;
      const response = this.issue(grant, client.grants.has('refresh_token'));
      this.emitEvent('issued', client.id, c.user, grant.id, via, null);
      return response;
    } catch (err) {
      throw this.reject(err, via, client.id, null);
    }
  }

  /**
   * grant_type=refresh_token (RFC 6749 section 6). With rotation the answer holds
   * a new refresh token and the presented one is spent; presenting a spent
   * one again revokes the whole grant (reuse: someone else has a copy).
   * `keep` (the `no_refresh_token` fault) answers without a new refresh
   * token and leaves the old one good.
   */
  refresh(client: OAuthClient, token: string | null, scope: string | null, keep = false): TokenResponse {
    const via = 'refresh_token';
    let grant: Grant | undefined;
    try {
      this.checkGrantType(client, 'refresh_token');
      if (token === null) throw new OAuthError('invalid_request', 'refresh_token is required');
      const r = this.store.refresh.get(token);
      grant = r && this.store.grants.get(r.grant);
      if (!r || !grant || grant.client !== client.id) {
        grant = undefined;
        throw new OAuthError('invalid_grant', 'unknown refresh token, or issued to another client');
      }
      if (r.state === 'revoked' || grant.revoked) throw new OAuthError('invalid_grant', 'refresh token revoked');
      if (r.state === 'spent') {
        this.revoke(grant, 'reuse of a rotated refresh token', via, null);
        throw new OAuthError('invalid_grant', 'refresh token already used (rotated); the whole grant is revoked');
      }
      if (r.expiresAt !== null && this.ctx.now() >= r.expiresAt) throw new OAuthError('invalid_grant', 'refresh token expired');
      let narrowed = grant.scope;
      if (scope !== null && scope.trim() !== '') {
        narrowed = [...new Set(scope.trim().split(/ +/))];
        // RFC 6749 section 6: no scope beyond what the grant has.
        for (const s of narrowed) if (!grant.scope.includes(s)) throw new OAuthError('invalid_scope', `scope ${JSON.stringify(s)} was not granted`);
      }
      const rotate = this.settingsNow.rotation && !keep;
      const response = this.issue(grant, rotate, narrowed);
      this.emitEvent('refreshed', client.id, grant.user, grant.id, via, keep ? 'no new refresh token' : null);
      return response;
    } catch (err) {
      throw this.reject(err, via, client.id, grant ?? null);
    }
  }

  /** grant_type=client_credentials (RFC 6749 section 4.4): no refresh token (section 4.4.3). */
  clientCredentials(client: OAuthClient, scope: string | null): TokenResponse {
    const via = 'client_credentials';
    try {
      this.checkGrantType(client, 'client_credentials');
      // RFC 6749 section 4.4: confidential clients only.
      if (client.secret === null) throw new OAuthError('unauthorized_client', 'client_credentials needs a confidential client');
      const granted = this.requestedScope(client, scope);
      const grant = this.store.addGrant(client.id, null, granted, this.ctx.now(), via);
      const response = this.issue(grant, false);
      this.emitEvent('issued', client.id, null, grant.id, via, null);
      return response;
    } catch (err) {
      throw this.reject(err, via, client.id, null);
    }
  }

  /** The device authorization endpoint (RFC 8628 section 3.1, section 3.2). */
  deviceAuthorization(client: OAuthClient, scope: string | null): Record<string, string | number> {
    try {
      this.checkGrantType(client, DEVICE_GRANT);
      const granted = this.requestedScope(client, scope);
      const now = this.ctx.now();
      this.store.roomForDevice(now);
      const deviceCode = this.ids.token('dc_');
      let userCode = this.ids.userCode();
      while (this.store.userCodes.has(userCode)) userCode = this.ids.userCode();
      const auto = this.settingsNow.approval === 'auto' && this.decisions.length === 0;
      const user = auto ? this.defaultUser(null) : null;
      this.store.devices.set(deviceCode, {
        deviceCode, userCode, client: client.id, scope: granted, expiresAt: now + this.ctx.options.deviceCodeLifetime,
        state: auto && user !== null ? 'approved' : 'pending', user, interval: this.ctx.options.deviceInterval, lastPoll: null,
      });
      this.store.userCodes.set(userCode, deviceCode);
      const verification = `${this.issuer()}/oauth/device`;
      return {
        device_code: deviceCode, user_code: userCode, verification_uri: verification,
        verification_uri_complete: `${verification}?user_code=${encodeURIComponent(userCode)}`,
        expires_in: Math.ceil(this.ctx.options.deviceCodeLifetime / 1000), interval: this.ctx.options.deviceInterval,
      };
    } catch (err) {
      throw this.reject(err, 'device_authorization', client.id, null);
    }
  }

  /** grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 section 3.4, section 3.5). `slowDown`: the fault. */
  pollDevice(client: OAuthClient, deviceCode: string | null, monotonic: number, slowDown = false): TokenResponse {
    const via = 'device_code';
    try {
      this.checkGrantType(client, DEVICE_GRANT);
      if (deviceCode === null) throw new OAuthError('invalid_request', 'device_code is required');
      const d = this.store.devices.get(deviceCode);
      if (!d || d.client !== client.id) throw new OAuthError('invalid_grant', 'unknown device code, or issued to another client');
      if (d.state === 'redeemed') throw new OAuthError('invalid_grant', 'device code already used');
      if (this.ctx.now() >= d.expiresAt) throw new OAuthError('expired_token', 'the device code expired; start again');
      if (d.state === 'denied') throw new OAuthError('access_denied', 'the user denied the request');
      const early = d.lastPoll !== null && monotonic - d.lastPoll < d.interval * 1000;
      d.lastPoll = monotonic;
      if (slowDown || early) {
        // RFC 8628 section 3.5: the interval grows by 5 seconds for this and later polls.
        d.interval += 5;
        throw new OAuthError('slow_down', `polling too fast; wait ${d.interval} seconds between requests`);
      }
      if (d.state === 'pending') throw new OAuthError('authorization_pending', 'the user has not approved the request yet');
      d.state = 'redeemed';
      const grant = this.store.addGrant(client.id, d.user, d.scope, this.ctx.now(), via);
      const response = this.issue(grant, client.grants.has('refresh_token'));
      this.emitEvent('issued', client.id, d.user, grant.id, via, null);
      return response;
    } catch (err) {
      // Waiting is the normal course of the flow, not a refusal worth an event.
      if (err instanceof OAuthError && (err.error === 'authorization_pending' || err.error === 'slow_down')) throw err;
      throw this.reject(err, via, client.id, null);
    }
  }

  /** A waiting device code, by its user code (for the verification page and REST). */
  device(userCode: string): { userCode: string; client: string; scope: string[]; state: string } {
    const d = this.deviceByUserCode(userCode);
    return { userCode: d.userCode, client: d.client, scope: [...d.scope], state: d.state };
  }

  private deviceByUserCode(userCode: string) {
    const key = this.store.userCodes.get(normalizeUserCode(userCode));
    const d = key === undefined ? undefined : this.store.devices.get(key);
    if (!d || this.ctx.now() >= d.expiresAt) throw new ServiceError('NONEXISTENT', `No waiting device code with user code ${JSON.stringify(userCode)}`);
    return d;
  }

  /** The user approves (or denies) a device code (control.oauth.approveDevice, the verification page). */
  settleDevice(userCode: string, d: Decision): { userCode: string; state: string } {
    const device = this.deviceByUserCode(userCode);
    if (device.state !== 'pending') throw new ServiceError('CANNOT', `Device code ${device.userCode} is ${device.state} already`);
    this.checkDecision(d);
    if (d.decision === 'approve') {
      const user = d.user ?? this.defaultUser(null);
      if (user === null) throw new ServiceError('CANNOT', 'The server has no user to approve for');
      device.user = user;
      if (d.scope) device.scope = device.scope.filter((s) => d.scope!.includes(s));
      device.state = 'approved';
    } else if (d.decision === 'deny') device.state = 'denied';
    else throw new ServiceError('INVALID', 'decision: approve or deny');
    return { userCode: device.userCode, state: device.state };
  }

  // ------------------------------------------------------------ revocation, introspection

  /**
   * RFC 7009: revoking a refresh token revokes its grant (section 2.1: the access
   * tokens made from it too); an access token goes alone. An unknown token
   * is no error (section 2.2).
   */
  revokeToken(client: OAuthClient | null, token: string, hint: string | null): void {
    const via = 'revoke';
    const order = hint === 'refresh_token' ? ['refresh', 'access'] : ['access', 'refresh'];
    for (const kind of order) {
      if (kind === 'access') {
        const a = this.store.access.get(token);
        if (!a) continue;
        const grant = this.store.grants.get(a.grant)!;
        if (client && grant.client !== client.id) throw this.reject(new OAuthError('invalid_request', 'the token was issued to another client'), via, client.id, grant);
        if (!a.revoked) {
          a.revoked = true;
          this.emitEvent('revoked', grant.client, grant.user, grant.id, via, 'access token revoked');
          this.leases.revoked((l) => l.token === token, this.settingsNow.style);
        }
        return;
      }
      const r = this.store.refresh.get(token);
      if (!r) continue;
      const grant = this.store.grants.get(r.grant)!;
      if (client && grant.client !== client.id) throw this.reject(new OAuthError('invalid_request', 'the token was issued to another client'), via, client.id, grant);
      if (!grant.revoked) this.revoke(grant, 'refresh token revoked', via, null);
      return;
    }
  }

  /** Revokes a grant with every token from it, ends the mail sessions that use them, and says so. */
  revoke(grant: Grant, reason: string, via: string, session: number | null): void {
    this.store.revokeGrant(grant);
    this.emitEvent('revoked', grant.client, grant.user, grant.id, via, reason, session);
    this.leases.revoked((l) => l.grant === grant.id, this.settingsNow.style);
  }

  /** RFC 7662 section 2.2. */
  introspect(token: string): Record<string, unknown> {
    const now = this.ctx.now();
    const skewed = (ms: number): number => Math.floor((ms - this.settingsNow.clockSkew) / 1000);
    const a = this.store.access.get(token);
    if (a) {
      const grant = this.store.grants.get(a.grant)!;
      if (a.revoked || grant.revoked || now >= a.expiresAt) return { active: false };
      return {
        active: true, scope: a.scope.join(' '), client_id: grant.client, ...(grant.user !== null ? { username: grant.user } : {}),
        token_type: 'Bearer', exp: skewed(a.expiresAt + this.settingsNow.clockSkew), iat: skewed(a.issuedAt), sub: grant.user ?? grant.client,
        aud: this.issuer(), iss: this.issuer(),
      };
    }
    const r = this.store.refresh.get(token);
    if (r) {
      const grant = this.store.grants.get(r.grant)!;
      if (r.state !== 'active' || grant.revoked || (r.expiresAt !== null && now >= r.expiresAt)) return { active: false };
      return {
        active: true, scope: grant.scope.join(' '), client_id: grant.client, ...(grant.user !== null ? { username: grant.user } : {}),
        token_type: 'refresh_token', ...(r.expiresAt !== null ? { exp: skewed(r.expiresAt) } : {}), sub: grant.user ?? grant.client, iss: this.issuer(),
      };
    }
    return { active: false };
  }

  // ------------------------------------------------------------ control

  /** Tokens for a user without a flow (control.oauth.issue): as if the user had approved `client`. */
  issueFor(user: string, options: { client?: string; scope?: string[]; refresh?: boolean } = {}): TokenResponse & { grant: number } {
    if (!this.ctx.users().includes(user)) throw new ServiceError('NONEXISTENT', `No user ${JSON.stringify(user)}`);
    const clientId = options.client ?? this.ctx.options.clients[0]?.id ?? 'rookery';
    const client = this.clients.get(clientId);
    if (!client && options.client !== undefined) throw new ServiceError('NONEXISTENT', `No client ${JSON.stringify(clientId)}`);
    const scope = options.scope ?? [this.settingsNow.mailScope];
    for (const s of scope) if (!this.scopes.includes(s)) throw new ServiceError('INVALID', `scope: unknown scope ${JSON.stringify(s)}; scopes: ${this.scopes.join(' ')}`);
    const grant = this.store.addGrant(clientId, user, [...scope], this.ctx.now(), 'issue');
    const response = this.issue(grant, options.refresh ?? true);
    this.emitEvent('issued', clientId, user, grant.id, 'issue', null);
    return { ...response, grant: grant.id };
  }

  listGrants(): { id: number; client: string; user: string | null; scope: string[]; via: string; revoked: boolean; createdAt: number; accessTokens: number; expiresAt: number | null }[] {
    const now = this.ctx.now();
    return [...this.store.grants.values()].map((g) => {
      const live = g.accessTokens.map((t) => this.store.access.get(t)!).filter((a) => a && !a.revoked && a.expiresAt > now);
      return {
        id: g.id, client: g.client, user: g.user, scope: [...g.scope], via: g.via, revoked: g.revoked, createdAt: g.createdAt,
        accessTokens: live.length, expiresAt: live.length === 0 ? null : Math.max(...live.map((a) => a.expiresAt)),
      };
    });
  }

  /** Revokes a grant behind the client's back (DELETE /v1/oauth/grants/{id}). */
  revokeGrant(id: number): { revoked: true } {
    const grant = this.store.grants.get(id);
    if (!grant) throw new ServiceError('NONEXISTENT', `No grant ${id}`);
    if (!grant.revoked) this.revoke(grant, 'revoked by the control API', 'control', null);
    return { revoked: true };
  }

  /** Revokes the grants a token (access or refresh) belongs to, behind the client's back. */
  revokeBehindBack(token: string): boolean {
    const id = this.store.access.get(token)?.grant ?? this.store.refresh.get(token)?.grant;
    const grant = id === undefined ? undefined : this.store.grants.get(id);
    if (!grant || grant.revoked) return false;
    this.revoke(grant, "revoked behind the client's back (fault)", 'fault', null);
    return true;
  }

  // ------------------------------------------------------------ mail login

  /**
   * The one check of a mail login (IMAP AUTHENTICATE XOAUTH2/OAUTHBEARER,
   * POP3 AUTH, SMTP AUTH): the token is accepted only while live, for its
   * user, with the mail scope. A client_credentials token (the client acts
   * for itself, as an app-only token does) may open any user's mail.
   */
  check(user: string, token: string, mechanism: Mechanism, session: number | null = null): TokenCheck {
    const a = this.store.access.get(token);
    const grant = a && this.store.grants.get(a.grant);
    let refusal: TokenRefusal | null = null;
    if (!a || !grant) refusal = 'unknown';
    else if (a.revoked || grant.revoked) refusal = 'revoked';
    else if (this.ctx.now() >= a.expiresAt) refusal = 'expired';
    else if (grant.user !== null && grant.user !== user) refusal = 'user';
    else if (!a.scope.includes(this.settingsNow.mailScope)) refusal = 'scope';
    if (refusal !== null) {
      const reason = refusal === 'scope' ? `the token lacks the mail scope ${this.settingsNow.mailScope}` : refusal === 'user' ? `the token is for another user` : `token ${refusal}`;
      this.emitEvent('rejected', grant?.client ?? null, user, grant?.id ?? null, `login ${mechanism}`, reason, session);
      return { ok: false, reason: refusal, client: grant?.client ?? null, grant: grant?.id ?? null };
    }
    return { ok: true, user, client: grant!.client, grant: grant!.id, scope: [...a!.scope], expiresAt: a!.expiresAt };
  }

  /**
   * A mail session logged in with a token `check` accepted: it ends as the
   * provider ends it (src/oauth/styles.ts) when the token expires or is
   * revoked.
   */
  lease(session: LeasedSession, token: string, accepted: Extract<TokenCheck, { ok: true }>): void {
    this.leases.add(session, { token, grant: accepted.grant, user: accepted.user, client: accepted.client, expiresAt: accepted.expiresAt }, this.settingsNow.style);
  }

  // ------------------------------------------------------------ faults, events

  /** Asks the `on: "oauth"` rules about a request; the acting rule, or null. */
  fault(command: string, user: string | null, text: string): ScriptRule | null {
    if (!this.ctx.script.has('oauth')) return null;
    const action = this.ctx.script.fire({ event: 'oauth', session: null, tag: null, command, state: null, user, mailbox: null, text });
    return action?.rule ?? null;
  }

  emitEvent(type: OAuthEventType, client: string | null, user: string | null, grant: number | null, via: string, reason: string | null, session: number | null = null): void {
    this.ctx.emit({ type, client, user, grant, via, reason, session });
  }

  /** Emits the `rejected` event of an OAuth error and returns it, for `throw`. */
  private reject(err: unknown, via: string, client: string | null, grant: Grant | null): unknown {
    if (err instanceof OAuthError) this.emitEvent('rejected', client, grant?.user ?? null, grant?.id ?? null, via, `${err.error}: ${err.description}`);
    return err;
  }
}

/**
 * RFC 6749 section 3.1.2.3 with RFC 8252 section 7.3: a registered URI matches exactly,
 * except that a loopback IP literal's port may differ (a native app gets
 * whatever free port it can). A client with no registered URIs takes any
 * loopback URI (test clients choose theirs).
 */
export function redirectAllowed(client: OAuthClient, uri: string): boolean {
  let given: URL;
  try {
    given = new URL(uri);
  } catch {
    return false;
  }
  if (given.hash !== '' || uri.includes('#')) return false;
  const loopback = given.protocol === 'http:' && (given.hostname === '127.0.0.1' || given.hostname === '[::1]' || given.hostname === 'localhost');
  if (client.redirectUris === null) return loopback;
  return client.redirectUris.some((registered) => {
    if (registered === uri) return true;
    if (!loopback || given.hostname === 'localhost') return false;
    try {
      const r = new URL(registered);
      return r.protocol === 'http:' && r.hostname === given.hostname && r.pathname === given.pathname && r.search === given.search;
    } catch {
      return false;
    }
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

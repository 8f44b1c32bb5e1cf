/**
 * What the token service remembers: grants (one per approval: a client,
 * a user, the scopes granted) and the tokens, codes and device codes made
 * from them. Everything is keyed by Map (token strings and names are user
 * input), and bounded: past `MAX_GRANTS` the oldest grant goes with its
 * tokens, a grant keeps its newest `MAX_ACCESS_PER_GRANT` access tokens,
 * codes and device codes are capped and dropped once expired.
 */

export interface Grant {
  id: number;
  client: string;
  /** Null for a client_credentials grant (the client acts for itself). */
  user: string | null;
  scope: string[];
  createdAt: number;
  revoked: boolean;
  /** How it was made (`authorization_code`, `device_code`, `client_credentials`, `issue` for control.oauth.issue). */
  via: string;
  accessTokens: string[];
  /** The refresh token that is good now, or null. */
  refresh: string | null;
  /** Refresh tokens rotated away, newest last (at most MAX_SPENT_PER_GRANT are remembered). */
  spent: string[];
}

export interface AccessToken {
  token: string;
  grant: number;
  scope: string[];
  /** Mail-server clock, ms. */
  issuedAt: number;
  expiresAt: number;
  revoked: boolean;
}

export interface RefreshToken {
  token: string;
  grant: number;
  expiresAt: number | null;
  /** `spent`: rotated away; using it again is reuse (the grant is revoked). */
  state: 'active' | 'spent' | 'revoked';
}

export interface AuthorizationCode {
  code: string;
  client: string;
  user: string;
  scope: string[];
  redirectUri: string;
  /** Whether the authorization request carried redirect_uri (RFC 6749 §4.1.3: then the token request must repeat it). */
  redirectGiven: boolean;
  challenge: string | null;
  method: 'S256' | 'plain';
  expiresAt: number;
  /** Set once redeemed: a second use revokes what the first made (RFC 6749 §4.1.2). */
  grant: number | null;
}

export interface DeviceAuthorization {
  deviceCode: string;
  userCode: string;
  client: string;
  scope: string[];
  expiresAt: number;
  state: 'pending' | 'approved' | 'denied' | 'redeemed';
  user: string | null;
  /** Seconds the client must wait between polls; grows by 5 with each slow_down (RFC 8628 §3.5). */
  interval: number;
  /** Monotonic ms of the last poll, or null. */
  lastPoll: number | null;
}

export const MAX_GRANTS = 10_000;
export const MAX_ACCESS_PER_GRANT = 20;
export const MAX_CODES = 10_000;
export const MAX_SPENT_PER_GRANT = 50;

export class TokenStore {
  readonly grants = new Map<number, Grant>();
  readonly access = new Map<string, AccessToken>();
  readonly refresh = new Map<string, RefreshToken>();
  readonly codes = new Map<string, AuthorizationCode>();
  readonly devices = new Map<string, DeviceAuthorization>();
  /** User code → device code. */
  readonly userCodes = new Map<string, string>();
  private nextGrant = 1;

  clear(): void {
    this.grants.clear();
    this.access.clear();
    this.refresh.clear();
    this.codes.clear();
    this.devices.clear();
    this.userCodes.clear();
    this.nextGrant = 1;
  }

  addGrant(client: string, user: string | null, scope: string[], now: number, via: string): Grant {
    if (this.grants.size >= MAX_GRANTS) {
      const oldest = this.grants.keys().next().value;
      if (oldest !== undefined) this.dropGrant(oldest);
    }
    const grant: Grant = { id: this.nextGrant++, client, user, scope, createdAt: now, revoked: false, via, accessTokens: [], refresh: null, spent: [] };
    this.grants.set(grant.id, grant);
    return grant;
  }

  addAccess(grant: Grant, token: AccessToken): void {
    this.access.set(token.token, token);
    grant.accessTokens.push(token.token);
    while (grant.accessTokens.length > MAX_ACCESS_PER_GRANT) this.access.delete(grant.accessTokens.shift()!);
  }

  /** Makes `token` the grant's refresh token; the previous one stays known as spent (reuse detection). */
  setRefresh(grant: Grant, token: RefreshToken): void {
    if (grant.refresh !== null) {
      const old = this.refresh.get(grant.refresh);
      if (old && old.state === 'active') old.state = 'spent';
      grant.spent.push(grant.refresh);
      while (grant.spent.length > MAX_SPENT_PER_GRANT) this.refresh.delete(grant.spent.shift()!);
    }
    this.refresh.set(token.token, token);
    grant.refresh = token.token;
  }

  /** Revokes a grant and every token made from it. */
  revokeGrant(grant: Grant): void {
    grant.revoked = true;
    for (const t of grant.accessTokens) {
      const a = this.access.get(t);
      if (a) a.revoked = true;
    }
    for (const t of [grant.refresh, ...grant.spent]) {
      const r = t === null ? undefined : this.refresh.get(t);
      if (r) r.state = 'revoked';
    }
  }

  /** Forgets a grant and its tokens (capacity). */
  private dropGrant(id: number): void {
    const grant = this.grants.get(id);
    if (!grant) return;
    this.grants.delete(id);
    for (const t of grant.accessTokens) this.access.delete(t);
    for (const t of [grant.refresh, ...grant.spent]) if (t !== null) this.refresh.delete(t);
  }

  /** Room for one more code: expired ones go first, then the oldest. */
  roomForCode(now: number): void {
    if (this.codes.size < MAX_CODES) return;
    for (const [k, c] of this.codes) if (c.expiresAt <= now) this.codes.delete(k);
    if (this.codes.size >= MAX_CODES) this.codes.delete(this.codes.keys().next().value!);
  }

  roomForDevice(now: number): void {
    if (this.devices.size < MAX_CODES) return;
    for (const [k, d] of this.devices) {
      if (d.expiresAt <= now) {
        this.devices.delete(k);
        this.userCodes.delete(d.userCode);
      }
    }
    if (this.devices.size >= MAX_CODES) {
      const [k, d] = this.devices.entries().next().value!;
      this.devices.delete(k);
      this.userCodes.delete(d.userCode);
    }
  }
}

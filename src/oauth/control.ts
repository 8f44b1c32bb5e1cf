/**
 * `control.oauth`: the token service's control operations, in-process and
 * behind the `/v1/oauth/...` routes. Arguments are checked as the routes
 * check bodies, so a test in any language gets the same errors.
 */
import { closeObjects, validate } from '../rest/schema.js';
import { decisionSchema, settingsSchema } from './routes.js';
import type { Decision, OAuthService, OAuthSettings, PendingAuthorization, TokenResponse } from './service.js';

const SETTINGS = closeObjects(settingsSchema);
const DECISION = closeObjects(decisionSchema(true));
const SETTLE = closeObjects(decisionSchema(false));

export class OAuthControl {
  constructor(private readonly service: OAuthService) {}

  info(): { issuer: string; settings: OAuthSettings; clients: number; grants: number; pending: number; sessions: number } {
    const s = this.service;
    return { issuer: s.issuer(), settings: s.settings, clients: s.listClients().length, grants: s.store.grants.size, pending: s.pending().length, sessions: s.leases.size };
  }

  /** Changes settings at run time; what is left out stays. */
  configure(change: Partial<OAuthSettings>): OAuthSettings {
    validate(change, SETTINGS, 'settings');
    return this.service.configure(change);
  }

  clients(): ReturnType<OAuthService['listClients']> {
    return this.service.listClients();
  }

  addClient(client: unknown): { id: string } {
    return this.service.addClient(client);
  }

  deleteClient(id: string): { deleted: true } {
    return this.service.deleteClient(id);
  }

  grants(): ReturnType<OAuthService['listGrants']> {
    return this.service.listGrants();
  }

  /** Revokes a grant behind the client's back: its tokens stop working and its mail sessions end. */
  revokeGrant(id: number): { revoked: true } {
    return this.service.revokeGrant(id);
  }

  /** Revokes the grant of an access or refresh token; false when there is no such live grant. */
  revoke(token: string): boolean {
    return this.service.revokeBehindBack(token);
  }

  /** Tokens for `user` without a flow, as if they had approved the client. */
  issue(user: string, options: { client?: string; scope?: string[]; refresh?: boolean } = {}): TokenResponse & { grant: number } {
    return this.service.issueFor(user, options);
  }

  pending(): PendingAuthorization[] {
    return this.service.pending();
  }

  settle(id: number, decision: Decision): { settled: true } {
    validate(decision, SETTLE, 'decision');
    return this.service.settlePending(id, decision);
  }

  /** The decision for the next authorization request: approve (for `user`, with fewer `scope`s), deny, or wait. */
  decide(decision: Decision): { queued: number } {
    validate(decision, DECISION, 'decision');
    return this.service.queueDecision(decision);
  }

  settleDevice(userCode: string, decision: Decision): { userCode: string; state: string } {
    validate(decision, SETTLE, 'decision');
    return this.service.settleDevice(userCode, decision);
  }
}

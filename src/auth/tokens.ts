/**
 * The one token check of every mail login (IMAP AUTHENTICATE, POP3 AUTH,
 * SMTP AUTH; XOAUTH2 and OAUTHBEARER): a user's static
 * `xoauth2.accessToken` as ever, else the token service's verdict
 * (`server.oauth.check`: live, for this user, with the mail scope). A
 * refused token comes with the answer of the `oauth.style` provider
 * (src/oauth/styles.ts): the JSON challenge to send, if any, and the text;
 * protocols word the final failure their own way.
 */
import type { LeasedSession } from '../oauth/leases.js';
import type { OAuthService, TokenRefusal } from '../oauth/service.js';
import { refusalFor, type Mechanism, type Refusal } from '../oauth/styles.js';
import { tokenMatches, type UserDirectory } from './credentials.js';

export type { Mechanism, Refusal };

/** What a login with a token gets. */
export type TokenVerdict =
  /** Logged in. `sessionTimeout`: a static token's session time (null: none). `lease`: call with the session once logged in, so it ends with its token. */
  | { ok: true; sessionTimeout: number | null; lease: ((session: LeasedSession) => void) | null }
  | { ok: false; reason: TokenRefusal; refusal: Refusal };

/** What the check needs of the server. */
export interface TokenAuthority {
  readonly store: { readonly users: UserDirectory };
  readonly oauth: OAuthService;
}

export function checkToken(server: TokenAuthority, user: string | undefined, token: string | undefined, mechanism: Mechanism, session: number | null): TokenVerdict {
  const granted = tokenMatches(server.store.users, user, token);
  if (granted !== null) return { ok: true, sessionTimeout: granted.sessionTimeout, lease: null };
  const oauth = server.oauth;
  let reason: TokenRefusal = 'unknown';
  if (user !== undefined && token !== undefined) {
    const verdict = oauth.check(user, token, mechanism, session);
    // A token for a user the store no longer has opens nothing.
    if (verdict.ok && server.store.users.get(user) !== undefined) {
      return { ok: true, sessionTimeout: null, lease: (s) => oauth.lease(s, token, verdict) };
    }
    if (!verdict.ok) reason = verdict.reason;
  }
  const { style, mailScope } = oauth.settings;
  return { ok: false, reason, refusal: refusalFor(style, mechanism, reason, mailScope, oauth.knownIssuer()) };
}

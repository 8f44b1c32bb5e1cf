/**
 * How the mail side treats a token the token service refuses, and a
 * session whose token ends, per provider (`oauth.style`; the gmail and
 * outlook presets set theirs). Sources:
 *
 * - [R1] RFC 7628 §3.2.2: a failed OAUTHBEARER gets a server challenge with
 *   a JSON error (`status`, `scope`, `openid-configuration`); the client
 *   answers `%x01` and the server ends the exchange with a failure.
 * - [G1] Google's "OAuth 2.0 Mechanism" page (developers.google.com/gmail/imap/xoauth2-protocol):
 *   an XOAUTH2 failure is a `+` challenge of base64 JSON (`status`, `schemes`, `scope`),
 *   the client sends an empty line, then the tagged NO.
 * - [G2] Gmail's answers as clients log them (e.g. go-mk-websites.co.uk "SMTP with google xoauth2
 *   results in error"): `{"status":"400","schemes":"Bearer","scope":"https://mail.google.com/"}`,
 *   then `NO [AUTHENTICATIONFAILED] Invalid credentials (Failure)`.
 * - [G3] Google's "IMAP, POP, and SMTP" page, "Session length limits": a session authenticated
 *   with OAuth lasts about as long as the access token; then Gmail closes the connection with a
 *   message saying that the session expired. So: BYE at the deadline, IDLE included.
 * - [M1] Exchange Online's refusal as logged (pastebin.com/KP0rqKcF, imaplib debug):
 *   the client's XOAUTH2 response is answered `NO AUTHENTICATE failed.` with no challenge.
 * - [M2] Exchange Online ends a session whose token expired in answer to the next command:
 *   `* BYE Session invalidated - AccessTokenExpired` (iroco-co/aioimaplib#83, joeyates/imap-backup#198).
 */
import type { OAuthStyle } from './options.js';
import type { TokenRefusal } from './service.js';

export type Mechanism = 'XOAUTH2' | 'OAUTHBEARER';

/** What the mail side answers to a refused token. */
export interface Refusal {
  /** The base64-free JSON challenge to send before failing, or null to fail at once. */
  challenge: Record<string, string> | null;
  text: string;
  /** RFC 5530 response code, or null. */
  code: string | null;
}

/** How a session whose token is over ends. */
export interface SessionEnd {
  text: string;
  /** True: BYE in answer to the next command ([M2]); false: BYE at the deadline, also in IDLE ([G3]). */
  atNextCommand: boolean;
}

/** RFC 6750 §3.1 error codes, which RFC 7628 §3.2.2 uses as `status`. */
function bearerStatus(refusal: TokenRefusal): string {
  return refusal === 'scope' ? 'insufficient_scope' : 'invalid_token';
}

export function refusalFor(style: OAuthStyle, mechanism: Mechanism, refusal: TokenRefusal, mailScope: string, issuer: string | null): Refusal {
  if (style === 'outlook') return { challenge: null, text: 'AUTHENTICATE failed.', code: null };
  const failed = { text: 'Invalid credentials (Failure)', code: 'AUTHENTICATIONFAILED' };
  if (mechanism === 'OAUTHBEARER') {
    const challenge: Record<string, string> = { status: bearerStatus(refusal), scope: mailScope };
    if (issuer !== null) challenge['openid-configuration'] = `${issuer}/.well-known/openid-configuration`;
    return { challenge, ...failed };
  }
  // [G1] shows status 401 for a bad token; Gmail itself answers 400 ([G2]).
  return { challenge: { status: style === 'gmail' ? '400' : '401', schemes: 'Bearer', scope: mailScope }, ...failed };
}

export function sessionEndFor(style: OAuthStyle, why: 'expired' | 'revoked'): SessionEnd {
  if (style === 'outlook') return { text: why === 'expired' ? 'Session invalidated - AccessTokenExpired' : 'Session invalidated - AccessTokenRevoked', atNextCommand: true };
  if (style === 'gmail') return { text: why === 'expired' ? 'Session expired, please login again.' : 'Access revoked, please login again.', atNextCommand: false };
  return { text: why === 'expired' ? 'Access token expired, authenticate again' : 'Access token revoked, authenticate again', atNextCommand: false };
}

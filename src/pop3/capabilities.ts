/**
 * The CAPA answer (RFC 2449 §5, §6), as it depends on the session: STLS
 * only on a plain connection in AUTHORIZATION (RFC 2595 §4), EXPIRE and
 * LOGIN-DELAY from the options.
 */
import type { ResolvedPop3 } from '../options/types.js';
import type { Pop3State } from './commands/types.js';

/** The SASL mechanisms of AUTH (RFC 5034), checked against the same users and tokens as IMAP. */
export const POP3_SASL = ['PLAIN', 'LOGIN', 'XOAUTH2', 'OAUTHBEARER'] as const;

/**
 * The mechanisms a session offers: EXTERNAL (RFC 4422 Appendix A) only
 * when the TLS layer carries a client certificate of the test CA that
 * names a user, so a client never picks a mechanism that cannot succeed.
 */
export function saslFor(certificateUser: string | null): readonly string[] {
  return certificateUser === null ? POP3_SASL : [...POP3_SASL, 'EXTERNAL'];
}

export const IMPLEMENTATION = 'Rookery';

/** The user's EXPIRE policy (RFC 2449 §6.7): days, or NEVER. */
export function expireFor(config: ResolvedPop3, user: string): number | 'NEVER' {
  return config.expireUsers.get(user) ?? config.expire;
}

/** The user's LOGIN-DELAY in seconds (0: none). */
export function loginDelayFor(config: ResolvedPop3, user: string): number {
  return config.loginDelayUsers.get(user) ?? config.loginDelay;
}

const days = (v: number | 'NEVER'): number => (v === 'NEVER' ? Number.POSITIVE_INFINITY : v);

export function capabilityLines(config: ResolvedPop3, state: Pop3State, secure: boolean, user: string | null, certificateUser: string | null = null): string[] {
  const sasl = state === 'authorization' ? saslFor(certificateUser) : POP3_SASL;
  const lines = ['TOP', 'UIDL', 'USER', `SASL ${sasl.join(' ')}`, 'RESP-CODES', 'AUTH-RESP-CODE', 'PIPELINING'];
  // RFC 2449 §6.7, §6.5: before login, a policy that varies per user is announced as the least one
  // with USER; after login, the user's own, without USER.
  if (user !== null) lines.push(`EXPIRE ${expireFor(config, user)}`);
  else {
    let least = config.expire;
    for (const v of config.expireUsers.values()) if (days(v) < days(least)) least = v;
    lines.push(`EXPIRE ${least}${config.expireUsers.size > 0 ? ' USER' : ''}`);
  }
  if (user !== null) {
    const delay = loginDelayFor(config, user);
    if (delay > 0) lines.push(`LOGIN-DELAY ${delay}`);
  } else {
    let least = config.loginDelay;
    for (const v of config.loginDelayUsers.values()) least = Math.min(least, v);
    const varies = config.loginDelayUsers.size > 0;
    if (least > 0 || varies) lines.push(`LOGIN-DELAY ${least}${varies ? ' USER' : ''}`);
  }
  // RFC 6856: UTF8 (USER: user names and passwords may be UTF-8) and LANG.
  lines.push('UTF8 USER', 'LANG');
  if (state === 'authorization' && config.stls && !secure) lines.push('STLS');
  lines.push(`IMPLEMENTATION ${IMPLEMENTATION}`);
  return lines;
}

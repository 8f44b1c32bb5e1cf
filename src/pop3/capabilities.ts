/**
 * The CAPA answer (RFC 2449 §5, §6), as it depends on the session: STLS
 * only on a plain connection in AUTHORIZATION (RFC 2595 §4), EXPIRE and
 * LOGIN-DELAY from the options.
 */
import type { ResolvedPop3 } from '../options/types.js';
import type { Pop3State } from './commands/types.js';

/** The SASL mechanisms of AUTH (RFC 5034), checked against the same users and tokens as IMAP. */
export const POP3_SASL = ['PLAIN', 'LOGIN', 'XOAUTH2', 'OAUTHBEARER'] as const;

export const IMPLEMENTATION = 'Rookery';

export function capabilityLines(config: ResolvedPop3, state: Pop3State, secure: boolean): string[] {
  const lines = ['TOP', 'UIDL', 'USER', `SASL ${POP3_SASL.join(' ')}`, 'RESP-CODES', 'AUTH-RESP-CODE', 'PIPELINING'];
  // RFC 2449 §6.7: the policy as a number of days or NEVER; the server has one policy, so no USER suffix.
  lines.push(`EXPIRE ${config.expire}`);
  if (config.loginDelay > 0) lines.push(`LOGIN-DELAY ${config.loginDelay}`);
  // RFC 6856: UTF8 (USER: user names and passwords may be UTF-8) and LANG.
  lines.push('UTF8 USER', 'LANG');
  if (state === 'authorization' && config.stls && !secure) lines.push('STLS');
  lines.push(`IMPLEMENTATION ${IMPLEMENTATION}`);
  return lines;
}

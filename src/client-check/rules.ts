/**
 * The client checker's rules: each has a stable id (findings, JUnit test
 * names and `clientCheckRules` use it), a severity and the RFC section it
 * comes from. The checks themselves are in ./session-checker.ts (IMAP)
 * and ./pop3/checker.ts (POP3, rules in ./pop3-rules.ts).
 */
import { POP3_RULES } from './pop3-rules.js';

import { VERDICT_RULES } from '../tls/verdicts.js';

export type ClientCheckMode = 'off' | 'report' | 'strict';

export const CLIENT_CHECK_MODES: readonly ClientCheckMode[] = ['off', 'report', 'strict'];

export type FindingSeverity = 'error' | 'warning';

/** The protocol a finding belongs to. */
export type CheckedProtocol = 'imap' | 'pop3' | 'smtp';
/** The protocol a rule belongs to; `any`: the TLS bench's verdicts, found on IMAP and POP3 sessions alike. */
export type RuleProtocol = CheckedProtocol | 'any';

export interface ClientRule {
  readonly id: string;
  readonly protocol: RuleProtocol;
  readonly severity: FindingSeverity;
  readonly rfc: string;
  /** False: checked only when `clientCheckRules` turns it on. */
  readonly byDefault: boolean;
  /** One line for the docs and the JUnit report. */
  readonly summary: string;
}

const IMAP_RULES: readonly ClientRule[] = [
  { id: 'literal-before-continuation', protocol: 'imap', severity: 'error', rfc: 'RFC 3501 §4.3, §7.5', byDefault: true, summary: 'the bytes of a synchronizing literal {n} arrived before the server sent "+"' },
  { id: 'nonsync-literal-not-advertised', protocol: 'imap', severity: 'error', rfc: 'RFC 7888 §3, §4', byDefault: true, summary: '{n+} without LITERAL+ advertised, or above 4096 octets with only LITERAL-' },
  { id: 'capability-not-advertised', protocol: 'imap', severity: 'error', rfc: 'RFC 3501 §6.1.1, §6.2.1; RFC 9051 §6.1.1', byDefault: true, summary: 'a command, modifier, FETCH item, SEARCH key or SASL mechanism of an extension the session was not offered' },
  { id: 'wrong-state', protocol: 'imap', severity: 'error', rfc: 'RFC 3501 §3, §6', byDefault: true, summary: 'a command not valid in the session state' },
  { id: 'tag-reuse', protocol: 'imap', severity: 'error', rfc: 'RFC 3501 §2.2.1, §9 (tag)', byDefault: true, summary: 'a tag reused while the command with that tag is in progress, or a tag with a character tags may not have' },
  { id: 'command-during-idle', protocol: 'imap', severity: 'error', rfc: 'RFC 2177 §3', byDefault: true, summary: 'anything but DONE after "+ idling"' },
  { id: 'idle-too-long', protocol: 'imap', severity: 'warning', rfc: 'RFC 2177 §3', byDefault: true, summary: 'IDLE held for more than 29 minutes of server clock without being re-issued' },
  { id: 'sequence-beyond-exists', protocol: 'imap', severity: 'error', rfc: 'RFC 3501 §2.3.1.2, §7.4.1', byDefault: true, summary: 'a message sequence number above the number of messages the session was told of' },
  { id: 'ambiguous-pipelining', protocol: 'imap', severity: 'error', rfc: 'RFC 3501 §5.5', byDefault: true, summary: 'a command using sequence numbers sent while a command other than FETCH, STORE or SEARCH was in progress' },
  { id: 'flag-not-permanent', protocol: 'imap', severity: 'warning', rfc: 'RFC 3501 §7.1 (PERMANENTFLAGS), §2.3.2', byDefault: true, summary: 'STORE of \\Recent, or of a new keyword when PERMANENTFLAGS has no \\*' },
  { id: '8bit-without-utf8', protocol: 'imap', severity: 'error', rfc: 'RFC 3501 §4.3, §5.1.3; RFC 6855 §3', byDefault: true, summary: '8-bit bytes outside a literal without UTF8=ACCEPT enabled' },
  { id: 'plaintext-credentials', protocol: 'imap', severity: 'warning', rfc: 'RFC 3501 §6.2.3; RFC 8314 §3', byDefault: true, summary: 'LOGIN or AUTHENTICATE PLAIN/LOGIN in clear text while STARTTLS was offered' },
  { id: 'line-too-long', protocol: 'imap', severity: 'warning', rfc: 'RFC 7162 §4', byDefault: true, summary: 'a command line longer than 8192 octets' },
  { id: 'no-logout', protocol: 'imap', severity: 'warning', rfc: 'RFC 3501 §6.1.3', byDefault: false, summary: 'the client closed the connection without LOGOUT' },
];

// The TLS bench's verdicts (src/tls/verdicts.ts) are findings of the session's own protocol.
export const CLIENT_RULES: readonly ClientRule[] = [...IMAP_RULES, ...POP3_RULES, ...VERDICT_RULES];

/**
 * Capabilities RFC 9051 folds into IMAP4rev2 (its Appendix E): a session
 * that enabled IMAP4rev2 may use them unadvertised, and hiding one of them
 * hides IMAP4rev2 too (a server without MOVE cannot be IMAP4rev2).
 */
export const REV2_INCLUDES: readonly string[] = [
  'NAMESPACE', 'UNSELECT', 'UIDPLUS', 'ESEARCH', 'SEARCHRES', 'ENABLE', 'IDLE', 'SASL-IR', 'LIST-EXTENDED', 'LIST-STATUS',
  'MOVE', 'LITERAL-', 'BINARY', 'SPECIAL-USE', 'STATUS=SIZE', 'CHILDREN',
];

/** Adds `names` (upper-cased) to a session's hidden set, and IMAP4rev2 when one of them is part of it. */
export function hideCapabilities(hidden: Set<string>, names: readonly string[]): void {
  for (const name of names) {
    const upper = name.toUpperCase();
    hidden.add(upper);
    if (REV2_INCLUDES.includes(upper)) hidden.add('IMAP4REV2');
  }
}

export const CLIENT_RULE_IDS: readonly string[] = CLIENT_RULES.map((r) => r.id);

const BY_ID = new Map<string, ClientRule>(CLIENT_RULES.map((r) => [r.id, r]));

export function clientRule(id: string): ClientRule | undefined {
  return BY_ID.get(id);
}

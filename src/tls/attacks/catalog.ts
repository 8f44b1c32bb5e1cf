/**
 * The STARTTLS attack pack: the cases of "Why TLS is better without
 * STARTTLS" (Poddebniak, Ising, Böck, Schinzel; USENIX Security 2021) that
 * a server alone can play, without a man in the middle. Names and what a
 * safe client does are protocol-neutral; what the server sends is each
 * protocol's (./imap-attack.ts).
 */

export const STARTTLS_ATTACKS = [
  'starttls-buffering',
  'starttls-stripping',
  'starttls-refusal',
  'starttls-no-handshake',
  'starttls-garbage',
  'starttls-preauth',
  'starttls-tampering',
  'starttls-alert',
] as const;
export type AttackName = (typeof STARTTLS_ATTACKS)[number];

export interface AttackInfo {
  name: AttackName;
  /** What the server does. */
  does: string;
  /** What a safe client does (the RFC rule it follows). */
  safe: string;
}

export const ATTACKS: ReadonlyMap<AttackName, AttackInfo> = new Map<AttackName, AttackInfo>([
  ['starttls-buffering', { name: 'starttls-buffering', does: 'sends, in the same plain-text write as "OK Begin TLS", a CAPABILITY without STARTTLS and with capabilities the server lacks, and a tagged OK for the next tag', safe: 'discards every byte received before the handshake and asks for CAPABILITY again over TLS (RFC 2595 section 3.1, RFC 9051 section 6.2.1, RFC 3207 section 4.2)' }],
  ['starttls-stripping', { name: 'starttls-stripping', does: 'leaves STARTTLS out of every capability list and answers STARTTLS as an unknown command (T1)', safe: 'configured to require TLS, closes the connection without sending credentials (RFC 8314 section 4.1, RFC 3501 section 11.1)' }],
  ['starttls-refusal', { name: 'starttls-refusal', does: 'advertises STARTTLS and answers it with NO (T3)', safe: 'closes the connection without sending credentials' }],
  ['starttls-no-handshake', { name: 'starttls-no-handshake', does: 'answers STARTTLS with OK, then sends plain text instead of a ServerHello and stays in plain text (T2)', safe: 'treats the failed handshake as fatal and sends nothing more in plain text' }],
  ['starttls-garbage', { name: 'starttls-garbage', does: 'completes the handshake, then writes plain-text bytes outside TLS records on the connection (T4)', safe: 'drops the connection on the bad record and sends nothing more' }],
  ['starttls-preauth', { name: 'starttls-preauth', does: 'greets with PREAUTH, so STARTTLS (allowed only before authentication) can no longer be used', safe: 'wanting TLS, closes the connection (RFC 9051 section 7.1.4, RFC 2595 section 3.1; the PREAUTH case of the USENIX paper)' }],
  ['starttls-tampering', { name: 'starttls-tampering', does: 'sends untagged CAPABILITY, LIST, STATUS, EXISTS, FLAGS and FETCH responses before STARTTLS, naming capabilities the server lacks and a mailbox that does not exist', safe: 'forgets everything learned before the handshake (RFC 2595 section 3.1, RFC 9051 section 6.2.1)' }],
  ['starttls-alert', { name: 'starttls-alert', does: 'puts [ALERT] texts in the greeting and in the answer to STARTTLS, before any TLS (UI spoofing)', safe: 'does not show the user text that arrived before TLS as coming from the server; the verdict cannot see the screen, so the test checks what the client showed' }],
]);

export function isAttack(name: string): name is AttackName {
  return ATTACKS.has(name as AttackName);
}

/** Attacks that each decide the answer to STARTTLS or the greeting: at most one per session. */
const EXCLUSIVE: ReadonlySet<AttackName> = new Set(['starttls-buffering', 'starttls-stripping', 'starttls-refusal', 'starttls-no-handshake', 'starttls-garbage', 'starttls-preauth']);

/** Null when `attacks` can be played together, or why not. */
export function combinationProblem(attacks: readonly AttackName[]): string | null {
  const exclusive = attacks.filter((a) => EXCLUSIVE.has(a));
  if (exclusive.length > 1) return `${exclusive.join(' and ')} each decide the answer to STARTTLS or the greeting: choose one (starttls-tampering and starttls-alert go with any)`;
  return null;
}

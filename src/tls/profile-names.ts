/**
 * The names of the certificate profiles and what each breaks, apart from
 * the certificate maker (./profiles.ts), for the options and the verdicts.
 */

export const PROFILES = ['valid', 'expired', 'not-yet-valid', 'wrong-host', 'self-signed', 'unknown-ca', 'missing-intermediate', 'weak-signature', 'weak-key'] as const;
export type ProfileName = (typeof PROFILES)[number];

/** What each profile breaks, one line (docs, errors, verdict evidence). */
export const PROFILE_FLAWS: Readonly<Record<ProfileName, string>> = {
  valid: 'nothing: signed by the test CA, for the host names asked',
  expired: 'its notAfter was yesterday (RFC 5280 section 4.1.2.5, section 6.1.3)',
  'not-yet-valid': 'its notBefore is tomorrow (RFC 5280 section 4.1.2.5)',
  'wrong-host': 'its only name is wrong-host.invalid (RFC 7817 section 3, RFC 6125 section 6)',
  'self-signed': 'signed by its own key, not by a CA the client trusts',
  'unknown-ca': 'signed by a second CA nobody trusts',
  'missing-intermediate': 'signed by an intermediate CA the server does not send (RFC 5246 section 7.4.2, RFC 8446 section 4.4.2)',
  'weak-signature': 'signed with ECDSA over SHA-1',
  'weak-key': 'an RSA key of 1024 bits',
};

export function isProfile(name: string): name is ProfileName {
  return (PROFILES as readonly string[]).includes(name);
}

/** The host names every certificate of the test CA carries, besides the ones a test adds. */
export const DEFAULT_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** The host name of the `wrong-host` profile: RFC 6761 reserves `.invalid`. */
export const WRONG_HOST = 'wrong-host.invalid';


/** The TLS settings of one listener, as the options resolve them (src/options/tls.ts). */
import type { ProfileName } from './profile-names.js';

/** The listeners that speak TLS; each calls `server.tlsFor(listener)` once. */
export const TLS_LISTENERS = ['imap', 'pop3', 'smtp'] as const;
export type TlsListener = (typeof TLS_LISTENERS)[number];

export const TLS_VERSIONS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
export type TlsVersion = (typeof TLS_VERSIONS)[number];

/**
 * ALPN (RFC 7301) with the listener's IANA id (`imap`, `pop3`; SMTP has
 * `smtp` only in drafts): `require`d, a client that offers no id or
 * another one is refused (no_application_protocol); `refuse`d, a client
 * that offers any id is refused; `ignore`d (default), ALPN plays no part.
 */
export type AlpnMode = 'ignore' | 'require' | 'refuse';
export const ALPN_MODES: readonly AlpnMode[] = ['ignore', 'require', 'refuse'];

/** What a listener's `tls` options say, keys given per listener over the shared ones. */
export interface ListenerTlsOptions {
  /** The certificate profile for every server name not in `certificates` (docs/tls.md). */
  profile?: ProfileName;
  /** SNI (RFC 6066 §3): the profile served to each server name. */
  certificates?: Readonly<Record<string, ProfileName>>;
  /** Host names (or addresses) the profile certificates carry besides localhost, 127.0.0.1 and ::1. */
  hosts?: readonly string[];
  /** Ask for a client certificate (signed by the test CA; SASL EXTERNAL reads it). Default false. */
  requestCert?: boolean;
  minVersion?: TlsVersion;
  maxVersion?: TlsVersion;
  alpn?: AlpnMode;
  /** An OpenSSL cipher list; below TLSv1.2 the default is `DEFAULT:@SECLEVEL=0`. */
  ciphers?: string;
}

export interface ResolvedListenerTls {
  /** Null: the `key`/`cert` of the options, or the built-in TEST_CERTIFICATE. */
  profile: ProfileName | null;
  /** Lower-case server names. */
  certificates: ReadonlyMap<string, ProfileName>;
  hosts: readonly string[];
  requestCert: boolean;
  minVersion: TlsVersion | null;
  maxVersion: TlsVersion | null;
  alpn: AlpnMode;
  ciphers: string | null;
}

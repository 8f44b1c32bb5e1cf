/**
 * The TLS of one listener (IMAP, POP3, SMTP; implicit TLS and STARTTLS
 * alike): the secure context of its profile, one per SNI server name, the
 * client certificate request, versions and ALPN. A listener wraps each
 * connection with `wrap()`, and asks afterwards which profile the client
 * was served and which user its certificate names.
 */
import type { Duplex } from 'node:stream';
import type * as tls from 'node:tls';
import { nodeTls } from './node-tls.js';
import type { CertificateAuthority } from './profiles.js';
import type { ProfileName } from './profile-names.js';
import type { ResolvedListenerTls, TlsListener } from './settings.js';

/** The ALPN id of each listener (IANA's TLS ALPN Protocol IDs registry). */
const ALPN_IDS: Readonly<Record<TlsListener, string>> = { imap: 'imap', pop3: 'pop3', smtp: 'smtp' };
/** Offered under `alpn: 'refuse'`: no client asks for it, so any offer ends in no_application_protocol. */
const NO_PROTOCOL = 'x-rookery-refused';

interface Served {
  profile: ProfileName | null;
  servername: string | null;
}

export interface KeyAndCert {
  key: string | Buffer;
  cert: string | Buffer;
}

export class ListenerTls {
  private readonly contexts = new Map<string, { context: tls.SecureContext; profile: ProfileName | null }>();
  private readonly served = new WeakMap<object, Served>();

  constructor(
    readonly listener: TlsListener,
    readonly settings: ResolvedListenerTls,
    /** Asked only when a profile is served: a key/cert listener never loads the certificate maker. */
    private readonly authority: () => CertificateAuthority,
    /** The `key`/`cert` option (or the built-in test certificate), served where no profile applies. */
    private readonly fallback: KeyAndCert,
  ) {}

  /** The key and certificate (chain) served to `servername` (or to clients without SNI). */
  keyAndCert(servername: string | null): { key: string | Buffer; cert: string | Buffer; profile: ProfileName | null } {
    const profile = this.profileFor(servername);
    if (profile === null) return { ...this.fallback, profile };
    const hosts = servername !== null && this.settings.certificates.has(servername) ? [servername, ...this.settings.hosts] : this.settings.hosts;
    const made = this.authority().certificate(profile, hosts);
    return { key: made.keyPem, cert: made.chainPem, profile };
  }

  private profileFor(servername: string | null): ProfileName | null {
    return (servername !== null ? this.settings.certificates.get(servername) : undefined) ?? this.settings.profile;
  }

  /** Makes the contexts of every server name of `certificates` too, so that start pays for them (and fails on them) instead of a first client. */
  prepare(): tls.SecureContext {
    for (const name of this.settings.certificates.keys()) this.entry(name);
    return this.context();
  }

  /** The secure context for `servername`, made once: a bad key fails here, at start, not in a handshake. */
  context(servername: string | null = null): tls.SecureContext {
    return this.entry(servername).context;
  }

  private entry(servername: string | null): { context: tls.SecureContext; profile: ProfileName | null } {
    // Names without a certificate of their own share the default context.
    const key = servername !== null && this.settings.certificates.has(servername) ? servername : '';
    let entry = this.contexts.get(key);
    if (entry === undefined) {
      const { key: privateKey, cert, profile } = this.keyAndCert(key === '' ? null : key);
      entry = { context: nodeTls().createSecureContext({ key: privateKey, cert, ...this.contextOptions(profile) }), profile };
      this.contexts.set(key, entry);
    }
    return entry;
  }

  /** Options of createSecureContext beside the key and certificate (smtp-server takes them too). */
  contextOptions(profile: ProfileName | null = this.settings.profile): tls.SecureContextOptions {
    const s = this.settings;
    const options: tls.SecureContextOptions = {};
    const old = s.maxVersion === 'TLSv1' || s.maxVersion === 'TLSv1.1';
    // Node's default minimum is TLSv1.2: a maximum below it needs a minimum too.
    if (s.minVersion) options.minVersion = s.minVersion;
    else if (old) options.minVersion = 'TLSv1';
    if (s.maxVersion) options.maxVersion = s.maxVersion;
    // OpenSSL 3 at its default security level refuses SHA-1 (the signature of weak-signature, the
    // handshake signatures of TLS 1.0 and 1.1): level 0 lets the server present them.
    const ciphers = s.ciphers ?? (old || profile === 'weak-signature' ? 'DEFAULT:@SECLEVEL=0' : null);
    if (ciphers !== null) options.ciphers = ciphers;
    if (s.requestCert) options.ca = this.authority().caPem;
    return options;
  }

  /** Options for a TLSSocket on the server side, or for smtp-server (SNICallback, requestCert, ALPN). */
  socketOptions(onServed?: (served: Served) => void): tls.TLSSocketOptions {
    const s = this.settings;
    const options: tls.TLSSocketOptions = { isServer: true, secureContext: this.context() };
    onServed?.({ profile: this.entry(null).profile, servername: null });
    if (s.certificates.size > 0 || onServed) {
      options.SNICallback = (name, callback) => {
        const servername = name.toLowerCase();
        try {
          const entry = this.entry(servername);
          onServed?.({ profile: entry.profile, servername });
          callback(null, entry.context);
        } catch (err) {
          callback(err as Error, undefined);
        }
      };
    }
    if (s.requestCert) {
      options.requestCert = true;
      // Checked by whoever reads the certificate (SASL EXTERNAL), so a client without one still connects.
      options.rejectUnauthorized = false;
    }
    if (s.alpn !== 'ignore') options.ALPNProtocols = [s.alpn === 'require' ? ALPN_IDS[this.listener] : NO_PROTOCOL];
    return options;
  }

  /** Wraps a plain connection (server side); `plain` must not be read from any more. */
  wrap(plain: Duplex): tls.TLSSocket {
    const served: Served = { profile: null, servername: null };
    const socket = new (nodeTls().TLSSocket)(plain, this.socketOptions((s) => Object.assign(served, s)));
    this.served.set(socket, served);
    // Without a tls.Server, a failed handshake leaves both sockets open (the client's alert is an 'error'
    // or an 'end', and the greeting written before the handshake never drains): the session would wait
    // for a client that left.
    let secure = false;
    socket.once('secure', () => (secure = true));
    const drop = (): void => {
      socket.destroy();
      plain.destroy();
    };
    socket.once('error', drop);
    socket.once('end', () => {
      if (!secure) drop();
    });
    if (this.settings.alpn === 'require') {
      // A client that offered a wrong id got no_application_protocol from OpenSSL; one that offered none is refused here.
      socket.once('secure', () => {
        if (socket.alpnProtocol !== ALPN_IDS[this.listener]) socket.destroy();
      });
    }
    return socket;
  }

  /** The profile and server name a socket made by `wrap` was served (the profile is null for key/cert). */
  servedTo(socket: object): Served | null {
    return this.served.get(socket) ?? null;
  }

  /**
   * The user a verified client certificate names (its subject CN), or null
   * when the client sent none or one the test CA did not sign.
   */
  certificateUser(socket: tls.TLSSocket): string | null {
    if (!this.settings.requestCert) return null;
    const peer = socket.getPeerX509Certificate();
    if (peer === undefined) return null;
    // Checked here, not by OpenSSL (rejectUnauthorized is off so that clients without one connect).
    const ca = this.authority().ca.cert;
    const now = Date.now();
    if (!peer.checkIssued(ca) || !peer.verify(ca.publicKey) || now < Date.parse(peer.validFrom) || now > Date.parse(peer.validTo)) return null;
    const cn = /^CN=(.*)$/m.exec(peer.subject)?.[1];
    return cn !== undefined && cn !== '' ? cn : null;
  }
}

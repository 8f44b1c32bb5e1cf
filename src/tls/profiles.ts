/**
 * Certificate profiles: each is a certificate (chain) that breaks one rule
 * a client must check (RFC 5280 path validation, RFC 7817 host names), or
 * none (`valid`). The certificates are made when first asked for, signed by
 * the server's CA, for the host names the options give.
 */
import { issue, newKey, fromPem, type Issued, type KeyKind } from './certificate-maker.js';
import { DEFAULT_HOSTS, WRONG_HOST, type ProfileName } from './profile-names.js';
import { TEST_CA, TEST_CA_KEY, TEST_CA_NAME } from './test-ca.js';

/** A profile's certificate: the private key, and the chain the server sends (leaf first). */
export interface ProfileCertificate {
  profile: ProfileName;
  keyPem: string;
  chainPem: string;
  leaf: Issued;
}

const DAY = 86_400_000;

/**
 * One server's certificate authority: the test CA (or a fresh one), the
 * intermediate and the untrusted CA the profiles need, and the profile
 * certificates made so far. Nothing is made before it is asked for.
 */
export class CertificateAuthority {
  private caCert: Issued | null;
  private intermediateCert: Issued | null = null;
  private untrustedCert: Issued | null = null;
  private readonly made = new Map<string, ProfileCertificate>();

  /** `fresh`: a new CA key made for this server instead of TEST_CA. */
  constructor(private readonly fresh = false) {
    this.caCert = null;
  }

  /** The CA certificate (PEM) a client must trust to accept `valid`. */
  get caPem(): string {
    return this.ca.certPem;
  }

  get ca(): Issued {
    if (this.caCert === null) {
      this.caCert = this.fresh ? newCa(TEST_CA_NAME.commonName, TEST_CA_NAME.organization, 1) : fromPem(TEST_CA_KEY, TEST_CA, TEST_CA_NAME.commonName, TEST_CA_NAME.organization);
    }
    return this.caCert;
  }

  private get intermediate(): Issued {
    if (this.intermediateCert === null) {
      const now = Date.now();
      this.intermediateCert = issue({ commonName: 'Rookery test intermediate CA', organization: TEST_CA_NAME.organization, notBefore: new Date(now - DAY), notAfter: new Date(now + 365 * DAY), ca: { pathLength: 0 } }, this.ca);
    }
    return this.intermediateCert;
  }

  private get untrusted(): Issued {
    this.untrustedCert ??= newCa('Rookery untrusted CA', 'Nobody trusts this', 0);
    return this.untrustedCert;
  }

  /** The certificate of `profile` for `hosts` (besides DEFAULT_HOSTS), made once per server. */
  certificate(profile: ProfileName, hosts: readonly string[]): ProfileCertificate {
    const key = `${profile}\n${hosts.join('\n')}`;
    let made = this.made.get(key);
    if (made === undefined) {
      made = this.make(profile, hosts);
      this.made.set(key, made);
    }
    return made;
  }

  /** A client certificate for `user` (its CN and, when it looks like an address, an rfc822Name), signed by the CA. */
  clientCertificate(user: string, days = 365): { key: string; cert: string } {
    const now = Date.now();
    const altNames = user.includes('@') ? [user] : [];
    const issued = issue({ commonName: user, altNames, notBefore: new Date(now - DAY), notAfter: new Date(now + days * DAY), usage: ['client'] }, this.ca);
    return { key: issued.keyPem, cert: issued.certPem };
  }

  private make(profile: ProfileName, hosts: readonly string[]): ProfileCertificate {
    const now = Date.now();
    const names = [...new Set([...DEFAULT_HOSTS, ...hosts])];
    const base = { commonName: hosts[0] ?? 'localhost', organization: TEST_CA_NAME.organization, altNames: names, notBefore: new Date(now - DAY), notAfter: new Date(now + 365 * DAY) };
    const leaf = (request: Partial<typeof base> & { keyKind?: KeyKind; hash?: 'sha1' }, issuer: Issued | null = this.ca): Issued => issue({ ...base, ...request }, issuer);
    let cert: Issued;
    let chain: Issued[] = [];
    switch (profile) {
      case 'valid':
        cert = leaf({});
        break;
      case 'expired':
        cert = leaf({ notBefore: new Date(now - 30 * DAY), notAfter: new Date(now - DAY) });
        break;
      case 'not-yet-valid':
        cert = leaf({ notBefore: new Date(now + DAY), notAfter: new Date(now + 30 * DAY) });
        break;
      case 'wrong-host':
        cert = leaf({ commonName: WRONG_HOST, altNames: [WRONG_HOST] });
        break;
      case 'self-signed':
        cert = leaf({}, null);
        break;
      case 'unknown-ca':
        cert = leaf({}, this.untrusted);
        chain = [this.untrusted];
        break;
      case 'missing-intermediate':
        // The intermediate signs the leaf but is left out of the chain the server sends.
        cert = leaf({}, this.intermediate);
        break;
      case 'weak-signature':
        cert = leaf({ hash: 'sha1' });
        break;
      case 'weak-key':
        cert = leaf({ keyKind: 'rsa-1024' });
        break;
    }
    return { profile, keyPem: cert.keyPem, chainPem: [cert, ...chain].map((c) => c.certPem).join(''), leaf: cert };
  }
}

function newCa(commonName: string, organization: string, pathLength: number): Issued {
  const now = Date.now();
  return issue({ commonName, organization, notBefore: new Date(now - DAY), notAfter: new Date(now + 10 * 365 * DAY), ca: { pathLength } }, null);
}

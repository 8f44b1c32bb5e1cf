/**
 * X.509 certificates (RFC 5280) made with node:crypto keys and our DER
 * writer: a P-256 key pair and one signature cost well under a
 * millisecond each, so a server can make the certificates of its profiles
 * at start for host names the test chose. The reasons for not taking an
 * npm X.509 library are in docs/tls.md.
 */
import type { KeyObject, X509Certificate } from 'node:crypto';
import { nodeCrypto } from '../util/node-crypto.js';
import { isIP } from 'node:net';
import { bitString, boolean, explicit, implicitPrimitive, integer, nullValue, octetString, oid, sequence, set, time, tlv, utf8String } from './der.js';

/** A key pair with its certificate, as PEM and as node:crypto objects. */
export interface Issued {
  key: KeyObject;
  readonly cert: X509Certificate;
  keyPem: string;
  certPem: string;
  /** The subject Name in DER: the issuer Name of what this one signs. */
  subject: Buffer;
  /** The SubjectPublicKeyInfo in DER (its key identifier goes into what this one signs). */
  spki: Buffer;
}

export type KeyKind = 'ec-p256' | 'rsa-1024' | 'rsa-2048';
export type SignatureHash = 'sha256' | 'sha1';

export interface CertificateRequest {
  commonName: string;
  organization?: string;
  /** DNS names, IP addresses (v4 or v6) and, for client certificates, e-mail addresses. */
  altNames?: readonly string[];
  notBefore: Date;
  notAfter: Date;
  /** A CA (basicConstraints cA) that may sign certificates; `pathLength` limits the CAs under it. */
  ca?: { pathLength?: number };
  /** The extended key usages of an end-entity certificate; default serverAuth. */
  usage?: readonly ('server' | 'client')[];
  keyKind?: KeyKind;
  /** The hash of the issuer's signature; SHA-1 only for the weak-signature profile. */
  hash?: SignatureHash;
}

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  ecPublicKey: '1.2.840.10045.2.1',
  ecdsaSha256: '1.2.840.10045.4.3.2',
  ecdsaSha1: '1.2.840.10045.4.1',
  rsaSha256: '1.2.840.113549.1.1.11',
  rsaSha1: '1.2.840.113549.1.1.5',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyId: '2.5.29.14',
  authorityKeyId: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

export function newKey(kind: KeyKind = 'ec-p256'): KeyObject {
  if (kind === 'ec-p256') return nodeCrypto().generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  return nodeCrypto().generateKeyPairSync('rsa', { modulusLength: kind === 'rsa-1024' ? 1024 : 2048 }).privateKey;
}

function name(commonName: string, organization: string | undefined): Buffer {
  const rdns = [];
  if (organization) rdns.push(set(sequence(oid(OID.organization), utf8String(organization))));
  rdns.push(set(sequence(oid(OID.commonName), utf8String(commonName))));
  return sequence(...rdns);
}

function ipBytes(address: string): Buffer {
  if (isIP(address) === 4) return Buffer.from(address.split('.').map(Number));
  // Expanded by hand: `::` stands for as many zero groups as are missing.
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const groups = (s: string | undefined): string[] => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.concat(all.map((g) => Buffer.from(g.padStart(4, '0'), 'hex')));
}

/** RFC 5280 §4.2.1.6: dNSName [2], iPAddress [7], rfc822Name [1]. */
function altName(entry: string): Buffer {
  if (isIP(entry) !== 0) return implicitPrimitive(7, ipBytes(entry));
  if (entry.includes('@')) return implicitPrimitive(1, Buffer.from(entry, 'ascii'));
  return implicitPrimitive(2, Buffer.from(entry, 'ascii'));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? sequence(oid(id), boolean(true), octetString(value)) : sequence(oid(id), octetString(value));
}

/** RFC 5280 §4.2.1.2 method (1): SHA-1 of the subjectPublicKey bits. */
function keyId(spki: Buffer): Buffer {
  // The BIT STRING is the last element of the SubjectPublicKeyInfo; its content after the unused-bits octet.
  const keyBits = lastBitString(spki);
  return nodeCrypto().createHash('sha1').update(keyBits).digest();
}

function lastBitString(spki: Buffer): Buffer {
  // SEQUENCE { AlgorithmIdentifier, BIT STRING }: skip the outer header, then the first element.
  let i = headerLength(spki, 0);
  i += headerLength(spki, i) + contentLength(spki, i);
  const start = i + headerLength(spki, i);
  return spki.subarray(start + 1, start + contentLength(spki, i));
}

function headerLength(der: Buffer, at: number): number {
  const first = der[at + 1]!;
  return first < 0x80 ? 2 : 2 + (first & 0x7f);
}

function contentLength(der: Buffer, at: number): number {
  const first = der[at + 1]!;
  if (first < 0x80) return first;
  let n = 0;
  for (let k = 0; k < (first & 0x7f); k++) n = n * 256 + der[at + 2 + k]!;
  return n;
}

function signatureAlgorithm(issuerKey: KeyObject, hash: SignatureHash): Buffer {
  if (issuerKey.asymmetricKeyType === 'ec') return sequence(oid(hash === 'sha1' ? OID.ecdsaSha1 : OID.ecdsaSha256));
  return sequence(oid(hash === 'sha1' ? OID.rsaSha1 : OID.rsaSha256), nullValue());
}

function serial(): Buffer {
  const bytes = nodeCrypto().randomBytes(16);
  // Positive and never zero (RFC 5280 §4.1.2.2).
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes;
}

/**
 * Issues a certificate for `request`, signed by `issuer` (or by its own
 * new key when `issuer` is null: a self-signed certificate).
 */
export function issue(request: CertificateRequest, issuer: Issued | null, key: KeyObject = newKey(request.keyKind)): Issued {
  const spki = spkiOf(key);
  const signerKey = issuer?.key ?? key;
  const hash = request.hash ?? 'sha256';
  const algorithm = signatureAlgorithm(signerKey, hash);
  const subject = name(request.commonName, request.organization);
  const issuerName = issuer?.subject ?? subject;
  const issuerSpki = issuer?.spki ?? spki;
  const extensions: Buffer[] = [];
  if (request.ca) {
    const constraints = request.ca.pathLength === undefined ? sequence(boolean(true)) : sequence(boolean(true), integer(request.ca.pathLength));
    extensions.push(extension(OID.basicConstraints, true, constraints));
    // keyCertSign and cRLSign: bits 5 and 6 (RFC 5280 §4.2.1.3), one unused bit.
    extensions.push(extension(OID.keyUsage, true, tlv(0x03, Buffer.from([0x01, 0x06]))));
  } else {
    extensions.push(extension(OID.basicConstraints, true, sequence()));
    // digitalSignature (bit 0), plus keyEncipherment (bit 2) for RSA key exchange.
    const bits = key.asymmetricKeyType === 'rsa' ? 0xa0 : 0x80;
    extensions.push(extension(OID.keyUsage, true, tlv(0x03, Buffer.from([0x05, bits]))));
    const usages = (request.usage ?? ['server']).map((u) => oid(u === 'server' ? OID.serverAuth : OID.clientAuth));
    extensions.push(extension(OID.extKeyUsage, false, sequence(...usages)));
  }
  if (request.altNames && request.altNames.length > 0) {
    extensions.push(extension(OID.subjectAltName, false, sequence(...request.altNames.map(altName))));
  }
  extensions.push(extension(OID.subjectKeyId, false, octetString(keyId(spki))));
  extensions.push(extension(OID.authorityKeyId, false, sequence(implicitPrimitive(0, keyId(issuerSpki)))));
  const tbs = sequence(
    explicit(0, integer(2)),
    integer(serial()),
    algorithm,
    issuerName,
    sequence(time(request.notBefore), time(request.notAfter)),
    subject,
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = nodeCrypto().sign(hash, tbs, signerKey);
  const der = sequence(tbs, algorithm, bitString(signature));
  let parsed: X509Certificate | null = null;
  return {
    key,
    // Parsed when read (the tests, the CA's own checks): a listener needs only the PEM.
    get cert(): X509Certificate {
      parsed ??= new (nodeCrypto().X509Certificate)(der);
      return parsed;
    },
    keyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string,
    certPem: pem('CERTIFICATE', der),
    subject,
    spki,
  };
}

/** RFC 7468 §2: base64 in lines of 64 characters between the labels. */
function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

function spkiOf(key: KeyObject): Buffer {
  return nodeCrypto().createPublicKey(key).export({ type: 'spki', format: 'der' });
}

/** A key and certificate from PEM text (the fixed test CA), with the names it was issued with. */
export function fromPem(keyPem: string, certPem: string, commonName: string, organization?: string): Issued {
  const key = nodeCrypto().createPrivateKey(keyPem);
  return { key, cert: new (nodeCrypto().X509Certificate)(certPem), keyPem, certPem, subject: name(commonName, organization), spki: spkiOf(key) };
}

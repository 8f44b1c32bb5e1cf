/**
 * Signed JWT access tokens (RFC 9068) with an ES256 key (RFC 7518 §3.4)
 * made the first time one is needed, and its public half as a JWK Set
 * (RFC 7517 §5) for /oauth/jwks. The key lives as long as the server.
 */
import type { KeyObject } from 'node:crypto';
import { nodeCrypto } from '../util/node-crypto.js';

export interface JwtClaims {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  jti: string;
  client_id: string;
  scope: string;
}

export class JwtSigner {
  private key: { privateKey: KeyObject; jwk: Record<string, string> } | null = null;

  private keys(): { privateKey: KeyObject; jwk: Record<string, string> } {
    if (this.key) return this.key;
    const { privateKey, publicKey } = nodeCrypto().generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pub = publicKey.export({ format: 'jwk' }) as Record<string, string>;
    // RFC 7638 thumbprint as the key id: stable for the key, computed from its required members in order.
    const kid = nodeCrypto().createHash('sha256').update(JSON.stringify({ crv: pub.crv, kty: pub.kty, x: pub.x, y: pub.y })).digest('base64url');
    this.key = { privateKey, jwk: { kty: 'EC', crv: 'P-256', x: pub.x!, y: pub.y!, kid, use: 'sig', alg: 'ES256' } };
    return this.key;
  }

  /** The JWK Set of the signing key. */
  jwks(): { keys: Record<string, string>[] } {
    return { keys: [{ ...this.keys().jwk }] };
  }

  /** A compact JWS of `claims` with `typ: at+jwt` (RFC 9068 §2.1). */
  sign(claims: JwtClaims): string {
    const { privateKey, jwk } = this.keys();
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: jwk.kid })).toString('base64url');
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const input = `${header}.${payload}`;
    // JWS wants the raw r||s form of the signature, not DER (RFC 7518 §3.4).
    const signature = nodeCrypto().sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    return `${input}.${signature.toString('base64url')}`;
  }
}

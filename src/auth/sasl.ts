/**
 * The SASL messages clients send, decoded (protocol-neutral): PLAIN (RFC
 * 4616), Google's XOAUTH2, OAUTHBEARER (RFC 7628). LOGIN has no message of
 * its own (a user name, then a password, each a line). What a failure is
 * answered with stays with the protocol.
 */

/** PLAIN's `authzid NUL authcid NUL password`, or null when malformed or when authzid names another user. */
export function decodePlain(response: Buffer): { user: string; password: string } | null {
  const parts = response.toString('utf8').split('\0');
  if (parts.length !== 3) return null;
  const [authz, user, password] = parts as [string, string, string];
  if (authz !== '' && authz !== user) return null;
  return { user, password };
}

/** XOAUTH2: `user=<name>^Aauth=Bearer <token>^A^A`. */
export function decodeXOAuth2(response: Buffer): { user: string | undefined; token: string | undefined } {
  const m = /^user=([^\x01]*)\x01auth=Bearer ([^\x01]+)\x01\x01$/.exec(response.toString('utf8'));
  return { user: m?.[1], token: m?.[2] };
}

/** OAUTHBEARER: `n,a=<name>,^Ahost=...^Aport=...^Aauth=Bearer <token>^A^A` (RFC 7628 §3.1). */
export function decodeOAuthBearer(response: Buffer): { user: string | undefined; token: string | undefined } {
  const text = response.toString('utf8');
  const [gs2, ...pairs] = text.split('\x01');
  const user = /^[ny],a=([^,]*),$/.exec(gs2 ?? '')?.[1]?.replace(/=2C/g, ',').replace(/=3D/g, '=');
  const auth = text.endsWith('\x01\x01') ? pairs.find((p) => p.startsWith('auth=Bearer ')) : undefined;
  return { user, token: auth?.slice('auth=Bearer '.length) };
}

/** True for base64 text as SASL exchanges carry it (RFC 4648, padding optional at the end). */
export function isBase64(text: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(text);
}

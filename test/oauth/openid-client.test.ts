/**
 * The authorization server as the npm OpenID/OAuth client openid-client
 * (6.9.0) meets it: discovery, the code flow with PKCE (RFC 7636), a
 * refresh with rotation, a rotated refresh token used again (the whole
 * grant is revoked), the device flow (RFC 8628) with authorization_pending
 * and an approval over REST, client credentials, revocation (RFC 7009) and
 * introspection (RFC 7662), and RFC 9068 JWT access tokens checked against
 * the JWKS.
 */
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { test } from 'node:test';
import * as client from 'openid-client';
import { followAuthorization, rest, startOAuth } from './helpers.js';

async function configuration(base: string, id: string, secret?: string): Promise<client.Configuration> {
  const auth = secret === undefined ? client.None() : client.ClientSecretBasic(secret);
  return client.discovery(new URL(base), id, secret === undefined ? { client_id: id } : secret, auth, { execute: [client.allowInsecureRequests] });
}

/** The code flow with PKCE S256 through openid-client; the redirect URI is any loopback port (RFC 8252 §7.3). */
async function codeFlow(config: client.Configuration, scope: string): Promise<client.TokenEndpointResponse> {
  const verifier = client.randomPKCECodeVerifier();
  const challenge = await client.calculatePKCECodeChallenge(verifier);
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: 'http://127.0.0.1:53682/callback', scope, code_challenge: challenge, code_challenge_method: 'S256', state,
  });
  const back = await followAuthorization(url);
  assert.equal(back.origin, 'http://127.0.0.1:53682');
  assert.equal(back.searchParams.get('state'), state);
  return client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
}

test('openid-client: discovery, code flow with PKCE, refresh with rotation, reuse revokes the grant', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth();
  const events: string[] = [];
  server.on('oauth', (e) => events.push(`${e.type} ${e.via}${e.reason ? `: ${e.reason}` : ''}`));
  try {
    const config = await configuration(base, 'testpublic');
    assert.equal(config.serverMetadata().issuer, base);
    assert.deepEqual(config.serverMetadata().code_challenge_methods_supported, ['S256', 'plain']);

    const tokens = await codeFlow(config, 'https://mail.google.com/ offline_access');
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.expires_in, 3600);
    assert.equal(tokens.scope, 'https://mail.google.com/ offline_access');
    assert.ok(tokens.refresh_token);
    assert.equal(server.oauth.check('testuser', tokens.access_token, 'XOAUTH2').ok, true);

    // Rotation: a new refresh token each time, the old one spent.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.ok(refreshed.refresh_token);
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    assert.notEqual(refreshed.access_token, tokens.access_token);

    // The spent refresh token again: invalid_grant, and the whole grant goes, the newest tokens too.
    await assert.rejects(client.refreshTokenGrant(config, tokens.refresh_token!), (err: client.ResponseBodyError) => {
      assert.equal(err.error, 'invalid_grant');
      assert.match(err.error_description ?? '', /already used/);
      return true;
    });
    await assert.rejects(client.refreshTokenGrant(config, refreshed.refresh_token!), (err: client.ResponseBodyError) => err.error === 'invalid_grant');
    const check = server.oauth.check('testuser', refreshed.access_token, 'XOAUTH2');
    assert.deepEqual(check.ok ? 'accepted' : check.reason, 'revoked');
    assert.deepEqual(events.slice(0, 3), ['issued authorization_code', 'refreshed refresh_token', 'revoked refresh_token: reuse of a rotated refresh token']);
  } finally {
    await server.stop();
  }
});

test('openid-client: a PKCE mismatch and a second use of a code are invalid_grant; the code flow of a confidential client', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth();
  try {
    const config = await configuration(base, 'testclient', 'testsecret');
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: 'http://[::1]:8765/cb', scope: 'https://mail.google.com/', code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const back = await followAuthorization(url);
    await assert.rejects(client.authorizationCodeGrant(config, back, { pkceCodeVerifier: client.randomPKCECodeVerifier() }), (err: client.ResponseBodyError) => {
      assert.equal(err.error, 'invalid_grant');
      assert.match(err.error_description ?? '', /code_verifier does not match/);
      return true;
    });
    // A code is good once (RFC 6749 §4.1.2): it was not redeemed above, so this works, and the next use fails.
    const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier });
    assert.ok(tokens.access_token);
    await assert.rejects(client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier }), (err: client.ResponseBodyError) => err.error === 'invalid_grant');
    // ... and what the first use issued is revoked with it.
    const check = server.oauth.check('testuser', tokens.access_token, 'XOAUTH2');
    assert.equal(check.ok ? 'accepted' : check.reason, 'revoked');
  } finally {
    await server.stop();
  }
});

test('openid-client: the device flow waits (authorization_pending) until the user approves over REST', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth({ oauth: { approval: 'manual', deviceInterval: 1 } });
  try {
    const config = await configuration(base, 'testpublic');
    const device = await client.initiateDeviceAuthorization(config, { scope: 'https://mail.google.com/' });
    assert.match(device.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(device.verification_uri, `${base}/oauth/device`);
    assert.equal(device.interval, 1);
    const pending: string[] = [];
    const polled = client.pollDeviceAuthorizationGrant(config, device);
    // Let the client poll (and be told authorization_pending) before the user approves.
    const events = server.lastEventId();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    pending.push(JSON.stringify(server.oauth.device(device.user_code).state));
    const approved = await rest(base, 'POST', '/v1/oauth/device', { userCode: device.user_code.toLowerCase(), decision: 'approve', user: 'testuser' });
    assert.equal(approved.status, 200, JSON.stringify(approved.json));
    const tokens = await polled;
    assert.deepEqual(pending, ['"pending"']);
    assert.ok(tokens.access_token && tokens.refresh_token);
    assert.equal(server.oauth.check('testuser', tokens.access_token, 'OAUTHBEARER').ok, true);
    const issued = await server.waitFor('oauth', { type: 'issued' }, { since: events, timeout: 1000 });
    assert.equal(issued.data.via, 'device_code');
    assert.equal(issued.data.user, 'testuser');
  } finally {
    await server.stop();
  }
});

test('openid-client: client credentials, introspection and revocation', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth();
  try {
    const config = await configuration(base, 'testclient', 'testsecret');
    const tokens = await client.clientCredentialsGrant(config, { scope: 'https://mail.google.com/' });
    // RFC 6749 §4.4.3: no refresh token.
    assert.equal(tokens.refresh_token, undefined);
    const live = await client.tokenIntrospection(config, tokens.access_token);
    assert.equal(live.active, true);
    assert.equal(live.client_id, 'testclient');
    assert.equal(live.scope, 'https://mail.google.com/');
    await client.tokenRevocation(config, tokens.access_token);
    const dead = await client.tokenIntrospection(config, tokens.access_token);
    assert.equal(dead.active, false);
    // RFC 7009 §2.2: an unknown token is no error.
    await client.tokenRevocation(config, 'no-such-token');
  } finally {
    await server.stop();
  }
});

test('JWT access tokens (RFC 9068) verify against the JWKS and carry the claims', { timeout: 20_000 }, async () => {
  const { server, base } = await startOAuth({ oauth: { tokenFormat: 'jwt' } });
  try {
    const config = await configuration(base, 'testpublic');
    const tokens = await codeFlow(config, 'https://mail.google.com/');
    const [h, p, sig] = tokens.access_token.split('.') as [string, string, string];
    const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, string>;
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, string | number>;
    assert.equal(header.typ, 'at+jwt');
    assert.equal(header.alg, 'ES256');
    const jwks = (await (await fetch(`${base}/oauth/jwks`)).json()) as { keys: (Record<string, string>)[] };
    const jwk = jwks.keys.find((k) => k.kid === header.kid);
    assert.ok(jwk);
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    assert.equal(verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(sig, 'base64url')), true);
    // RFC 9068 §2.2: iss, exp, aud, sub, client_id, iat, jti.
    for (const claim of ['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti']) assert.ok(claim in claims, claim);
    assert.equal(claims.iss, base);
    assert.equal(claims.sub, 'testuser');
    assert.equal(claims.client_id, 'testpublic');
    assert.equal(Number(claims.exp) - Number(claims.iat), 3600);
  } finally {
    await server.stop();
  }
});

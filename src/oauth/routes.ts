/**
 * The token service's control routes, `/v1/oauth/...`: REST routes like
 * every other (the spec's error object, limits, OpenAPI), each calling one
 * `control.oauth` operation. The OAuth endpoints themselves are
 * src/oauth/http.ts.
 */
import { ServiceError } from '../errors.js';
import type { Param, Route } from '../rest/route.js';
import { arrayOf, bool, int, nullable, obj, str, type Schema } from '../rest/schema.js';
import type { ScriptRule } from '../script/rule.js';
import { OAUTH_COMMANDS, OAUTH_FAULTS } from './rule-names.js';
import { GRANT_TYPES, OAUTH_STYLES } from './options.js';
import type { Decision, OAuthSettings } from './service.js';

const P_CLIENT: Param = { name: 'name', type: 'string', description: 'OAuth client id' };
const P_GRANT: Param = { name: 'id', type: 'integer', description: 'Grant id' };
const P_PENDING: Param = { name: 'id', type: 'integer', description: 'Id of a waiting authorization request' };
const MAX_MS = 2_147_483_647;
const msField = (description: string, min = 1): Schema => ({ type: 'integer', minimum: min, maximum: MAX_MS, description });
const strArray = arrayOf(str());

export const settingsSchema = obj({
  approval: { type: 'string', enum: ['auto', 'manual'], description: 'auto: authorization requests and device codes are approved at once; manual: they wait for a decision' },
  tokenFormat: { type: 'string', enum: ['opaque', 'jwt'], description: 'Access tokens: opaque strings, or RFC 9068 JWTs signed with the key at /oauth/jwks' },
  rotation: { ...bool, description: 'A refresh answers a new refresh token and spends the old one (reuse revokes the grant)' },
  accessTokenLifetime: msField('Milliseconds an access token lives'),
  refreshTokenLifetime: { ...nullable(msField('Milliseconds')), description: 'Milliseconds a refresh token lives; null: until revoked' },
  clockSkew: { type: 'integer', minimum: -MAX_MS, maximum: MAX_MS, description: "Milliseconds the mail server's clock runs ahead of the token service's: tokens end that much sooner for mail logins" },
  delay: msField('Milliseconds every OAuth endpoint answer is held back', 0),
  style: { type: 'string', enum: OAUTH_STYLES, description: 'How mail logins refuse tokens and end sessions: rfc (RFC 7628), gmail, outlook (docs/oauth.md)' },
  mailScope: str('The scope a mail login token must carry'),
});

export const decisionSchema = (withWait: boolean): Schema =>
  obj(
    {
      decision: { type: 'string', enum: withWait ? ['approve', 'deny', 'wait'] : ['approve', 'deny'], description: 'What the user does' },
      user: str('The user who approves (default: login_hint, then oauth.user)'),
      scope: { ...strArray, description: 'Scopes granted, a subset of those asked for (the user unticked the others); default all' },
      ...(withWait ? { delay: msField('Milliseconds before the answer', 0) } : {}),
    },
    ['decision'],
  );

const tokenResponse = obj(
  {
    access_token: str(), token_type: str(), expires_in: int(0), refresh_token: str(), scope: str(),
    grant: { ...int(1), description: 'The grant the tokens belong to' },
  },
  ['access_token', 'token_type', 'expires_in', 'scope', 'grant'],
);

const clientSchema = obj(
  {
    id: str('client_id (printable ASCII, no colon)'),
    secret: str('Client secret; without it the client is public (PKCE required)'),
    redirectUris: { ...strArray, description: 'Registered redirect URIs; a loopback one matches any port (RFC 8252 section 7.3). Left out: any loopback URI' },
    grants: { ...arrayOf({ type: 'string', enum: GRANT_TYPES }), description: 'Grant types the client may use; default all' },
    scopes: { ...strArray, description: 'Scopes it may ask for; default all the server knows' },
  },
  ['id'],
);

const clientInfo = obj({
  id: str(), public: bool, redirectUris: nullable(strArray), grants: strArray, scopes: nullable(strArray),
});

const grantInfo = obj({
  id: int(1), client: str(), user: nullable(str()), scope: strArray, via: str('authorization_code, device_code, client_credentials or issue'),
  revoked: bool, createdAt: { ...int(), description: 'Server-clock ms' }, accessTokens: { ...int(0), description: 'Live access tokens' },
  expiresAt: { ...nullable(int()), description: 'Server-clock ms the last live access token ends; null: none is live' },
});

const faultSchema: Schema = obj({
  command: { oneOf: [{ type: 'string', enum: OAUTH_COMMANDS }, arrayOf({ type: 'string', enum: OAUTH_COMMANDS })], description: 'Endpoints or grant types; token stands for its four grant types; left out: every request' },
  send: { type: 'string', enum: OAUTH_FAULTS, description: 'The fault (docs/oauth.md); left out: only delay' },
  delay: msField('Milliseconds the answer is held back', 0),
  user: str('Only authorization requests with this login_hint'),
  match: str('Regular expression the request parameters (k=v&..., no client_secret) must match'),
  nth: int(1), times: int(1), chance: { type: 'number', minimum: 0, maximum: 1 }, description: str(),
  seedScope: { type: 'string', enum: ['server', 'session', 'rule'] },
});

const o = (body: unknown): Record<string, unknown> => body as Record<string, unknown>;

export const OAUTH_ROUTES: Route[] = [
  {
    method: 'GET', path: '/v1/oauth', summary: 'The token service: issuer, settings and counts', operation: 'oauth.info', status: 200,
    response: obj({ issuer: str(), settings: settingsSchema, clients: int(0), grants: int(0), pending: int(0), sessions: { ...int(0), description: 'Mail sessions logged in with a token of the service' } }),
    handle: ({ server }) => server.control.oauth.info(),
  },
  {
    method: 'PUT', path: '/v1/oauth/settings', summary: 'Change settings at run time (what is left out stays)', operation: 'oauth.configure',
    body: settingsSchema, status: 200, response: settingsSchema,
    handle: ({ server, body }) => server.control.oauth.configure(body as Partial<OAuthSettings>),
  },
  {
    method: 'GET', path: '/v1/oauth/clients', summary: 'Registered OAuth clients (secrets are never listed)', operation: 'oauth.clients', status: 200,
    response: arrayOf(clientInfo), handle: ({ server }) => server.control.oauth.clients(),
  },
  {
    method: 'POST', path: '/v1/oauth/clients', summary: 'Register a client', operation: 'oauth.addClient', body: clientSchema, status: 201,
    response: obj({ id: str() }), handle: ({ server, body }) => server.control.oauth.addClient(body),
  },
  {
    method: 'DELETE', path: '/v1/oauth/clients/{name}', summary: "Remove a client; its grants are revoked", operation: 'oauth.deleteClient', params: [P_CLIENT],
    status: 200, response: obj({ deleted: bool }), handle: ({ server, params }) => server.control.oauth.deleteClient(params.name as string),
  },
  {
    method: 'GET', path: '/v1/oauth/grants', summary: 'Grants: approvals with the tokens made from them', operation: 'oauth.grants', status: 200,
    response: arrayOf(grantInfo), handle: ({ server }) => server.control.oauth.grants(),
  },
  {
    method: 'DELETE', path: '/v1/oauth/grants/{id}', summary: "Revoke a grant behind the client's back: its tokens stop working, its mail sessions end", operation: 'oauth.revokeGrant',
    params: [P_GRANT], status: 200, response: obj({ revoked: bool }), handle: ({ server, params }) => server.control.oauth.revokeGrant(params.id as number),
  },
  {
    method: 'POST', path: '/v1/oauth/tokens', summary: 'Tokens for a user without a flow, as if the user had approved the client', operation: 'oauth.issue',
    body: obj({ user: str(), client: str('Default: the first client of the oauth option'), scope: { ...strArray, description: 'Default: the mail scope' }, refresh: { ...bool, description: 'Also a refresh token (default true)' } }, ['user']),
    status: 201, response: tokenResponse,
    handle: ({ server, body }) => {
      const b = o(body);
      return server.control.oauth.issue(b.user as string, { client: b.client as string | undefined, scope: b.scope as string[] | undefined, refresh: b.refresh as boolean | undefined });
    },
  },
  {
    method: 'POST', path: '/v1/oauth/revoke', summary: "Revoke the grant of an access or refresh token behind the client's back", operation: 'oauth.revoke',
    body: obj({ token: str('An access or refresh token') }, ['token']), status: 200, response: obj({ revoked: { ...bool, description: 'False: no such token, or revoked already' } }),
    handle: ({ server, body }) => ({ revoked: server.control.oauth.revoke(o(body).token as string) }),
  },
  {
    method: 'GET', path: '/v1/oauth/pending', summary: 'Authorization requests waiting for a decision', operation: 'oauth.pending', status: 200,
    response: arrayOf(obj({ id: int(1), client: str(), scope: strArray, loginHint: nullable(str()), since: int() })),
    handle: ({ server }) => server.control.oauth.pending(),
  },
  {
    method: 'POST', path: '/v1/oauth/pending/{id}', summary: 'Approve or deny a waiting authorization request', operation: 'oauth.settle', params: [P_PENDING],
    body: decisionSchema(false), status: 200, response: obj({ settled: bool }),
    handle: ({ server, params, body }) => server.control.oauth.settle(params.id as number, body as Decision),
  },
  {
    method: 'POST', path: '/v1/oauth/decisions', summary: 'Queue the decision for the next authorization request (approve, deny, fewer scopes, wait)', operation: 'oauth.decide',
    body: decisionSchema(true), status: 201, response: obj({ queued: { ...int(1), description: 'Decisions queued now' } }),
    handle: ({ server, body }) => server.control.oauth.decide(body as Decision),
  },
  {
    method: 'POST', path: '/v1/oauth/device', summary: 'The user approves or denies a device code (RFC 8628) by its user code', operation: 'oauth.settleDevice',
    body: obj({ userCode: str('As shown to the user, XXXX-XXXX'), decision: { type: 'string', enum: ['approve', 'deny'] }, user: str(), scope: strArray }, ['userCode', 'decision']),
    status: 200, response: obj({ userCode: str(), state: str() }),
    handle: ({ server, body }) => {
      const b = o(body);
      return server.control.oauth.settleDevice(b.userCode as string, { decision: b.decision as 'approve' | 'deny', user: b.user as string | undefined, scope: b.scope as string[] | undefined });
    },
  },
  {
    method: 'POST', path: '/v1/oauth/faults', summary: 'Add faults of the token service: on: "oauth" script rules without on (a rule or an array)', operation: 'oauth.fault',
    body: { oneOf: [faultSchema, arrayOf(faultSchema)] }, allowArray: true, status: 201,
    response: { oneOf: [obj({ id: int(1) }), arrayOf(obj({ id: int(1) }))] },
    handle: ({ server, body }) => {
      const rules = (Array.isArray(body) ? body : [body]).map((r) => ({ ...(r as object), on: 'oauth' }) as ScriptRule);
      const handles = server.script.add(rules);
      if (handles.length === 0) throw new ServiceError('INVALID', 'body: no rule');
      const ids = handles.map((h) => ({ id: h.id }));
      return Array.isArray(body) ? ids : ids[0];
    },
  },
];

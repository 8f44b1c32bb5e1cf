/**
 * The names `on: "oauth"` script rules use, apart from the code that acts
 * on them so the rule validator can import them without the token service.
 */

/** `command`: an endpoint, or one of the token endpoint's grant types (`token` stands for all four). */
export const OAUTH_COMMANDS = ['authorize', 'token', 'authorization_code', 'refresh_token', 'client_credentials', 'device_code', 'device_authorization', 'revoke', 'introspect'] as const;

/** `token` in a rule: the grant types of the token endpoint, which requests to it are asked under. */
export const TOKEN_GRANT_COMMANDS = ['authorization_code', 'refresh_token', 'client_credentials', 'device_code'] as const;

/**
 * `send`: the fault. An OAuth error code is answered as that error (RFC
 * 6749 §5.2; `server_error` with 500, `temporarily_unavailable` with 503
 * and Retry-After, `invalid_client` with 401); `http_500` is a 500 with an
 * HTML body, as a broken proxy gives; `no_refresh_token` answers a refresh
 * without a new refresh token (the old one stays good); `revoke_refresh_token`
 * revokes the presented refresh token's grant just before the request is
 * served (revoked behind the client's back); `slow_down` on device_code
 * polls makes the interval grow (RFC 8628 §3.5).
 */
export const OAUTH_FAULTS = [
  'invalid_request', 'invalid_client', 'invalid_grant', 'invalid_scope', 'unauthorized_client', 'access_denied',
  'temporarily_unavailable', 'server_error', 'slow_down', 'authorization_pending', 'http_500', 'no_refresh_token', 'revoke_refresh_token',
] as const;

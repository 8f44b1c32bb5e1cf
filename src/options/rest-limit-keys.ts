/**
 * The REST listener's own limits (src/rest/rest.ts), reported by GET
 * /v1/health under `limits.rest`. A module of its own, importing nothing:
 * the options and the REST routes both read it at load time, and the two
 * import each other.
 */
export const REST_LIMIT_KEYS = [
  'maxEventStreams',
  'maxStreamBuffer',
  'maxConnections',
  'headersTimeout',
  'requestTimeout',
  'bodyTimeout',
  'maxBodyBytesInFlight',
] as const;

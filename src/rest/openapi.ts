/** Builds the OpenAPI 3.1 document from the route table. */
import type { Route } from './route.js';
import { COMPONENTS } from './routes.js';
import type { Schema } from './schema.js';

const ERROR_STATUS: Record<string, string> = {
  '400': 'INVALID', '401': 'UNAUTHORIZED', '404': 'NONEXISTENT or NOTFOUND', '405': 'METHOD',
  '408': 'TIMEOUT: the request did not come in time (rest.headersTimeout, rest.requestTimeout) or its body stopped (rest.bodyTimeout)',
  '409': "ALREADYEXISTS, CANNOT, HASCHILDREN, OVERQUOTA (a quota, or the store's maxStoreBytes / maxMessages), ...",
  '413': 'TOOBIG', '415': 'UNSUPPORTED', '500': 'SERVERERROR',
  '503': 'LIMIT, with Retry-After: rest.maxConnections connections are open, or the body found no room in rest.maxBodyBytesInFlight in time',
};

function plain(schema: Schema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

export function openApiDocument(routes: readonly Route[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const parameters: unknown[] = [];
    for (const p of r.params ?? []) {
      parameters.push({ name: p.name, in: 'path', required: true, description: p.description, schema: { type: p.type } });
    }
    for (const q of r.query ?? []) parameters.push({ name: q.name, in: 'query', required: false, description: q.description, schema: plain(q.schema) });
    for (const h of r.headers ?? []) parameters.push({ name: h.name, in: 'header', required: false, description: h.description, schema: plain(h.schema) });
    const responses: Record<string, unknown> = {
      [String(r.status)]: {
        description: r.summary,
        content: r.stream
          ? { 'text/event-stream': { schema: { type: 'string' } } }
          : { 'application/json': { schema: plain(r.response) }, ...(r.text ? { 'text/plain': { schema: { type: 'string' } } } : {}) },
      },
    };
    for (const [status, codes] of Object.entries(ERROR_STATUS)) {
      responses[status] = { description: codes, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    for (const [status, codes] of Object.entries(r.errors ?? {})) {
      responses[status] = { description: codes, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    if (r.stream) {
      responses['503'] = {
        description: 'LIMIT, with Retry-After: rest.maxEventStreams streams are open already, rest.maxConnections connections are open, or the body found no room in rest.maxBodyBytesInFlight',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    const op: Record<string, unknown> = {
      operationId: `${r.method.toLowerCase()}${r.path.replace(/\{(\w+)\}/g, (_m, n: string) => `By${n[0]!.toUpperCase()}${n.slice(1)}`).replace(/[^A-Za-z0-9]+(\w)?/g, (_m, c?: string) => (c ? c.toUpperCase() : ''))}`,
      summary: r.summary,
      ...(r.operation ? { description: `Control operation: ${r.operation}` } : {}),
      responses,
    };
    if (parameters.length > 0) op.parameters = parameters;
    if (r.body) op.requestBody = { required: r.method === 'POST' && (r.body.required?.length ?? 0) > 0, content: { 'application/json': { schema: plain(r.body) } } };
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  const schemas: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(COMPONENTS)) schemas[name] = plain(s);
  return {
    openapi: '3.1.0',
    info: { title: 'Rookery REST API', version, description: 'Control API of the Rookery IMAP test server. Controls the whole server: test environments only.' },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }, {}],
    paths,
    components: { schemas, securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
  };
}

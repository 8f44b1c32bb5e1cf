/** The shape of a REST route: everything the router, the validator and the OpenAPI document need. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '../server.js';
import type { Schema } from './schema.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Param {
  name: string;
  /** `string` (a URL-decoded segment) or `integer`. */
  type: 'string' | 'integer';
  description: string;
}

export interface QueryParam {
  name: string;
  description: string;
  schema: Schema;
}

export interface RouteContext {
  server: Server;
  params: Record<string, string | number>;
  query: URLSearchParams;
  body: unknown;
  req: IncomingMessage;
  res: ServerResponse;
}

export interface Route {
  method: Method;
  /** Path pattern: literal segments and `{name}` parameters, each one segment. */
  path: string;
  summary: string;
  /** Control operation it calls (documentation). */
  operation?: string;
  params?: Param[];
  query?: QueryParam[];
  /** Request headers the route reads (documentation: OpenAPI `in: header` parameters). */
  headers?: QueryParam[];
  /**
   * Request body schema (validation and the OpenAPI document both come from
   * it). Objects are open unless they say `additionalProperties: false`; then
   * an unknown key is 400 INVALID naming it, with a "did you mean" when a
   * declared key is close (the built-in routes close all of theirs). Absent:
   * the route takes no body fields (`{}` or no body; any key is refused).
   */
  body?: Schema;
  /** Accepts an array body as well as an object (script rules). */
  allowArray?: boolean;
  /** Success status. */
  status: number;
  response: Schema;
  /**
   * The handler; returns the JSON body (or a promise of it). Throw a
   * ServiceError for an error answer. `stream` routes write the response
   * themselves.
   */
  handle(ctx: RouteContext): unknown;
  stream?: boolean;
  /**
   * A `text/plain` form of the result: a request whose Accept header prefers
   * `text/plain` to `application/json` (or `?format=text`) gets it instead of JSON.
   */
  text?(result: unknown): string;
  /**
   * The JSON text of the result, written by hand for a hot route whose
   * result has a known shape: exactly what `JSON.stringify(result)` gives,
   * only cheaper. Absent: JSON.stringify.
   */
  json?(result: unknown): string;
  /** Error statuses beyond the common ones, with their codes (OpenAPI). */
  errors?: Record<string, string>;
  /** Called after the response has been sent (shutdown). */
  after?(ctx: RouteContext): void;
}

/**
 * METADATA-SERVER (RFC 5464): server entries (`GETMETADATA ""`,
 * `SETMETADATA ""`). This folder also holds everything METADATA serves:
 * the commands, the REST routes and the entry storage belong to one plugin
 * (a command or route may have one owner), and METADATA requires this one.
 * With METADATA loaded the mailbox entries are served too and the
 * capability is `METADATA` alone (RFC 5464 §1: `METADATA-SERVER` is for a
 * server with server entries only); without it the mailbox routes answer
 * 400 INVALID and IMAP mailbox names other than `""` are NO.
 *
 * Storage key `metadata` on mailboxes and on `storage[""]` (server
 * entries): entry name to a string, or `{ value, encoding: "base64" }` for
 * bytes that are not UTF-8 text. See ./state.ts for the `/private` model.
 */
import { scopeOf, userQuery } from '../../rest/scope.js';
import type { Route } from '../../rest/route.js';
import { nullable, str, type Schema } from '../../rest/schema.js';
import type { Extension } from '../extension.js';
import { ServiceError } from '../../errors.js';
import { metadataCommands } from './commands.js';
import { createState, METADATA_KEY, validateStored, type MetadataState } from './state.js';

export type { MetadataApi, MetadataLimits } from './state.js';

/** The plugin options (`pluginOptions.METADATA`, or `pluginOptions['METADATA-SERVER']` with only this plugin). */
export const metadataOptions: Schema = {
  type: 'object',
  properties: {
    maxSize: { type: 'integer', minimum: 0, description: 'Largest value SETMETADATA accepts, in octets (NO [METADATA MAXSIZE n] above it)', default: 65536 },
    maxEntries: { type: 'integer', minimum: 1, description: 'Most entries per mailbox and for the server (NO [METADATA TOOMANY] beyond it)', default: 1000 },
    private: { type: 'boolean', description: 'false refuses /private entries over IMAP (NO [METADATA NOPRIVATE])', default: true },
  },
  additionalProperties: false,
};

const entriesSchema: Schema = {
  type: 'object',
  description: 'Entry name (/shared/... or /private/...) to value',
  additionalProperties: str(),
};

const setBody: Schema = {
  type: 'object',
  description: 'Entry name to string value; null removes the entry',
  additionalProperties: nullable(str()),
};

const pathParam = [{ name: 'path', type: 'string' as const, description: 'Mailbox storage name, URL encoded as one segment (`/` is `%2F`)' }];

const api = (server: Parameters<Route['handle']>[0]['server']) => server.extension('METADATA-SERVER')!;

const routes: Route[] = [
  {
    method: 'GET',
    path: '/v1/metadata',
    summary: 'Server entries (METADATA or METADATA-SERVER plugin)',
    operation: 'getMetadata',
    status: 200,
    response: entriesSchema,
    handle: ({ server }) => api(server).getMetadata(''),
  },
  {
    method: 'PUT',
    path: '/v1/metadata',
    summary: 'Set or remove (null) server entries; answers all of them (METADATA or METADATA-SERVER plugin)',
    operation: 'setMetadata',
    body: setBody,
    status: 200,
    response: entriesSchema,
    handle: ({ server, body }) => api(server).setMetadata('', body as Record<string, string | null>),
  },
  {
    method: 'GET',
    path: '/v1/mailboxes/{path}/metadata',
    summary: 'Entries of a mailbox (METADATA plugin; 400 INVALID with only METADATA-SERVER)',
    operation: 'getMetadata',
    params: pathParam,
    status: 200,
    response: entriesSchema,
    query: [userQuery],
    handle: ({ server, params, query }) => api(server).getMetadata(mailboxPath(params.path), scopeOf(query)),
  },
  {
    method: 'PUT',
    path: '/v1/mailboxes/{path}/metadata',
    summary: 'Set or remove (null) entries of a mailbox; answers all of them (METADATA plugin; 400 INVALID with only METADATA-SERVER)',
    operation: 'setMetadata',
    params: pathParam,
    body: setBody,
    status: 200,
    response: entriesSchema,
    query: [userQuery],
    handle: ({ server, params, body, query }) => api(server).setMetadata(mailboxPath(params.path), body as Record<string, string | null>, scopeOf(query)),
  },
];

/** A mailbox route's path; `""` would name the server, which has its own route. */
function mailboxPath(path: unknown): string {
  const p = String(path);
  if (p === '') throw new ServiceError('NONEXISTENT', 'Mailbox "" does not exist (server entries are at /v1/metadata)');
  return p;
}

export const extension: Extension<MetadataState> = {
  name: 'METADATA-SERVER',
  options: metadataOptions,
  setup: ({ server, options }) => createState(server, options),
  capabilities: (_session, state) => (state.mailboxEntries ? [] : ['METADATA-SERVER']),
  commands: metadataCommands,
  storage: {
    mailbox: [{ key: METADATA_KEY, schema: entriesSchema, validate: validateStored }],
    server: [{ key: METADATA_KEY, schema: entriesSchema, validate: validateStored }],
  },
  literal: (info, state) =>
    info.command === 'SETMETADATA' && info.size > state.limits.maxSize
      ? { code: `METADATA MAXSIZE ${state.limits.maxSize}`, text: `Value too large: the largest value this server accepts is ${state.limits.maxSize} octets` }
      : undefined,
  routes,
};

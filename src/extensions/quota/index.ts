/**
 * QUOTA (RFC 9208): one quota root `""` over the whole tree with the
 * resources STORAGE (KiB), MESSAGE and MAILBOX; GETQUOTA, GETQUOTAROOT and
 * SETQUOTA (allowed to every user: this is a test server, so `QUOTASET` is
 * advertised); APPEND and COPY over a limit, and CREATE or RENAME past the
 * MAILBOX limit, are `NO [OVERQUOTA]`, as is the control API's `addMessage`
 * with `checks: true` (REST 409 OVERQUOTA). A MOVE stays inside the root and
 * changes no usage, so it is never refused. The STATUS item
 * `DELETED-STORAGE` (KiB held by `\Deleted` messages) comes with
 * QUOTA=RES-STORAGE, as RFC 9208 asks; `DELETED` (for QUOTA=RES-MESSAGE) is
 * a core STATUS item.
 *
 * Limits come from the storage key `quota` on `storage[""]` when present,
 * else from `pluginOptions.QUOTA`; SETQUOTA, `setQuota` and `PUT /v1/quota`
 * write that storage key, so snapshots keep the limits and reset restores
 * the configured ones. Usage is counted once at setup and after a reset,
 * and otherwise follows the store's change feed.
 */
import { scopeOf, userQuery } from '../../rest/scope.js';
import type { Route } from '../../rest/route.js';
import { int, obj, str } from '../../rest/schema.js';
import type { Schema } from '../../rest/schema.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';
import { commands } from './commands.js';
import { QuotaState, RESOURCES, STORAGE_KEY, checkLimits, kib, octetsOf, type QuotaApi, type QuotaLimits } from './state.js';

export type { QuotaApi, QuotaInfo, QuotaLimits, QuotaResource, QuotaUsage } from './state.js';

declare module '../extension.js' {
  interface ExtensionApis {
    QUOTA: QuotaApi;
  }
}

const DESCRIPTIONS: Record<(typeof RESOURCES)[number], string> = {
  STORAGE: 'Sum of the messages\' RFC822.SIZE, in KiB (units of 1024 octets)',
  MESSAGE: 'Number of messages',
  MAILBOX: 'Number of mailboxes',
};

const limit = (r: (typeof RESOURCES)[number]): Schema => ({
  type: 'integer',
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: `Limit: ${DESCRIPTIONS[r].charAt(0).toLowerCase()}${DESCRIPTIONS[r].slice(1)}`,
});

/** `{ STORAGE?, MESSAGE?, MAILBOX? }`: the limits (pluginOptions, storage key, PUT body). */
const limitsSchema: Schema = {
  type: 'object',
  properties: Object.fromEntries(RESOURCES.map((r) => [r, limit(r)])),
  additionalProperties: false,
};

const quotaSchema: Schema = obj(
  {
    root: str('The quota root: always "" (one root over every mailbox)'),
    limits: { ...limitsSchema, description: 'Resources with a limit; a resource left out has none' },
    usage: {
      ...obj(Object.fromEntries(RESOURCES.map((r) => [r, { ...int(0), description: DESCRIPTIONS[r] }])), [...RESOURCES]),
      additionalProperties: false,
    },
  },
  ['root', 'limits', 'usage'],
);

const routes: Route[] = [
  {
    method: 'GET',
    path: '/v1/quota',
    summary: 'The quota root "": limits and usage (QUOTA plugin)',
    operation: 'getQuota',
    status: 200,
    response: quotaSchema,
    query: [userQuery],
    handle: ({ server, query }) => server.extension('QUOTA')!.getQuota(scopeOf(query)),
  },
  {
    method: 'PUT',
    path: '/v1/quota',
    summary: 'Replace all quota limits; a resource left out has no limit afterwards (QUOTA plugin)',
    operation: 'setQuota',
    body: limitsSchema,
    status: 200,
    response: quotaSchema,
    handle: ({ server, body }) => server.extension('QUOTA')!.setQuota(body as QuotaLimits),
  },
];

export const extension: Extension<QuotaState> = {
  name: 'QUOTA',
  options: { ...limitsSchema, description: 'Quota limits of the root "" (used while the storage has no `quota` key)' },
  setup: ({ server, options }) => new QuotaState(server, checkLimits(options, () => undefined)),
  capabilities: always('QUOTA', ...RESOURCES.map((r) => `QUOTA=RES-${r}`), 'QUOTASET'),
  commands,
  storage: {
    server: [
      {
        key: STORAGE_KEY,
        schema: limitsSchema,
        validate: (value, report) => checkLimits(value, report),
      },
    ],
  },
  checks: {
    // `size` is the literal's length; a message with bare LFs is served (and counted) a little larger.
    // The earlier messages of a MULTIAPPEND are stored with this one or not at all: they count too.
    // With userMailboxes each user's tree is a root of its own: the one the messages go to counts.
    append: ({ mailbox, size, before }, state) => state.check({ octets: before.size + size, messages: before.messages + 1 }, state.ownerOf(mailbox)),
    copy: ({ messages, target }, state) => {
      let octets = 0;
      for (const m of messages) octets += octetsOf(m);
      state.check({ octets, messages: messages.length }, state.ownerOf(target));
    },
    // A MOVE inside one root changes no usage; one into another user's tree (userMailboxes) adds to that root.
    move: ({ source, messages, target }, state) => {
      const owner = state.ownerOf(target);
      if (owner === state.ownerOf(source)) return;
      let octets = 0;
      for (const m of messages) octets += octetsOf(m);
      state.check({ octets, messages: messages.length }, owner);
    },

    // The mailbox and every missing superior level the store will create with it.
    create: ({ path, session }, state) =>
      state.check({ mailboxes: 1 + state.missingParents(path, session?.mailboxes) }, session?.mailboxes.ownerAt(path) ?? null),
    // A rename moves mailboxes (no new usage) but creates the new name's missing superior
    // levels; renaming INBOX also creates the new mailbox (INBOX stays, its messages move).
    rename: ({ source, newPath, session }, state) =>
      state.check({ mailboxes: state.missingParents(newPath, session?.mailboxes) + (source.path === 'INBOX' ? 1 : 0) }, state.ownerOf(source)),
  },
  onChange: (change, state) => state.onChange(change),
  statusItems: [
    {
      name: 'DELETED-STORAGE',
      value: (mailbox) => kib(QuotaState.deletedOctets(mailbox)),
    },
  ],
  routes,
};

/**
 * The route tables, one per resource. Each route calls one control API
 * operation; schemas here validate requests and produce the OpenAPI document.
 */
import { ServiceError } from '../errors.js';
import { scopeOf, userQuery } from './scope.js';
import { EVENT_TYPES } from '../events.js';
import { LIMIT_KEYS } from '../options/resolve.js';
import { REST_LIMIT_KEYS } from '../options/rest-limit-keys.js';
import { SCRIPT_EVENTS, type ScriptRule } from '../script/rule.js';
import { SESSION_STATES } from '../script/validate.js';
import { matchesAll, parseConditions } from '../event-match.js';
import type { StateCondition } from '../state-conditions.js';
import { suggestKey } from '../options/typos.js';
import type { Transcript } from '../transcript/transcript.js';
import type { MailboxInfo } from '../control/resources.js';
import { mailboxInfoJson } from './json.js';
import type { Param, Route, RouteContext } from './route.js';
import { arrayOf, bool, closeObjects, int, nullable, obj, ref, str, type Schema } from './schema.js';
import { OAUTH_ROUTES } from '../oauth/routes.js';

/** The server's version (the OpenAPI document, GET /v1/health). */
export { VERSION } from '../version.js';
import { VERSION } from '../version.js';
import { tlsRoutes } from '../tls/rest-routes.js';
import { STARTTLS_ATTACKS } from '../tls/attacks/catalog.js';

const P_PATH: Param = { name: 'path', type: 'string', description: 'Mailbox storage name, URL encoded as one segment (`/` is `%2F`)' };
const P_SESSION: Param = { name: 'session', type: 'integer', description: 'Session number' };
const P_NAME: Param = { name: 'name', type: 'string', description: 'User name' };
const P_UID: Param = { name: 'uid', type: 'integer', description: 'Message UID' };
const P_ID: Param = { name: 'id', type: 'integer', description: 'Script rule id' };

const encoding: Schema = { type: 'string', enum: ['utf-8', 'base64'], default: 'utf-8' };
/** A value with its default (documentation: validation does not apply it). */
const dflt = (schema: Schema, value: Schema['default'], description?: string): Schema => ({ ...schema, default: value, ...(description ? { description } : {}) });
const uids = arrayOf(int(1));
const xoauth2 = obj(
  { accessToken: str('Access token an XOAUTH2 login must present'), sessionTimeout: { ...int(0), description: 'Milliseconds a session logged in with this token lasts (then `* BYE`); no limit when left out' } },
  ['accessToken'],
);
const uidMap = obj({ uidvalidity: int(), uids: arrayOf(obj({ uid: int(), targetUid: int() })) });
const deleted = obj({ deleted: bool });
const changed = obj({ changed: bool });

const p = (ctx: { params: Record<string, string | number> }, name: string): string => ctx.params[name] as string;
const n = (ctx: { params: Record<string, string | number> }, name: string): number => ctx.params[name] as number;
const o = (body: unknown): Record<string, unknown> => body as Record<string, unknown>;

type HealthLimitKey = 'maxLineLength' | 'maxLiteralBeforeLogin' | 'maxLiteral' | (typeof LIMIT_KEYS)[number];

/**
 * The options GET /v1/health reports under `limits`: the input limits and
 * the options' LIMIT_KEYS. A function, not a constant: the options module
 * imports this one (plugin routes are checked against the built-in ones), so
 * LIMIT_KEYS is not there yet while this module loads.
 */
export function healthLimitKeys(): HealthLimitKey[] {
  return ['maxLineLength', 'maxLiteralBeforeLogin', 'maxLiteral', ...LIMIT_KEYS];
}

/** The `rest` options GET /v1/health reports under `limits.rest`. */
export const HEALTH_REST_LIMIT_KEYS = REST_LIMIT_KEYS;

const listenerUse = (what: string): Schema => ({
  ...obj(
    { open: { ...int(0), description: `${what} connections open now` }, max: { ...int(1), description: `The cap in force for ${what} (the option, or lower to fit the descriptor limit)` } },
    ['open', 'max'],
  ),
  description: `${what} connections`,
});

const connectionsSchema: Schema = {
  ...obj(
    {
      descriptorLimit: { ...nullable(int(0)), description: "The process's soft descriptor limit; null where it cannot be read (not Linux)" },
      reserve: { ...int(0), description: 'Descriptors kept out of every cap: those open at start plus a margin for refusals' },
      lowered: { ...bool, description: 'True when the caps were lowered at start to fit the descriptor limit' },
      imap: listenerUse('IMAP'),
      rest: listenerUse('REST'),
      smtp: nullable(listenerUse('SMTP')),
      pop3: nullable(listenerUse('POP3')),
      restBodyBytesInFlight: { ...int(0), description: 'Octets of REST request bodies held now (rest.maxBodyBytesInFlight)' },
      restBodiesWaiting: { ...int(0), description: 'REST requests waiting for room in rest.maxBodyBytesInFlight' },
    },
    ['descriptorLimit', 'reserve', 'lowered', 'imap', 'rest', 'smtp', 'pop3', 'restBodyBytesInFlight', 'restBodiesWaiting'],
  ),
  description: 'Connection caps in force and their use',
};

const storeSchema: Schema = {
  ...obj(
    {
      messages: { ...int(0), description: 'Messages in the store, every user tree together' },
      bytes: { ...int(0), description: 'Octets of their sources (a copy counts in full)' },
      maxMessages: { ...nullable(int(0)), description: 'The maxMessages option; null: no limit' },
      maxStoreBytes: { ...nullable(int(0)), description: 'The maxStoreBytes option; null: no limit' },
      full: { ...bool, description: 'True when no further message fits: adds fail with OVERQUOTA (IMAP NO [OVERQUOTA], SMTP 452, REST 409)' },
    },
    ['messages', 'bytes', 'maxMessages', 'maxStoreBytes', 'full'],
  ),
  description: "The store's memory budget and its use",
};

const address = (description: string): Schema => ({ ...obj({ host: str(), port: int(0) }, ['host', 'port']), description });

const healthSchema = (): Schema => obj(
  {
    ok: { type: 'boolean', description: 'Always true: the server answers and its IMAP listener listens' },
    version: str('Server version'),
    imap: { ...obj({ host: str(), port: int(0), secure: { ...bool, description: 'Implicit TLS' } }, ['host', 'port', 'secure']), description: 'The IMAP listener' },
    rest: address('The REST listener'),
    smtp: {
      oneOf: [
        { ...obj({ host: str(), port: int(0), secure: { ...bool, description: 'Implicit TLS' } }, ['host', 'port', 'secure']), description: 'The SMTP listener' },
        { type: 'null', description: 'SMTP intake is off (no smtp.port)' },
      ],
    },
    pop3: {
      oneOf: [
        {
          ...obj({ host: str(), port: int(0), secure: { ...bool, description: 'Implicit TLS' }, stls: { ...bool, description: 'STLS offered' } }, ['host', 'port', 'secure', 'stls']),
          description: 'The POP3 listener',
        },
        { type: 'null', description: 'POP3 is off (no pop3.port)' },
      ],
    },
    limits: {
      ...obj(
        {
          ...Object.fromEntries(healthLimitKeys().map((k) => [k, { ...int(0), description: `The ${k} option` }])),
          rest: obj(Object.fromEntries(HEALTH_REST_LIMIT_KEYS.map((k) => [k, { ...int(0), description: `The rest.${k} option` }])), [...HEALTH_REST_LIMIT_KEYS]),
          maxStoreBytes: { ...nullable(int(0)), description: 'The maxStoreBytes option; null: no limit' },
          maxMessages: { ...nullable(int(0)), description: 'The maxMessages option; null: no limit' },
        },
        [...healthLimitKeys(), 'rest', 'maxStoreBytes', 'maxMessages'],
      ),
      description: 'Every limit option with the value in force',
    },
    connections: connectionsSchema,
    store: storeSchema,
  },
  ['ok', 'version', 'imap', 'rest', 'smtp', 'pop3', 'limits', 'connections', 'store'],
);

/** Longest `timeout` of GET /v1/events/wait (5 minutes), and the one used without it. */
export const MAX_WAIT_TIMEOUT = 300_000;
export const DEFAULT_REST_WAIT = 30_000;

export const serverRoutes: Route[] = [
  {
    method: 'GET', path: '/v1/health', summary: 'Ready signal: the server is up; its listeners, version and limits', operation: 'health',
    status: 200, response: ref('Health'),
    handle: ({ server, req }) => {
      const imap = server.address();
      // The IMAP listener closes first when the server stops: a stopping server is not up.
      if (imap === null) throw new ServiceError('CANNOT', 'The server is stopping');
      const rest = server.restAddress() ?? { host: req.socket.localAddress ?? '', port: req.socket.localPort ?? 0 };
      const o = server.options;
      const limits: Record<string, unknown> = {};
      for (const key of healthLimitKeys()) limits[key] = o[key];
      const restLimits: Record<string, number> = {};
      for (const key of HEALTH_REST_LIMIT_KEYS) restLimits[key] = o.rest?.[key] ?? 0;
      limits.rest = restLimits;
      limits.maxStoreBytes = o.maxStoreBytes;
      limits.maxMessages = o.maxMessages;
      const smtpAddress = server.smtpAddress();
      const smtp = smtpAddress && o.smtp ? { host: smtpAddress.host, port: smtpAddress.port, secure: o.smtp.secure } : null;
      const pop3Address = server.pop3Address();
      const pop3 = pop3Address && o.pop3 ? { host: pop3Address.host, port: pop3Address.port, secure: o.pop3.secure, stls: o.pop3.stls } : null;
      const caps = server.connectionCaps();
      const use = server.connectionUsage();
      const connections = {
        descriptorLimit: caps.descriptorLimit,
        reserve: caps.reserve,
        lowered: caps.lowered,
        imap: { open: use.imap, max: caps.imap },
        rest: { open: use.rest?.connections ?? 0, max: use.rest?.maxConnections ?? caps.rest ?? 0 },
        smtp: smtp && caps.smtp !== null ? { open: use.smtp ?? 0, max: caps.smtp } : null,
        pop3: pop3 && caps.pop3 !== null ? { open: use.pop3 ?? 0, max: caps.pop3 } : null,
        restBodyBytesInFlight: use.rest?.bodyBytesInFlight ?? 0,
        restBodiesWaiting: use.rest?.bodiesWaiting ?? 0,
      };
      const budget = server.store.budget;
      const store = budget
        ? { messages: budget.messages, bytes: budget.bytes, maxMessages: budget.maxMessages, maxStoreBytes: budget.maxBytes, full: budget.full }
        : { messages: 0, bytes: 0, maxMessages: null, maxStoreBytes: null, full: false };
      return { ok: true, version: VERSION, imap: { host: imap.host, port: imap.port, secure: o.secure }, rest, smtp, pop3, limits, connections, store };
    },
  },
  {
    method: 'GET', path: '/v1/snapshot', summary: 'The whole store in the shape of the storage option', operation: 'snapshot',
    status: 200, response: { type: 'object', additionalProperties: true },
    handle: ({ server }) => server.control.snapshot(),
  },
  {
    method: 'POST', path: '/v1/reset', summary: 'Restore mailboxes and users to those of the options', operation: 'reset',
    body: obj({}), status: 200, response: obj({ reset: bool }),
    handle: ({ server }) => server.control.reset(),
  },
  // The server clock (issue 14): server-clock timers follow it.
  {
    method: 'GET', path: '/v1/clock', summary: 'The server clock', operation: 'clock',
    status: 200, response: obj({ now: { ...int(), description: 'Epoch milliseconds' }, iso: str('ISO 8601') }, ['now', 'iso']),
    handle: ({ server }) => server.control.clock(),
  },
  {
    method: 'POST', path: '/v1/clock', summary: 'Move the server clock forward; due server-clock timers act', operation: 'advanceClock',
    body: obj({ advance: { ...int(0), description: 'Milliseconds to move the clock forward' } }, ['advance']), status: 200,
    response: obj({ now: { ...int(), description: 'Epoch milliseconds' }, iso: str('ISO 8601') }, ['now', 'iso']),
    handle: ({ server, body }) => server.control.advanceClock(o(body) as { advance: number }),
  },
  {
    method: 'POST', path: '/v1/clock/bye', summary: 'Schedule * BYE at a server-clock time, to every session or one', operation: 'scheduleBye',
    body: obj({
      at: { oneOf: [int(), str()], description: 'Server-clock time: epoch milliseconds or ISO 8601 with its zone' },
      in: { ...int(0), description: 'Or: milliseconds from the current server-clock time' },
      text: dflt(str(), 'Server going down for maintenance', 'BYE text'),
      session: { ...int(1), description: 'Only this session; without it, every session live at that time' },
    }),
    status: 201,
    response: obj({ at: int(), iso: str(), text: str(), session: nullable(int()) }, ['at', 'iso', 'text', 'session']),
    handle: ({ server, body }) => server.control.scheduleBye(o(body) as { at?: number | string; in?: number; text?: string; session?: number }),
  },
  {
    method: 'POST', path: '/v1/shutdown', summary: 'Stop the server (answers first)', operation: 'shutdown',
    body: obj({ graceful: dflt(bool, true, 'false: close sessions right away') }), status: 202, response: obj({ shutdown: bool }),
    handle: () => ({ shutdown: true }),
    after: ({ server, body }) => {
      server.control.shutdown({ graceful: (o(body).graceful as boolean | undefined) ?? true }).catch(() => undefined);
    },
  },
];

export const sessionRoutes: Route[] = [
  {
    method: 'GET', path: '/v1/sessions', summary: 'List sessions', operation: 'sessions',
    status: 200, response: arrayOf(ref('Session')),
    handle: ({ server }) => server.control.sessions(),
  },
  {
    method: 'DELETE', path: '/v1/sessions/{session}', summary: 'Disconnect a session', operation: 'disconnect', params: [P_SESSION],
    body: obj({ text: dflt(str(), 'Disconnected by the server', 'BYE text'), reset: dflt(bool, false, 'true: a TCP reset instead of BYE') }), status: 200, response: obj({ disconnected: bool }),
    handle: (ctx) => ctx.server.control.disconnect(n(ctx, 'session'), o(ctx.body)),
  },
  {
    method: 'POST', path: '/v1/sessions/{session}/inject', summary: 'Write data to a session verbatim', operation: 'inject', params: [P_SESSION],
    body: obj({ data: str(), encoding }, ['data']), status: 200, response: obj({ injected: bool }),
    handle: (ctx) => {
      const b = o(ctx.body);
      return ctx.server.control.inject(n(ctx, 'session'), b.data as string, (b.encoding as 'utf-8' | 'base64' | undefined) ?? 'utf-8');
    },
  },
  {
    method: 'GET', path: '/v1/transcripts', operation: 'transcripts',
    summary: 'Sessions with a transcript: the live ones and the last transcript.keepClosed closed ones, in session order',
    status: 200,
    response: arrayOf(
      obj(
        {
          session: int(1),
          user: nullable(str()),
          open: bool,
          openedAt: { ...int(), description: 'Server-clock time, epoch milliseconds' },
          closedAt: { oneOf: [int(), { type: 'null' }] },
          bytes: { ...int(0), description: 'Bytes kept' },
          droppedBytes: int(0),
        },
        ['session', 'user', 'open', 'openedAt', 'closedAt', 'bytes', 'droppedBytes'],
      ),
    ),
    handle: ({ server }) => {
      if (!server.transcripts.enabled) throw new ServiceError('CANNOT', 'Transcripts are off (the transcript option); turn them on to record sessions');
      return server.transcripts.summaries();
    },
  },
  {
    method: 'GET', path: '/v1/sessions/{session}/transcript', operation: 'transcript', params: [P_SESSION],
    summary: "A session's transcript: every byte in and out with server-clock times, live or recently closed (JSON, or text/plain by Accept or ?format=text)",
    query: [
      {
        name: 'format',
        description: '`json` or `text` (the pasteable text form of docs/debugging.md); wins over the Accept header, for links in a browser',
        schema: { type: 'string', enum: ['json', 'text'] },
      },
    ],
    status: 200, response: ref('Transcript'),
    text: (result) => (result as Transcript).text(),
    handle: (ctx) => {
      const format = ctx.query.get('format');
      if (format !== null && format !== 'json' && format !== 'text') {
        throw new ServiceError('INVALID', `format: expected json or text, got ${JSON.stringify(format)}`);
      }
      const id = n(ctx, 'session');
      if (!ctx.server.transcripts.enabled) throw new ServiceError('CANNOT', 'Transcripts are off (the transcript option); turn them on to record sessions');
      const transcript = ctx.server.transcript(id);
      if (!transcript) {
        throw new ServiceError('NONEXISTENT', `Session ${id} has no transcript: no such session, or it closed before the last ${ctx.server.options.transcript.keepClosed} closed sessions kept (transcript.keepClosed)`);
      }
      return transcript;
    },
  },
  {
    method: 'GET', path: '/v1/events', summary: 'Server-Sent Events stream of server events', operation: 'event stream',
    query: [
      { name: 'types', description: `Comma-separated event types: ${EVENT_TYPES.join(', ')}`, schema: str() },
      {
        name: 'since',
        description:
          'An event id, or `now`. The stream first replays the kept events after that id (the backlog, `events.backlog`), then goes on live; ' +
          'every frame then carries an `id:` line. A `Last-Event-ID` request header (a reconnecting EventSource) wins over `since`. ' +
          'An id older than the backlog (or newer than the newest event: another server run) starts with an `event: gap` frame ' +
          '(`{ since, oldest, last }`) and then replays everything kept. Without `since` or `Last-Event-ID`: live events only, without `id:` lines.',
        schema: { oneOf: [int(0), { type: 'string', enum: ['now'] }] },
      },
    ],
    headers: [{ name: 'Last-Event-ID', description: 'The id of the last event a reconnecting client saw (EventSource sends it); wins over `since`', schema: { type: 'string', description: 'digits' } }],
    status: 200, response: str('text/event-stream'), stream: true,
    handle: () => undefined,
  },
  {
    method: 'POST', path: '/v1/events/mark', summary: 'Put a mark in the event stream: a note, or a test\'s start or end (the test helpers post these)', operation: 'mark',
    body: obj({
      text: { ...str(), description: 'A test\'s name or any note (1 to 1024 characters)' },
      phase: { ...nullable({ type: 'string', enum: ['start', 'end'] }), description: 'start or end of the test named by text; null (default) for a plain note' },
      outcome: { ...nullable({ type: 'string', enum: ['pass', 'fail'] }), description: 'With phase end: whether the test passed' },
    }, ['text']),
    status: 201, response: obj({ id: { ...int(1), description: 'The mark event\'s id (a `since` for later waits)' } }, ['id']),
    handle: ({ server, body }) => server.control.mark(o(body) as { text: string; phase?: 'start' | 'end' | null; outcome?: 'pass' | 'fail' | null }),
  },
  {
    method: 'GET', path: '/v1/events/latest', summary: 'Id of the newest event: a `since` for a later wait or stream', operation: 'lastEventId',
    status: 200, response: obj({ id: { ...int(0), description: 'Newest event id; 0 before the first event' }, oldest: { ...nullable(int(1)), description: 'Oldest event id still kept, or null' } }),
    handle: ({ server }) => ({ id: server.lastEventId(), oldest: server.eventLog.oldestId }),
  },
  {
    method: 'GET', path: '/v1/events/wait', summary: 'Long poll: the first event that matches, or 408 TIMEOUT', operation: 'waitFor',
    query: [
      { name: 'types', description: `Comma-separated event types (repeatable); without it, any type. Types: ${EVENT_TYPES.join(', ')} and those of loaded plugins`, schema: str() },
      {
        name: 'match',
        description:
          'Comma-separated `field=value` conditions (repeatable), all of which must hold. `field` is a dotted path into the event data (`session.user`, `messages.uid`); ' +
          '`value` is compared as text (`null`, `true`, numbers as written); an array matches when one element does. A comma starts a new condition only before `name=`.',
        schema: str(),
      },
      { name: 'since', description: 'An event id: events of the backlog after it count too (so an event that came before the request is not missed). Older than the backlog: 410 EXPIRED', schema: int(0) },
      { name: 'timeout', description: `Milliseconds to wait, at most ${MAX_WAIT_TIMEOUT}; then 408 TIMEOUT`, schema: dflt({ ...int(0), maximum: MAX_WAIT_TIMEOUT }, DEFAULT_REST_WAIT) },
      {
        name: 'mailbox',
        description: 'State condition (with `messages`, not with types/match/since): the mailbox (storage name) has at least `messages` messages; a mailbox that does not exist has none. Answers `{ id, type: "state", data: { mailbox, messages } }` with the count',
        schema: str(),
      },
      { name: 'messages', description: 'With `mailbox`: the least message count', schema: int(0) },
      { name: 'user', description: 'With `mailbox`, under `userMailboxes`: whose mailbox (as `?user=` of the mailbox routes)', schema: str() },
      {
        name: 'session',
        description: 'State condition (not with types/match/since): session number `session` is in IDLE (`idling=true`, the default) or not (`idling=false`; a closed session is not). Answers `{ id, type: "state", data: { session, idling } }`; `idling=true` on a server without IDLE (not loaded, or hidden) is 409 CANNOT at once, naming IDLE',
        schema: int(1),
      },
      { name: 'idling', description: 'With `session`', schema: dflt({ type: 'string', enum: ['true', 'false'] }, 'true') },
    ],
    status: 200, response: ref('EventRecord'),
    errors: {
      '408': 'TIMEOUT: no matching event within timeout',
      '410': 'EXPIRED: since is older than the backlog',
      '503': 'LIMIT: events.maxWaiters waits are pending already (with Retry-After)',
    },
    handle: (ctx) => waitRoute(ctx),
  },
];

const WAIT_QUERY = ['types', 'match', 'since', 'timeout', 'mailbox', 'messages', 'user', 'session', 'idling'];

/**
 * The state condition of a wait (`mailbox` with `messages`, or `session`
 * with `idling`), or null for an event wait. The two kinds do not mix.
 */
function stateCondition(
  query: URLSearchParams,
  single: (name: string) => string | null,
  digits: (name: string, text: string) => number,
): StateCondition | null {
  const mailbox = single('mailbox');
  const messages = single('messages');
  const user = single('user');
  const session = single('session');
  const idling = single('idling');
  if (mailbox === null && messages === null && user === null && session === null && idling === null) return null;
  const eventParams = ['types', 'match', 'since'].filter((k) => query.has(k));
  if (eventParams.length > 0) throw new ServiceError('INVALID', `${eventParams.join(', ')}: not with a state condition (mailbox and messages, or session and idling)`);
  if ((mailbox !== null || messages !== null) && (session !== null || idling !== null)) {
    throw new ServiceError('INVALID', 'A wait has one state condition: mailbox and messages, or session and idling');
  }
  if (mailbox !== null || messages !== null) {
    if (mailbox === null || messages === null) throw new ServiceError('INVALID', `${mailbox === null ? 'mailbox' : 'messages'}: required with ${mailbox === null ? 'messages' : 'mailbox'}`);
    const count = digits('messages', messages);
    return user === null ? { mailbox, messages: count } : { mailbox, messages: count, user };
  }
  if (user !== null) throw new ServiceError('INVALID', 'user: only with mailbox and messages');
  if (session === null) throw new ServiceError('INVALID', 'session: required with idling');
  if (idling !== null && idling !== 'true' && idling !== 'false') throw new ServiceError('INVALID', `idling: expected true or false, got ${JSON.stringify(idling)}`);
  const n = digits('session', session);
  if (n < 1) throw new ServiceError('INVALID', 'session: expected a session number >= 1');
  return { session: n, idling: idling !== 'false' };
}

function waitRoute(ctx: RouteContext): Promise<unknown> {
  const { query, server, res } = ctx;
  for (const key of new Set(query.keys())) {
    if (!WAIT_QUERY.includes(key)) {
      const hint = suggestKey(key, WAIT_QUERY);
      throw new ServiceError('INVALID', `${JSON.stringify(key)}: unknown query parameter${hint !== undefined ? `; did you mean ${JSON.stringify(hint)}?` : ''} (parameters: ${WAIT_QUERY.join(', ')})`);
    }
  }
  const single = (name: string): string | null => {
    const all = query.getAll(name);
    if (all.length > 1) throw new ServiceError('INVALID', `${name}: given more than once`);
    return all[0] ?? null;
  };
  const digits = (name: string, text: string): number => {
    if (!/^[0-9]{1,15}$/.test(text)) throw new ServiceError('INVALID', `${name}: expected a non-negative integer, got ${JSON.stringify(text)}`);
    return Number(text);
  };
  const timeoutText = single('timeout');
  const timeout = timeoutText === null ? DEFAULT_REST_WAIT : digits('timeout', timeoutText);
  if (timeout > MAX_WAIT_TIMEOUT) throw new ServiceError('INVALID', `timeout: at most ${MAX_WAIT_TIMEOUT} ms, got ${timeout}`);
  // A client that goes away ends its wait, so it no longer counts against events.maxWaiters.
  const gone = new AbortController();
  const state = stateCondition(query, single, digits);
  if (state) {
    res.once('close', () => gone.abort());
    return server.waitUntil(state, { timeout, signal: gone.signal }).then((found) => ({ id: server.lastEventId(), type: 'state', data: found }));
  }
  const valid = server.eventTypes();
  let types = valid;
  const named = query.getAll('types');
  if (named.length > 0) {
    const names = named.flatMap((v) => v.split(',')).map((t) => t.trim()).filter((t) => t !== '');
    if (names.length === 0) throw new ServiceError('INVALID', `types: empty list; name at least one of ${valid.join(', ')}, or leave types out for any`);
    for (const name of names) {
      if (!valid.includes(name)) throw new ServiceError('INVALID', `Unknown event type ${JSON.stringify(name)}; valid types: ${valid.join(', ')}`);
    }
    types = [...new Set(names)];
  }
  const conditions = parseConditions(query.getAll('match'), types);
  const sinceText = single('since');
  res.once('close', () => gone.abort());
  const options = sinceText === null ? { timeout, signal: gone.signal } : { timeout, since: digits('since', sinceText), signal: gone.signal };
  return server.waitFor(types, (data: unknown) => matchesAll(data, conditions), options);
}

export const userRoutes: Route[] = [
  {
    method: 'GET', path: '/v1/users', summary: 'List users (no credentials)', operation: 'listUsers',
    status: 200, response: arrayOf(ref('User')),
    handle: ({ server }) => server.control.listUsers(),
  },
  {
    method: 'POST', path: '/v1/users', summary: 'Add a user', operation: 'addUser',
    body: obj({ name: str(), password: str(), xoauth2 }, ['name']), status: 201, response: obj({ name: str() }),
    handle: ({ server, body }) => server.control.addUser(body as never),
  },
  {
    method: 'PUT', path: '/v1/users/{name}', summary: 'Change a user', operation: 'updateUser', params: [P_NAME],
    body: obj({ password: str(), xoauth2: nullable(xoauth2) }), status: 200, response: obj({ name: str() }),
    handle: (ctx) => ctx.server.control.updateUser(p(ctx, 'name'), ctx.body as never),
  },
  {
    method: 'DELETE', path: '/v1/users/{name}', summary: 'Delete a user', operation: 'deleteUser', params: [P_NAME],
    body: obj({ disconnect: dflt(bool, true, "false: keep the user's sessions") }), status: 200, response: deleted,
    handle: (ctx) => ctx.server.control.deleteUser(p(ctx, 'name'), o(ctx.body)),
  },
];

export const mailboxRoutes: Route[] = [
  {
    method: 'GET', path: '/v1/mailboxes', summary: 'List mailboxes, ordered by name', operation: 'listMailboxes',
    query: [userQuery], status: 200, response: arrayOf(ref('MailboxInfo')),
    handle: ({ server, query }) => server.control.listMailboxes(scopeOf(query)),
  },
  {
    method: 'POST', path: '/v1/mailboxes', summary: 'Create a mailbox with missing superior levels', operation: 'createMailbox',
    body: obj({ path: str('Plain mailbox name'), subscribed: dflt(bool, true) }, ['path']), query: [userQuery], status: 201, response: ref('MailboxInfo'),
    handle: ({ server, body, query }) => server.control.createMailbox(body as never, scopeOf(query)),
  },
  {
    method: 'GET', path: '/v1/mailboxes/{path}', summary: 'One mailbox', operation: 'getMailbox', params: [P_PATH],
    query: [userQuery], status: 200, response: ref('MailboxInfo'),
    handle: (ctx) => ctx.server.control.getMailbox(p(ctx, 'path'), scopeOf(ctx.query)),
    // The API's most polled resource (tests wait on its counts).
    json: (result) => mailboxInfoJson(result as MailboxInfo),
  },
  {
    method: 'DELETE', path: '/v1/mailboxes/{path}', summary: 'Delete a mailbox', operation: 'deleteMailbox', params: [P_PATH],
    body: obj({}), query: [userQuery], status: 200, response: deleted,
    handle: (ctx) => ctx.server.control.deleteMailbox(p(ctx, 'path'), scopeOf(ctx.query)),
  },
  {
    method: 'POST', path: '/v1/mailboxes/{path}/rename', summary: 'Rename a mailbox with its children', operation: 'renameMailbox', params: [P_PATH],
    body: obj({ newPath: str() }, ['newPath']), query: [userQuery], status: 200, response: ref('MailboxInfo'),
    handle: (ctx) => ctx.server.control.renameMailbox(p(ctx, 'path'), ctx.body as never, scopeOf(ctx.query)),
  },
  {
    method: 'PUT', path: '/v1/mailboxes/{path}/subscription', summary: 'Subscribe a mailbox', operation: 'subscribe', params: [P_PATH],
    body: obj({}), query: [userQuery], status: 200, response: changed,
    handle: (ctx) => ctx.server.control.subscribe(p(ctx, 'path'), scopeOf(ctx.query)),
  },
  {
    method: 'DELETE', path: '/v1/mailboxes/{path}/subscription', summary: 'Unsubscribe a name', operation: 'unsubscribe', params: [P_PATH],
    body: obj({}), query: [userQuery], status: 200, response: changed,
    handle: (ctx) => ctx.server.control.unsubscribe(p(ctx, 'path'), scopeOf(ctx.query)),
  },
  {
    method: 'POST', path: '/v1/mailboxes/{path}/uidvalidity', summary: 'New UIDVALIDITY and optionally new UIDs', operation: 'resetUidValidity',
    params: [P_PATH],
    body: obj({
      uidvalidity: { ...int(1), maximum: 0xffffffff, description: 'New UIDVALIDITY; the old value + 1 when left out' },
      uids: dflt({ type: 'string', enum: ['keep', 'renumber', 'offset', 'shuffle'] }, 'keep', 'keep, renumber (1..n), offset (old UID + offset), shuffle (a permutation drawn from seed)'),
      offset: dflt(int(), 0, 'For uids: offset'),
      seed: dflt(int(), 1, 'For uids: shuffle; the same seed gives the same order'),
    }),
    query: [userQuery], status: 200, response: obj({ uidvalidity: int(), uidnext: int(), uids: arrayOf(obj({ uid: int(), newUid: int() })) }),
    handle: (ctx) => ctx.server.control.resetUidValidity(p(ctx, 'path'), ctx.body as never, scopeOf(ctx.query)),
  },
];

function parseUids(text: string): number[] {
  return text
    .split(',')
    .filter((s) => s.trim() !== '')
    .map((s) => {
      const t = s.trim();
      if (!/^[1-9][0-9]{0,9}$/.test(t)) throw new ServiceError('INVALID', `uids: not a UID: ${JSON.stringify(t)}`);
      return Number(t);
    });
}

export const messageRoutes: Route[] = [
  {
    method: 'GET', path: '/v1/mailboxes/{path}/messages', summary: 'List messages, ordered by UID', operation: 'listMessages', params: [P_PATH],
    query: [
      { name: 'uids', description: 'Comma-separated UIDs; only these', schema: str() },
      { name: 'raw', description: '`true` includes the source in base64', schema: dflt({ type: 'string', enum: ['true', 'false'] }, 'false') },
      userQuery,
    ],
    status: 200, response: arrayOf(ref('MessageInfo')),
    handle: (ctx) => {
      const options: { uids?: number[]; raw?: boolean } = {};
      const u = ctx.query.get('uids');
      if (u !== null) options.uids = parseUids(u);
      const raw = ctx.query.get('raw');
      if (raw !== null) {
        if (raw !== 'true' && raw !== 'false') throw new ServiceError('INVALID', `raw: expected true or false, got ${JSON.stringify(raw)}`);
        options.raw = raw === 'true';
      }
      return ctx.server.control.listMessages(p(ctx, 'path'), options, scopeOf(ctx.query));
    },
  },
  {
    method: 'POST', path: '/v1/mailboxes/{path}/messages', summary: 'Add a message like a delivery', operation: 'addMessage', params: [P_PATH],
    body: obj(
      {
        raw: str('Message source: UTF-8 text, or base64 with `encoding: base64`'),
        encoding,
        flags: dflt(arrayOf(str()), []),
        internaldate: str('RFC 3501 date-time (`dd-Mon-yyyy hh:mm:ss +zzzz`); the server clock when left out'),
        checks: dflt(bool, false, 'true: refused as APPEND would refuse it (QUOTA, APPENDLIMIT)'),
      },
      ['raw'],
    ),
    query: [userQuery], status: 201, response: obj({ uid: int(), uidvalidity: int() }),
    handle: (ctx) => ctx.server.control.addMessage(p(ctx, 'path'), ctx.body as never, scopeOf(ctx.query)),
  },
  {
    method: 'POST', path: '/v1/mailboxes/{path}/messages/flags', summary: 'Set, add or remove flags', operation: 'setFlags', params: [P_PATH],
    body: obj({ uids, flags: arrayOf(str()), mode: dflt({ type: 'string', enum: ['set', 'add', 'remove'] }, 'set') }, ['uids', 'flags']),
    query: [userQuery], status: 200, response: arrayOf(obj({ uid: int(), flags: arrayOf(str()) })),
    handle: (ctx) => ctx.server.control.setFlags(p(ctx, 'path'), ctx.body as never, scopeOf(ctx.query)),
  },
  {
    method: 'POST', path: '/v1/mailboxes/{path}/messages/expunge', summary: 'Remove messages', operation: 'expungeMessages', params: [P_PATH],
    body: obj({ uids }, ['uids']), query: [userQuery], status: 200, response: obj({ uids }),
    handle: (ctx) => ctx.server.control.expungeMessages(p(ctx, 'path'), ctx.body as never, scopeOf(ctx.query)),
  },
  {
    method: 'POST', path: '/v1/mailboxes/{path}/messages/copy', summary: 'Copy messages', operation: 'copyMessages', params: [P_PATH],
    body: obj({ uids, target: str('Plain mailbox name (of the same user with ?user=)') }, ['uids', 'target']), query: [userQuery], status: 200, response: uidMap,
    handle: (ctx) => ctx.server.control.copyMessages(p(ctx, 'path'), ctx.body as never, scopeOf(ctx.query)),
  },
  {
    method: 'POST', path: '/v1/mailboxes/{path}/messages/move', summary: 'Move messages', operation: 'moveMessages', params: [P_PATH],
    body: obj({ uids, target: str('Plain mailbox name (of the same user with ?user=)') }, ['uids', 'target']), query: [userQuery], status: 200, response: uidMap,
    handle: (ctx) => ctx.server.control.moveMessages(p(ctx, 'path'), ctx.body as never, scopeOf(ctx.query)),
  },
  {
    method: 'GET', path: '/v1/mailboxes/{path}/messages/{uid}', summary: 'One message with its source', operation: 'getMessage', params: [P_PATH, P_UID],
    query: [userQuery], status: 200, response: ref('MessageInfo'),
    handle: (ctx) => ctx.server.control.getMessage(p(ctx, 'path'), n(ctx, 'uid'), scopeOf(ctx.query)),
  },
  {
    method: 'DELETE', path: '/v1/mailboxes/{path}/messages/{uid}', summary: 'Remove one message', operation: 'expungeMessages', params: [P_PATH, P_UID],
    body: obj({}), query: [userQuery], status: 200, response: obj({ uids }),
    handle: (ctx) => {
      const uid = n(ctx, 'uid');
      const scope = scopeOf(ctx.query);
      ctx.server.control.getMessage(p(ctx, 'path'), uid, scope); // 404 NONEXISTENT for an unknown UID
      return ctx.server.control.expungeMessages(p(ctx, 'path'), { uids: [uid] }, scope);
    },
  },
];

export const scriptRoutes: Route[] = [
  {
    method: 'GET', path: '/v1/script/rules', summary: 'List script rules', operation: 'script rules listing',
    status: 200, response: arrayOf(ref('ScriptRuleEntry')),
    handle: ({ server }) => server.script.rules,
  },
  {
    method: 'POST', path: '/v1/script/rules', summary: 'Add a rule or an array of rules (atomically)', operation: 'script add',
    body: { oneOf: [ref('ScriptRule'), arrayOf(ref('ScriptRule'))] }, allowArray: true,
    status: 201, response: { oneOf: [ref('ScriptRuleEntry'), arrayOf(ref('ScriptRuleEntry'))] },
    handle: ({ server, body }) => {
      const entry = (h: { id: number; rule: unknown; matched: number; hits: number }) => ({ id: h.id, rule: h.rule, matched: h.matched, hits: h.hits });
      if (Array.isArray(body)) return server.script.add(body as ScriptRule[]).map(entry);
      return entry(server.script.add(body as ScriptRule));
    },
  },
  {
    method: 'DELETE', path: '/v1/script/rules', summary: 'Remove every rule', operation: 'script clear',
    body: obj({}), status: 200, response: deleted,
    handle: ({ server }) => {
      server.script.clear();
      return { deleted: true };
    },
  },
  {
    method: 'DELETE', path: '/v1/script/rules/{id}', summary: 'Remove one rule', operation: 'rule handle remove', params: [P_ID],
    body: obj({}), status: 200, response: deleted,
    handle: ({ server, params }) => {
      if (!server.script.remove(params.id as number)) throw new ServiceError('NONEXISTENT', `Script rule ${params.id} does not exist`);
      return { deleted: true };
    },
  },
];

/** A query number: an integer >= min, or INVALID naming the parameter. */
function queryInteger(query: URLSearchParams, name: string, min: number): number | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min) throw new ServiceError('INVALID', `${name}: expected an integer >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

export const clientRoutes: Route[] = [
  {
    method: 'GET', path: '/v1/client', summary: 'The client checker: its mode, the rules it checks and the capabilities hidden from every session', operation: 'clientCheck',
    status: 200, response: ref('ClientCheck'),
    handle: ({ server }) => server.control.clientCheck(),
  },
  {
    method: 'GET', path: '/v1/client/findings', summary: 'Where clients broke the protocol (client checker findings), oldest first', operation: 'clientFindings',
    query: [
      { name: 'session', description: 'Only the findings of this session', schema: int(1) },
      { name: 'since', description: 'Only findings with an id above this', schema: int(0) },
    ],
    status: 200, response: arrayOf(ref('ClientFinding')),
    handle: ({ server, query }) => {
      const q: { session?: number; since?: number } = {};
      const session = queryInteger(query, 'session', 1);
      const since = queryInteger(query, 'since', 0);
      if (session !== undefined) q.session = session;
      if (since !== undefined) q.since = since;
      return server.control.clientFindings(q);
    },
  },
  {
    method: 'DELETE', path: '/v1/client/findings', summary: 'Drop every client finding', operation: 'clearClientFindings',
    body: obj({}), status: 200, response: obj({ deleted: int(0) }),
    handle: ({ server }) => server.control.clearClientFindings(),
  },
];

export const docRoutes: Route[] = [
  {
    method: 'GET', path: '/v1/openapi.json', summary: 'OpenAPI 3.1 document of this server', operation: 'OpenAPI document',
    status: 200, response: { type: 'object', additionalProperties: true },
    handle: () => undefined, // filled in by the REST server
  },
];

/**
 * The built-in routes, every request body closed: an object a body schema
 * declares takes only the keys it lists (an unknown key is 400 INVALID with a
 * "did you mean"), and the OpenAPI document says so with
 * `additionalProperties: false`.
 */
export const BUILTIN_ROUTES: Route[] = [...serverRoutes, ...sessionRoutes, ...userRoutes, ...mailboxRoutes, ...messageRoutes, ...scriptRoutes, ...clientRoutes, ...OAUTH_ROUTES, ...tlsRoutes, ...docRoutes].map(
  (r) => (r.body ? { ...r, body: closeObjects(r.body) } : r),
);

const strArray = arrayOf(str());

const ms = (min: number, description: string): Schema => ({ type: 'integer', minimum: min, maximum: 2_147_483_647, description });

/**
 * A script rule as JSON carries it: every field the rule validator knows
 * (src/script/validate.ts; a test keeps the two lists equal), none other.
 */
export const SCRIPT_RULE: Schema = obj(
  {
    on: { type: 'string', enum: SCRIPT_EVENTS, description: 'When the rule is asked: greeting, command, input (IDLE DONE, SASL lines), response (bytes about to go out), quiet (no traffic for quietFor ms), smtp (an SMTP MAIL, RCPT or DATA of the SMTP intake), continuation (a + line: before a literal, in AUTHENTICATE, IDLE), pop3 (a POP3 session: its stage says which point)' },
    command: {
      oneOf: [str(), arrayOf(str())],
      description:
        'Command name as sessions see it (`FETCH`, `UID FETCH`, `AUTHENTICATE PLAIN`), any case, or a non-empty list of names; a name without `UID ` matches its UID form too (`FETCH` matches `FETCH` and `UID FETCH`) unless uid narrows it. A server refuses a name that neither the core nor a loaded plugin defines. For on: smtp one of MAIL, RCPT, DATA',
    },
    uid: { ...bool, description: 'With command: true matches only the `UID` form of the named commands (`UID FETCH`), false only the plain form (`FETCH`); without it both' },
    tag: str('Only the command with this tag'),
    session: { ...int(1), description: 'Only this session number' },
    state: { type: 'string', enum: SESSION_STATES, description: 'Only sessions in this state' },
    user: str('Only sessions logged in as this user'),
    mailbox: str('Only sessions with this mailbox selected (storage name)'),
    match: str('Regular expression the event text must match'),
    nth: { ...int(1), description: 'Act only on the nth match' },
    times: { ...int(1), description: 'Act at most this often; without it, every time' },
    chance: { type: 'number', minimum: 0, maximum: 1, description: 'Share of matches it acts on, drawn from the PRNG seeded by scriptSeed; without it, every match' },
    quietFor: ms(1, 'For on: quiet (required there): milliseconds without traffic'),
    send: str('Text to send; `$TAG` is the command tag (`*` where there is none). For on: smtp a whole SMTP reply with a 4xx or 5xx code (`451 Try again later`)'),
    run: dflt(bool, false, 'true: the command also runs, its output after send'),
    drop: dflt(bool, false, 'true: send nothing (the output is dropped)'),
    delay: dflt(ms(0, 'Milliseconds to wait before acting'), 0),
    chunk: { ...int(1), description: 'Send the output in chunks of this many bytes' },
    chunkDelay: dflt({ oneOf: [ms(0, 'Milliseconds between chunks'), { type: 'string', enum: ['tick'] }] }, 0, 'Between chunks (needs chunk): milliseconds or "tick"'),
    truncate: { ...int(0), description: 'Send only this many bytes of the output, then close the connection' },
    close: dflt({ oneOf: [bool, { type: 'string', enum: ['reset'] }] }, false, 'true: close the connection after acting; "reset": a TCP reset'),
    before: str('Text to send before the output'),
    after: str('Text to send after the output'),
    // --- rule language, issue 14 part 1 (docs/script-rules.md)
    untagged: str('on: response: only untagged responses of this type (EXISTS, FETCH, OK, LIST; "*" any). on: command: the responses mutate, literals and defer act on'),
    description: str('A free label, shown in listings and script events'),
    mutate: {
      type: 'array',
      description:
        'Change the structured response before it is serialized: ops {set, value, at}, {add, value, at}, {drop, at}, {order: [names]}, {literal, at}, {quoted, at}, {unescaped, at}, {unquote, at}, {suffix, text, at}, {replace, with}; items are FETCH/STATUS items, response codes, "text", a counted type (EXISTS), LIST attributes/delimiter/mailbox',
      items: { type: 'object', additionalProperties: true },
    },
    literals: dflt(bool, false, 'true: every string that may be a literal goes out as one'),
    defer: { type: 'string', enum: ['tagged', 'next'], description: 'Hold the response: until after the next tagged response, or until the next command\'s output' },
    seedScope: dflt({ type: 'string', enum: ['server', 'session', 'rule'] }, 'server', 'With chance: one PRNG stream for the server, one per session and rule (same faults whatever the interleaving), or one per rule'),
    // --- end issue 14 part 1
    stage: dflt({ type: 'string', enum: ['greeting', 'command', 'response'] }, 'command', 'For on: pop3: the greeting, a command before it runs, or a response about to go out (docs/pop3.md)'),
    pop3Fault: { type: 'string', enum: ['lf-size', 'no-dot', 'double-dot', 'no-stuffing', 'uidl-repeat', 'uidl-change'], description: 'For on: pop3 command rules: a POP3 defect in the answer of the command, which runs (docs/pop3.md, "Faults")' },
    hideCapabilities: { ...arrayOf(str()), description: 'For on: greeting or command: capabilities the session is not offered from then on (not advertised; their commands are unknown)' },
    attacks: { ...arrayOf({ type: 'string', enum: STARTTLS_ATTACKS }), description: 'For on: greeting: the STARTTLS attacks this session meets instead of the attacks option\'s (docs/tls.md)' },
    // Transport faults (issue 14): src/script/transport.ts, docs/faults-and-timers.md.
    bandwidth: { ...int(0), description: 'From this event on, the session\'s output at most this many bytes per second (0 lifts the cap)' },
    stall: { oneOf: [bool, ms(1, 'Milliseconds')], description: 'Stop reading the connection: true for good, a number of ms for that long (the client\'s writes back up)' },
    halfClose: dflt(bool, false, 'true: FIN after this event\'s output; the server keeps reading and drops what it would answer'),
    slowClose: ms(0, 'From this event on, milliseconds the server waits before its FIN whenever it closes'),
    tlsFailure: dflt(bool, false, 'true: the next STARTTLS handshake is answered with a fatal handshake_failure alert'),
    stripStartTls: dflt(bool, false, 'true: from this event on STARTTLS is left out of CAPABILITY and refused as unknown'),
  },
  ['on'],
);

/** Extension store fields a loaded plugin shows (`mailboxId`, `emailId`, `saveDate`, ...), by storage key. */
const SHOWN_FIELDS: Schema = { type: 'object', additionalProperties: true, description: 'Store fields of loaded extensions, by storage key (e.g. OBJECTID mailboxId/emailId, SAVEDATE saveDate)' };

/** Shared response schemas (OpenAPI components). */
export const COMPONENTS: Record<string, Schema> = {
  Error: obj({ error: obj({ code: str(), message: str() }, ['code', 'message']) }, ['error']),
  MailboxInfo: obj({
    path: str(), delimiter: str(), flags: strArray, selectable: bool, subscribed: bool, messages: int(), unseen: int(),
    uidnext: int(), uidvalidity: int(), permanentFlags: strArray, specialUse: strArray, fields: SHOWN_FIELDS,
  }),
  MessageInfo: obj({ uid: int(), flags: strArray, internaldate: str(), size: int(), modseq: int(), raw: str('base64'), encoding: str(), fields: SHOWN_FIELDS }),
  User: obj({ name: str(), xoauth2: bool }),
  Transcript: obj(
    {
      session: int(1),
      user: nullable(str()),
      remoteAddress: nullable(str()),
      open: { ...bool, description: 'False once the session has closed' },
      openedAt: { ...int(), description: 'Server-clock time the session opened, epoch milliseconds' },
      closedAt: { oneOf: [int(), { type: 'null' }], description: 'Server-clock time it closed, or null while open' },
      droppedBytes: { ...int(0), description: 'Oldest bytes no longer kept (transcript.maxBytes)' },
      redacted: { ...bool, description: 'True when credentials (LOGIN password, AUTHENTICATE data) show as ***' },
      chunks: arrayOf(
        obj(
          {
            at: { ...int(), description: 'Server-clock time the bytes crossed the socket, epoch milliseconds' },
            from: { type: 'string', enum: ['client', 'server'] },
            data: str('The bytes: UTF-8 text, or base64 when they are not valid UTF-8'),
            encoding: { type: 'string', enum: ['utf-8', 'base64'] },
          },
          ['at', 'from', 'data', 'encoding'],
        ),
      ),
    },
    ['session', 'user', 'remoteAddress', 'open', 'openedAt', 'closedAt', 'droppedBytes', 'redacted', 'chunks'],
  ),
  Session: obj({
    session: int(), user: nullable(str()), state: { type: 'string', enum: ['Not Authenticated', 'Authenticated', 'Selected', 'Logout', 'Authorization', 'Transaction', 'Update'], description: 'IMAP states; Authorization, Transaction and Update for POP3 sessions (RFC 1939)' },
    mailbox: nullable(str()), readOnly: bool, enabled: strArray, secure: bool, compressed: bool, remoteAddress: nullable(str()),
    protocol: { type: 'string', enum: ['imap', 'pop3', 'smtp'], description: 'The protocol the session speaks' },
  }),
  ScriptRule: closeObjects(SCRIPT_RULE),
  // A getter: built when the document is, after the options module has loaded (see healthLimitKeys).
  get Health(): Schema {
    return healthSchema();
  },
  EventRecord: obj(
    { id: { ...int(0), description: 'Event id (grows by one per event); for a state wait the newest event id when the condition held (0 before any event)' }, type: str('Event type'), data: { type: 'object', additionalProperties: true, description: 'The event data, as the event stream sends it' } },
    ['id', 'type', 'data'],
  ),
  ScriptRuleEntry: obj({ id: int(), rule: ref('ScriptRule'), matched: int(), hits: int() }),
  ClientFinding: obj(
    {
      id: { ...int(1), description: 'Grows by one per finding' },
      protocol: { type: 'string', enum: ['imap', 'pop3'], description: "The session's protocol (the rule's)" },
      session: int(1),
      user: nullable(str()),
      tag: nullable(str()),
      command: nullable(str('Command name, e.g. `UID FETCH`')),
      rule: str('Rule id, e.g. `literal-before-continuation` (docs/client-check.md)'),
      severity: { type: 'string', enum: ['error', 'warning'] },
      rfc: str('The RFC section the rule comes from'),
      text: str('What the client did'),
      at: str('Server-clock time, ISO 8601'),
    },
    ['id', 'protocol', 'session', 'user', 'tag', 'command', 'rule', 'severity', 'rfc', 'text', 'at'],
  ),
  ClientCheck: obj(
    {
      clientCheck: { type: 'string', enum: ['off', 'report', 'strict'], description: 'The clientCheck option' },
      rules: { ...strArray, description: 'Ids of the rules checked' },
      hide: { ...strArray, description: 'Capabilities hidden from every session (capabilities.hide)' },
    },
    ['clientCheck', 'rules', 'hide'],
  ),
};

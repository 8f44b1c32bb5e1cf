/**
 * `resolveOptions`: validates what a caller passed to `createServer` and turns
 * it into ResolvedOptions, with every default filled in and every value
 * copied. All problems are collected and thrown together as one
 * ServiceError('INVALID'), one problem per line, each starting with the
 * option path it is about (`storage.INBOX.mesages: unknown key; did you mean
 * "messages"?`).
 */
import { REST_LIMIT_KEYS } from './rest-limit-keys.js';
import { readFileSync } from 'node:fs';
import { isServiceError, ServiceError } from '../errors.js';
import type { ScriptRule } from '../script/rule.js';
import { validateRules } from '../script/validate.js';
import { defectNamed, defectNames } from '../script/defects.js';
import { checkTypos, childPath, describeValue, indexPath, isPlainObject, Problems } from './problems.js';
import type { Extension, StoreField } from '../extensions/extension.js';
import { BUILTIN_ROWS } from '../extensions/builtins.js';
import { resolvePluginOptions, resolvePlugins } from './plugins.js';
import { resolveStorage, type FieldValidator, type StorageContext } from './storage.js';
import { resolveSmtp } from './smtp.js';
import { resolvePop3 } from './pop3.js';
import { resolveCapabilities, resolveClientCheck } from './client-check.js';
import { resolveAttacks, resolveTls } from './tls.js';
import type { ResolvedOptions, ServerOptions, UserRecord } from './types.js';
import { layOverPreset, PRESET_NAMES, presetOptions, type PresetName } from '../presets/index.js';
import { suggestKey } from './typos.js';
import { FAULT_TOP_LEVEL_KEYS, resolveFaultOptions } from './faults.js';
import { resolveTranscript } from './transcript.js';
import { resolveOAuth } from '../oauth/options.js';
import { parseTranscripts, TranscriptSyntaxError } from '../transcript/text.js';
import type { Transcript } from '../transcript/transcript.js';

/** The limits that keep a broken or hostile client from costing unbounded memory, descriptors or time. */
export const LIMIT_KEYS = [
  'maxCommandBeforeLogin',
  'maxConnections',
  'maxUnauthenticated',
  'loginTimeout',
  'idleTimeout',
  'maxOutputBuffer',
  'shutdownTimeout',
] as const;

/** The store's memory budget (src/store/budget.ts): off unless given. */
export const STORE_BUDGET_KEYS = ['maxStoreBytes', 'maxMessages'] as const;

/**
 * Every top-level option name, including ones that later features read, so
 * none is ever reported as a typo of another. Unknown keys that are not
 * typos of these pass validation untouched.
 */
export const TOP_LEVEL_KEYS = [
  'storage',
  'users',
  'plugins',
  'pluginOptions',
  'scriptSeed',
  'now',
  'rest',
  'port',
  'host',
  'greeting',
  'greetingCapabilities',
  'preset',
  'maxLineLength',
  'maxLiteralBeforeLogin',
  'maxLiteral',
  ...LIMIT_KEYS,
  ...STORE_BUDGET_KEYS,
  'debug',
  'script',
  'defects',
  'secure',
  'loginDisabled',
  'starttls',
  'tls',
  'attacks',
  'smtp',
  'pop3',
  'pingInterval',
  'events',
  'userMailboxes',
  'clientCheck',
  'clientCheckRules',
  'capabilities',
  'leniency',
  // Transport faults, server-clock timers and throttling (issue 14): ./faults.ts.
  ...FAULT_TOP_LEVEL_KEYS,
  'transcript',
  // The test authorization server (src/oauth, docs/oauth.md).
  'oauth',
] as const;

export { REST_LIMIT_KEYS };
export const REST_KEYS = ['port', 'host', 'token', 'pingInterval', ...REST_LIMIT_KEYS] as const;
export const EVENTS_KEYS = ['backlog', 'backlogBytes', 'maxWaiters'] as const;
export const LENIENCY_KEYS = ['eightBitQuoted', 'anyEscape', 'extraSpaces', 'trailingComma'] as const;
export const USER_KEYS = ['password', 'xoauth2', 'capabilities'] as const;
export const XOAUTH2_KEYS = ['accessToken', 'sessionTimeout'] as const;

const TOP_LEVEL_SET = new Set<string>(TOP_LEVEL_KEYS);
const REST_SET = new Set<string>(REST_KEYS);
const USER_SET = new Set<string>(USER_KEYS);
const EVENTS_SET = new Set<string>(EVENTS_KEYS);
const LENIENCY_SET = new Set<string>(LENIENCY_KEYS);
const XOAUTH2_SET = new Set<string>(XOAUTH2_KEYS);

export const DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  greeting: 'Rookery ready',
  maxLineLength: 65536,
  maxLiteralBeforeLogin: 65536,
  maxLiteral: 64 * 1024 * 1024,
  maxCommandBeforeLogin: 128 * 1024,
  maxConnections: 5000,
  maxUnauthenticated: 1000,
  loginTimeout: 60_000,
  idleTimeout: 30 * 60_000,
  maxOutputBuffer: 128 * 1024 * 1024,
  shutdownTimeout: 10_000,
  scriptSeed: 1,
  restPingInterval: 15_000,
  restMaxEventStreams: 100,
  restMaxStreamBuffer: 1024 * 1024,
  restMaxConnections: 1000,
  restHeadersTimeout: 20_000,
  restRequestTimeout: 30_000,
  restBodyTimeout: 10_000,
  restMaxBodyBytesInFlight: 128 * 1024 * 1024,
  eventBacklog: 10_000,
  eventBacklogBytes: 16 * 1024 * 1024,
  maxWaiters: 10_000,
} as const;

/** Extension-owned keys to accept (and typo-check against) beyond the built-in ones. */
export type ResolveContext = StorageContext;

/**
 * Validates and normalizes server options. Throws ServiceError('INVALID')
 * listing every problem found; never mutates `input`.
 */
export function resolveOptions(input: ServerOptions = {}, context: ResolveContext = {}): ResolvedOptions {
  const problems = new Problems();
  if (!isPlainObject(input)) {
    throw new ServiceError('INVALID', `options: expected an object, got ${describeValue(input)}`);
  }
  const preset = resolvePreset(problems, input.preset);
  // The preset goes under what the caller gave: the caller's values win (layOptions has the rule).
  const options: Record<string, unknown> = preset ? layOverPreset(preset.options, input) : input;
  checkTypos(options, TOP_LEVEL_SET, TOP_LEVEL_KEYS, '', problems);

  const now = resolveClock(problems, options.now);
  const plugins = resolvePlugins(problems, options.plugins);
  const pluginOptions = resolvePluginOptions(problems, options.pluginOptions, plugins.extensions);
  const userMailboxes = optional(options.userMailboxes, false, (v) => booleanValue(problems, v, 'userMailboxes'));
  const storageCtx = storageContext(context, plugins.extensions, plugins.custom);
  // Gmail's labels are one account's view of one tree; per-user trees would need one label set each.
  if (userMailboxes && plugins.names.includes('X-GM-EXT-1')) {
    problems.add('userMailboxes', 'cannot go with the X-GM-EXT-1 plugin (its labels span one tree); leave one out');
  }
  const { storage, userStorage } = userMailboxes
    ? resolveUserStorage(problems, options.storage, now, storageCtx)
    : { storage: resolveStorage(options.storage, problems, now, storageCtx), userStorage: null };
  const users = resolveUsers(problems, options.users);
  for (const name of userStorage?.keys() ?? []) {
    if (!users.has(name)) problems.add(childPath('storage.users', name), `no such user; users: ${[...users.keys()].join(', ')}`);
  }
  const loginDisabled = optional(options.loginDisabled, false, (v) => booleanValue(problems, v, 'loginDisabled'));
  // LOGINDISABLED without a way to get TLS would lock every client out.
  const starttls = loginDisabled || optional(options.starttls, false, (v) => booleanValue(problems, v, 'starttls'));
  const rest = resolveRest(problems, options.rest);

  const scriptSeed = optional(options.scriptSeed, DEFAULTS.scriptSeed, (v) =>
    typeof v === 'number' && Number.isSafeInteger(v) ? v : problems.expected('scriptSeed', 'an integer', v),
  );
  const replay = resolveReplay(problems, options.script);
  // A replay runs no script rules: `script` holds the recording instead.
  const script = [...(replay ? [] : resolveScript(problems, options.script)), ...resolveDefects(problems, options.defects)];
  const port = optional(options.port, DEFAULTS.port, (v) => portNumber(problems, v, 'port'));
  const host = optional(options.host, DEFAULTS.host, (v) => nonEmptyString(problems, v, 'host'));
  const secure = optional(options.secure, false, (v) => booleanValue(problems, v, 'secure'));
  if (secure && options.starttls === true) {
    problems.add('starttls', 'cannot go with secure: the port speaks TLS from the first byte, so there is nothing to upgrade (choose one)');
  }
  const tls = resolveTls(problems, options.tls);
  const attacks = resolveAttacks(problems, options.attacks);
  const smtp = resolveSmtp(problems, options.smtp, DEFAULTS.host);
  const pop3 = resolvePop3(problems, options.pop3, DEFAULTS.host);
  const greeting = optional(options.greeting, DEFAULTS.greeting, (v) =>
    typeof v === 'string' && !/[\r\n\0]/.test(v) ? v : problems.expected('greeting', 'a single-line string', v),
  );
  const greetingCapabilities = optional(options.greetingCapabilities, true, (v) => booleanValue(problems, v, 'greetingCapabilities'));
  const maxLineLength = optional(options.maxLineLength, DEFAULTS.maxLineLength, (v) =>
    integerAtLeast(problems, v, 'maxLineLength', 1),
  );
  const maxLiteralBeforeLogin = optional(options.maxLiteralBeforeLogin, DEFAULTS.maxLiteralBeforeLogin, (v) =>
    integerAtLeast(problems, v, 'maxLiteralBeforeLogin', 0),
  );
  const maxLiteral = optional(options.maxLiteral, DEFAULTS.maxLiteral, (v) =>
    integerAtLeast(problems, v, 'maxLiteral', 0),
  );
  const limits = resolveLimits(problems, options);
  const maxStoreBytes = optional<number | null>(options.maxStoreBytes, null, (v) => (v === null ? null : integerAtLeast(problems, v, 'maxStoreBytes', 0)));
  const maxMessages = optional<number | null>(options.maxMessages, null, (v) => (v === null ? null : integerAtLeast(problems, v, 'maxMessages', 0)));
  const debug = resolveDebug(problems, options.debug);
  const events = resolveEvents(problems, options.events);
  const clientCheck = resolveClientCheck(problems, options.clientCheck, options.clientCheckRules);
  const hideCapabilities = resolveCapabilities(problems, options.capabilities, 'capabilities');
  const leniency = resolveLeniency(problems, options.leniency);
  const faultOptions = resolveFaultOptions(problems, options);
  const transcript = resolveTranscript(problems, options.transcript);
  const oauth = resolveOAuth(problems, options.oauth, [...users.keys()]);

  problems.throwIfAny();
  return {
    storage,
    userStorage,
    users,
    plugins: plugins.names,
    customPlugins: plugins.custom,
    extensions: plugins.extensions,
    pluginOptions,
    scriptSeed,
    script,
    now,
    rest,
    smtp,
    pop3,
    port,
    host,
    secure,
    starttls,
    loginDisabled,
    tls,
    attacks,
    greeting,
    greetingCapabilities,
    preset: preset?.name ?? null,
    maxLineLength,
    maxLiteralBeforeLogin,
    maxLiteral,
    ...limits,
    maxStoreBytes,
    maxMessages,
    debug,
    events,
    clientCheck: clientCheck.mode,
    clientCheckRules: clientCheck.rules,
    hideCapabilities,
    leniency,
    ...faultOptions,
    transcript,
    replay,
    oauth,
  };
}

const USER_STORAGE_KEYS = ['users', 'shared'] as const;
const USER_STORAGE_SET = new Set<string>(USER_STORAGE_KEYS);

/**
 * The storage option with `userMailboxes`: `{ users: { name: tree }, shared: tree }`.
 * A tree of the one-tree form here is the likeliest mistake, so its keys get
 * a message that shows the per-user form.
 */
function resolveUserStorage(
  problems: Problems,
  value: unknown,
  now: () => number,
  context: StorageContext,
): { storage: ResolvedOptions['storage']; userStorage: Map<string, ResolvedOptions['storage']> } {
  const userStorage = new Map<string, ResolvedOptions['storage']>();
  if (value === undefined) return { storage: resolveStorage(undefined, problems, now, context, 'storage.shared'), userStorage };
  if (!isPlainObject(value)) {
    problems.expected('storage', 'an object { users: { name: storage }, shared: storage } (userMailboxes is on)', value);
    return { storage: { namespaces: [], mailboxes: [] }, userStorage };
  }
  for (const key of Object.keys(value)) {
    if (USER_STORAGE_SET.has(key) || value[key] === undefined) continue;
    const hint = suggestKey(key, USER_STORAGE_KEYS);
    problems.add(
      childPath('storage', key),
      hint !== undefined
        ? `unknown key; did you mean ${JSON.stringify(hint)}?`
        : 'with userMailboxes the storage is { users: { <name>: { INBOX, "": ... } }, shared: { <shared namespaces> } }',
    );
  }
  const users = value.users;
  if (users !== undefined) {
    if (!isPlainObject(users)) problems.expected('storage.users', 'an object of user name -> storage', users);
    else {
      for (const name of Object.keys(users)) {
        const base = childPath('storage.users', name);
        const seed = resolveStorage(users[name], problems, now, context, base);
        for (const ns of seed.namespaces) {
          if (ns.type !== 'personal') problems.add(childPath(base, ns.prefix), `a ${ns.type} namespace belongs in storage.shared, not in a user's own tree`);
        }
        userStorage.set(name, seed);
      }
    }
  }
  const shared = value.shared;
  if (isPlainObject(shared)) {
    for (const key of Object.keys(shared)) {
      if (key.toUpperCase() === 'INBOX') problems.add(childPath('storage.shared', key), "the shared part has no INBOX; each user's is under storage.users.<name>");
    }
  }
  return { storage: resolveStorage(shared, problems, now, context, 'storage.shared'), userStorage };
}

/** `script: { replay }`: the transcript's sessions, read now so that a bad file fails construction. */
function resolveReplay(problems: Problems, value: unknown): Transcript[] | null {
  if (!isPlainObject(value) || !('replay' in value)) return null;
  for (const key of Object.keys(value)) {
    if (key !== 'replay') problems.add(childPath('script', key), 'unknown key next to replay (a replay runs no script rules)');
  }
  const source = value.replay;
  if (typeof source !== 'string' || source === '') {
    problems.expected('script.replay', 'a transcript file path or transcript text', source);
    return null;
  }
  let text = source;
  if (!/[\r\n]/.test(source)) {
    try {
      text = readFileSync(source, 'utf8');
    } catch (err) {
      problems.add('script.replay', `cannot read transcript file ${JSON.stringify(source)}: ${(err as Error).message}`);
      return null;
    }
  }
  try {
    const sessions = parseTranscripts(text);
    if (sessions.length === 0 || sessions.every((s) => s.chunks.length === 0)) {
      problems.add('script.replay', 'the transcript holds no traffic (no "<ms> C:" or "<ms> S:" lines)');
      return null;
    }
    return sessions;
  } catch (err) {
    if (!(err instanceof TranscriptSyntaxError)) throw err;
    problems.add('script.replay', err.message);
    return null;
  }
}

/** `leniency`: each flag a boolean, off unless given. */
function resolveLeniency(problems: Problems, value: unknown): ResolvedOptions['leniency'] {
  const out = { eightBitQuoted: false, anyEscape: false, extraSpaces: false, trailingComma: false };
  if (value === undefined) return out;
  if (!isPlainObject(value)) {
    problems.expected('leniency', `an object of booleans (${LENIENCY_KEYS.join(', ')})`, value);
    return out;
  }
  checkTypos(value, LENIENCY_SET, LENIENCY_KEYS, 'leniency', problems);
  for (const key of LENIENCY_KEYS) out[key] = optional(value[key], false, (v) => booleanValue(problems, v, `leniency.${key}`));
  return out;
}

/** `events`: the backlog's size and the number of pending waits. */
function resolveEvents(problems: Problems, value: unknown): ResolvedOptions['events'] {
  const fallback = { backlog: DEFAULTS.eventBacklog, backlogBytes: DEFAULTS.eventBacklogBytes, maxWaiters: DEFAULTS.maxWaiters };
  if (value === undefined) return fallback;
  if (!isPlainObject(value)) {
    problems.expected('events', 'an object ({backlog, backlogBytes, maxWaiters})', value);
    return fallback;
  }
  checkTypos(value, EVENTS_SET, EVENTS_KEYS, 'events', problems);
  return {
    backlog: optional(value.backlog, fallback.backlog, (v) => integerAtLeast(problems, v, 'events.backlog', 0)),
    backlogBytes: optional(value.backlogBytes, fallback.backlogBytes, (v) => integerAtLeast(problems, v, 'events.backlogBytes', 0)),
    maxWaiters: optional(value.maxWaiters, fallback.maxWaiters, (v) => integerAtLeast(problems, v, 'events.maxWaiters', 1)),
  };
}

/** The `preset` option: a preset name in any case, or an error naming the likely one. */
function resolvePreset(problems: Problems, value: unknown): { name: PresetName; options: Record<string, unknown> } | null {
  if (value === undefined) return null;
  if (typeof value !== 'string') {
    problems.expected('preset', `one of ${PRESET_NAMES.join(', ')}`, value);
    return null;
  }
  const name = value.toLowerCase();
  const options = presetOptions(name);
  // Spread into a plain record: the options are read key by key like any caller's.
  if (options) return { name: name as PresetName, options: { ...options } };
  const hint = suggestKey(value, PRESET_NAMES);
  problems.add('preset', `unknown preset ${JSON.stringify(value)}${hint ? `; did you mean ${JSON.stringify(hint)}?` : ''} (presets: ${PRESET_NAMES.join(', ')})`);
  return null;
}

/** `debug`: true logs the wire to stderr; a function receives each log line instead. */
function resolveDebug(problems: Problems, value: unknown): ((line: string) => void) | null {
  if (value === undefined || value === false) return null;
  if (value === true) return (line) => process.stderr.write(`${line}\n`);
  if (typeof value === 'function') return value as (line: string) => void;
  problems.expected('debug', 'a boolean or a function taking one log line', value);
  return null;
}

/**
 * Storage keys of extensions: every built-in's and every given plugin
 * object's keys take part in typo detection (a fixture may carry `acl`
 * without the ACL plugin); the loaded ones' values are validated.
 */
function storageContext(base: StorageContext, loaded: readonly Extension[], custom: readonly Extension[]): StorageContext {
  // Built-ins only and no extra keys: the context depends on the (shared, frozen) extension list alone.
  const plain = custom.length === 0 && Object.keys(base).length === 0 && Object.isFrozen(loaded);
  if (plain) {
    const hit = contexts.get(loaded);
    if (hit) return hit;
  }
  const made = buildStorageContext(base, loaded, custom);
  if (plain) contexts.set(loaded, made);
  return made;
}
const contexts = new WeakMap<readonly Extension[], StorageContext>();

function buildStorageContext(base: StorageContext, loaded: readonly Extension[], custom: readonly Extension[]): StorageContext {
  // From the catalog rows: typo detection knows every built-in's keys without loading the built-ins.
  builtinKeys ??= {
    mailbox: [...new Set(BUILTIN_ROWS.flatMap((r) => r.storage?.mailbox ?? []))],
    message: [...new Set(BUILTIN_ROWS.flatMap((r) => r.storage?.message ?? []))],
    server: [...new Set(BUILTIN_ROWS.flatMap((r) => r.storage?.server ?? []))],
  };
  const builtin = builtinKeys;
  // The built-ins' keys are the same for every server: worked out once, on first use.
  const keys = (pick: (e: Extension) => readonly StoreField[] | undefined): string[] => {
    const which = pick === pickMailbox ? builtin.mailbox : pick === pickMessage ? builtin.message : builtin.server;
    return custom.length === 0 ? which : [...new Set([...which, ...fieldKeys(custom, pick)])];
  };
  const validators = (pick: (e: Extension) => readonly StoreField[] | undefined): Map<string, FieldValidator> => {
    const out = new Map<string, FieldValidator>();
    for (const e of loaded) for (const f of pick(e) ?? []) if (f.validate) out.set(f.key, (v, report) => f.validate!(v, report));
    return out;
  };
  return {
    mailboxKeys: [...(base.mailboxKeys ?? []), ...keys(pickMailbox)],
    messageKeys: [...(base.messageKeys ?? []), ...keys(pickMessage)],
    namespaceKeys: [...(base.namespaceKeys ?? []), ...keys(pickServer)],
    mailboxFields: validators(pickMailbox),
    messageFields: validators(pickMessage),
    namespaceFields: validators(pickServer),
  };
}

type FieldPick = (e: Extension) => readonly StoreField[] | undefined;
const pickMailbox: FieldPick = (e) => e.storage?.mailbox;
const pickMessage: FieldPick = (e) => e.storage?.message;
const pickServer: FieldPick = (e) => e.storage?.server;
let builtinKeys: { mailbox: string[]; message: string[]; server: string[] } | null = null;

/** The storage keys `extensions` declare at one level, without duplicates. */
function fieldKeys(extensions: readonly Extension[], pick: FieldPick): string[] {
  return [...new Set(extensions.flatMap((e) => (pick(e) ?? []).map((f) => f.key)))];
}

export type Limits = { [K in (typeof LIMIT_KEYS)[number]]: number };

function resolveLimits(problems: Problems, options: Record<string, unknown>): Limits {
  const limits = {} as Limits;
  for (const key of LIMIT_KEYS) {
    // Timeouts may be 0 (off); counts and sizes need at least 1.
    const min = key.endsWith('Timeout') ? 0 : 1;
    limits[key] = optional(options[key], DEFAULTS[key], (v) => integerAtLeast(problems, v, key, min));
  }
  return limits;
}

/** The `script` option: an array of rules or a path to a JSON file holding one. */
function resolveScript(problems: Problems, value: unknown): ScriptRule[] {
  if (value === undefined) return [];
  let rules: unknown = value;
  if (typeof value === 'string') {
    try {
      rules = JSON.parse(readFileSync(value, 'utf8'));
    } catch (err) {
      problems.add('script', `cannot read script file ${JSON.stringify(value)}: ${(err as Error).message}`);
      return [];
    }
  }
  // One rule on its own is a one-rule script: a file holding `{ "on": ... }` is what people write first.
  if (isPlainObject(rules)) rules = [rules];
  if (!Array.isArray(rules)) {
    const what = typeof value === 'string' ? `script file ${JSON.stringify(value)}` : 'script';
    problems.add('script', `${what}: expected a rule object or an array of rules, got ${describeValue(rules)}`);
    return [];
  }
  try {
    return validateRules(rules);
  } catch (err) {
    if (!isServiceError(err)) throw err;
    problems.add('script', err.message);
    return [];
  }
}

/** The `defects` option: names from the defects library, as their rules. */
function resolveDefects(problems: Problems, value: unknown): ScriptRule[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.expected('defects', 'an array of defect names', value);
    return [];
  }
  const rules: ScriptRule[] = [];
  value.forEach((name, i) => {
    const defect = typeof name === 'string' ? defectNamed(name) : undefined;
    if (defect) {
      rules.push(...validateRules(defect.rules));
      return;
    }
    const hint = typeof name === 'string' ? suggestKey(name, defectNames()) : undefined;
    problems.add(indexPath('defects', i), `no defect ${describeValue(name)}${hint ? `; did you mean ${JSON.stringify(hint)}?` : `; defects: ${defectNames().join(', ')}`}`);
  });
  return rules;
}

/** `fallback` when `value` is undefined, else `check(value)` (undefined when invalid, then `fallback`). */
function optional<T>(value: unknown, fallback: T, check: (value: unknown) => T | undefined): T {
  if (value === undefined) return fallback;
  return check(value) ?? fallback;
}

function portNumber(problems: Problems, value: unknown, path: string): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 65535) return value;
  problems.expected(path, 'an integer from 0 to 65535', value);
  return undefined;
}

function booleanValue(problems: Problems, value: unknown, path: string): boolean | undefined {
  if (typeof value === 'boolean') return value;
  return problems.expected(path, 'a boolean', value);
}

function nonEmptyString(problems: Problems, value: unknown, path: string): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  problems.expected(path, 'a non-empty string', value);
  return undefined;
}

function integerAtLeast(problems: Problems, value: unknown, path: string, min: number): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min) return value;
  problems.expected(path, min === 0 ? 'a non-negative integer' : 'a positive integer', value);
  return undefined;
}

function clockValue(value: unknown): number | null {
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isNaN(ms) ? null : ms;
  }
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function resolveClock(problems: Problems, value: unknown): () => number {
  if (value === undefined) return Date.now;
  if (typeof value === 'function') {
    const fn = value as () => unknown;
    return () => {
      const result: unknown = fn();
      const ms = clockValue(result);
      if (ms === null) {
        throw new ServiceError(
          'INVALID',
          `now: the clock function must return a valid Date or a finite number, got ${describeValue(result)}`,
        );
      }
      return ms;
    };
  }
  const ms = clockValue(value);
  if (ms === null) {
    problems.expected('now', 'a valid Date, a finite number of epoch milliseconds or a function returning one', value);
    return Date.now;
  }
  return () => ms;
}

const DEFAULT_USERS: ReadonlyArray<readonly [string, UserRecord]> = [
  ['testuser', { password: 'testpass', xoauth2: { accessToken: 'testtoken', sessionTimeout: null } }],
];

function resolveUsers(problems: Problems, value: unknown): Map<string, UserRecord> {
  const users = new Map<string, UserRecord>();
  if (value === undefined) {
    for (const [name, record] of DEFAULT_USERS) {
      users.set(name, { password: record.password, xoauth2: record.xoauth2 && { ...record.xoauth2 } });
    }
    return users;
  }
  if (!isPlainObject(value)) {
    problems.expected('users', 'an object of users by name', value);
    return users;
  }
  for (const name of Object.keys(value)) {
    const path = childPath('users', name);
    const entry = value[name];
    if (entry === undefined) continue;
    if (name === '') {
      problems.add(path, 'a user name must not be empty');
      continue;
    }
    const record = resolveUser(problems, entry, path);
    if (record) users.set(name, record);
  }
  return users;
}

function resolveUser(problems: Problems, value: unknown, path: string): UserRecord | null {
  if (!isPlainObject(value)) {
    problems.expected(path, 'an object ({password, xoauth2})', value);
    return null;
  }
  checkTypos(value, USER_SET, USER_KEYS, path, problems);
  let password: string | null = null;
  if (value.password !== undefined && value.password !== null) {
    if (typeof value.password === 'string') password = value.password;
    else problems.expected(childPath(path, 'password'), 'a string', value.password);
  }
  let xoauth2: UserRecord['xoauth2'] = null;
  const x = value.xoauth2;
  if (x !== undefined && x !== null) {
    const xPath = childPath(path, 'xoauth2');
    if (!isPlainObject(x)) {
      problems.expected(xPath, 'an object ({accessToken, sessionTimeout}) or null', x);
    } else {
      checkTypos(x, XOAUTH2_SET, XOAUTH2_KEYS, xPath, problems);
      const accessToken = nonEmptyString(problems, x.accessToken, childPath(xPath, 'accessToken'));
      let sessionTimeout: number | null = null;
      if (x.sessionTimeout !== undefined && x.sessionTimeout !== null) {
        sessionTimeout =
          integerAtLeast(problems, x.sessionTimeout, childPath(xPath, 'sessionTimeout'), 0) ?? null;
      }
      if (accessToken !== undefined) xoauth2 = { accessToken, sessionTimeout };
    }
  }
  const hide = resolveCapabilities(problems, value.capabilities, childPath(path, 'capabilities'));
  return hide.length > 0 ? { password, xoauth2, hide } : { password, xoauth2 };
}

function resolveRest(problems: Problems, value: unknown): ResolvedOptions['rest'] {
  if (value === undefined) return null;
  if (!isPlainObject(value)) {
    problems.expected('rest', 'an object ({port, host, token, pingInterval})', value);
    return null;
  }
  checkTypos(value, REST_SET, REST_KEYS, 'rest', problems);
  const port = value.port === undefined ? undefined : portNumber(problems, value.port, 'rest.port');
  const host = optional(value.host, DEFAULTS.host, (v) => nonEmptyString(problems, v, 'rest.host'));
  // An empty token is kept: start() refuses it with the reason, as the spec asks.
  const token =
    value.token === undefined || value.token === null
      ? null
      : typeof value.token === 'string'
        ? value.token
        : (problems.expected('rest.token', 'a string', value.token) ?? null);
  const pingInterval = optional(value.pingInterval, DEFAULTS.restPingInterval, (v) => integerAtLeast(problems, v, 'rest.pingInterval', 1));
  const maxEventStreams = optional(value.maxEventStreams, DEFAULTS.restMaxEventStreams, (v) => integerAtLeast(problems, v, 'rest.maxEventStreams', 1));
  const maxStreamBuffer = optional(value.maxStreamBuffer, DEFAULTS.restMaxStreamBuffer, (v) => integerAtLeast(problems, v, 'rest.maxStreamBuffer', 1));
  const maxConnections = optional(value.maxConnections, DEFAULTS.restMaxConnections, (v) => integerAtLeast(problems, v, 'rest.maxConnections', 1));
  // Timeouts may be 0 (off), as Node's own are.
  const requestTimeout = optional(value.requestTimeout, DEFAULTS.restRequestTimeout, (v) => integerAtLeast(problems, v, 'rest.requestTimeout', 0));
  const headersTimeout = optional(value.headersTimeout, Math.min(DEFAULTS.restHeadersTimeout, requestTimeout || Infinity), (v) =>
    integerAtLeast(problems, v, 'rest.headersTimeout', 1),
  );
  // Node refuses a headers timeout longer than the request timeout: say so in the option's words.
  if (requestTimeout > 0 && headersTimeout > requestTimeout) {
    problems.add('rest.headersTimeout', `must not be longer than rest.requestTimeout (${requestTimeout}), got ${headersTimeout}`);
  }
  const bodyTimeout = optional(value.bodyTimeout, DEFAULTS.restBodyTimeout, (v) => integerAtLeast(problems, v, 'rest.bodyTimeout', 0));
  const maxBodyBytesInFlight = optional(value.maxBodyBytesInFlight, DEFAULTS.restMaxBodyBytesInFlight, (v) =>
    integerAtLeast(problems, v, 'rest.maxBodyBytesInFlight', 1),
  );
  return port === undefined
    ? null
    : { port, host, token, pingInterval, maxEventStreams, maxStreamBuffer, maxConnections, headersTimeout, requestTimeout, bodyTimeout, maxBodyBytesInFlight };
}

/**
 * The `pop3` option: the POP3 listener (RFC 1939). Like `smtp`, it is on
 * only when a port is given, so a config file can carry the other keys
 * without starting a listener. docs/pop3.md describes every key.
 */
import { checkTypos, childPath, isPlainObject, type Problems } from './problems.js';
import type { Pop3Behaviour, ResolvedPop3 } from './types.js';

export const POP3_KEYS = ['port', 'host', 'secure', 'stls', 'apop', 'expire', 'expireUsers', 'loginDelay', 'loginDelayUsers', 'exclusive', 'idleTimeout', 'maxLineLength', 'behaviour'] as const;
const POP3_SET = new Set<string>(POP3_KEYS);
const BEHAVIOUR_KEYS = ['userPrefixes', 'deleteAction', 'archiveMailbox'] as const;
const BEHAVIOUR_SET = new Set<string>(BEHAVIOUR_KEYS);
const DELETE_ACTIONS = ['delete', 'keep', 'read', 'archive'] as const;

/** RFC 1939 §3: an autologout timer, if any, "MUST be of at least 10 minutes". */
export const POP3_MIN_AUTOLOGOUT = 10 * 60_000;

/**
 * RFC 2449 §4 limits a command line to 255 octets, but an AUTH initial
 * response with an OAuth token is longer than that in practice; the
 * default is lenient and documented.
 */
export const DEFAULT_POP3_LINE = 8192;

export const DEFAULT_BEHAVIOUR: Readonly<Required<Omit<Pop3Behaviour, 'archiveMailbox'>>> & { archiveMailbox: string } = Object.freeze({
  userPrefixes: [],
  deleteAction: 'delete',
  archiveMailbox: 'Archive',
});

export function resolvePop3(problems: Problems, value: unknown, defaultHost: string): ResolvedPop3 | null {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) {
    problems.expected('pop3', 'an object ({port, host, secure, stls, ...})', value);
    return null;
  }
  checkTypos(value, POP3_SET, POP3_KEYS, 'pop3', problems);
  const bool = (key: 'secure' | 'stls' | 'apop' | 'exclusive', fallback: boolean): boolean => {
    const v = value[key];
    if (v === undefined) return fallback;
    if (typeof v === 'boolean') return v;
    problems.expected(`pop3.${key}`, 'a boolean', v);
    return fallback;
  };
  const int = (key: 'loginDelay' | 'idleTimeout' | 'maxLineLength', fallback: number, min: number): number => {
    const v = value[key];
    if (v === undefined) return fallback;
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= min) return v;
    problems.expected(`pop3.${key}`, `an integer >= ${min}`, v);
    return fallback;
  };
  let port: number | undefined;
  if (value.port !== undefined) {
    const p = value.port;
    if (typeof p === 'number' && Number.isInteger(p) && p >= 0 && p <= 65535) port = p;
    else problems.expected('pop3.port', 'an integer from 0 to 65535', p);
  }
  let host = defaultHost;
  if (value.host !== undefined) {
    if (typeof value.host === 'string' && value.host !== '') host = value.host;
    else problems.expected('pop3.host', 'a non-empty string', value.host);
  }
  const secure = bool('secure', false);
  const stls = bool('stls', false);
  if (secure && stls) problems.add('pop3.stls', 'cannot go with pop3.secure: the port speaks TLS from the first byte, so there is nothing to upgrade (choose one)');
  const expireOf = (e: unknown, path: string): number | 'NEVER' | undefined => {
    if (e === 'NEVER' || (typeof e === 'number' && Number.isSafeInteger(e) && e >= 0)) return e;
    problems.expected(path, '"NEVER" or a number of days >= 0 (RFC 2449 EXPIRE)', e);
    return undefined;
  };
  const expire = value.expire === undefined ? 'NEVER' : (expireOf(value.expire, 'pop3.expire') ?? 'NEVER');
  const delayOf = (d: unknown, path: string): number | undefined => {
    if (typeof d === 'number' && Number.isSafeInteger(d) && d >= 0) return d;
    problems.expected(path, 'an integer >= 0 (seconds)', d);
    return undefined;
  };
  const expireUsers = perUser(problems, value.expireUsers, 'pop3.expireUsers', expireOf);
  const loginDelayUsers = perUser(problems, value.loginDelayUsers, 'pop3.loginDelayUsers', delayOf);
  const resolved: ResolvedPop3 = {
    port: port ?? 0,
    host,
    secure,
    stls,
    apop: bool('apop', true),
    expire,
    expireUsers,
    loginDelay: int('loginDelay', 0, 0),
    loginDelayUsers,
    exclusive: bool('exclusive', false),
    idleTimeout: int('idleTimeout', POP3_MIN_AUTOLOGOUT, 0),
    // CRLF included; 255 is RFC 2449's own limit, below it a client's ordinary commands would fail.
    maxLineLength: int('maxLineLength', DEFAULT_POP3_LINE, 255),
    behaviour: resolveBehaviour(problems, value.behaviour),
  };
  return port === undefined ? null : resolved;
}

/** A value per user name (`{ alice: 30 }`), kept in a Map: user names are input, never object keys. */
function perUser<T>(problems: Problems, value: unknown, path: string, check: (v: unknown, path: string) => T | undefined): Map<string, T> {
  const out = new Map<string, T>();
  if (value === undefined) return out;
  if (!isPlainObject(value)) {
    problems.expected(path, 'an object of values by user name', value);
    return out;
  }
  for (const [user, v] of Object.entries(value)) {
    const checked = check(v, childPath(path, user));
    if (checked !== undefined) out.set(user, checked);
  }
  return out;
}

function resolveBehaviour(problems: Problems, value: unknown): ResolvedPop3['behaviour'] {
  if (value === undefined) return DEFAULT_BEHAVIOUR;
  if (!isPlainObject(value)) {
    problems.expected('pop3.behaviour', `an object ({${BEHAVIOUR_KEYS.join(', ')}})`, value);
    return DEFAULT_BEHAVIOUR;
  }
  checkTypos(value, BEHAVIOUR_SET, BEHAVIOUR_KEYS, 'pop3.behaviour', problems);
  const out = { ...DEFAULT_BEHAVIOUR, userPrefixes: [...DEFAULT_BEHAVIOUR.userPrefixes] };
  if (value.userPrefixes !== undefined) {
    const p = value.userPrefixes;
    if (Array.isArray(p) && p.every((x) => typeof x === 'string' && x !== '')) out.userPrefixes = [...(p as string[])];
    else problems.expected('pop3.behaviour.userPrefixes', 'an array of non-empty strings (["recent:"])', p);
  }
  if (value.deleteAction !== undefined) {
    const d = value.deleteAction;
    if (typeof d === 'string' && (DELETE_ACTIONS as readonly string[]).includes(d)) out.deleteAction = d as (typeof DELETE_ACTIONS)[number];
    else problems.expected('pop3.behaviour.deleteAction', `one of ${DELETE_ACTIONS.join(', ')}`, d);
  }
  if (value.archiveMailbox !== undefined) {
    const a = value.archiveMailbox;
    if (typeof a === 'string' && a !== '' && !/[\r\n\0]/.test(a)) out.archiveMailbox = a;
    else problems.expected('pop3.behaviour.archiveMailbox', 'a mailbox name', a);
  }
  return Object.freeze(out);
}

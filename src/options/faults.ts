/**
 * The options of issue 14: transport faults every session starts with
 * (`faults`), server-clock timers (`autologout`, `maxIdle`, `byeAt`) and
 * throttling (`maxConnectionsPerUser`, `rateLimits`). Problems name the
 * option path.
 */
import { FAULT_OPTION_KEYS, NO_FAULTS, type ResolvedFaults } from '../script/transport.js';
import { DEFAULT_AUTOLOGOUT_TEXT, DEFAULT_BYE_AT_TEXT, DEFAULT_MAX_IDLE_TEXT, type AutologoutLimits, type ResolvedTimers } from '../imap/timers.js';
import { resolveThrottling, type ResolvedThrottling } from '../session/limits.js';
import { isPlainObject, type Problems } from './problems.js';

export const FAULT_TOP_LEVEL_KEYS = ['faults', 'autologout', 'maxIdle', 'byeAt', 'maxConnectionsPerUser', 'rateLimits'] as const;

const MAX_TIMER = 2_147_483_647;
const AUTOLOGOUT_KEYS = ['notAuthenticated', 'authenticated', 'selected', 'idle', 'text'] as const;

const isMs = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_TIMER;
const isText = (v: unknown): v is string => typeof v === 'string' && v !== '' && !/[\r\n\0]/.test(v);

function unknownKeys(problems: Problems, value: Record<string, unknown>, known: readonly string[], path: string): void {
  for (const key of Object.keys(value)) if (!known.includes(key)) problems.add(`${path}.${key}`, `unknown key; known keys: ${known.join(', ')}`);
}

function text(problems: Problems, v: unknown, path: string, fallback: string): string {
  if (v === undefined) return fallback;
  if (isText(v)) return v;
  problems.expected(path, 'a non-empty single-line string', v);
  return fallback;
}

function resolveFaults(problems: Problems, v: unknown): ResolvedFaults {
  if (v === undefined) return NO_FAULTS;
  if (!isPlainObject(v)) {
    problems.expected('faults', `an object (${FAULT_OPTION_KEYS.join(', ')})`, v);
    return NO_FAULTS;
  }
  unknownKeys(problems, v, FAULT_OPTION_KEYS, 'faults');
  const out = { ...NO_FAULTS };
  if (v.bandwidth !== undefined) {
    if (typeof v.bandwidth === 'number' && Number.isSafeInteger(v.bandwidth) && v.bandwidth >= 0) out.bandwidth = v.bandwidth;
    else problems.expected('faults.bandwidth', 'an integer >= 0 (bytes per second; 0: no cap)', v.bandwidth);
  }
  if (v.slowClose !== undefined) {
    if (isMs(v.slowClose)) out.slowClose = v.slowClose;
    else problems.expected('faults.slowClose', `an integer from 0 to ${MAX_TIMER} (milliseconds)`, v.slowClose);
  }
  for (const key of ['tlsFailure', 'stripStartTls'] as const) {
    if (v[key] === undefined) continue;
    if (typeof v[key] === 'boolean') out[key] = v[key];
    else problems.expected(`faults.${key}`, 'a boolean', v[key]);
  }
  return out;
}

function resolveAutologout(problems: Problems, v: unknown): AutologoutLimits | null {
  if (v === undefined || v === 0) return null;
  if (isMs(v)) return { notAuthenticated: v, authenticated: v, selected: v, idle: 0, text: DEFAULT_AUTOLOGOUT_TEXT };
  if (!isPlainObject(v)) {
    problems.expected('autologout', `milliseconds (an integer from 0 to ${MAX_TIMER}) or {${AUTOLOGOUT_KEYS.join(', ')}}`, v);
    return null;
  }
  unknownKeys(problems, v, AUTOLOGOUT_KEYS, 'autologout');
  const limits: AutologoutLimits = { notAuthenticated: 0, authenticated: 0, selected: 0, idle: 0, text: text(problems, v.text, 'autologout.text', DEFAULT_AUTOLOGOUT_TEXT) };
  for (const key of ['notAuthenticated', 'authenticated', 'selected', 'idle'] as const) {
    const ms = v[key];
    if (ms === undefined) continue;
    if (isMs(ms)) limits[key] = ms;
    else problems.expected(`autologout.${key}`, `an integer from 0 to ${MAX_TIMER} (milliseconds)`, ms);
  }
  return limits;
}

function resolveMaxIdle(problems: Problems, v: unknown): ResolvedTimers['maxIdle'] {
  if (v === undefined || v === 0) return null;
  if (isMs(v)) return { ms: v, text: DEFAULT_MAX_IDLE_TEXT };
  if (!isPlainObject(v)) {
    problems.expected('maxIdle', `milliseconds or {ms, text?}`, v);
    return null;
  }
  unknownKeys(problems, v, ['ms', 'text'], 'maxIdle');
  if (!isMs(v.ms) || v.ms === 0) {
    problems.expected('maxIdle.ms', `an integer from 1 to ${MAX_TIMER} (milliseconds)`, v.ms);
    return null;
  }
  return { ms: v.ms, text: text(problems, v.text, 'maxIdle.text', DEFAULT_MAX_IDLE_TEXT) };
}

/** A server-clock time: a Date, epoch ms, or an ISO 8601 string with its zone. */
function clockTime(v: unknown): number | null {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.getTime();
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(v)) {
    const t = Date.parse(v);
    return Number.isNaN(t) ? null : t;
  }
  return null;
}

function resolveByeAt(problems: Problems, v: unknown): ResolvedTimers['byeAt'] {
  if (v === undefined) return null;
  const direct = clockTime(v);
  if (direct !== null) return { at: direct, text: DEFAULT_BYE_AT_TEXT };
  if (!isPlainObject(v)) {
    problems.expected('byeAt', 'a server-clock time (Date, epoch ms, ISO 8601 with zone) or {at, text?}', v);
    return null;
  }
  unknownKeys(problems, v, ['at', 'text'], 'byeAt');
  const at = clockTime(v.at);
  if (at === null) {
    problems.expected('byeAt.at', 'a Date, epoch milliseconds or an ISO 8601 time with its zone ("2030-01-01T12:00:00Z")', v.at);
    return null;
  }
  return { at, text: text(problems, v.text, 'byeAt.text', DEFAULT_BYE_AT_TEXT) };
}

export interface ResolvedFaultOptions {
  faults: ResolvedFaults;
  timers: ResolvedTimers;
  throttling: ResolvedThrottling;
}

export function resolveFaultOptions(problems: Problems, options: Record<string, unknown>): ResolvedFaultOptions {
  const timers: ResolvedTimers = {
    autologout: resolveAutologout(problems, options.autologout),
    maxIdle: resolveMaxIdle(problems, options.maxIdle),
    byeAt: resolveByeAt(problems, options.byeAt),
  };
  return {
    faults: resolveFaults(problems, options.faults),
    timers,
    throttling: resolveThrottling(options.maxConnectionsPerUser, options.rateLimits, (path, message) => problems.add(path, message)),
  };
}

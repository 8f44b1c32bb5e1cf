/**
 * Validation of script rules when they are added: an unknown field, a wrong
 * type or a contradictory combination is a ServiceError('INVALID') naming
 * the field.
 */
import { ServiceError } from '../errors.js';
import { SCRIPT_EVENTS, type ScriptOn, type ScriptRule } from './rule.js';

type Check = (value: unknown) => string | null;

const str: Check = (v) => (typeof v === 'string' ? null : 'a string');
const strOrRegExp: Check = (v) => (typeof v === 'string' || v instanceof RegExp ? null : 'a string or RegExp');
const bool: Check = (v) => (typeof v === 'boolean' ? null : 'a boolean');
const fn: Check = (v) => (typeof v === 'function' ? null : 'a function');
const intAtLeast =
  (min: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= min ? null : `an integer >= ${min}`;
/** Longest timer Node can run (2^31 - 1 ms, about 24.8 days); a longer one would fire after 1 ms. */
const MAX_TIMER = 2_147_483_647;
const milliseconds =
  (min: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= MAX_TIMER ? null : `an integer from ${min} to ${MAX_TIMER} (milliseconds)`;

/**
 * The known fields. Read only through `checkFor`: a rule's keys are user
 * input, and `hasOwnProperty`, `toString`, `__proto__` ... must be unknown
 * fields, not members of Object.prototype.
 */
const FIELDS: Readonly<Record<string, Check>> = {
  on: (v) => (typeof v === 'string' && (SCRIPT_EVENTS as readonly string[]).includes(v) ? null : `one of ${SCRIPT_EVENTS.join(', ')}`),
  command: str,
  tag: strOrRegExp,
  session: intAtLeast(1),
  state: str,
  user: str,
  mailbox: str,
  match: (v) => {
    if (v instanceof RegExp) return null;
    if (typeof v !== 'string') return 'a regular expression (string or RegExp)';
    try {
      new RegExp(v);
      return null;
    } catch {
      return 'a valid regular expression';
    }
  },
  nth: intAtLeast(1),
  times: intAtLeast(1),
  chance: (v) => (typeof v === 'number' && v >= 0 && v <= 1 ? null : 'a number from 0 to 1'),
  quietFor: milliseconds(1),
  send: (v) => (typeof v === 'string' || typeof v === 'function' ? null : 'a string'),
  run: bool,
  drop: bool,
  delay: milliseconds(0),
  chunk: intAtLeast(1),
  chunkDelay: (v) => (v === 'tick' || milliseconds(0)(v) === null ? null : `an integer from 0 to ${MAX_TIMER} (milliseconds) or "tick"`),
  truncate: intAtLeast(0),
  close: (v) => (v === true || v === false || v === 'reset' ? null : 'true, false or "reset"'),
  before: str,
  after: str,
  when: fn,
};

const KNOWN = new Map<string, Check>(Object.entries(FIELDS));

function invalid(where: string, field: string, message: string): ServiceError {
  return new ServiceError('INVALID', `${where}${field}: ${message}`);
}

/** Validates one rule; returns a shallow copy. `where` prefixes messages (`script[2].`). */
export function validateRule(value: unknown, where = ''): ScriptRule {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ServiceError('INVALID', `${where || 'rule'}: expected an object`);
  }
  const rule = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(rule)) {
    const check = KNOWN.get(key);
    if (!check) throw invalid(where, key, `unknown field; known fields: ${[...KNOWN.keys()].join(', ')}`);
    if (v === undefined) continue;
    const expected = check(v);
    if (expected) throw invalid(where, key, `expected ${expected}`);
  }
  if (!Object.hasOwn(rule, 'on') || rule.on === undefined) throw invalid(where, 'on', 'required');
  const on = rule.on as ScriptOn;
  const has = (k: string): boolean => Object.hasOwn(rule, k) && rule[k] !== undefined;
  if (rule.drop === true) {
    for (const k of ['send', 'run', 'before', 'after', 'truncate']) {
      if (has(k)) throw invalid(where, k, 'cannot be combined with drop');
    }
  }
  if (has('truncate') && !has('send') && !has('before') && !has('after') && rule.run !== true && on !== 'response' && on !== 'greeting') {
    throw invalid(where, 'truncate', 'needs something to send (send, before, after or run)');
  }
  if (has('truncate') && on === 'quiet' && !has('send')) throw invalid(where, 'truncate', 'needs send');
  if (rule.run === true && !(on === 'command' || on === 'input' || on === 'greeting' || on === 'response')) {
    throw invalid(where, 'run', `not meaningful for on: ${on}`);
  }
  if (on === 'quiet') {
    if (!has('quietFor')) throw invalid(where, 'quietFor', 'required for on: quiet');
    if (has('run')) throw invalid(where, 'run', 'not meaningful for on: quiet');
  } else if (has('quietFor')) {
    throw invalid(where, 'quietFor', 'only for on: quiet');
  }
  if (has('chunkDelay') && !has('chunk')) throw invalid(where, 'chunkDelay', 'needs chunk');
  if (on === 'greeting' || on === 'quiet') {
    for (const k of ['command', 'tag']) if (has(k) && on === 'greeting') throw invalid(where, k, 'no command at greeting');
  }
  return { ...(rule as unknown as ScriptRule) };
}

/** Validates a rule or an array of rules; all or nothing. */
export function validateRules(value: unknown, where = ''): ScriptRule[] {
  if (Array.isArray(value)) return value.map((r, i) => validateRule(r, `${where}[${i}].`));
  return [validateRule(value, where)];
}

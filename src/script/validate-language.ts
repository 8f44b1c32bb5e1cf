/**
 * Checks of the rule-language fields of issue 14 part 1 (`untagged`,
 * `mutate`, `literals`, `defer`, `seedScope`) beyond their types: where
 * each is meaningful, what it cannot be combined with, and every `mutate`
 * op, each problem named by its field (`mutate[1].value`).
 */
import type { ScriptOn } from './rule.js';

export interface LanguageProblem {
  field: string;
  message: string;
}

/** The verbs of a mutate op and the fields each may carry besides its verb. */
const VERBS: ReadonlyMap<string, readonly string[]> = new Map([
  ['set', ['value', 'at']],
  ['add', ['value', 'at']],
  ['drop', ['at']],
  ['order', []],
  ['literal', ['at']],
  ['quoted', ['at']],
  ['unescaped', ['at']],
  ['unquote', ['at']],
  ['suffix', ['text', 'at']],
  ['replace', ['with']],
]);

const MAX_OPS = 64;
const MAX_DEPTH = 16;

/** Why `value` is not a mutate value, or null. */
function valueProblem(value: unknown, depth = 0): string | null {
  if (depth > MAX_DEPTH) return `nested deeper than ${MAX_DEPTH} lists`;
  if (value === null || typeof value === 'string') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'a finite number';
  if (Array.isArray(value)) {
    for (const v of value) {
      const p = valueProblem(v, depth + 1);
      if (p) return p;
    }
    return null;
  }
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    const key = keys[0];
    if (keys.length === 1 && (key === 'atom' || key === 'literal' || key === 'quoted') && typeof (value as Record<string, unknown>)[key] === 'string') return null;
  }
  return 'a number, null, a string, a list, or { atom | literal | quoted: string }';
}

/** Checks the ops of a JSON `mutate`. */
function opsProblem(ops: readonly unknown[]): LanguageProblem | null {
  if (ops.length > MAX_OPS) return { field: 'mutate', message: `at most ${MAX_OPS} ops` };
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    const at = `mutate[${i}]`;
    if (typeof op !== 'object' || op === null || Array.isArray(op)) return { field: at, message: `expected an object with one of ${[...VERBS.keys()].join(', ')}` };
    const record = op as Record<string, unknown>;
    const verbs = Object.keys(record).filter((k) => VERBS.has(k));
    if (verbs.length !== 1) return { field: at, message: `expected exactly one of ${[...VERBS.keys()].join(', ')}${verbs.length ? `, got ${verbs.join(' and ')}` : ''}` };
    const verb = verbs[0]!;
    const allowed = VERBS.get(verb)!;
    for (const key of Object.keys(record)) {
      if (key !== verb && !allowed.includes(key)) return { field: `${at}.${key}`, message: `not a field of a ${verb} op (its fields: ${[verb, ...allowed].join(', ')})` };
    }
    const target = record[verb];
    if (verb === 'order') {
      if (!Array.isArray(target) || target.length === 0 || !target.every((n) => typeof n === 'string')) return { field: `${at}.order`, message: 'expected a non-empty list of item names' };
    } else if (verb === 'replace') {
      if (typeof target !== 'string') return { field: `${at}.replace`, message: 'expected a regular expression (string)' };
      try {
        new RegExp(target, 'g');
      } catch {
        return { field: `${at}.replace`, message: 'expected a valid regular expression' };
      }
      if (typeof record.with !== 'string') return { field: `${at}.with`, message: 'required: the replacement text ($1 for a group)' };
    } else if (typeof target !== 'string' || target.length === 0) {
      return { field: `${at}.${verb}`, message: 'expected an item name (FETCH/STATUS item, response code, "text", "EXISTS", ..., or "*")' };
    }
    if (verb === 'set') {
      if (!Object.hasOwn(record, 'value')) return { field: `${at}.value`, message: 'required for set' };
      const p = valueProblem(record.value);
      if (p) return { field: `${at}.value`, message: `expected ${p}` };
    }
    if (verb === 'add' && !(typeof record.value === 'number' && Number.isSafeInteger(record.value))) return { field: `${at}.value`, message: 'expected an integer (may be negative)' };
    if (verb === 'suffix' && typeof record.text !== 'string') return { field: `${at}.text`, message: 'required: the bytes to send after the item (latin1)' };
    if (record.at !== undefined && !(Array.isArray(record.at) && record.at.length <= MAX_DEPTH && record.at.every((n) => Number.isSafeInteger(n) && (n as number) >= 0))) {
      return { field: `${at}.at`, message: 'expected a list of list indexes (integers >= 0)' };
    }
  }
  return null;
}

/** The events each new field means something for. */
const WHERE: ReadonlyMap<string, readonly ScriptOn[]> = new Map([
  ['untagged', ['response', 'command']],
  ['mutate', ['response', 'command', 'continuation']],
  ['literals', ['response', 'command']],
  ['defer', ['response', 'command']],
]);

/** The rule-language problem of `rule` (fields already type-checked), or null. */
export function checkRuleLanguage(rule: Record<string, unknown>, on: ScriptOn): LanguageProblem | null {
  const has = (k: string): boolean => Object.hasOwn(rule, k) && rule[k] !== undefined;
  for (const [field, events] of WHERE) {
    if (has(field) && !events.includes(on)) return { field, message: `not meaningful for on: ${on} (only for on: ${events.join(', ')})` };
  }
  if (on === 'command' && has('untagged') && !has('mutate') && rule.literals !== true && !has('defer')) {
    return { field: 'untagged', message: 'on a command rule it picks the responses mutate, literals or defer act on: give one of them' };
  }
  if (has('seedScope') && !has('chance')) return { field: 'seedScope', message: 'needs chance (it picks the stream chance draws from)' };
  const shaping = has('mutate') || rule.literals === true || has('defer');
  if (shaping) {
    const field = has('mutate') ? 'mutate' : rule.literals === true ? 'literals' : 'defer';
    if (rule.drop === true) return { field, message: 'cannot be combined with drop' };
    if (has('send') && !(on === 'command' && rule.run === true)) return { field, message: 'cannot be combined with send (send replaces the response)' };
  }
  if (has('defer')) {
    // Held bytes go out later as they are; shaping them on the way would need a second timeline.
    for (const k of ['send', 'drop', 'before', 'after', 'delay', 'chunk', 'truncate', 'close']) {
      if (has(k) && rule[k] !== false && !(k === 'send' && on === 'command')) return { field: k, message: 'cannot be combined with defer' };
    }
  }
  if (Array.isArray(rule.mutate)) return opsProblem(rule.mutate);
  return null;
}

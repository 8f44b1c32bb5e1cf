/**
 * Field conditions on event data, shared by `server.waitFor` and
 * GET /v1/events/wait: `field=value` where `field` is a dotted path into the
 * event's data (`session.user`) and `value` is compared as text with the
 * value there (`null`, `true`, numbers as written). A field holding an array
 * matches when one of its elements does (`uids=4`).
 */
import { ServiceError } from './errors.js';
import { suggestKey } from './options/typos.js';

export interface FieldCondition {
  path: readonly string[];
  value: string;
}

/** The data fields of the spec's event types (and `delivery`): what a condition may name first (`user`: with userMailboxes). */
export const EVENT_FIELDS: ReadonlyMap<string, readonly string[]> = new Map([
  ['session', ['type', 'session', 'command']],
  ['command', ['session', 'tag', 'command', 'status', 'user']],
  ['mailbox', ['type', 'path', 'oldPath', 'origin', 'user']],
  ['expunge', ['path', 'uids', 'origin', 'user']],
  ['flags', ['path', 'messages', 'origin', 'user']],
  ['acl', ['path', 'user']],
  ['script', ['rule', 'event', 'session', 'tag', 'command']],
  ['reset', []],
  ['delivery', ['from', 'to', 'mailbox', 'uid', 'user']],
  ['replay', ['type', 'session', 'recorded', 'expected', 'received']],
  ['append', ['path', 'uids', 'origin', 'user']],
  ['mark', ['text', 'phase', 'outcome']],
  ['verdict', ['session', 'listener', 'cases', 'verdict', 'evidence', 'text', 'at']],
]);

const FIELD = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;

/**
 * Parses `field=value,field=value` texts (each `match` parameter). A comma
 * splits only where a new `field=` follows, so values may hold commas. The
 * first segment of each field must be a field of one of `types` when all of
 * them are known types (a typo would otherwise wait until the timeout).
 */
export function parseConditions(texts: readonly string[], types: readonly string[]): FieldCondition[] {
  const out: FieldCondition[] = [];
  for (const text of texts) {
    for (const part of text.split(/,(?=[A-Za-z_$][\w$.]*=)/)) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      if (eq <= 0) throw new ServiceError('INVALID', `match: expected field=value, got ${JSON.stringify(part)}`);
      out.push(condition(part.slice(0, eq), part.slice(eq + 1), types));
    }
  }
  return out;
}

/** Conditions from an in-process object `{ 'session.user': 'alice', path: 'INBOX' }`. */
export function conditionsOf(fields: Readonly<Record<string, string | number | boolean | null>>, types: readonly string[]): FieldCondition[] {
  return Object.entries(fields).map(([field, value]) => condition(field, value === null ? 'null' : String(value), types));
}

function condition(field: string, value: string, types: readonly string[]): FieldCondition {
  if (!FIELD.test(field)) throw new ServiceError('INVALID', `match: ${JSON.stringify(field)} is not a field name (names and dots: session.user)`);
  const path = field.split('.');
  const known = types.map((t) => EVENT_FIELDS.get(t));
  if (types.length > 0 && known.every((k) => k !== undefined)) {
    const fields = [...new Set(known.flatMap((k) => k!))];
    if (!fields.includes(path[0]!)) {
      const hint = suggestKey(path[0]!, fields);
      const list = fields.length > 0 ? `fields of ${types.join(', ')}: ${fields.join(', ')}` : `${types.join(', ')} events have no fields`;
      throw new ServiceError('INVALID', `match: unknown field ${JSON.stringify(path[0])}${hint !== undefined ? `; did you mean ${JSON.stringify(hint)}?` : ''} (${list})`);
    }
  }
  return { path, value };
}

function same(value: unknown, wanted: string): boolean {
  if (value === null) return wanted === 'null';
  if (typeof value === 'string') return value === wanted;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value) === wanted;
  return false;
}

/** The value at `path[i..]` of `value` is `wanted`; arrays on the way match when one element does (`messages.uid=4`). */
function holds(value: unknown, path: readonly string[], i: number, wanted: string): boolean {
  if (Array.isArray(value)) return value.some((v) => holds(v, path, i, wanted));
  if (i === path.length) return same(value, wanted);
  if (value === null || typeof value !== 'object' || !Object.hasOwn(value, path[i]!)) return false;
  return holds((value as Record<string, unknown>)[path[i]!], path, i + 1, wanted);
}

/** True when every condition holds for `data`. */
export function matchesAll(data: unknown, conditions: readonly FieldCondition[]): boolean {
  return conditions.every((c) => holds(data, c.path, 0, c.value));
}

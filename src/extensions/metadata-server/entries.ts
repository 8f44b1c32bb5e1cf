/**
 * METADATA entries (RFC 5464 §3): names, values, and their stored form.
 *
 * An entry set (of the server or of one mailbox) lives in the store as the
 * value of the storage key `metadata`: a plain object of entry name to value,
 * where a value is a string (UTF-8 text) or `{ value, encoding: "base64" }`
 * for bytes that are not UTF-8 text. Snapshots write it back, reset restores
 * it, a rename moves it with the Mailbox object, a delete drops it.
 *
 * Working copies are Maps keyed by the lower-case name (entry names are
 * case-insensitive, §3.2), each holding the spelling last set and the bytes;
 * names are user input and never become keys of a plain object except
 * through `setOwn` (so `/shared/__proto__` is just a name).
 */
import { setOwn } from '../../options/problems.js';

/** One entry: the name as last set, and its value's bytes. */
export interface Entry {
  name: string;
  value: Buffer;
}

/** Entries by lower-case name, in the order they were first set. */
export type Entries = Map<string, Entry>;

/** A value in the storage option: text, or base64 bytes. */
export type StoredValue = string | { value: string; encoding: 'base64' };

/** The storage option's form of an entry set. */
export type StoredEntries = Record<string, StoredValue>;

/** Lower-case ASCII (entry names are ASCII). */
export const fold = (name: string): string => name.toLowerCase();

/**
 * Why `name` is not a valid entry name, or null when it is (RFC 5464 §3.2
 * and §5: a slash-separated path under `/private` or `/shared`, ASCII
 * without controls, `*` or `%`, no empty component, no trailing slash).
 * `root` allows the bare `/private` and `/shared` (GETMETADATA with DEPTH).
 */
export function entryNameProblem(name: string, root = false): string | null {
  if (name.length === 0) return 'an entry name must not be empty';
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return 'an entry name must be printable ASCII';
    if (c === 0x2a || c === 0x25) return 'an entry name must not contain "*" or "%"';
  }
  const lower = fold(name);
  const top = lower.startsWith('/private') ? '/private' : lower.startsWith('/shared') ? '/shared' : null;
  if (top === null || (lower.length > top.length && lower[top.length] !== '/')) {
    return 'an entry name must begin with /private/ or /shared/';
  }
  if (lower.length === top.length) return root ? null : `an entry name needs a component after ${top}`;
  if (name.includes('//')) return 'an entry name must not contain "//"';
  if (name.endsWith('/')) return 'an entry name must not end with "/"';
  return null;
}

/** True for names under `/private`. */
export const isPrivate = (name: string): boolean => fold(name).startsWith('/private');

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as text when they are UTF-8 that converts back to the same bytes, else undefined. */
export function asText(value: Buffer): string | undefined {
  try {
    return UTF8.decode(value);
  } catch {
    return undefined;
  }
}

/** The stored form of a value: text when it is UTF-8, else base64. */
export function storedValue(value: Buffer): StoredValue {
  const text = asText(value);
  return text !== undefined ? text : { value: value.toString('base64'), encoding: 'base64' };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Reads the storage option's form (already checked, or checking it:
 * `report(name, message)` is told of each problem and the entry skipped).
 */
export function readEntries(stored: unknown, report?: (name: string | null, message: string) => void): Entries {
  const out: Entries = new Map();
  if (stored === undefined || stored === null) return out;
  if (typeof stored !== 'object' || Array.isArray(stored)) {
    report?.(null, 'expected an object of entry name to value (a string, or { value, encoding: "base64" })');
    return out;
  }
  const object = stored as Record<string, unknown>;
  for (const name of Object.keys(object)) {
    const problem = entryNameProblem(name);
    if (problem) {
      report?.(name, problem);
      continue;
    }
    const v = object[name];
    let value: Buffer;
    if (typeof v === 'string') {
      value = Buffer.from(v, 'utf8');
    } else if (
      v !== null &&
      typeof v === 'object' &&
      !Array.isArray(v) &&
      (v as Record<string, unknown>).encoding === 'base64' &&
      typeof (v as Record<string, unknown>).value === 'string' &&
      Object.keys(v).every((k) => k === 'value' || k === 'encoding')
    ) {
      const text = ((v as Record<string, unknown>).value as string).replace(/\s+/g, '');
      if (!BASE64.test(text) || text.length % 4 === 1) {
        report?.(name, 'value: not valid base64');
        continue;
      }
      value = Buffer.from(text, 'base64');
    } else {
      report?.(name, 'expected a string, or { value, encoding: "base64" }');
      continue;
    }
    const key = fold(name);
    if (out.has(key)) {
      report?.(name, `the same entry as ${JSON.stringify(out.get(key)!.name)} (entry names are case-insensitive)`);
      continue;
    }
    out.set(key, { name, value });
  }
  return out;
}

/** The storage option's form of an entry set, or undefined for none (the key is then removed). */
export function writeEntries(entries: Entries): StoredEntries | undefined {
  if (entries.size === 0) return undefined;
  const out: StoredEntries = {};
  for (const { name, value } of entries.values()) setOwn(out, name, storedValue(value));
  return out;
}

/** The REST form: entry name to text (bytes that are not UTF-8 show with U+FFFD). */
export function textEntries(entries: Entries): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, value } of entries.values()) setOwn(out, name, value.toString('utf8'));
  return out;
}

/** Depth of GETMETADATA (RFC 5464 §4.2.2): 0, 1 or infinity. */
export type Depth = 0 | 1 | typeof Infinity;

/**
 * The entries GETMETADATA answers for one requested name: the entry itself
 * when it exists, then (with DEPTH) those below it up to `depth` levels, in
 * the order they were first set.
 */
export function lookup(entries: Entries, requested: string, depth: Depth): Entry[] {
  const key = fold(requested);
  const out: Entry[] = [];
  const self = entries.get(key);
  if (self) out.push(self);
  if (depth === 0) return out;
  const prefix = `${key}/`;
  for (const [k, entry] of entries) {
    if (!k.startsWith(prefix)) continue;
    const below = k.slice(prefix.length);
    if (depth === 1 && below.includes('/')) continue;
    out.push(entry);
  }
  return out;
}

/**
 * Deep copy of option data kept as-is (`extra` keys): plain objects and
 * arrays are copied recursively, byte arrays become new Buffers, Dates new
 * Dates, Maps and Sets new ones with copied contents. Functions and other
 * class instances are shared (they cannot be copied faithfully). Cycles and
 * shared references are preserved.
 */
import { isPlainObject, setOwn } from './problems.js';

export function deepCopy<T>(value: T): T {
  return copy(value, new Map()) as T;
}

function copy(value: unknown, seen: Map<object, unknown>): unknown {
  if (value === null || typeof value !== 'object') return value;
  const done = seen.get(value);
  if (done !== undefined) return done;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(copy(item, seen));
    return out;
  }
  if (value instanceof Uint8Array) {
    const out = Buffer.from(value);
    seen.set(value, out);
    return out;
  }
  if (value instanceof Date) {
    const out = new Date(value.getTime());
    seen.set(value, out);
    return out;
  }
  if (value instanceof Map) {
    const out = new Map<unknown, unknown>();
    seen.set(value, out);
    for (const [k, v] of value) out.set(copy(k, seen), copy(v, seen));
    return out;
  }
  if (value instanceof Set) {
    const out = new Set<unknown>();
    seen.set(value, out);
    for (const v of value) out.add(copy(v, seen));
    return out;
  }
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    seen.set(value, out);
    for (const key of Object.keys(value)) setOwn(out, key, copy(value[key], seen));
    return out;
  }
  return value;
}

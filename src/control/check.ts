import { ServiceError } from '../errors.js';
import { suggestKey } from '../options/typos.js';
import { isFlagSyntax } from '../store/flags.js';

/**
 * Small argument checks for the control API. In-process callers may pass
 * anything at run time, so every operation checks its arguments and answers
 * INVALID with the name of the argument at fault.
 */
const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'string' ? JSON.stringify(value) : typeof value;

export function invalid(message: string): ServiceError {
  return new ServiceError('INVALID', message);
}

/**
 * An options object. With `keys`, a key outside them is INVALID naming it,
 * with the likely key (`pasword: unknown field; did you mean "password"?`):
 * a typo must not silently fall back to a default, in-process as over REST.
 */
export function checkObject(value: unknown, name: string, keys?: readonly string[]): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(`${name}: expected an object, got ${describe(value)}`);
  const o = value as Record<string, unknown>;
  if (keys) {
    for (const key of Object.keys(o)) {
      if (keys.includes(key)) continue;
      const hint = suggestKey(key, keys);
      throw invalid(`${key}: unknown field${hint ? `; did you mean ${JSON.stringify(hint)}?` : ` (known: ${keys.join(', ')})`}`);
    }
  }
  return o;
}

export function checkString(value: unknown, name: string, options: { nonEmpty?: boolean } = {}): string {
  if (typeof value !== 'string') throw invalid(`${name}: expected a string, got ${describe(value)}`);
  if (options.nonEmpty && value === '') throw invalid(`${name}: must not be empty`);
  return value;
}

export function optionalString(value: unknown, name: string): string | undefined {
  return value === undefined ? undefined : checkString(value, name);
}

export function optionalBoolean(value: unknown, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalid(`${name}: expected a boolean, got ${describe(value)}`);
  return value;
}

export function checkInteger(value: unknown, name: string, min = -Infinity, max = Infinity): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalid(`${name}: expected an integer, got ${describe(value)}`);
  if (value < min || value > max) throw invalid(`${name}: must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function optionalInteger(value: unknown, name: string, min = -Infinity, max = Infinity): number | undefined {
  return value === undefined ? undefined : checkInteger(value, name, min, max);
}

export function checkUids(value: unknown, name = 'uids'): number[] {
  if (!Array.isArray(value)) throw invalid(`${name}: expected an array of UIDs, got ${describe(value)}`);
  return value.map((v, i) => checkInteger(v, `${name}[${i}]`, 1, 0xffffffff));
}

export function checkStringArray(value: unknown, name: string): string[] {
  if (!Array.isArray(value)) throw invalid(`${name}: expected an array of strings, got ${describe(value)}`);
  return value.map((v, i) => checkString(v, `${name}[${i}]`));
}

export function checkOneOf<T extends string>(value: unknown, name: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw invalid(`${name}: expected one of ${allowed.join(', ')}, got ${describe(value)}`);
  }
  return value as T;
}

/** Flags: strings an IMAP client could receive as flags (RFC 3501 `flag`); `\\Recent` is the server's, not settable. */
export function checkFlags(value: unknown, name: string): string[] {
  const flags = checkStringArray(value, name);
  flags.forEach((flag, i) => {
    if (!isFlagSyntax(flag)) throw invalid(`${name}[${i}]: ${JSON.stringify(flag)} is not a flag (an atom, optionally after one backslash)`);
    if (flag.toLowerCase() === '\\recent') throw invalid(`${name}[${i}]: \\Recent is set by the server and cannot be stored`);
  });
  return flags;
}

/**
 * Helpers shared by the option validators: a collector of problems (each
 * naming the option path it is about), path building, value descriptions for
 * "expected X, got Y" messages, and the typo check on object keys.
 */
import { ServiceError } from '../errors.js';
import { suggestKey } from './typos.js';

/** Problems beyond this many are counted, not listed. */
const MAX_LISTED = 20;

export class Problems {
  readonly list: string[] = [];
  private extra = 0;

  add(path: string, message: string): void {
    if (this.list.length < MAX_LISTED) this.list.push(`${path}: ${message}`);
    else this.extra++;
  }

  /** `<path>: expected <what>, got <value>`. */
  expected(path: string, what: string, value: unknown): undefined {
    this.add(path, `expected ${what}, got ${describeValue(value)}`);
    return undefined;
  }

  get count(): number {
    return this.list.length + this.extra;
  }

  /** Throws ServiceError('INVALID') listing every problem, one per line. */
  throwIfAny(): void {
    if (this.list.length === 0) return;
    const lines = [...this.list];
    if (this.extra > 0) lines.push(`... and ${this.extra} more problem${this.extra === 1 ? '' : 's'}`);
    throw new ServiceError('INVALID', lines.join('\n'));
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `parent.key`, or `parent["odd key"]` when the key is not an identifier. */
export function childPath(parent: string, key: string): string {
  if (IDENTIFIER.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/** A short description of a value for error messages: `"abc"`, `12`, `null`, `an array`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'string': {
      const text = value.length > 60 ? `${value.slice(0, 57)}...` : value;
      return JSON.stringify(text);
    }
    case 'number':
    case 'boolean':
      return String(value);
    case 'bigint':
      return `${value}n`;
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
    default:
      break;
  }
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a Date';
  if (Buffer.isBuffer(value)) return 'a Buffer';
  if (value instanceof Uint8Array) return 'a Uint8Array';
  return 'an object';
}

/** A plain object (not an array, Date, Buffer, Map ...). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Reports the keys of `object` that are not in `known` but look like typos of
 * one. Returns true when none did.
 */
export function checkTypos(
  object: Record<string, unknown>,
  known: ReadonlySet<string>,
  knownList: readonly string[],
  path: string,
  problems: Problems,
): boolean {
  let ok = true;
  for (const key of Object.keys(object)) {
    if (known.has(key)) continue;
    const suggestion = suggestKey(key, knownList);
    if (suggestion !== undefined) {
      problems.add(childPath(path, key), `unknown key; did you mean ${JSON.stringify(suggestion)}?`);
      ok = false;
    }
  }
  return ok;
}

/** Sets `key` as an own data property, even when it is `__proto__`. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

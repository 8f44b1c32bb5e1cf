import assert from 'node:assert/strict';
import { ServiceError } from '../../src/errors.js';

/** Runs `fn`, expecting a ServiceError('INVALID'); returns its message. */
export function invalid(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ServiceError, `expected a ServiceError, got ${String(err)}`);
    assert.equal(err.code, 'INVALID');
    return err.message;
  }
  assert.fail('expected an INVALID error');
}

/** Freezes an object graph (not typed arrays, which cannot be frozen). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value) && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

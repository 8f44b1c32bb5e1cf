/**
 * A tiny JSON-Schema subset. Each route describes its request body once with
 * it; the same object validates requests and goes into the OpenAPI document.
 */
import { ServiceError } from '../errors.js';

export interface Schema {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'null';
  description?: string;
  enum?: readonly string[];
  minimum?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: readonly string[];
  additionalProperties?: boolean | Schema;
  oneOf?: readonly Schema[];
  /** The value the server uses when the field is left out (documentation; not applied by validation). */
  default?: string | number | boolean | null;
  /** A reference into the OpenAPI components (`#/components/schemas/Name`); not validated. */
  $ref?: string;
}

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const str = (description?: string): Schema => (description ? { type: 'string', description } : { type: 'string' });
export const int = (minimum?: number): Schema => (minimum === undefined ? { type: 'integer' } : { type: 'integer', minimum });
export const bool: Schema = { type: 'boolean' };
export const arrayOf = (items: Schema): Schema => ({ type: 'array', items });
export const obj = (properties: Record<string, Schema>, required: readonly string[] = []): Schema =>
  required.length > 0 ? { type: 'object', properties, required } : { type: 'object', properties };
export const nullable = (s: Schema): Schema => ({ oneOf: [s, { type: 'null' }] });

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function problem(value: unknown, schema: Schema, name: string): string | null {
  if (schema.$ref) return null;
  if (schema.oneOf) {
    const errors = schema.oneOf.map((s) => problem(value, s, name));
    return errors.some((e) => e === null) ? null : errors[0]!;
  }
  const expect = (what: string): string => `${name}: expected ${what}, got ${typeOf(value)}`;
  switch (schema.type) {
    case undefined:
      return null;
    case 'null':
      return value === null ? null : expect('null');
    case 'string':
      if (typeof value !== 'string') return expect('a string');
      if (schema.enum && !schema.enum.includes(value)) return `${name}: expected one of ${schema.enum.join(', ')}, got ${JSON.stringify(value)}`;
      return null;
    case 'boolean':
      return typeof value === 'boolean' ? null : expect('a boolean');
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : expect('a number');
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return expect('an integer');
      if (schema.minimum !== undefined && value < schema.minimum) return `${name}: expected an integer >= ${schema.minimum}, got ${value}`;
      return null;
    case 'array': {
      if (!Array.isArray(value)) return expect('an array');
      if (schema.items) {
        for (let i = 0; i < value.length; i++) {
          const p = problem(value[i], schema.items, `${name}[${i}]`);
          if (p) return p;
        }
      }
      return null;
    }
    case 'object': {
      if (typeOf(value) !== 'object') return expect('an object');
      const o = value as Record<string, unknown>;
      // Own properties only: a required field named like an Object.prototype member is not there by inheritance.
      for (const key of schema.required ?? []) if (!Object.hasOwn(o, key) || o[key] === undefined) return `${name === 'body' ? '' : name + '.'}${key}: required`;
      for (const [key, v] of Object.entries(o)) {
        const declared = schema.properties !== undefined && Object.hasOwn(schema.properties, key);
        if (!declared && schema.additionalProperties === false) return `${name === 'body' ? '' : name + '.'}${key}: unknown field`;
        const sub = declared ? schema.properties![key] : typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
        if (sub && v !== undefined) {
          const p = problem(v, sub, name === 'body' ? key : `${name}.${key}`);
          if (p) return p;
        }
      }
      return null;
    }
  }
}

/** Throws ServiceError('INVALID') naming the first field that does not fit. */
export function validate(value: unknown, schema: Schema, name = 'body'): void {
  const p = problem(value, schema, name);
  if (p) throw new ServiceError('INVALID', p);
}

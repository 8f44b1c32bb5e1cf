/**
 * A tiny JSON-Schema subset. Each route describes its request body once with
 * it; the same object validates requests and goes into the OpenAPI document.
 *
 * Objects follow JSON Schema: open unless `additionalProperties` says
 * otherwise. An object with `additionalProperties: false` refuses a key it
 * does not declare as 400 INVALID naming the key, with a "did you mean" when
 * a declared key is close (the rule the options follow), at any depth. The
 * built-in routes close every object they declare (`closeObjects`), so a
 * typo in a body is never silently dropped.
 */
import { ServiceError } from '../errors.js';
import { suggestKey } from '../options/typos.js';

/** A JSON value (what `default` may hold). */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

export interface Schema {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'null';
  description?: string;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: readonly string[];
  additionalProperties?: boolean | Schema;
  oneOf?: readonly Schema[];
  /** The value the server uses when the field is left out (documentation; not applied by validation). */
  default?: JsonValue;
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

/**
 * A copy of `schema` in which every object that declares `properties` and
 * says nothing about `additionalProperties` is closed (`additionalProperties:
 * false`), at any depth. Objects that say `additionalProperties: true` or give
 * a schema for it (free maps) stay open.
 */
export function closeObjects(schema: Schema): Schema {
  const out: Schema = { ...schema };
  if (schema.properties) {
    const properties: Record<string, Schema> = {};
    for (const [key, sub] of Object.entries(schema.properties)) properties[key] = closeObjects(sub);
    out.properties = properties;
    if (schema.additionalProperties === undefined) out.additionalProperties = false;
  }
  if (typeof schema.additionalProperties === 'object') out.additionalProperties = closeObjects(schema.additionalProperties);
  if (schema.items) out.items = closeObjects(schema.items);
  if (schema.oneOf) out.oneOf = schema.oneOf.map(closeObjects);
  return out;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** True when a value of JSON type `type` is the kind of value `schema` is about (for picking the `oneOf` branch to blame). */
function sameKind(schema: Schema, type: string): boolean {
  if (schema.type === undefined) return false;
  return schema.type === type || ((schema.type === 'integer' || schema.type === 'number') && type === 'number');
}

/** A field name as messages show it: plain when it reads as a name, else quoted (and shortened). */
function label(key: string): string {
  const shown = key.length > 64 ? `${key.slice(0, 64)}...` : key;
  return /^[A-Za-z_$][\w$-]*$/.test(shown) ? shown : JSON.stringify(shown);
}

/** `parent.key`, or `key` at the top of the body. */
function child(parent: string, key: string): string {
  return parent === 'body' ? label(key) : `${parent}.${label(key)}`;
}

function unknownField(parent: string, key: string, known: readonly string[]): string {
  const what = `${child(parent, key)}: unknown field`;
  if (known.length === 0) return `${what}; ${parent === 'body' ? 'this endpoint takes no body fields' : `${parent} takes no fields`}`;
  const hint = suggestKey(key, known);
  return hint !== undefined ? `${what}; did you mean ${JSON.stringify(hint)}?` : `${what}; known fields: ${known.join(', ')}`;
}

function problem(value: unknown, schema: Schema, name: string): string | null {
  if (schema.$ref) return null;
  if (schema.oneOf) {
    const errors = schema.oneOf.map((s) => problem(value, s, name));
    if (errors.some((e) => e === null)) return null;
    // Blame the branch of the value's own kind: `{ xoauth2: { acessToken } }` is about the object, not about null.
    const type = typeOf(value);
    const at = schema.oneOf.findIndex((s) => sameKind(s, type));
    return errors[at >= 0 ? at : 0]!;
  }
  const expect = (what: string): string => `${name}: expected ${what}, got ${typeOf(value)}`;
  switch (schema.type) {
    case undefined:
      return null;
    case 'null':
      return value === null ? null : expect('null');
    case 'string':
      if (typeof value !== 'string') return expect('a string');
      if (schema.enum && !schema.enum.includes(value)) {
        const hint = suggestKey(value, schema.enum);
        return `${name}: expected one of ${schema.enum.join(', ')}, got ${JSON.stringify(value)}${hint !== undefined ? `; did you mean ${JSON.stringify(hint)}?` : ''}`;
      }
      return null;
    case 'boolean':
      return typeof value === 'boolean' ? null : expect('a boolean');
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return expect('a number');
      return range(value, schema, name, 'a number');
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return expect('an integer');
      return range(value, schema, name, 'an integer');
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
      const properties = schema.properties ?? {};
      // Unknown keys first: `{ "nmae": "bob" }` is a typo of `name`, which then also looks missing.
      // Own properties only: a key named like an Object.prototype member is declared only when it is listed.
      if (schema.additionalProperties === false) {
        for (const key of Object.keys(o)) {
          if (!Object.hasOwn(properties, key)) return unknownField(name, key, Object.keys(properties));
        }
      }
      for (const key of schema.required ?? []) if (!Object.hasOwn(o, key) || o[key] === undefined) return `${child(name, key)}: required`;
      for (const [key, v] of Object.entries(o)) {
        const declared = Object.hasOwn(properties, key);
        const sub = declared ? properties[key] : typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
        if (sub && v !== undefined) {
          const p = problem(v, sub, child(name, key));
          if (p) return p;
        }
      }
      return null;
    }
  }
}

function range(value: number, schema: Schema, name: string, what: string): string | null {
  if (schema.minimum !== undefined && value < schema.minimum) {
    return `${name}: expected ${what} >= ${schema.minimum}${schema.maximum !== undefined ? ` and <= ${schema.maximum}` : ''}, got ${value}`;
  }
  if (schema.maximum !== undefined && value > schema.maximum) return `${name}: expected ${what} <= ${schema.maximum}, got ${value}`;
  return null;
}

/** Throws ServiceError('INVALID') naming the first field that does not fit. */
export function validate(value: unknown, schema: Schema, name = 'body'): void {
  const p = problem(value, schema, name);
  if (p) throw new ServiceError('INVALID', p);
}

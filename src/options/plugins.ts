/**
 * The `plugins` option: built-in plugin names (with aliases, `"all"` and
 * dependencies) and plugin objects written by users. A plugin object is
 * checked here, at construction, so a mistake in a route table shows as an
 * option error naming the route and not as a 500 on the first request.
 */
import { REMOVED_PLUGINS } from '../extensions/catalog.js';
import type { Extension } from '../extensions/extension.js';
import { allPluginNames, builtinAliases, builtinExtension, builtinPluginNames, builtinRow } from '../extensions/builtins.js';
import { BUILTIN_ROUTES } from '../rest/routes.js';
import type { Schema } from '../rest/schema.js';
import { deepCopy } from './copy.js';
import { DEFAULT_PLUGINS } from './default-plugins.js';
import { checkTypos, childPath, indexPath, isPlainObject, type Problems } from './problems.js';
import { suggestKey } from './typos.js';

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);
// Other keys are the plugin's own (its state, helpers); only likely typos of these are reported.
const PLUGIN_KEYS = [
  'name', 'aliases', 'requires', 'options', 'setup', 'capabilities', 'enable', 'commands', 'wrap', 'fetchItems', 'searchKeys',
  'statusItems', 'list', 'select', 'create', 'checks', 'literal', 'access', 'codes', 'sasl', 'saslInitialResponse', 'storage', 'onChange',
  'events', 'routes', 'search', 'fetch', 'store', 'updates',
] as const;
const FUNCTION_KEYS = ['setup', 'capabilities', 'literal', 'access', 'onChange'] as const;
const OBJECT_KEYS = ['options', 'list', 'select', 'create', 'checks', 'codes', 'storage', 'search', 'fetch', 'store', 'updates'] as const;
const ARRAY_KEYS = ['aliases', 'enable', 'wrap', 'fetchItems', 'searchKeys', 'statusItems', 'sasl', 'events'] as const;
const ROUTE_KEYS = ['method', 'path', 'summary', 'operation', 'params', 'query', 'body', 'allowArray', 'status', 'response', 'handle', 'after'] as const;
const PLUGIN_SET = new Set<string>(PLUGIN_KEYS);
const ROUTE_SET = new Set<string>(ROUTE_KEYS);

export interface ResolvedPlugins {
  /** Loaded plugin names: built-ins in catalog order, then plugin objects in the order given. */
  names: string[];
  /** The plugin objects given by the caller, validated. */
  custom: Extension[];
  /** Every loaded extension in canonical order: built-ins in catalog order, then plugin objects by name. */
  extensions: Extension[];
}

/** The canonical built-in name for `name` (aliases and any case), or undefined. */
function builtinName(name: string): string | undefined {
  const upper = name.toUpperCase();
  if (builtinRow(upper)) return upper;
  return builtinAliases().get(upper);
}

/**
 * Resolutions of name-only `plugins` values ("all", ["IDLE", "MOVE"]):
 * the same few lists come back for every server a suite starts, and the
 * result depends on the names alone. Only clean resolutions are kept; the
 * arrays handed out are fresh, so a caller may change its copy.
 */
const byNames = new Map<string, ResolvedPlugins>();
const BY_NAMES_MAX = 64;

function namesKey(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value) || value.length > 100) return null;
  for (const e of value) if (typeof e !== 'string') return null;
  // A string is never an array: prefixing keeps "all" and ["all"] apart (they may resolve alike, but need not).
  return `[${value.join('\n')}`;
}

export function resolvePlugins(problems: Problems, given: unknown): ResolvedPlugins {
  // Left out: the default set (see ./default-plugins.ts); `[]` is the bare core.
  const value = given === undefined ? DEFAULT_PLUGINS : given;
  const key = namesKey(value);
  const cached = key === null ? undefined : byNames.get(key);
  if (cached) return { names: [...cached.names], custom: [], extensions: cached.extensions };
  const before = problems.count;
  const resolved = resolvePluginsOnce(problems, value);
  if (key !== null && problems.count === before) {
    if (byNames.size >= BY_NAMES_MAX) byNames.delete(byNames.keys().next().value!);
    // The extensions array is shared (read-only by contract): one identity per plugin set keeps later caches cheap.
    byNames.set(key, { names: [...resolved.names], custom: [], extensions: Object.freeze([...resolved.extensions]) as Extension[] });
    return { ...resolved, extensions: byNames.get(key)!.extensions };
  }
  return resolved;
}

function resolvePluginsOnce(problems: Problems, value: unknown): ResolvedPlugins {
  const none: ResolvedPlugins = { names: [], custom: [], extensions: [] };
  const BUILTIN_PLUGINS = builtinPluginNames();
  const order = new Map(BUILTIN_PLUGINS.map((name, i) => [name, i]));
  let entries: unknown[];
  if (typeof value === 'string') {
    if (value.toLowerCase() !== 'all') {
      problems.expected('plugins', 'an array of plugin names or plugin objects, or "all"', value);
      return none;
    }
    entries = allPluginNames();
  } else if (Array.isArray(value)) {
    // Opt-in built-ins (X-GM-EXT-1) are not part of "all": they must be named.
    entries = value.flatMap((e) => (typeof e === 'string' && e.toLowerCase() === 'all' ? allPluginNames() : [e]));
  } else {
    problems.expected('plugins', 'an array of plugin names or plugin objects, or "all"', value);
    return none;
  }
  const chosen = new Set<string>();
  const add = (name: string): void => {
    if (chosen.has(name)) return;
    chosen.add(name);
    for (const required of builtinRow(name)?.requires ?? []) {
      const b = builtinName(required);
      if (b) add(b);
    }
  };
  const custom: Extension[] = [];
  entries.forEach((entry, i) => {
    const path = indexPath('plugins', i);
    if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) {
      const plugin = checkPluginObject(problems, entry as Record<string, unknown>, path, custom);
      if (plugin) {
        custom.push(plugin);
        for (const r of plugin.requires ?? []) {
          const b = builtinName(r);
          if (b) add(b);
        }
      }
      return;
    }
    if (typeof entry !== 'string') {
      problems.expected(path, 'a plugin name or a plugin object', entry);
      return;
    }
    const upper = entry.toUpperCase();
    const removed = Object.hasOwn(REMOVED_PLUGINS, upper) ? REMOVED_PLUGINS[upper] : undefined;
    if (removed !== undefined) {
      problems.add('plugins', removed);
      return;
    }
    const canonical = builtinName(entry);
    if (canonical === undefined) {
      problems.add('plugins', `unknown plugin ${JSON.stringify(entry)}; valid names: ${BUILTIN_PLUGINS.join(', ')}`);
      return;
    }
    add(canonical);
  });
  const builtins = [...chosen].sort((a, b) => order.get(a)! - order.get(b)!);
  const byName = [...custom].sort((a, b) => (a.name.toUpperCase() < b.name.toUpperCase() ? -1 : 1));
  return {
    names: [...builtins, ...custom.map((p) => p.name)],
    custom,
    // Only the chosen built-ins are loaded (on first use in this process).
    extensions: [...builtins.map(builtinExtension), ...byName],
  };
}

/**
 * The `pluginOptions` option: `{ [pluginName]: object }`, each entry checked
 * against its loaded plugin's `options` schema with typo detection. Returns
 * the validated entries (deep copies) by canonical plugin name.
 */
export function resolvePluginOptions(problems: Problems, value: unknown, extensions: readonly Extension[]): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  if (value === undefined) return out;
  if (!isPlainObject(value)) {
    problems.expected('pluginOptions', 'an object of plugin options by plugin name', value);
    return out;
  }
  const loaded = new Map<string, Extension>();
  for (const e of extensions) {
    loaded.set(e.name.toUpperCase(), e);
    for (const a of e.aliases ?? []) loaded.set(a.toUpperCase(), e);
  }
  const known = [...builtinPluginNames(), ...extensions.map((e) => e.name)];
  for (const key of Object.keys(value)) {
    const entry = value[key];
    if (entry === undefined) continue;
    const path = childPath('pluginOptions', key);
    const extension = loaded.get(key.toUpperCase());
    if (!extension) {
      const builtin = builtinName(key);
      if (builtin !== undefined) problems.add(path, `the ${builtin} plugin is not loaded; add it to plugins`);
      else {
        const hint = suggestName(key, known);
        problems.add(path, `unknown plugin${hint ? `; did you mean ${JSON.stringify(hint)}?` : `; loaded plugins: ${extensions.map((e) => e.name).join(', ') || 'none'}`}`);
      }
      continue;
    }
    if (!extension.options) {
      problems.add(path, `the ${extension.name} plugin takes no options`);
      continue;
    }
    if (out.has(extension.name)) {
      problems.add(path, `options for ${extension.name} are given twice`);
      continue;
    }
    const before = problems.count;
    checkSchema(problems, entry, extension.options, path);
    if (problems.count === before) out.set(extension.name, deepCopy(entry) as Record<string, unknown>);
  }
  return out;
}

function suggestName(name: string, known: readonly string[]): string | undefined {
  return suggestKey(name, known);
}

/** Checks a value against a schema of the REST subset, with typo detection on object keys. */
export function checkSchema(problems: Problems, value: unknown, schema: Schema, path: string): void {
  if (schema.oneOf) {
    const trial = schema.oneOf.map((s) => {
      const p = new ProblemCounter();
      checkSchema(p as unknown as Problems, value, s, path);
      return p.count;
    });
    if (!trial.includes(0)) problems.expected(path, schema.description ?? 'a value of another shape', value);
    return;
  }
  switch (schema.type) {
    case undefined:
      return;
    case 'null':
      if (value !== null) problems.expected(path, 'null', value);
      return;
    case 'string':
      if (typeof value !== 'string') problems.expected(path, 'a string', value);
      else if (schema.enum && !schema.enum.includes(value)) problems.expected(path, `one of ${schema.enum.join(', ')}`, value);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') problems.expected(path, 'a boolean', value);
      return;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) problems.expected(path, 'a number', value);
      else if (schema.minimum !== undefined && value < schema.minimum) problems.expected(path, `a number >= ${schema.minimum}`, value);
      return;
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) problems.expected(path, 'an integer', value);
      else if (schema.minimum !== undefined && value < schema.minimum) problems.expected(path, `an integer >= ${schema.minimum}`, value);
      return;
    case 'array':
      if (!Array.isArray(value)) problems.expected(path, 'an array', value);
      else if (schema.items) value.forEach((v: unknown, i) => checkSchema(problems, v, schema.items!, indexPath(path, i)));
      return;
    case 'object': {
      if (!isPlainObject(value)) {
        problems.expected(path, 'an object', value);
        return;
      }
      const props = schema.properties ?? {};
      const names = Object.keys(props);
      checkTypos(value, new Set(names), names, path, problems);
      for (const key of schema.required ?? []) {
        if (!Object.hasOwn(value, key) || value[key] === undefined) problems.add(childPath(path, key), 'required');
      }
      for (const key of Object.keys(value)) {
        const v = value[key];
        if (v === undefined) continue;
        if (Object.hasOwn(props, key)) checkSchema(problems, v, props[key]!, childPath(path, key));
        else if (schema.additionalProperties === false) {
          if (!problems.list.some((l) => l.startsWith(`${childPath(path, key)}:`))) problems.add(childPath(path, key), 'unknown key');
        } else if (typeof schema.additionalProperties === 'object') checkSchema(problems, v, schema.additionalProperties, childPath(path, key));
      }
      return;
    }
  }
}

/** Counts problems without keeping them (for `oneOf` trials). */
class ProblemCounter {
  count = 0;
  readonly list: string[] = [];
  add(): void {
    this.count++;
  }
  expected(): undefined {
    this.count++;
    return undefined;
  }
}


function checkPluginObject(problems: Problems, p: Record<string, unknown>, path: string, earlier: readonly Extension[]): Extension | null {
  const before = problems.count;
  checkTypos(p, PLUGIN_SET, PLUGIN_KEYS, path, problems);
  const name = p.name;
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9=+._-]*$/.test(name)) {
    problems.expected(childPath(path, 'name'), 'a plugin name (letters, digits and = + . _ -)', name);
  } else if (builtinName(name) || Object.hasOwn(REMOVED_PLUGINS, name.toUpperCase())) {
    problems.add(childPath(path, 'name'), `${JSON.stringify(name)} is a built-in plugin name; give your plugin its own name`);
  } else if (earlier.some((e) => e.name.toUpperCase() === name.toUpperCase())) {
    problems.add(childPath(path, 'name'), `a plugin named ${JSON.stringify(name)} is already loaded`);
  }
  if (p.requires !== undefined) {
    if (!Array.isArray(p.requires) || p.requires.some((r) => typeof r !== 'string')) {
      problems.expected(childPath(path, 'requires'), 'an array of built-in plugin names', p.requires);
    } else {
      for (const r of p.requires as string[]) {
        if (!builtinName(r)) problems.add(childPath(path, 'requires'), `unknown plugin ${JSON.stringify(r)}; valid names: ${builtinPluginNames().join(', ')}`);
      }
    }
  }
  for (const key of FUNCTION_KEYS) {
    if (p[key] !== undefined && typeof p[key] !== 'function') problems.expected(childPath(path, key), 'a function', p[key]);
  }
  for (const key of OBJECT_KEYS) {
    if (p[key] !== undefined && !isPlainObject(p[key])) problems.expected(childPath(path, key), 'an object', p[key]);
  }
  for (const key of ARRAY_KEYS) {
    if (p[key] !== undefined && !Array.isArray(p[key])) problems.expected(childPath(path, key), 'an array', p[key]);
  }
  if (p.commands !== undefined) {
    if (!Array.isArray(p.commands)) problems.expected(childPath(path, 'commands'), 'an array of commands', p.commands);
    else {
      p.commands.forEach((c: unknown, i) => {
        const cPath = indexPath(childPath(path, 'commands'), i);
        if (!isPlainObject(c) || typeof c.name !== 'string' || !Array.isArray(c.states) || typeof c.run !== 'function') {
          problems.expected(cPath, 'a command object { name, states, run }', c);
        }
      });
    }
  }
  if (p.routes !== undefined) {
    if (!Array.isArray(p.routes)) problems.expected(childPath(path, 'routes'), 'an array of REST routes', p.routes);
    else checkRoutes(problems, p.routes as unknown[], childPath(path, 'routes'));
  }
  if (problems.count !== before) return null;
  // Keep the caller's object: its functions may close over state the caller inspects.
  return p as unknown as Extension;
}

/** The built-in route that answers every request `method pattern` could match, if any. */
function shadowingRoute(method: string, pattern: string): string | undefined {
  const segments = pattern.split('/').slice(1);
  for (const b of BUILTIN_ROUTES) {
    if (b.method !== method) continue;
    const own = b.path.split('/').slice(1);
    if (own.length !== segments.length) continue;
    if (own.every((s, i) => s.startsWith('{') || s === segments[i])) return `${b.method} ${b.path}`;
  }
  return undefined;
}

function checkRoutes(problems: Problems, routes: unknown[], path: string): void {
  const seen = new Set<string>();
  routes.forEach((route, i) => {
    const rPath = indexPath(path, i);
    if (!isPlainObject(route)) {
      problems.expected(rPath, 'a route object { method, path, summary, status, response, handle }', route);
      return;
    }
    checkTypos(route, ROUTE_SET, ROUTE_KEYS, rPath, problems);
    // The event stream is the one streaming route; a plugin route answers with one JSON body.
    if (route.stream !== undefined) problems.add(childPath(rPath, 'stream'), 'plugin routes answer with a JSON body; streaming routes are not supported');
    if (typeof route.method !== 'string' || !METHODS.has(route.method)) {
      problems.expected(childPath(rPath, 'method'), 'one of GET, POST, PUT, DELETE', route.method);
    }
    const pattern = route.path;
    if (typeof pattern !== 'string' || !/^(\/([A-Za-z0-9._~!$&'()*+,;=:@-]+|\{[A-Za-z_][A-Za-z0-9_]*\}))+$/.test(pattern)) {
      problems.expected(childPath(rPath, 'path'), 'a path like /v1/things/{name} (literal segments and {param} segments)', pattern);
    } else {
      const declared = new Set(Array.isArray(route.params) ? route.params.map((d: unknown) => (isPlainObject(d) ? d.name : undefined)) : []);
      for (const m of pattern.matchAll(/\{(\w+)\}/g)) {
        if (!declared.has(m[1])) problems.add(childPath(rPath, 'params'), `path parameter {${m[1]}} is not declared in params`);
      }
      const shadow = shadowingRoute(String(route.method), pattern);
      if (shadow) problems.add(childPath(rPath, 'path'), `${String(route.method)} ${pattern} would never be reached: the built-in route ${shadow} answers it first`);
      const key = `${String(route.method)} ${pattern.replace(/\{\w+\}/g, '{}')}`;
      if (seen.has(key)) problems.add(rPath, `another route of this plugin already serves ${String(route.method)} ${pattern}`);
      seen.add(key);
    }
    if (typeof route.summary !== 'string') problems.expected(childPath(rPath, 'summary'), 'a string', route.summary);
    if (typeof route.status !== 'number' || !Number.isInteger(route.status) || route.status < 200 || route.status > 299) {
      problems.expected(childPath(rPath, 'status'), 'a 2xx status code', route.status);
    }
    if (!isPlainObject(route.response)) problems.expected(childPath(rPath, 'response'), 'a JSON Schema object', route.response);
    if (route.body !== undefined && !isPlainObject(route.body)) problems.expected(childPath(rPath, 'body'), 'a JSON Schema object', route.body);
    if (typeof route.handle !== 'function') problems.expected(childPath(rPath, 'handle'), 'a function (ctx) => JSON body', route.handle);
    if (route.params !== undefined && !Array.isArray(route.params)) problems.expected(childPath(rPath, 'params'), 'an array of { name, type, description }', route.params);
    if (Array.isArray(route.params)) {
      route.params.forEach((d: unknown, j) => {
        if (!isPlainObject(d) || typeof d.name !== 'string' || (d.type !== 'string' && d.type !== 'integer')) {
          problems.expected(indexPath(childPath(rPath, 'params'), j), "{ name, type: 'string' | 'integer', description }", d);
        }
      });
    }
  });
}

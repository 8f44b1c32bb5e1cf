/**
 * What a preset is (server options, nothing else) and the rule by which
 * options given next to `preset` are laid over it.
 */
import { isPlainObject, setOwn } from '../options/problems.js';
import type { ServerOptions } from '../options/types.js';
import type { ScriptRule } from '../script/rule.js';

/**
 * A preset: ordinary server options, each of which a caller could also set
 * alone. `plugins` and `script` are always arrays, so a caller can spread
 * them (`[...presets.gmail.plugins, 'SORT']`).
 */
export interface PresetOptions extends Omit<ServerOptions, 'preset' | 'plugins' | 'script'> {
  plugins: string[];
  script: ScriptRule[];
}

/**
 * `over` laid over `base`: where both hold a plain object (storage,
 * folders, pluginOptions, rest, ...) the two are merged key by key;
 * otherwise `over`'s value replaces `base`'s. Arrays replace too (plugins,
 * script, messages): a caller who wants the preset's list and more spreads
 * it (`[...presets.gmail.plugins, 'SORT']`). Undefined in `over` leaves
 * `base` as it is. Neither argument is changed; the result shares leaves
 * with them (resolveOptions copies what it keeps).
 */
export function layOptions(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(base)) setOwn(out, key, base[key]);
  for (const key of Object.keys(over)) {
    const value = over[key];
    if (value === undefined) continue;
    const under = Object.hasOwn(out, key) ? out[key] : undefined;
    setOwn(out, key, isPlainObject(under) && isPlainObject(value) ? layOptions(under, value) : value);
  }
  return out;
}

/**
 * `input` laid over `preset` (layOptions), with one storage rule on top:
 * INBOX is one mailbox whatever its case, so the preset's `INBOX` takes the
 * spelling the caller used (`inbox`, `Inbox`) and the two merge instead of
 * being reported as duplicates.
 */
export function layOverPreset(preset: Record<string, unknown>, input: Record<string, unknown>): Record<string, unknown> {
  const base: Record<string, unknown> = { ...preset };
  const ours = base.storage;
  const theirs = input.storage;
  if (isPlainObject(ours) && isPlainObject(theirs) && Object.hasOwn(ours, 'INBOX') && !Object.hasOwn(theirs, 'INBOX')) {
    const spelling = Object.keys(theirs).find((key) => key.toUpperCase() === 'INBOX');
    if (spelling !== undefined) {
      const renamed: Record<string, unknown> = {};
      for (const key of Object.keys(ours)) setOwn(renamed, key === 'INBOX' ? spelling : key, ours[key]);
      base.storage = renamed;
    }
  }
  return layOptions(base, input);
}

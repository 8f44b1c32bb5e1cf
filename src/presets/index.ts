/**
 * Quirk presets: the capabilities, greeting, mailbox layout, limits and
 * known behaviours (as script rules) of a provider, as ordinary options.
 * `presets.gmail` is a fresh object on every read, so a test may change its
 * copy freely; `createServer({ preset: 'gmail', ...yours })` lays yours over
 * it (see `layOptions`). docs/presets.md says where each value comes from.
 */
import { dovecot } from './dovecot.js';
import { gmail } from './gmail.js';
import { icloud } from './icloud.js';
import { PRESET_NAMES, type PresetName } from './names.js';
import { outlook } from './outlook.js';
import type { PresetOptions } from './preset.js';
import { yahoo } from './yahoo.js';

export { PRESET_NAMES, type PresetName } from './names.js';
export { layOptions, layOverPreset, type PresetOptions } from './preset.js';

const BUILDERS: ReadonlyMap<PresetName, () => PresetOptions> = new Map<PresetName, () => PresetOptions>([
  ['gmail', gmail],
  ['outlook', outlook],
  ['yahoo', yahoo],
  ['icloud', icloud],
  ['dovecot', dovecot],
]);

/** The options of preset `name`, freshly built; undefined for a name that is no preset. */
export function presetOptions(name: string): PresetOptions | undefined {
  return BUILDERS.get(name as PresetName)?.();
}

/** Every preset by name; each read builds a new copy. */
export const presets: { readonly [K in PresetName]: PresetOptions } = Object.defineProperties(
  {} as { readonly [K in PresetName]: PresetOptions },
  Object.fromEntries(PRESET_NAMES.map((name) => [name, { get: BUILDERS.get(name), enumerable: true }])),
);

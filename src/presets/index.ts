/**
 * Quirk presets: the capabilities, greeting, mailbox layout, limits and
 * known behaviours (as script rules) of a provider, as ordinary options.
 * `presets.gmail` is a fresh object on every read, so a test may change its
 * copy freely; `createServer({ preset: 'gmail', ...yours })` lays yours over
 * it (see `layOptions`). docs/presets.md says where each value comes from.
 */
import { loadOnUse } from '../util/load-on-use.js';
import { PRESET_NAMES, type PresetName } from './names.js';
import type { PresetOptions } from './preset.js';

export { PRESET_NAMES, type PresetName } from './names.js';
export { layOptions, layOverPreset, type PresetOptions } from './preset.js';

// Each preset's module is read when the preset is first asked for: most servers use none.
const gmail = loadOnUse<typeof import('./gmail.js')>(import.meta.url, './gmail.js');
const outlook = loadOnUse<typeof import('./outlook.js')>(import.meta.url, './outlook.js');
const yahoo = loadOnUse<typeof import('./yahoo.js')>(import.meta.url, './yahoo.js');
const icloud = loadOnUse<typeof import('./icloud.js')>(import.meta.url, './icloud.js');
const dovecot = loadOnUse<typeof import('./dovecot.js')>(import.meta.url, './dovecot.js');

const BUILDERS: ReadonlyMap<PresetName, () => PresetOptions> = new Map<PresetName, () => PresetOptions>([
  ['gmail', () => gmail().gmail()],
  ['outlook', () => outlook().outlook()],
  ['yahoo', () => yahoo().yahoo()],
  ['icloud', () => icloud().icloud()],
  ['dovecot', () => dovecot().dovecot()],
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

/** The provider presets by name (the `preset` option and `rookery --preset`). */
export const PRESET_NAMES = ['gmail', 'outlook', 'yahoo', 'icloud', 'dovecot'] as const;

export type PresetName = (typeof PRESET_NAMES)[number];

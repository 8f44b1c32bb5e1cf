/**
 * The storage option's `generate` key: `{ INBOX: { generate: { seed: 7,
 * count: 10000 } } }` declares a mailbox of generated mail. The messages are
 * made once, when the options are read; a reset reloads them from that seed
 * like any other seed messages (shared Buffers, no second generation).
 */
import type { Problems } from '../options/problems.js';
import type { SeedMessage } from '../options/types.js';
import { messagesOf } from './generate.js';
import { MALFORMED_CASE_NAMES } from './malformed.js';
import { resolveGenerateOptions } from './options.js';

const NO_EXTRA = Object.freeze({}) as Record<string, unknown>;

export function generatedSeed(value: unknown, problems: Problems, path: string): SeedMessage[] {
  const before = problems.count;
  const opts = resolveGenerateOptions(value, problems, path, MALFORMED_CASE_NAMES);
  if (problems.count > before) return [];
  const out: SeedMessage[] = new Array<SeedMessage>(opts.count);
  let i = 0;
  for (const m of messagesOf(opts)) out[i++] = { raw: m.raw, flags: m.flags, internaldate: m.internaldate, extra: NO_EXTRA };
  return out;
}

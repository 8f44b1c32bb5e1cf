/**
 * The generator's options: their types, defaults, and the one validator that
 * the function, `rookery generate` and the storage option's `generate` key
 * share, so a typo is reported the same way everywhere.
 */
import { checkTypos, childPath, isPlainObject, Problems } from '../options/problems.js';
import { SCRIPTS, sampleCharsets, type Script } from './charsets.js';

export type { Script } from './charsets.js';

/** A number of octets, or a range drawn from (log-uniform, so small sizes are as common as large ones). */
export type SizeRange = number | { min: number; max: number };

/** Body shapes of the `realistic` profile. */
export type BodyKind =
  | 'plain'
  | 'html'
  | 'alternative'
  | 'related'
  | 'attachment'
  | 'rfc822'
  | 'calendar'
  | 'signed'
  | 'encrypted';

export const BODY_KINDS: readonly BodyKind[] = ['plain', 'html', 'alternative', 'related', 'attachment', 'rfc822', 'calendar', 'signed', 'encrypted'];

export type Profile = 'realistic' | 'malformed';

export interface ThreadOptions {
  /** Share of messages that answer an earlier one (0..1). Default 0.35. */
  replies?: number;
  /** Longest reply chain, root included. Default 8. */
  maxDepth?: number;
  /** Most direct replies one message gets. Default 6. */
  maxBreadth?: number;
  /** How far back (in messages) a reply's parent may be. Default 40. */
  window?: number;
  /** Share of replies whose In-Reply-To/References name a message that is not there. Default 0.05. */
  brokenReferences?: number;
  /** Share of replies with only a "Re:" subject, no In-Reply-To/References. Default 0.05. */
  subjectOnly?: number;
}

export interface AddressOptions {
  /** Scripts display names are drawn from. Default: every one. */
  scripts?: Script[];
  /** Charsets of encoded words (labels as in `sampleCharsets()`). Default: every one. */
  charsets?: string[];
  /** Share of non-ASCII display names sent as raw UTF-8 (RFC 6532) instead of encoded words. Default 0.05. */
  rawUtf8?: number;
  /** Share of To fields that are a group (`Team: a@x, b@y;` or `undisclosed-recipients:;`). Default 0.05. */
  groups?: number;
  /** Share of addresses without a host (`root`, as cron writes). Default 0.02. */
  hostless?: number;
  /** People in the address book the messages draw from. Default 64. */
  people?: number;
}

export interface DateOptions {
  /** The first message's arrival, ms since the epoch. Default 2024-01-01T00:00:00Z. */
  start?: number;
  /** Mean time between arrivals, ms. Default 1 hour. */
  spacing?: number;
  /** Share of Date headers in a zone other than +0000 (named zones like EST included). Default 0.7. */
  zones?: number;
  /** Share of messages without a Date header. Default 0.01. */
  missing?: number;
  /** Share with a Date header no parser reads. Default 0.01. */
  invalid?: number;
  /** Share dated before 1980 (down to 1900). Default 0.01. */
  farPast?: number;
  /** Share dated after 2090 (up to 9999). Default 0.01. */
  farFuture?: number;
}

export interface FlagOptions {
  /** Each a share of messages (0..1). Defaults: seen 0.6, answered 0.1, flagged 0.05, draft 0.01, deleted 0.01. */
  seen?: number;
  answered?: number;
  flagged?: number;
  draft?: number;
  deleted?: number;
  /** Keywords messages may carry. Default `$Forwarded`, `$Junk`, `$NotJunk`, `$Label1`, `Work`. */
  keywords?: string[];
  /** Share of messages with one or two of the keywords. Default 0.1. */
  keywordShare?: number;
}

export interface GenerateOptions {
  /** The seed (an integer 0..2^32-1): the same seed and options give the same bytes on every machine. Default 1. */
  seed?: number;
  /** Messages to make. Default 100. */
  count?: number;
  /** `realistic` (default) or `malformed` (each message one named case of the breakage catalogue). */
  profile?: Profile;
  /** Malformed profile: only these cases (names of `MALFORMED_CASES`), in turn. Default: every case. */
  cases?: string[];
  /** Realistic profile: relative weights of the body shapes. Defaults: plain 40, alternative 20, attachment 12, html 8, related 6, rfc822 4, calendar 4, signed 3, encrypted 3. */
  bodies?: Partial<Record<BodyKind, number>>;
  /** Octets a message has at least (filler text is added); attachments may make it larger. Default {min: 600, max: 12000}. */
  size?: SizeRange;
  /** Octets of each attachment or inline image before base64. Default {min: 200, max: 20000}. */
  attachmentSize?: SizeRange;
  /** No message is larger than this (the server's APPENDLIMIT). Default 67108864 (the maxLiteral default). */
  appendLimit?: number;
  threads?: ThreadOptions;
  addresses?: AddressOptions;
  dates?: DateOptions;
  flags?: FlagOptions;
  /** Write `X-Rookery-Case: <name>` into each malformed message (where the case leaves room for it). Default true. */
  caseHeader?: boolean;
}

/** Every option with its default filled in. */
export interface ResolvedOptions {
  seed: number;
  count: number;
  profile: Profile;
  cases: string[] | null;
  bodies: Record<BodyKind, number>;
  size: { min: number; max: number };
  attachmentSize: { min: number; max: number };
  appendLimit: number;
  threads: Required<ThreadOptions>;
  addresses: Required<AddressOptions>;
  dates: Required<DateOptions>;
  flags: Required<FlagOptions>;
  caseHeader: boolean;
}

/** The most messages one call makes: beyond it a typo (an extra zero) would fill the memory. */
export const MAX_COUNT = 10_000_000;

const DEFAULT_BODIES: Record<BodyKind, number> = {
  plain: 40,
  html: 8,
  alternative: 20,
  related: 6,
  attachment: 12,
  rfc822: 4,
  calendar: 4,
  signed: 3,
  encrypted: 3,
};

const KEYS = ['seed', 'count', 'profile', 'cases', 'bodies', 'size', 'attachmentSize', 'appendLimit', 'threads', 'addresses', 'dates', 'flags', 'caseHeader'];
const THREAD_KEYS = ['replies', 'maxDepth', 'maxBreadth', 'window', 'brokenReferences', 'subjectOnly'];
const ADDRESS_KEYS = ['scripts', 'charsets', 'rawUtf8', 'groups', 'hostless', 'people'];
const DATE_KEYS = ['start', 'spacing', 'zones', 'missing', 'invalid', 'farPast', 'farFuture'];
const FLAG_KEYS = ['seen', 'answered', 'flagged', 'draft', 'deleted', 'keywords', 'keywordShare'];

/** An IMAP keyword: an atom (RFC 3501 `flag-keyword`). */
const KEYWORD = /^[^\x00-\x20\x7f-\uffff(){%*"\\\]]+$/;

/** Checks that every key of `value` is one of `keys`: unknown keys are errors here, not ignored (a generator option misspelt silently changes the mail). */
function onlyKeys(value: Record<string, unknown>, keys: readonly string[], path: string, problems: Problems): void {
  const set = new Set(keys);
  if (!checkTypos(value, set, keys, path, problems)) return;
  for (const key of Object.keys(value)) {
    if (!set.has(key) && value[key] !== undefined) problems.add(childPath(path, key), `unknown key; known: ${keys.join(', ')}`);
  }
}

function share(problems: Problems, value: unknown, path: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
    problems.expected(path, 'a share between 0 and 1', value);
    return fallback;
  }
  return value;
}

function integer(problems: Problems, value: unknown, path: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    problems.expected(path, `an integer from ${min} to ${max}`, value);
    return fallback;
  }
  return value;
}

function sizeRange(problems: Problems, value: unknown, path: string, fallback: { min: number; max: number }, limit: number): { min: number; max: number } {
  if (value === undefined) return fallback;
  if (typeof value === 'number') {
    const n = integer(problems, value, path, -1, 0, limit);
    return n < 0 ? fallback : { min: n, max: n };
  }
  if (!isPlainObject(value)) {
    problems.expected(path, 'a number of octets or {min, max}', value);
    return fallback;
  }
  onlyKeys(value, ['min', 'max'], path, problems);
  const min = integer(problems, value.min, childPath(path, 'min'), -1, 0, limit);
  const max = integer(problems, value.max, childPath(path, 'max'), -1, 0, limit);
  if (min < 0 || max < 0) {
    if (value.min === undefined) problems.add(childPath(path, 'min'), 'missing');
    if (value.max === undefined) problems.add(childPath(path, 'max'), 'missing');
    return fallback;
  }
  if (min > max) {
    problems.add(path, `min (${min}) is larger than max (${max})`);
    return fallback;
  }
  return { min, max };
}

function section(problems: Problems, value: unknown, path: string, keys: readonly string[]): Record<string, unknown> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) {
    problems.expected(path, 'an object', value);
    return {};
  }
  onlyKeys(value, keys, path, problems);
  return value;
}

function stringList(problems: Problems, value: unknown, path: string, allowed: readonly string[] | null, what: string): string[] | null {
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.length === 0) {
    problems.expected(path, `a non-empty array of ${what}`, value);
    return null;
  }
  const out: string[] = [];
  value.forEach((item: unknown, i) => {
    if (typeof item !== 'string' || (allowed !== null && !allowed.includes(item))) {
      problems.expected(`${path}[${i}]`, allowed ? `one of ${allowed.join(', ')}` : what, item);
    } else if (!out.includes(item)) out.push(item);
  });
  return out;
}

/**
 * Validates generator options. `path` names where they sit (`storage.INBOX.generate`)
 * in the messages; `caseNames` are the malformed catalogue's names.
 */
export function resolveGenerateOptions(input: unknown, problems: Problems, path: string, caseNames: readonly string[]): ResolvedOptions {
  const o = section(problems, input ?? {}, path, KEYS);
  const at = (key: string): string => childPath(path, key);
  const profile = o.profile === undefined ? 'realistic' : o.profile;
  if (profile !== 'realistic' && profile !== 'malformed') problems.expected(at('profile'), '"realistic" or "malformed"', profile);
  const appendLimit = integer(problems, o.appendLimit, at('appendLimit'), 67_108_864, 1, 2 ** 32);

  const bodies = { ...DEFAULT_BODIES };
  const b = section(problems, o.bodies, at('bodies'), BODY_KINDS);
  if (o.bodies !== undefined) {
    for (const kind of BODY_KINDS) bodies[kind] = 0;
    for (const kind of BODY_KINDS) {
      if (b[kind] === undefined) continue;
      const w = b[kind];
      if (typeof w !== 'number' || !(w >= 0) || !Number.isFinite(w)) problems.expected(childPath(at('bodies'), kind), 'a weight of 0 or more', w);
      else bodies[kind] = w;
    }
    if (BODY_KINDS.every((k) => bodies[k] === 0)) problems.add(at('bodies'), 'every weight is 0; give at least one body shape a weight');
  }

  const t = section(problems, o.threads, at('threads'), THREAD_KEYS);
  const tp = at('threads');
  const a = section(problems, o.addresses, at('addresses'), ADDRESS_KEYS);
  const ap = at('addresses');
  const d = section(problems, o.dates, at('dates'), DATE_KEYS);
  const dp = at('dates');
  const f = section(problems, o.flags, at('flags'), FLAG_KEYS);
  const fp = at('flags');

  let keywords = ['$Forwarded', '$Junk', '$NotJunk', '$Label1', 'Work'];
  const kw = stringList(problems, f.keywords, childPath(fp, 'keywords'), null, 'keywords');
  if (kw) {
    kw.forEach((k, i) => {
      if (!KEYWORD.test(k)) problems.add(`${childPath(fp, 'keywords')}[${i}]`, `not an IMAP keyword (an atom): ${JSON.stringify(k)}`);
    });
    keywords = kw;
  }
  const caseHeader = o.caseHeader === undefined ? true : o.caseHeader;
  if (typeof caseHeader !== 'boolean') problems.expected(at('caseHeader'), 'a boolean', caseHeader);

  const resolved: ResolvedOptions = {
    seed: integer(problems, o.seed, at('seed'), 1, 0, 0xffffffff),
    count: integer(problems, o.count, at('count'), 100, 0, MAX_COUNT),
    profile: profile === 'malformed' ? 'malformed' : 'realistic',
    cases: stringList(problems, o.cases, at('cases'), caseNames, 'malformed case names'),
    bodies,
    size: sizeRange(problems, o.size, at('size'), { min: 600, max: 12_000 }, appendLimit),
    attachmentSize: sizeRange(problems, o.attachmentSize, at('attachmentSize'), { min: 200, max: 20_000 }, appendLimit),
    appendLimit,
    threads: {
      replies: share(problems, t.replies, childPath(tp, 'replies'), 0.35),
      maxDepth: integer(problems, t.maxDepth, childPath(tp, 'maxDepth'), 8, 1, 1000),
      maxBreadth: integer(problems, t.maxBreadth, childPath(tp, 'maxBreadth'), 6, 1, 65535),
      window: integer(problems, t.window, childPath(tp, 'window'), 40, 1, 1_000_000),
      brokenReferences: share(problems, t.brokenReferences, childPath(tp, 'brokenReferences'), 0.05),
      subjectOnly: share(problems, t.subjectOnly, childPath(tp, 'subjectOnly'), 0.05),
    },
    addresses: {
      scripts: (stringList(problems, a.scripts, childPath(ap, 'scripts'), SCRIPTS, 'scripts') as Script[] | null) ?? [...SCRIPTS],
      charsets: stringList(problems, a.charsets, childPath(ap, 'charsets'), sampleCharsets(), 'charset labels') ?? sampleCharsets(),
      rawUtf8: share(problems, a.rawUtf8, childPath(ap, 'rawUtf8'), 0.05),
      groups: share(problems, a.groups, childPath(ap, 'groups'), 0.05),
      hostless: share(problems, a.hostless, childPath(ap, 'hostless'), 0.02),
      people: integer(problems, a.people, childPath(ap, 'people'), 64, 2, 100_000),
    },
    dates: {
      start: integer(problems, d.start, childPath(dp, 'start'), Date.UTC(2024, 0, 1), -2_208_988_800_000, 253_402_300_799_000),
      spacing: integer(problems, d.spacing, childPath(dp, 'spacing'), 3_600_000, 0, 31_622_400_000),
      zones: share(problems, d.zones, childPath(dp, 'zones'), 0.7),
      missing: share(problems, d.missing, childPath(dp, 'missing'), 0.01),
      invalid: share(problems, d.invalid, childPath(dp, 'invalid'), 0.01),
      farPast: share(problems, d.farPast, childPath(dp, 'farPast'), 0.01),
      farFuture: share(problems, d.farFuture, childPath(dp, 'farFuture'), 0.01),
    },
    flags: {
      seen: share(problems, f.seen, childPath(fp, 'seen'), 0.6),
      answered: share(problems, f.answered, childPath(fp, 'answered'), 0.1),
      flagged: share(problems, f.flagged, childPath(fp, 'flagged'), 0.05),
      draft: share(problems, f.draft, childPath(fp, 'draft'), 0.01),
      deleted: share(problems, f.deleted, childPath(fp, 'deleted'), 0.01),
      keywords,
      keywordShare: share(problems, f.keywordShare, childPath(fp, 'keywordShare'), 0.1),
    },
    caseHeader: caseHeader !== false,
  };
  // Dates (and the calendar's event times a month later) must stay writable as RFC 5322 years.
  const last = resolved.dates.start + (resolved.count + 1) * resolved.dates.spacing + 31 * 86_400_000;
  if (last > LAST_DATE) problems.add(dp, `start + count x spacing reaches past the year 9999; use a smaller spacing or an earlier start`);
  return resolved;
}

/** 9999-12-31T23:59:59Z: the last instant a four-digit year can write. */
const LAST_DATE = 253_402_300_799_000;

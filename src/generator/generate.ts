/**
 * generateMailbox / generateMessages: a mailbox of mail made from a seed.
 *
 * Message i depends only on (seed, options, i) and on the thread plan of
 * the messages before it, so the first n messages are the same whatever the
 * count, and the whole is the same on every machine: our own PRNG, integer
 * arithmetic, UTC date fields, no clock, no locale.
 */
import type { InternalDate } from '../store/internal-date.js';
import { Problems } from '../options/problems.js';
import { writeBody, type BodyContext } from './bodies.js';
import { Bytes, words } from './bytes.js';
import { addressList, dateHeader, formatDate, mailbox, person, replySubject, rootSubject, type Person } from './headers.js';
import { MALFORMED_CASE_NAMES, malformedCase, type MalformedCase } from './malformed.js';
import { BODY_KINDS, resolveGenerateOptions, type BodyKind, type GenerateOptions, type ResolvedOptions } from './options.js';
import { Rng, streamSeed } from './random.js';

export interface GeneratedMessage {
  /** The message's bytes. */
  raw: Buffer;
  /** IMAP flags and keywords to load it with. */
  flags: string[];
  /** Arrival time (the IMAP internal date), in UTC. */
  internaldate: InternalDate;
  /** Malformed profile: the catalogue case this message is (also its `X-Rookery-Case:` header); else null. */
  case: string | null;
  /** Realistic profile: the body shape; else null. */
  body: BodyKind | null;
  /** The Message-ID without angle brackets, or null when the message has none. */
  messageId: string | null;
  /** Index of the message this one answers (its thread parent), or null for a thread root. */
  parent: number | null;
}

export interface GeneratedMailbox {
  messages: GeneratedMessage[];
  /** The options used, defaults filled in. */
  options: ResolvedOptions;
}

/** Options checked, or a ServiceError('INVALID') naming each problem. */
export function checkGenerateOptions(options: GenerateOptions | undefined, path = 'options'): ResolvedOptions {
  const problems = new Problems();
  const resolved = resolveGenerateOptions(options, problems, path, MALFORMED_CASE_NAMES);
  problems.throwIfAny();
  return resolved;
}

const SYSTEM = ['\\Seen', '\\Answered', '\\Flagged', '\\Draft', '\\Deleted'] as const;

function flagsFor(opts: ResolvedOptions, rng: Rng): string[] {
  const f = opts.flags;
  const out: string[] = [];
  const shares = [f.seen, f.answered, f.flagged, f.draft, f.deleted];
  for (let i = 0; i < SYSTEM.length; i++) if (rng.chance(shares[i]!)) out.push(SYSTEM[i]!);
  if (f.keywords.length > 0 && rng.chance(f.keywordShare)) {
    const first = rng.pick(f.keywords);
    out.push(first);
    const second = rng.pick(f.keywords);
    if (second !== first && rng.chance(0.3)) out.push(second);
  }
  return out;
}

/** The thread plan: each message's parent (or -1), depth and reply count, filled in as messages are made. */
class Threads {
  readonly parent: Int32Array;
  readonly depth: Uint16Array;
  readonly children: Uint16Array;
  /** The root's subject per root index; replies read theirs from here. */
  readonly subjects = new Map<number, string>();

  constructor(count: number) {
    this.parent = new Int32Array(count).fill(-1);
    this.depth = new Uint16Array(count);
    this.children = new Uint16Array(count);
  }

  root(i: number): number {
    let r = i;
    while (this.parent[r]! >= 0) r = this.parent[r]!;
    return r;
  }

  /** Picks a parent for message i among the `window` before it, within the depth and breadth limits, or -1. */
  choose(opts: ResolvedOptions, rng: Rng, i: number): number {
    const t = opts.threads;
    if (i === 0 || !rng.chance(t.replies)) return -1;
    for (let attempt = 0; attempt < 4; attempt++) {
      const j = i - 1 - rng.below(Math.min(i, t.window));
      if (this.depth[j]! + 1 < t.maxDepth && this.children[j]! < t.maxBreadth) return j;
    }
    return -1;
  }

  link(i: number, parent: number): void {
    this.parent[i] = parent;
    this.depth[i] = this.depth[parent]! + 1;
    this.children[parent] = this.children[parent]! + 1;
  }

  /** Ancestors of i, the root first (its References). */
  ancestors(i: number): number[] {
    const out: number[] = [];
    for (let p = this.parent[i]!; p >= 0; p = this.parent[p]!) out.push(p);
    return out.reverse();
  }
}

function messageId(opts: ResolvedOptions, i: number): string {
  return `${i.toString(36)}.${opts.seed.toString(36)}@generator.rookery.invalid`;
}

/** A cache of the address book: each person is made once, on first use. */
function addressBook(opts: ResolvedOptions): (k: number) => Person {
  const cache = new Map<number, Person>();
  return (k) => {
    let p = cache.get(k);
    if (!p) {
      p = person(opts, k);
      cache.set(k, p);
    }
    return p;
  };
}

interface Maker {
  /** The scratch buffer messages are written into before each is copied out at its own size. */
  scratch: Bytes;
  opts: ResolvedOptions;
  threads: Threads;
  people: (k: number) => Person;
  cases: readonly MalformedCase[];
}

function arrival(opts: ResolvedOptions, rng: Rng, i: number): number {
  const d = opts.dates;
  const jitter = d.spacing > 0 ? rng.below(d.spacing) : 0;
  return Math.floor((d.start + i * d.spacing + jitter) / 1000) * 1000;
}

function realistic(m: Maker, i: number): GeneratedMessage {
  const { opts, threads, people } = m;
  const rng = new Rng(streamSeed(opts.seed, i));
  const ms = arrival(opts, rng, i);
  const sent = ms - rng.below(600) * 1000;
  const parent = threads.choose(opts, rng, i);
  if (parent >= 0) threads.link(i, parent);
  const root = parent >= 0 ? threads.root(i) : i;
  if (parent < 0) threads.subjects.set(i, rootSubject(opts, rng));
  const rootSubjectText = threads.subjects.get(root)!;

  const fromPerson = people(rng.below(opts.addresses.people));
  const toPerson = people(rng.below(opts.addresses.people));
  const b = m.scratch.reset();
  const id = messageId(opts, i);
  const date = dateHeader(opts, rng, sent);
  b.line(`Return-Path: <${fromPerson.local}@${fromPerson.domain}>`);
  b.line(`Received: from mx.example.net (mx.example.net [192.0.2.${1 + (i % 250)}])\r\n\tby mail.example.com with ESMTPS id ${i.toString(36)}x${opts.seed.toString(36)}\r\n\tfor <${toPerson.local}@${toPerson.domain}>; ${formatDate(ms, 0, null, true)}`);
  b.line(`Message-ID: <${id}>`);
  if (date !== null) b.line(`Date: ${date}`);
  b.line(`From: ${mailbox(fromPerson, rng, opts.addresses.hostless)}`);
  b.line(`To: ${addressList(opts, rng, 4, people)}`);
  if (rng.chance(0.25)) b.line(`Cc: ${addressList(opts, rng, 3, people)}`);
  if (rng.chance(0.05)) b.line(`Reply-To: ${mailbox(people(rng.below(opts.addresses.people)), rng, 0)}`);
  if (parent >= 0) {
    b.line(`Subject: ${replySubject(rng, rootSubjectText)}`);
    const t = opts.threads;
    const x = rng.next();
    if (x < t.subjectOnly) {
      // A subject-only thread: the reply names no parent (old or careless mailers).
    } else if (x < t.subjectOnly + t.brokenReferences) {
      const missing = `<gone.${i.toString(36)}.${opts.seed.toString(36)}@generator.rookery.invalid>`;
      b.line(`In-Reply-To: ${missing}`);
      b.line(`References: ${[...threads.ancestors(i).slice(0, -1).map((a) => `<${messageId(opts, a)}>`), missing].join('\r\n ')}`);
    } else {
      b.line(`In-Reply-To: <${messageId(opts, parent)}>`);
      b.line(`References: ${threads.ancestors(i).map((a) => `<${messageId(opts, a)}>`).join('\r\n ')}`);
    }
  } else {
    b.line(`Subject: ${rootSubjectText}`);
  }
  b.line(`User-Agent: ${rng.pick(['Mozilla Thunderbird', 'Apple Mail (2.3774)', 'Microsoft Outlook 16.0', 'mutt/2.2.12', 'Roundcube Webmail/1.6'])}`);
  b.line('MIME-Version: 1.0');
  const kind = rng.weighted(BODY_KINDS, opts.bodies);
  let counter = 0;
  const target = Math.min(opts.appendLimit, rng.size(opts.size));
  const ctx: BodyContext = {
    opts,
    rng,
    next: () => ++counter,
    tag: `${i.toString(36)}_${opts.seed.toString(36)}`,
    ms: sent,
    from: `${fromPerson.local}@${fromPerson.domain}`,
    to: `${toPerson.local}@${toPerson.domain}`,
    target,
  };
  writeBody(ctx, b, kind);
  let raw = b.done(rng, target);
  // Attachments can overshoot the APPENDLIMIT: such a message becomes a plain one of the largest size allowed.
  if (raw.length > opts.appendLimit) {
    const small = new Bytes(1024);
    small.line(`Message-ID: <${id}>`).line(`Subject: ${words(rng, 3)}`).line('Content-Type: text/plain').line('').hole();
    raw = small.done(rng, opts.appendLimit);
    if (raw.length > opts.appendLimit) raw = raw.subarray(0, opts.appendLimit);
  }
  return {
    raw,
    flags: flagsFor(opts, rng),
    internaldate: { ms, tz: 0 },
    case: null,
    body: kind,
    messageId: id,
    parent: parent >= 0 ? parent : null,
  };
}

function malformed(m: Maker, i: number): GeneratedMessage {
  const { opts, people } = m;
  const rng = new Rng(streamSeed(opts.seed, i));
  const ms = arrival(opts, rng, i);
  const chosen = m.cases[i % m.cases.length]!;
  const id = messageId(opts, i);
  const from = people(rng.below(opts.addresses.people));
  const to = people(rng.below(opts.addresses.people));
  const head = (subject?: string): string =>
    `${opts.caseHeader && chosen.caseHeader ? `X-Rookery-Case: ${chosen.name}\r\n` : ''}Message-ID: <${id}>\r\nDate: ${formatDate(ms, 0, null, true)}\r\n` +
    `From: ${from.local}@${from.domain}\r\nTo: ${to.local}@${to.domain}\r\nSubject: ${subject ?? `${chosen.name} ${words(rng, 2)}`}\r\n`;
  const raw = chosen.make({ rng, tag: `${i.toString(36)}_${opts.seed.toString(36)}`, head });
  return {
    raw: raw.length > opts.appendLimit ? raw.subarray(0, opts.appendLimit) : raw,
    flags: flagsFor(opts, rng),
    internaldate: { ms, tz: 0 },
    case: chosen.name,
    body: null,
    messageId: chosen.name === 'empty-message' ? null : id,
    parent: null,
  };
}

/**
 * The messages one at a time, for writing a large mailbox without holding
 * it (`rookery generate` streams an mbox this way). Throws
 * ServiceError('INVALID') for bad options before the first message.
 */
export function* generateMessages(options: GenerateOptions = {}): Generator<GeneratedMessage, void, undefined> {
  const opts = checkGenerateOptions(options);
  yield* messagesOf(opts);
}

/** The messages of already checked options. */
export function* messagesOf(opts: ResolvedOptions): Generator<GeneratedMessage, void, undefined> {
  const maker: Maker = {
    scratch: new Bytes(64 * 1024),
    opts,
    threads: new Threads(opts.profile === 'realistic' ? opts.count : 0),
    people: addressBook(opts),
    cases: (opts.cases ?? MALFORMED_CASE_NAMES).map((n) => malformedCase(n)!),
  };
  const make = opts.profile === 'malformed' ? malformed : realistic;
  for (let i = 0; i < opts.count; i++) yield make(maker, i);
}

/**
 * A mailbox of `count` messages made from `seed`: the same seed and
 * options give the same bytes on every machine (see docs/generator.md).
 *
 * @example generateMailbox({ seed: 7, count: 1000, profile: 'malformed' })
 */
export function generateMailbox(options: GenerateOptions = {}): GeneratedMailbox {
  const opts = checkGenerateOptions(options);
  const messages: GeneratedMessage[] = new Array<GeneratedMessage>(opts.count);
  let i = 0;
  for (const m of messagesOf(opts)) messages[i++] = m;
  return { messages, options: opts };
}

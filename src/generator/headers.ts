/**
 * Header values of generated mail: people and their addresses (display
 * names in many scripts as RFC 2047 encoded words, RFC 5322 §3.4 groups,
 * addresses without a host), RFC 5322 §3.3 dates with numeric and obsolete
 * zones, missing and unreadable ones, and subjects.
 */
import { NAME_SAMPLES, type Script } from './charsets.js';
import type { ResolvedOptions } from './options.js';
import { Rng, streamSeed } from './random.js';
import { words } from './bytes.js';

export interface Person {
  /** The display name as it goes into the header (encoded words, quoted or plain); '' for none. */
  display: string;
  /** True when `display` holds raw 8-bit UTF-8 (RFC 6532) rather than ASCII. */
  utf8: boolean;
  local: string;
  domain: string;
}

const FIRST = ['john', 'mary', 'alex', 'sam', 'kim', 'lee', 'pat', 'chris', 'dana', 'robin', 'jo', 'max'];
const LAST = ['smith', 'jones', 'brown', 'taylor', 'wilson', 'clark', 'hall', 'young', 'king', 'wright'];
const DOMAINS = ['example.com', 'example.org', 'example.net', 'mail.example.com', 'lists.example.org', 'xn--bcher-kva.example', 'corp.example.co.uk'];

/** Characters RFC 2047 §5(3) lets stand for themselves in a Q-encoded phrase. */
const Q_SAFE = /[A-Za-z0-9!*+\-/]/;

function qEncode(bytes: Buffer): string {
  let s = '';
  for (const b of bytes) {
    const ch = String.fromCharCode(b);
    if (b === 0x20) s += '_';
    else if (b < 0x80 && Q_SAFE.test(ch)) s += ch;
    else s += `=${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return s;
}

/** One encoded word, or null when it would be longer than the 75 characters RFC 2047 §2 allows. */
function encodedWord(charset: string, bytes: Buffer, q: boolean): string | null {
  const word = q ? `=?${charset}?Q?${qEncode(bytes)}?=` : `=?${charset}?B?${bytes.toString('base64')}?=`;
  return word.length <= 75 ? word : null;
}

/** `text` as encoded words in `charset` (bytes given), split into UTF-8 words of whole characters when one is too long. */
export function encodeWords(rng: Rng, text: string, charset: string, bytes: Buffer): string {
  const q = rng.chance(0.4);
  const word = encodedWord(charset, bytes, q) ?? encodedWord(charset, bytes, false);
  if (word) return word;
  // Too long in this charset: UTF-8, one word per few characters (RFC 2047 §5: whole characters per word).
  const chars = [...text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += 8) out.push(encodedWord('utf-8', Buffer.from(chars.slice(i, i + 8).join('')), false)!);
  return out.join(' ');
}

let byScript: Map<Script, (readonly [Script, string, string, string])[]> | null = null;

function samplesOf(script: Script): (readonly [Script, string, string, string])[] {
  if (!byScript) {
    byScript = new Map();
    for (const s of NAME_SAMPLES) {
      const list = byScript.get(s[0]) ?? [];
      list.push(s);
      byScript.set(s[0], list);
    }
  }
  return byScript.get(script) ?? [];
}

/** Person `k` of the address book: the same for every message of a mailbox. */
export function person(opts: ResolvedOptions, k: number): Person {
  const rng = new Rng(streamSeed(opts.seed, k, 101));
  const first = rng.pick(FIRST);
  const last = rng.pick(LAST);
  const local = rng.chance(0.5) ? `${first}.${last}` : `${first[0]}${last}${k}`;
  const domain = rng.pick(DOMAINS);
  const style = rng.below(10);
  const cap = (w: string): string => w[0]!.toUpperCase() + w.slice(1);
  if (style < 3) {
    // An international name, in a charset the options allow (raw UTF-8 now and then).
    const script = rng.pick(opts.addresses.scripts);
    const samples = samplesOf(script);
    const text = samples.length > 0 ? rng.pick(samples)[1] : 'Zoë';
    if (rng.chance(opts.addresses.rawUtf8)) return { display: `"${text}"`, utf8: true, local, domain };
    const fits = samples.filter((s) => s[1] === text && opts.addresses.charsets.includes(s[2]));
    const [, , charset, b64] = fits.length > 0 ? rng.pick(fits) : [script, text, 'utf-8', Buffer.from(text).toString('base64')];
    return { display: encodeWords(rng, text, charset, Buffer.from(b64, 'base64')), utf8: false, local, domain };
  }
  if (style < 5) return { display: `"${cap(last)}, ${cap(first)}"`, utf8: false, local, domain };
  if (style < 9) return { display: `${cap(first)} ${cap(last)}`, utf8: false, local, domain };
  return { display: '', utf8: false, local, domain };
}

/** A person as an RFC 5322 mailbox. */
export function mailbox(p: Person, rng: Rng, hostless: number): string {
  if (rng.chance(hostless)) return p.local.replace(/\W/g, '');
  const addr = `${p.local}@${p.domain}`;
  if (p.display === '') return rng.chance(0.5) ? addr : `<${addr}>`;
  return `${p.display} <${addr}>`;
}

/** A To/Cc value: one to `max` people, or a group now and then. */
export function addressList(opts: ResolvedOptions, rng: Rng, max: number, people: (k: number) => Person): string {
  const a = opts.addresses;
  if (rng.chance(a.groups)) {
    if (rng.chance(0.4)) return 'undisclosed-recipients:;';
    const members: string[] = [];
    const n = rng.int(1, 3);
    for (let i = 0; i < n; i++) members.push(mailbox(people(rng.below(a.people)), rng, 0));
    return `${rng.pick(['Team', 'Project Group', '"Release, crew"'])}: ${members.join(', ')};`;
  }
  const n = rng.int(1, max);
  const list: string[] = [];
  for (let i = 0; i < n; i++) list.push(mailbox(people(rng.below(a.people)), rng, a.hostless));
  // Long lists are folded (RFC 5322 §2.2.3), as mail programs write them.
  return list.join(n > 2 ? ',\r\n\t' : ', ');
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Numeric zones seen in real mail, in minutes east of UTC: half and quarter hours, and the extremes. */
const ZONES = [60, 120, -300, -240, -480, -420, 330, 345, 540, 600, 570, -210, 780, 840, -720, 0];
/** RFC 5322 §4.3 obsolete zone names and their offsets. */
const NAMED_ZONES: readonly [string, number][] = [
  ['GMT', 0],
  ['UT', 0],
  ['EST', -300],
  ['EDT', -240],
  ['CST', -360],
  ['CDT', -300],
  ['MST', -420],
  ['MDT', -360],
  ['PST', -480],
  ['PDT', -420],
];
const INVALID_DATES = ['yesterday', '32 Foo 2021 25:61:00 +9999', '2024-03-05T10:11:12Z', 'Mon, 01 Jan 2024', '0', 'Tue, 30 Feb 2024 10:00:00 +0000', 'Thu, 01 Jan 1970 00:00:00 GMT+0200 (CEST)'];

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** An RFC 5322 date-time of the instant `ms` written in zone `tz` (minutes) or the named zone. */
export function formatDate(ms: number, tz: number, zoneName: string | null, withDay: boolean): string {
  const local = new Date(ms + tz * 60_000);
  const sign = tz < 0 ? '-' : '+';
  const abs = Math.abs(tz);
  const zone = zoneName ?? `${sign}${pad2(Math.floor(abs / 60))}${pad2(abs % 60)}`;
  const day = withDay ? `${DAYS[local.getUTCDay()]}, ` : '';
  const year = String(local.getUTCFullYear()).padStart(4, '0');
  return `${day}${pad2(local.getUTCDate())} ${MONTHS[local.getUTCMonth()]} ${year} ${pad2(local.getUTCHours())}:${pad2(local.getUTCMinutes())}:${pad2(local.getUTCSeconds())} ${zone}`;
}

/** The Date header value of a message sent at `ms` (null: none), per the date options. */
export function dateHeader(opts: ResolvedOptions, rng: Rng, ms: number): string | null {
  const d = opts.dates;
  const x = rng.next();
  if (x < d.missing) return null;
  if (x < d.missing + d.invalid) return rng.pick(INVALID_DATES);
  let when = ms;
  if (x < d.missing + d.invalid + d.farPast) when = Date.UTC(rng.int(1900, 1979), rng.below(12), rng.int(1, 28), rng.below(24), rng.below(60), rng.below(60));
  else if (x < d.missing + d.invalid + d.farPast + d.farFuture) when = Date.UTC(rng.pick([2090, 2100, 2999, 9999]), rng.below(12), rng.int(1, 28), rng.below(24), rng.below(60), rng.below(60));
  if (!rng.chance(d.zones)) return formatDate(when, 0, rng.chance(0.2) ? '-0000' : null, rng.chance(0.9));
  if (rng.chance(0.15)) {
    const [name, offset] = rng.pick(NAMED_ZONES);
    return formatDate(when, offset, name, rng.chance(0.9));
  }
  return formatDate(when, rng.pick(ZONES), null, rng.chance(0.9));
}

/** A thread's subject: plain words, or an encoded word in one of the scripts. */
export function rootSubject(opts: ResolvedOptions, rng: Rng): string {
  const w = words(rng, rng.int(3, 8));
  const plain = w[0]!.toUpperCase() + w.slice(1);
  if (rng.chance(0.12)) {
    const samples = samplesOf(rng.pick(opts.addresses.scripts)).filter((s) => opts.addresses.charsets.includes(s[2]));
    if (samples.length > 0) {
      const [, text, charset, b64] = rng.pick(samples);
      return `${encodeWords(rng, text, charset, Buffer.from(b64, 'base64'))} ${words(rng, 2)}`;
    }
  }
  if (rng.chance(0.03)) return `=?utf-8?B?${Buffer.from('Party \u{1f389} time').toString('base64')}?= ${words(rng, 2)}`;
  return plain;
}

const REPLY_PREFIXES = ['Re: ', 'Re: ', 'Re: ', 'RE: ', 'Re: Re: ', 'AW: ', 'Sv: ', 'Re[2]: ', 'Fwd: '];

export function replySubject(rng: Rng, root: string): string {
  return rng.pick(REPLY_PREFIXES) + root;
}

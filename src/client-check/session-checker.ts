/**
 * The client checker of one session. The session calls it at a few named
 * points (bytes received, capabilities advertised, a literal announced, a
 * command read, a command answered, a line inside a command, the close);
 * it only looks, never writes. In `strict` mode it hands back the
 * `BAD [CLIENTBUG]` answer for a command that broke an error rule.
 *
 * Pipelining is judged by byte offsets: the offset at which each command
 * starts in the input and the input received when each tagged answer was
 * written. A command whose first byte had arrived before an earlier
 * command's answer went out was sent while that command was in progress.
 */
import type { CommandResult, CommandSpec } from '../imap/command.js';
import { imapProtocol, type PointKind } from '../imap/protocol.js';
import type { ImapSession } from '../imap/session.js';
import type { LiteralSegment, Segment } from '../imap/wire/reader.js';
import type { ClientFindingLog } from './findings.js';
import { clientRule, REV2_INCLUDES } from './rules.js';

/** A command that has been answered, with the input received by then. */
interface Answered {
  /** Null for a tag too long to keep (never compared then). */
  tag: string | null;
  /** `tagPrint(tag)`: tags are compared as numbers first, as strings only when those match. */
  print: number;
  name: string;
  receivedAtAnswer: number;
}

/** A 32-bit FNV-1a of a tag's characters. */
function tagPrint(tag: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < tag.length; i++) h = Math.imul(h ^ tag.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Longest tag or command name a finding carries (a peer controls them; findings are kept in numbers). */
const MAX_NAME = 64;

const clip = (text: string): string => (text.length > MAX_NAME ? `${text.slice(0, MAX_NAME)}...` : text);

/** Answered commands remembered for pipelining checks. */
const ANSWERED_KEPT = 32;
/** Longest argument text kept as a shape in the offered cache. */
const SHAPE_MAX = 128;
/**
 * Shapes a session keeps: a sync loop repeats a few, and text that varies
 * (a CHANGEDSINCE value) must not make each session hold many.
 */
const SHAPES_KEPT = 64;
/** RFC 2177 §3: clients re-issue IDLE at least every 29 minutes. */
const IDLE_LIMIT_MS = 29 * 60_000;
/** RFC 7162 §4: clients SHOULD keep command lines to 8192 octets. */
const LINE_LIMIT = 8192;
/** RFC 7888 §4: the largest non-synchronizing literal under LITERAL-. */
const LITERAL_MINUS_MAX = 4096;

/** Points the core parser reads itself although an extension offers them (RFC 7162's MODSEQ). */
const CORE_PARSED: Readonly<Partial<Record<PointKind, ReadonlyMap<string, readonly string[]>>>> = {
  fetchItem: new Map([['MODSEQ', ['CONDSTORE']]]),
  searchKey: new Map([['MODSEQ', ['CONDSTORE']]]),
};

/** The tag and name of a command as the session's parser read them. */
export interface ParsedHead {
  tag: string;
  /** Upper case; `UID FETCH` for a UID command. */
  name: string;
}

/**
 * The key under which a command's arguments are found all offered: the
 * text after the name, less a FETCH or STORE's sequence set (it changes
 * every time, the items do not). Null for text with a literal or a long one.
 */
function shapeOf(segments: readonly Segment[], from: number, base: string): string | null {
  if (segments.length !== 1) return null;
  const first = segments[0] as Buffer;
  let at = from + 1;
  if (base === 'FETCH' || base === 'STORE') {
    while (at < first.length && first[at] !== 0x20) at++;
  }
  if (first.length - at > SHAPE_MAX) return null;
  return `${base} ${first.toString('latin1', at)}`;
}

/** The kinds of extension points a command's arguments may hold, by command (UID commands by their base name). */
const ARGUMENT_POINTS: ReadonlyMap<string, readonly PointKind[]> = new Map<string, readonly PointKind[]>([
  ['FETCH', ['fetchItem', 'fetchModifier']],
  ['STORE', ['storeModifier']],
  ['SEARCH', ['searchKey']],
  ['SELECT', ['selectParameter']],
  ['EXAMINE', ['selectParameter']],
  ['STATUS', ['statusItem']],
]);

/** Most points a session's cache of offered points holds: a peer chooses the names. */
const OFFERED_CACHE_MAX = 1024;

/**
 * The points found offered, by kind then name: looked up without making a
 * key string (a FETCH or SEARCH asks about each of its items, every time).
 */
class OfferedCache {
  private readonly byKind = new Map<PointKind, Set<string>>();
  private size = 0;
  /**
   * Argument texts (after a FETCH or STORE's sequence set) whose every
   * point was found offered: a sync loop sends `UID FETCH n (FLAGS)` with
   * a new n each time, and the shape needs tokenizing only once.
   */
  private readonly shapes = new Set<string>();

  hasShape(key: string): boolean {
    return this.shapes.has(key);
  }

  addShape(key: string): void {
    if (this.shapes.size < SHAPES_KEPT) this.shapes.add(key);
  }

  has(kind: PointKind, point: string): boolean {
    return this.byKind.get(kind)?.has(point) === true;
  }

  add(kind: PointKind, point: string): void {
    if (this.size >= OFFERED_CACHE_MAX) return;
    let names = this.byKind.get(kind);
    if (names === undefined) this.byKind.set(kind, (names = new Set()));
    if (names.has(point)) return;
    names.add(point);
    this.size++;
  }

  clear(): void {
    this.byKind.clear();
    this.shapes.clear();
    this.size = 0;
  }
}

/** How a finding names a point of `kind` in command `name` (made only for a finding). */
function describePoint(kind: PointKind, point: string, name: string): string {
  const base = name.startsWith('UID ') ? name.slice(4) : name;
  switch (kind) {
    case 'command':
      return `the command ${name}`;
    case 'searchReturn':
      return `the SEARCH result option ${point}`;
    case 'searchKey':
      return `the SEARCH key ${point}`;
    case 'storeModifier':
      return `the STORE modifier ${point}`;
    case 'fetchItem':
      return `the FETCH item ${point}`;
    case 'fetchModifier':
      return `the FETCH modifier ${point}`;
    case 'statusItem':
      return `the STATUS item ${point}`;
    case 'selectParameter':
      return `the ${base} parameter ${point}`;
    default:
      return `the ${base} ${kind} ${point}`;
  }
}

/** Commands that use message sequence numbers (RFC 3501 §5.5's examples). */
const SEQUENCE_COMMANDS = new Set(['FETCH', 'STORE', 'COPY', 'MOVE', 'SEARCH', 'SORT', 'THREAD']);
/** Commands during which the server may not send EXPUNGE (RFC 3501 §7.4.1): pipelining behind them is safe. */
const NO_EXPUNGE_COMMANDS = new Set(['FETCH', 'STORE', 'SEARCH']);
/** Commands whose first argument is a sequence set. */
const SEQUENCE_SET_FIRST = new Set(['FETCH', 'STORE', 'COPY', 'MOVE']);
/** SEARCH keys followed by one string argument (never a key name). */
const SEARCH_STRING_KEYS = new Set(['BCC', 'BODY', 'CC', 'FROM', 'SUBJECT', 'TEXT', 'TO', 'KEYWORD', 'UNKEYWORD', 'CHARSET', 'X-GM-RAW']);

function isTagChar(c: number): boolean {
  return c > 0x20 && c < 0x7f && c !== 0x28 && c !== 0x29 && c !== 0x7b && c !== 0x25 && c !== 0x2a && c !== 0x22 && c !== 0x5c && c !== 0x2b;
}

interface Token {
  /** Upper-case atom, `(`, `)`, or `"` for a quoted string or literal. */
  text: string;
  depth: number;
}

/**
 * The atoms and parentheses of a command's text (literals and quoted
 * strings become `"`; bracketed section specs and partials are skipped).
 */
function tokenize(segments: readonly Segment[], from: number): Token[] {
  const out: Token[] = [];
  let depth = 0;
  segments.forEach((seg, index) => {
    if (!Buffer.isBuffer(seg)) {
      out.push({ text: '"', depth });
      return;
    }
    let i = index === 0 ? from : 0;
    const n = seg.length;
    while (i < n) {
      const c = seg[i]!;
      if (c === 0x20) i++;
      else if (c === 0x28) {
        out.push({ text: '(', depth });
        depth++;
        i++;
      } else if (c === 0x29) {
        depth = Math.max(0, depth - 1);
        out.push({ text: ')', depth });
        i++;
      } else if (c === 0x22) {
        i++;
        while (i < n && seg[i] !== 0x22) i += seg[i] === 0x5c ? 2 : 1;
        i++;
        out.push({ text: '"', depth });
      } else {
        const start = i;
        while (i < n && seg[i] !== 0x20 && seg[i] !== 0x28 && seg[i] !== 0x29 && seg[i] !== 0x5b && seg[i] !== 0x3c) i++;
        const word = seg.toString('latin1', start, i).toUpperCase();
        // A section spec `[...]` or a partial `<...>` belongs to the item before it.
        while (i < n && (seg[i] === 0x5b || seg[i] === 0x3c)) {
          const close = seg[i] === 0x5b ? 0x5d : 0x3e;
          while (i < n && seg[i] !== close) i++;
          i++;
        }
        if (word !== '') out.push({ text: word, depth });
      }
    }
  });
  return out;
}

/**
 * Told capability sets, shared by every session told the same list: a
 * server tells most sessions one of a few lists, and a set per session
 * would cost each idle session kilobytes (issue 20's per-session budget).
 */
const toldSets = new Map<string, ReadonlySet<string>>();
const TOLD_SETS_MAX = 256;

function toldSet(capabilities: readonly string[]): ReadonlySet<string> {
  const key = capabilities.join(' ');
  let told = toldSets.get(key);
  if (told === undefined) {
    told = new Set(capabilities.map((c) => c.toUpperCase()));
    // Lists a script rule made up can be many: the cache stays bounded.
    if (toldSets.size >= TOLD_SETS_MAX) toldSets.clear();
    toldSets.set(key, told);
  }
  return told;
}

export class SessionChecker {
  /** Bytes of input received so far (after TLS and compression). */
  private received = 0;
  /** Input offset where the next command or line starts. */
  private boundary = 0;
  /**
   * The last ANSWERED_KEPT answered commands, a ring (`answeredNext` is the
   * slot the next one takes): its slots are reused, so a pipelining client
   * costs no allocation per answer. Null until the first answer, and again
   * once an idle session has nothing in flight.
   */
  private answered: Answered[] | null = null;
  private answeredNext = 0;
  /** Findings made so far (enabled or not): a shape with none is cached. */
  private findings = 0;
  /** Upper-case capabilities the client was last told (greeting, CAPABILITY, response codes); null: none yet. */
  private told: ReadonlySet<string> | null = null;
  /**
   * Whether a point (`kind name`) is offered, worked out once per told list,
   * session state and ENABLEd set (what an extension advertises follows the
   * state): commands repeat the same few items.
   */
  private offeredCache: OfferedCache | null = null;
  private cacheState: string | null = null;
  private cacheEnabled = -1;
  /** The strict answer owed to the command being read or run. */
  private verdict: CommandResult | null = null;
  /** The command being run (for findings made while it reads lines). */
  private current: { tag: string | null; name: string | null } | null = null;
  private idleSince: number | null = null;
  private loggedOut = false;
  private readonly strict: boolean;

  constructor(
    private readonly log: ClientFindingLog,
    private readonly session: ImapSession,
  ) {
    this.strict = log.mode === 'strict';
    log.sawSession(session.id);
  }

  /** Input arrived (`onData`). */
  receivedBytes(n: number): void {
    this.received += n;
  }

  /** The session told the client its capabilities (greeting, CAPABILITY, a `[CAPABILITY ...]` code). */
  advertised(capabilities: readonly string[]): void {
    this.told = toldSet(capabilities);
    this.offeredCache?.clear();
  }

  /**
   * Bytes the session wrote that it did not make itself (a script rule's
   * `send`/`before`, `inject`): a capability list in them is what the
   * client was told.
   */
  wrote(data: Buffer): void {
    const m = /(?:^|\n)\* CAPABILITY ([^\r\n]*)|\[CAPABILITY ([^\]\r\n]*)\]/i.exec(data.toString('latin1'));
    if (m) this.advertised((m[1] ?? m[2]!).trim().split(/ +/));
  }

  /** TLS started: the client must forget what it was told (RFC 3501 §6.2.1). */
  tlsStarted(): void {
    this.told = null;
    this.offeredCache?.clear();
  }

  /** The reader refused a command or line; `buffered` is the input not read yet. */
  skipped(buffered: number): void {
    this.boundary = this.received - buffered;
    // The refused command never runs: a strict answer owed to it must not fall on the next one.
    this.verdict = null;
  }

  private offered(cap: string): boolean {
    const told = this.told;
    if (told === null) return false;
    if (told.has(cap)) return true;
    // Under IMAP4rev2 (RFC 9051 §6.3.1: only once the client ENABLEd it) what it includes needs no capability of its own.
    return told.has('IMAP4REV2') && this.session.enabled.has('IMAP4REV2') && REV2_INCLUDES.includes(cap);
  }

  private find(rule: string, tag: string | null, command: string | null, text: string): void {
    this.findings++;
    if (!this.log.enabled(rule)) return;
    this.log.add({ session: this.session.id, user: this.session.user, tag, command, rule, text });
    if (this.strict && this.verdict === null && clientRule(rule)!.severity === 'error') {
      this.verdict = { status: 'BAD', code: 'CLIENTBUG', text: `${rule}: ${text}` };
    }
  }

  /**
   * A literal's marker was read (`checkLiteral`); `buffered` is the input
   * after it already received.
   */
  literal(literal: { tag: string | null; command: string | null; size: number; sync: boolean }, buffered: number): void {
    const info = { ...literal, tag: literal.tag === null ? null : clip(literal.tag), command: literal.command === null ? null : clip(literal.command) };
    if (info.sync) {
      // The client must wait for "+" (RFC 3501 §7.5): bytes after {n}CRLF were sent before it.
      if (buffered > 0) this.find('literal-before-continuation', info.tag, info.command, `sent the ${info.size}-octet literal {${info.size}} before the server's "+" continuation`);
      return;
    }
    if (this.offered('LITERAL+')) return;
    if (this.offered('LITERAL-')) {
      if (info.size > LITERAL_MINUS_MAX) this.find('nonsync-literal-not-advertised', info.tag, info.command, `{${info.size}+} is above the 4096 octets LITERAL- allows`);
      return;
    }
    this.find('nonsync-literal-not-advertised', info.tag, info.command, `{${info.size}+} but the session was offered neither LITERAL+ nor LITERAL-`);
  }

  /**
   * A whole command was read; `buffered` is the input after it already
   * received. Returns the strict answer (BAD [CLIENTBUG]) when it broke an
   * error rule and the mode is strict; the command must then not run.
   */
  command(segments: readonly Segment[], buffered: number, spec: CommandSpec | undefined, parsed?: ParsedHead): CommandResult | null {
    const start = this.boundary;
    this.boundary = this.received - buffered;
    const first = segments[0] as Buffer;
    let i = 0;
    while (i < first.length && first[i] !== 0x20) i++;
    let j = i + 1;
    while (j < first.length && first[j] !== 0x20) j++;
    let fullTag: string;
    let name: string;
    if (parsed !== undefined) {
      // The session's parser read them already (a well-formed tag, an upper-case name).
      fullTag = parsed.tag;
      name = clip(parsed.name);
      if (parsed.name.startsWith('UID ')) {
        let k = j + 1;
        while (k < first.length && first[k] !== 0x20) k++;
        j = k;
      }
    } else {
      fullTag = first.toString('latin1', 0, i);
      name = clip(first.toString('latin1', i + 1, j).toUpperCase());
      if (name === 'UID') {
        let k = j + 1;
        while (k < first.length && first[k] !== 0x20) k++;
        name = `UID ${clip(first.toString('latin1', j + 1, k).toUpperCase())}`;
        j = k;
      }
    }
    const tag = clip(fullTag);
    this.current = { tag, name };
    const session = this.session;
    if (name === 'LOGOUT') this.loggedOut = true;

    // Tag syntax (RFC 3501 §9: tag = 1*<any ASTRING-CHAR except "+">).
    let badTag = fullTag.length === 0;
    for (let k = 0; k < fullTag.length && !badTag; k++) if (!isTagChar(fullTag.charCodeAt(k))) badTag = true;
    if (badTag) this.find('tag-reuse', tag, name, `the tag ${JSON.stringify(tag)} has a character a tag may not have (RFC 3501 section 9: any ASTRING-CHAR except "+")`);

    // What was still in progress when this command was sent: the answers written after its first byte
    // arrived, newest first (the ring is in answer order, so they are its newest slots).
    let inFlight = false;
    const ring = this.answered;
    if (ring !== null && ring[(this.answeredNext + ring.length - 1) % ring.length]!.receivedAtAnswer > start) {
      inFlight = true;
      const print = fullTag.length <= MAX_NAME && !badTag ? tagPrint(fullTag) : -1;
      const sequence = SEQUENCE_COMMANDS.has(name);
      let same: Answered | null = null;
      let risky: Answered | null = null;
      for (let n = 0, k = this.answeredNext; n < ring.length; n++) {
        k = k === 0 ? ring.length - 1 : k - 1;
        const a = ring[k]!;
        if (a.receivedAtAnswer <= start) break;
        if (a.print === print && same === null && a.tag === fullTag) same = a;
        if (sequence && risky === null && !NO_EXPUNGE_COMMANDS.has(a.name)) risky = a;
      }
      if (same !== null) this.find('tag-reuse', tag, name, `the tag ${tag} was sent again while the ${same.name} with that tag was still in progress`);
      if (risky !== null) this.find('ambiguous-pipelining', tag, name, `${name} uses message sequence numbers but was sent while ${risky.name} (${risky.tag ?? 'a long tag'}) was in progress, which may expunge and renumber`);
    }

    if (spec && session.state !== 'logout' && !spec.states.includes(session.state)) {
      const where = session.state === 'notAuthenticated' ? 'before authentication' : session.state === 'authenticated' ? 'without a selected mailbox' : 'in the selected state';
      this.find('wrong-state', tag, name, `${name} is not valid ${where}`);
    }

    this.checkLines(segments, tag, name);
    if (spec) this.checkOffered(segments, j, tag, name);
    if (!inFlight && session.selected && SEQUENCE_SET_FIRST.has(name)) this.checkSequence(first, j, tag, name);
    if (session.selected && (name === 'STORE' || name === 'UID STORE')) this.checkFlags(segments, j, tag, name);
    if ((name === 'LOGIN' || name === 'AUTHENTICATE') && !session.secure && this.offered('STARTTLS')) {
      const mech = name === 'AUTHENTICATE' ? (first.toString('latin1', j + 1).split(' ')[0] ?? '').toUpperCase() : '';
      if (name === 'LOGIN' || mech === 'PLAIN' || mech === 'LOGIN') {
        this.find('plaintext-credentials', tag, name, `${name === 'LOGIN' ? 'LOGIN' : `AUTHENTICATE ${mech}`} sends the password in clear text although STARTTLS was offered`);
      }
    }
    const verdict = this.verdict;
    this.verdict = null;
    return verdict;
  }

  /** 8-bit text and long lines: every text piece of the command is one line. */
  private checkLines(segments: readonly Segment[], tag: string, name: string): void {
    let eight = false;
    let longest = 0;
    const utf8 = this.session.utf8;
    for (const seg of segments) {
      if (!Buffer.isBuffer(seg)) continue;
      if (seg.length > longest) longest = seg.length;
      if (!utf8 && !eight) for (let k = 0; k < seg.length; k++) if (seg[k]! >= 0x80) {
        eight = true;
        break;
      }
    }
    if (eight) this.find('8bit-without-utf8', tag, name, '8-bit bytes outside a literal, but the session has not enabled UTF8=ACCEPT (mailbox names are modified UTF-7, strings 7-bit)');
    // The marker and CRLF the reader took off count toward the line.
    if (longest + 2 > LINE_LIMIT) this.find('line-too-long', tag, name, `a command line of ${longest + 2} octets, above the 8192 clients should keep to`);
  }

  /** Finds `capability-not-advertised` when `point` of `kind` (in command `name`) needs a capability the session was not offered. */
  private pointOffered(kind: PointKind, point: string, tag: string, name: string): void {
    const session = this.session;
    const cache = (this.offeredCache ??= new OfferedCache());
    if (this.cacheState !== session.state || this.cacheEnabled !== session.enabled.size) {
      cache.clear();
      this.cacheState = session.state;
      this.cacheEnabled = session.enabled.size;
    }
    if (cache.has(kind, point)) return;
    const caps = CORE_PARSED[kind]?.get(point) ?? imapProtocol(session.server).offeredBy(kind, point, session);
    const ok = caps === null || caps.some((c) => this.offered(c.toUpperCase()));
    // Bounded, and cleared with the list. Only names the server knows are kept: an extension's point
    // (caps found), or a command, asked about only when the server has it (a core command needs none).
    if (ok && (caps !== null || kind === 'command')) cache.add(kind, point);
    if (ok) return;
    const what = describePoint(kind, point, name);
    const by = caps.length > 0 ? caps.join(' or ') : 'an extension';
    const told = this.told === null ? 'no capabilities were announced to it yet' : 'the last capability list it was given does not have it';
    this.find('capability-not-advertised', tag, name, `${what} needs ${by}, which this session was not offered (${told})`);
  }

  /** Commands, modifiers, items, keys and mechanisms of extensions the session was not offered. */
  private checkOffered(segments: readonly Segment[], from: number, tag: string, name: string): void {
    this.pointOffered('command', name, tag, name);
    const base = name.startsWith('UID ') ? name.slice(4) : name;
    if (base === 'AUTHENTICATE') {
      const words = (segments[0] as Buffer).toString('latin1', from + 1).split(' ');
      const mech = (words[0] ?? '').toUpperCase();
      if (mech !== '' && !this.offered(`AUTH=${mech}`)) {
        this.find('capability-not-advertised', tag, name, `AUTHENTICATE ${mech} needs AUTH=${mech}, which this session was not offered`);
      }
      if ((words.length > 1 || segments.length > 1) && !this.offered('SASL-IR')) {
        this.find('capability-not-advertised', tag, name, 'an initial response on the AUTHENTICATE line needs SASL-IR, which this session was not offered');
      }
      return;
    }
    const kinds = ARGUMENT_POINTS.get(base) ?? null;
    if (kinds === null) return;
    const shape = shapeOf(segments, from, base);
    // pointOffered('command') above made the cache current for this state and told list.
    if (shape !== null && this.offeredCache!.hasShape(shape)) return;
    const findingsBefore = this.findings;
    this.checkTokens(tokenize(segments, from), base, kinds, tag, name);
    if (shape !== null && this.findings === findingsBefore) this.offeredCache!.addShape(shape);
  }

  private checkTokens(tokens: Token[], base: string, kinds: readonly PointKind[], tag: string, name: string): void {
    let skip = 0;
    let inReturn = -1;
    for (let k = 0; k < tokens.length; k++) {
      const t = tokens[k]!;
      if (skip > 0) {
        skip--;
        continue;
      }
      if (t.text === '(' || t.text === ')' || t.text === '"') {
        if (t.text === ')' && t.depth === inReturn) inReturn = -1;
        continue;
      }
      if (base === 'SEARCH') {
        if (t.text === 'RETURN' && tokens[k + 1]?.text === '(') {
          inReturn = t.depth;
          k++;
          continue;
        }
        if (inReturn >= 0) {
          this.pointOffered('searchReturn', t.text, tag, name);
          continue;
        }
        if (SEARCH_STRING_KEYS.has(t.text)) skip = 1;
        else if (t.text === 'HEADER') skip = 2;
        this.pointOffered('searchKey', t.text, tag, name);
        continue;
      }
      if (base === 'STORE') {
        // Modifiers are the parenthesized list right after the sequence set; what follows are flags.
        if (t.depth === 1 && tokens[1]?.text === '(') this.pointOffered('storeModifier', t.text, tag, name);
        if (t.depth === 0 && k > 0) break;
        continue;
      }
      if (base === 'FETCH') {
        const item = t.text.endsWith('.PEEK') ? t.text.slice(0, -5) : t.text;
        this.pointOffered('fetchItem', item, tag, name);
        this.pointOffered('fetchModifier', t.text, tag, name);
        continue;
      }
      // SELECT/EXAMINE parameters and STATUS items are inside the first parentheses.
      if (t.depth === 1) this.pointOffered(kinds[0]!, t.text, tag, name);
    }
  }

  /** Sequence numbers above the count this session was told of (its EXISTS less the EXPUNGEs since). */
  private checkSequence(first: Buffer, from: number, tag: string, name: string): void {
    const exists = this.session.selected!.exists;
    // The numbers of the set (`*` and `$` are not numbers), read without making strings.
    let highest = 0;
    let n = 0;
    for (let k = from + 1; k <= first.length; k++) {
      const c = k < first.length ? first[k]! : 0x20;
      if (c >= 0x30 && c <= 0x39) {
        if (n < Number.MAX_SAFE_INTEGER / 10) n = n * 10 + (c - 0x30);
        continue;
      }
      if (n > highest) highest = n;
      n = 0;
      if (c === 0x20) break;
    }
    if (highest > exists) this.find('sequence-beyond-exists', tag, name, `message sequence number ${highest} but the session was told of ${exists} message${exists === 1 ? '' : 's'}`);
  }

  /** STORE of \Recent, or of a new keyword where PERMANENTFLAGS has no \*. */
  private checkFlags(segments: readonly Segment[], from: number, tag: string, name: string): void {
    const selected = this.session.selected!;
    const may = selected.changeableFlag;
    const newKeywords = !selected.readOnly && (may === null || may('$keyword'));
    const text =
      segments.length === 1
        ? (segments[0] as Buffer).toString('latin1', from)
        : segments.filter((s): s is Buffer => Buffer.isBuffer(s)).map((s) => s.toString('latin1')).join(' ').slice(from);
    // Nothing to find where new keywords are allowed and \Recent is not named (the usual STORE).
    if (newKeywords && !/\\recent/i.test(text)) return;
    const m = /(?:^|\s)([+-]?)FLAGS(?:\.SILENT)?\s+\(?([^)]*)\)?/i.exec(text);
    if (!m) return;
    const adds = m[1] !== '-';
    const flags = m[2]!.split(' ').filter(Boolean);
    for (const flag of flags) {
      if (flag.toLowerCase() === '\\recent') {
        this.find('flag-not-permanent', tag, name, 'STORE of \\Recent, which only the server sets (RFC 3501 section 2.3.2)');
        return;
      }
      if (adds && !flag.startsWith('\\') && !newKeywords && !selected.keywords.has(flag)) {
        this.find('flag-not-permanent', tag, name, `STORE of the new keyword ${flag}, but PERMANENTFLAGS did not allow new keywords (no \\*)`);
        return;
      }
    }
  }

  /** The session answered the command (its tagged response is written). */
  answeredCommand(tag: string, name: string): void {
    const kept = tag.length <= MAX_NAME ? tag : null;
    const ring = (this.answered ??= []);
    const slot = ring.length < ANSWERED_KEPT ? ring.length : this.answeredNext;
    const reuse = ring[slot];
    const print = kept === null ? -2 : tagPrint(kept);
    if (reuse === undefined) ring.push({ tag: kept, print, name: clip(name), receivedAtAnswer: this.received });
    else {
      reuse.print = print;
      reuse.tag = kept;
      reuse.name = clip(name);
      reuse.receivedAtAnswer = this.received;
    }
    this.answeredNext = (slot + 1) % ANSWERED_KEPT;
    this.current = null;
  }

  /**
   * IDLE sent `+ idling`. An idle session may idle for long, and idle
   * sessions are many (issue 20's budget per session): what only speeds up
   * or decides later checks goes. Commands answered by input offsets up to
   * the IDLE line's end cannot be in progress when a later command was sent
   * (later commands start after it); the offered cache is made again when
   * next asked.
   */
  idleStarted(): void {
    this.idleSince = this.session.server.now();
    const boundary = this.boundary;
    const ring = this.answered;
    if (ring !== null) {
      const newest = ring[(this.answeredNext + ring.length - 1) % ring.length];
      if (newest === undefined || newest.receivedAtAnswer <= boundary) {
        this.answered = null;
        this.answeredNext = 0;
      }
    }
    this.offeredCache = null;
  }

  /** A line read inside a command (IDLE's DONE, SASL data); `buffered` is the input after it. */
  line(line: Buffer, buffered: number, idling: boolean): void {
    this.boundary = this.received - buffered;
    if (!idling) return;
    const tag = this.current?.tag ?? null;
    const text = line.toString('latin1').trim();
    if (text.toUpperCase() !== 'DONE') {
      this.find('command-during-idle', tag, 'IDLE', `sent ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text)} during IDLE; only DONE may follow "+ idling"`);
    }
    this.idleEnded(tag);
  }

  private idleEnded(tag: string | null): void {
    if (this.idleSince === null) return;
    const held = this.session.server.now() - this.idleSince;
    this.idleSince = null;
    if (held > IDLE_LIMIT_MS) this.find('idle-too-long', tag, 'IDLE', `IDLE held for ${Math.round(held / 60_000)} minutes; re-issue it at least every 29 minutes`);
  }

  /** The strict answer owed to the running command (a finding made while it ran), once. */
  takeVerdict(): CommandResult | null {
    const verdict = this.verdict;
    this.verdict = null;
    return verdict;
  }

  /** The connection closed; `byServer`: the server ended it (BYE, LOGOUT, reset). */
  closed(byServer: boolean): void {
    if (this.idleSince !== null) this.idleEnded(this.current?.tag ?? null);
    if (!byServer && !this.loggedOut) this.find('no-logout', null, null, 'the client closed the connection without LOGOUT');
  }
}

export type { LiteralSegment };

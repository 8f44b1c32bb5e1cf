/**
 * Events the log keeps as their parts and writes as JSON only when read
 * (a late stream, a wait with `since`): the events every client makes many
 * of, a `command` per command and a `session` event per connect, login,
 * SELECT and logout. Each knows the exact bytes of its JSON without making
 * it, for the backlog's byte budget. Parts hold only primitives and arrays
 * of their own, so a listener that changes the data it was given cannot
 * change what the log reads back. The JSON is what `JSON.stringify` makes
 * of the event's data, byte for byte (test/rest/lazy-event-backlog.test.ts).
 */
import type { SessionEventType, SessionInfo, SessionProtocol, SessionState } from './events.js';

/** An event kept as its parts: its JSON, and that JSON's UTF-8 byte count without making it. */
export interface EventParts {
  json(): string;
  bytes(): number;
}

/** A `command` event: `{ session, tag, command, status, user }`. */
export class CommandEventParts implements EventParts {
  constructor(
    private readonly session: number,
    private readonly tag: string,
    private readonly command: string,
    private readonly status: string,
    private readonly user: string | null,
    private readonly protocol: SessionProtocol,
  ) {}

  /** False when the session number is not one JSON writes as these parts assume (then the event is serialized now). */
  static representable(session: number): boolean {
    return Number.isSafeInteger(session) && session >= 0;
  }

  json(): string {
    return `{"session":${this.session},"tag":${JSON.stringify(this.tag)},"command":${JSON.stringify(this.command)},"status":${JSON.stringify(this.status)},"user":${nullableJson(this.user)},"protocol":${JSON.stringify(this.protocol)}}`;
  }

  bytes(): number {
    // `{"session":` `,"tag":` `,"command":` `,"status":` `,"user":` `,"protocol":` `}`
    return 11 + 7 + 11 + 10 + 8 + 12 + 1 + digits(this.session) + stringBytes(this.tag) + stringBytes(this.command) + stringBytes(this.status) + nullableBytes(this.user) + stringBytes(this.protocol);
  }
}

/** A `session` event: `{ type, session: SessionInfo, command? }`. */
export class SessionEventParts implements EventParts {
  private readonly session: number;
  private readonly user: string | null;
  private readonly state: SessionState;
  private readonly mailbox: string | null;
  private readonly readOnly: boolean;
  private readonly enabled: readonly string[];
  private readonly secure: boolean;
  private readonly compressed: boolean;
  private readonly remoteAddress: string | null;
  private readonly protocol: SessionProtocol;

  constructor(
    private readonly type: SessionEventType,
    info: SessionInfo,
    private readonly command: string | undefined,
  ) {
    this.session = info.session;
    this.user = info.user;
    this.state = info.state;
    this.mailbox = info.mailbox;
    this.readOnly = info.readOnly;
    // Its own copy: the data's array is the listeners' to change.
    this.enabled = info.enabled.length === 0 ? NONE : info.enabled.slice();
    this.secure = info.secure;
    this.compressed = info.compressed;
    this.remoteAddress = info.remoteAddress;
    this.protocol = info.protocol;
  }

  /** False when the event's data has a value JSON would write differently from these parts (then it is serialized now). */
  static representable(info: SessionInfo): boolean {
    return (
      Number.isSafeInteger(info.session) &&
      info.session >= 0 &&
      typeof info.readOnly === 'boolean' &&
      typeof info.secure === 'boolean' &&
      typeof info.compressed === 'boolean' &&
      info.enabled.every((e) => typeof e === 'string')
    );
  }

  json(): string {
    let enabled = '';
    for (let i = 0; i < this.enabled.length; i++) enabled += (i > 0 ? ',' : '') + JSON.stringify(this.enabled[i]);
    const info =
      `{"session":${this.session},"user":${nullableJson(this.user)},"state":${JSON.stringify(this.state)},"mailbox":${nullableJson(this.mailbox)},` +
      `"readOnly":${this.readOnly},"enabled":[${enabled}],"secure":${this.secure},"compressed":${this.compressed},"remoteAddress":${nullableJson(this.remoteAddress)},"protocol":${JSON.stringify(this.protocol)}}`;
    return `{"type":${JSON.stringify(this.type)},"session":${info}${this.command === undefined ? '' : `,"command":${JSON.stringify(this.command)}`}}`;
  }

  bytes(): number {
    // `{"type":` `,"session":` `}` around the info, and `,"command":` when there is one.
    let n = 8 + 11 + 1 + stringBytes(this.type) + (this.command === undefined ? 0 : 11 + stringBytes(this.command));
    // `{"session":` `,"user":` `,"state":` `,"mailbox":` `,"readOnly":` `,"enabled":[` `],"secure":` `,"compressed":` `,"remoteAddress":` `,"protocol":` `}`
    n += 11 + 8 + 9 + 11 + 12 + 12 + 11 + 14 + 17 + 12 + 1;
    n += stringBytes(this.protocol);
    n += digits(this.session) + nullableBytes(this.user) + stringBytes(this.state) + nullableBytes(this.mailbox) + (this.readOnly ? 4 : 5);
    for (let i = 0; i < this.enabled.length; i++) n += (i > 0 ? 1 : 0) + stringBytes(this.enabled[i]!);
    n += (this.secure ? 4 : 5) + (this.compressed ? 4 : 5) + nullableBytes(this.remoteAddress);
    return n;
  }
}

/** The statuses and protocols a packed command event names, by number. */
const COMMAND_STATUSES = ['OK', 'NO', 'BAD'] as const;
const COMMAND_PROTOCOLS: readonly SessionProtocol[] = ['imap', 'pop3', 'smtp'];
/** Most words (command names and users) a log numbers: past it, command events are kept as objects again. */
const WORDS_MAX = 1 << 16;
/** Longest word numbered. */
const WORD_LONGEST = 64;

/**
 * Command events packed into two numbers and their tag: the command name
 * and the user are numbered in a table of the words the log has seen (a
 * run has few), status and protocol are two more small numbers. A kept
 * command event then costs the collector one string (its tag), not an
 * object and its strings: at 200,000 pipelined commands a second, the
 * backlog's 10,000 objects were copied at every young collection and cost
 * a fifth of the command path.
 */
export class CommandEventPacker {
  private readonly numbers = new Map<string | null, number>();
  private readonly words: (string | null)[] = [];
  private readonly wordBytes: number[] = [];

  private number(word: string | null): number {
    let n = this.numbers.get(word);
    if (n === undefined) {
      // A peer chooses command names: the table stays small in bytes as well as in words.
      if (this.words.length >= WORDS_MAX || (word !== null && word.length > WORD_LONGEST)) return -1;
      n = this.words.length;
      this.words.push(word);
      this.wordBytes.push(nullableBytes(word));
      this.numbers.set(word, n);
    }
    return n;
  }

  /** The packed number of everything but the session and tag; -1 when these words cannot be packed. */
  pack(command: string, status: string, user: string | null, protocol: SessionProtocol): number {
    const s = COMMAND_STATUSES.indexOf(status as (typeof COMMAND_STATUSES)[number]);
    const p = COMMAND_PROTOCOLS.indexOf(protocol);
    if (s < 0 || p < 0) return -1;
    const c = this.number(command);
    const u = c < 0 ? -1 : this.number(user);
    if (u < 0) return -1;
    return c + u * WORDS_MAX + (s + p * 4) * WORDS_MAX * WORDS_MAX;
  }

  /** The JSON bytes of a packed event (the `type` not included). */
  bytes(session: number, tag: string, packed: number): number {
    const c = packed % WORDS_MAX;
    const u = Math.floor(packed / WORDS_MAX) % WORDS_MAX;
    const sp = Math.floor(packed / (WORDS_MAX * WORDS_MAX));
    return 11 + 7 + 11 + 10 + 8 + 12 + 1 + digits(session) + stringBytes(tag) + this.wordBytes[c]! + COMMAND_STATUSES[sp % 4]!.length + 2 + this.wordBytes[u]! + COMMAND_PROTOCOLS[sp >> 2]!.length + 2;
  }

  /** The event's parts, to write its JSON. */
  parts(session: number, tag: string, packed: number): CommandEventParts {
    const c = packed % WORDS_MAX;
    const u = Math.floor(packed / WORDS_MAX) % WORDS_MAX;
    const sp = Math.floor(packed / (WORDS_MAX * WORDS_MAX));
    return new CommandEventParts(session, tag, this.words[c]!, COMMAND_STATUSES[sp % 4]!, this.words[u]!, COMMAND_PROTOCOLS[sp >> 2]!);
  }
}

const NONE: readonly string[] = Object.freeze([]);

function nullableJson(s: string | null): string {
  return s === null ? 'null' : JSON.stringify(s);
}

function nullableBytes(s: string | null): number {
  return s === null ? 4 : stringBytes(s);
}

/** Bytes of `JSON.stringify(s)`: printable ASCII without `"` or `\` is itself and two quotes; anything else is measured. */
export function stringBytes(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return Buffer.byteLength(JSON.stringify(s));
  }
  return s.length + 2;
}

/** Decimal digits of a non-negative integer (as JSON writes it). */
export function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

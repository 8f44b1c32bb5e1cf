/**
 * What a POP3 client was told and what it has sent, as the checker needs
 * it: the greeting's APOP timestamp, the CAPA answers it asked for (per
 * state and TLS layer), the answers still in progress when each command
 * arrived, QUIT, and the messages DELE marked. It only records; the rules
 * are in ./checker.ts.
 *
 * "In progress" is judged by byte offsets, as for IMAP: where each command
 * starts in the input, and how much input had arrived when each answer was
 * written in full. A command whose first byte had arrived before an
 * earlier answer was complete was sent without waiting for it. Timing on
 * the wire can only hide a case, never invent one.
 */

/** RFC 1939's states, as the POP3 session names them. */
export type Pop3State = 'authorization' | 'transaction' | 'update';

/** An answer written in full, with the input received by then. */
interface Answered {
  verb: string;
  multiLine: boolean;
  receivedAtAnswer: number;
}

/** A CAPA answer the client was given. */
export interface ToldCapa {
  /** Upper-case capability tags (`TOP`, `SASL`, `PIPELINING`, ...). */
  tags: ReadonlySet<string>;
  /** Upper-case SASL mechanisms of the `SASL` line. */
  mechanisms: ReadonlySet<string>;
  /** The state the session was in when it was asked. */
  state: Pop3State;
}

/** Answers remembered for the pipelining check: a client has few in flight. */
const ANSWERED_KEPT = 32;
/** Most capability tags or mechanisms kept from one CAPA answer (script rules can send any list). */
const CAPA_MAX = 128;
/** Longest capability tag kept. */
const TAG_MAX = 64;

/**
 * CAPA answers shared by every session told the same list: a server gives
 * most sessions one of a few lists, and a set per session would cost each
 * idle session memory for nothing.
 */
const toldCache = new Map<string, ToldCapa>();
const TOLD_CACHE_MAX = 256;

function toldCapa(lines: readonly string[], state: Pop3State): ToldCapa {
  const key = `${state}\n${lines.join('\n')}`;
  let told = toldCache.get(key);
  if (told !== undefined) return told;
  const tags = new Set<string>();
  const mechanisms = new Set<string>();
  for (const line of lines.slice(0, CAPA_MAX)) {
    const words = line.trim().split(/ +/);
    const tag = (words[0] ?? '').toUpperCase();
    if (tag === '' || tag.length > TAG_MAX) continue;
    tags.add(tag);
    if (tag === 'SASL') for (const m of words.slice(1, CAPA_MAX)) if (m.length <= TAG_MAX) mechanisms.add(m.toUpperCase());
  }
  told = { tags, mechanisms, state };
  if (toldCache.size >= TOLD_CACHE_MAX) toldCache.clear();
  toldCache.set(key, told);
  return told;
}

/** `<...@...>` in a greeting (RFC 1939 §7: the APOP timestamp is a msg-id). */
const TIMESTAMP = /<[^<>\s]*>/;

export class Pop3ClientState {
  /** Bytes of input received so far (after TLS). */
  received = 0;
  /** Input offset where the next line starts. */
  private boundary = 0;
  private answered: Answered[] = [];
  /** Whether the greeting carried an APOP timestamp. */
  timestamp = false;
  /** The last CAPA answer of this TLS layer; null: none asked yet. */
  capa: ToldCapa | null = null;
  /** Input offset just after the QUIT line; null: no QUIT yet. */
  quitEnd: number | null = null;
  /** Whether the input after QUIT was reported already. */
  afterQuitReported = false;
  /** Whether the previous command was a USER answered +OK (PASS may only follow one). */
  userAccepted = false;
  /** Messages in the maildrop at login; null: not known (not logged in, or the session did not say). */
  maildrop: number | null = null;
  /** Message numbers DELE marked (at most the maildrop's size). */
  readonly marked = new Set<number>();
  /** Commands seen, for their number in findings (POP3 has no tags). */
  commands = 0;

  greeting(text: string): void {
    this.timestamp = TIMESTAMP.test(text);
  }

  receivedBytes(n: number): void {
    this.received += n;
  }

  /**
   * A line was read; `buffered` is the input after it already received.
   * Returns the offset at which it started.
   */
  lineRead(buffered: number): number {
    const start = this.boundary;
    this.boundary = this.received - buffered;
    return start;
  }

  /** Where the input read so far ends (the next line's start). */
  get readTo(): number {
    return this.boundary;
  }

  /**
   * The answer still in progress when a line starting at `start` arrived,
   * newest first; null when the client waited for every answer.
   */
  inProgressAt(start: number): Answered | null {
    let found: Answered | null = null;
    for (let k = this.answered.length - 1; k >= 0 && this.answered[k]!.receivedAtAnswer > start; k--) {
      const a = this.answered[k]!;
      // A multi-line answer says more about the client than a one-line one before it.
      if (found === null || (a.multiLine && !found.multiLine)) found = a;
    }
    return found;
  }

  answer(verb: string, multiLine: boolean): void {
    this.answered.push({ verb, multiLine, receivedAtAnswer: this.received });
    if (this.answered.length > ANSWERED_KEPT) this.answered.shift();
  }

  told(lines: readonly string[], state: Pop3State): void {
    this.capa = toldCapa(lines, state);
  }

  /** RFC 2595 §4: after STLS the client must forget the capabilities it was told. */
  tlsStarted(): void {
    this.capa = null;
  }
}

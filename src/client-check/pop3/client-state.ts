/**
 * What a POP3 client was told and what it has sent, as the checker needs
 * it: the greeting's APOP timestamp, the CAPA answers it asked for (per
 * state and TLS layer), whether the previous answer was a multi-line one,
 * QUIT, and the messages DELE marked. It only records; the rules are in
 * ./checker.ts. Whether a command was pipelined the session itself tells
 * (it knows whether the next line had arrived before an answer went out).
 */
import type { Pop3StateName } from '../../pop3/checker-hook.js';

/** A CAPA answer the client was given. */
export interface ToldCapa {
  /** Upper-case capability tags (`TOP`, `SASL`, `PIPELINING`, ...). */
  tags: ReadonlySet<string>;
  /** Upper-case SASL mechanisms of the `SASL` line. */
  mechanisms: ReadonlySet<string>;
  /** The state the session was in when it was asked. */
  state: Pop3StateName;
}

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

function toldCapa(lines: readonly string[], state: Pop3StateName): ToldCapa {
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
  /** Whether the greeting carried an APOP timestamp. */
  timestamp = false;
  /** The last CAPA answer of this TLS layer; null: none asked yet. */
  capa: ToldCapa | null = null;
  /** Whether the connection was under TLS at the last command (a change is STLS taking effect). */
  secure = false;
  /** QUIT was sent. */
  quit = false;
  /** Whether input after QUIT was reported already. */
  afterQuitReported = false;
  /** The verb of the command last answered, and whether that answer was multi-line. */
  previous: { verb: string; multiLine: boolean } | null = null;
  /** Whether the previous command was a USER answered +OK (PASS may only follow one). */
  userAccepted = false;
  /** Messages in the maildrop at login; null: not known (not logged in, or the session did not say). */
  maildrop: number | null = null;
  /** Message numbers DELE marked (at most the maildrop's size). */
  readonly marked = new Set<number>();

  greeting(text: string): void {
    this.timestamp = TIMESTAMP.test(text);
  }

  told(lines: readonly string[], state: Pop3StateName): void {
    this.capa = toldCapa(lines, state);
  }

  /** RFC 2595 §4: after STLS the client must forget the capabilities it was told. */
  tlsStarted(): void {
    this.capa = null;
  }
}

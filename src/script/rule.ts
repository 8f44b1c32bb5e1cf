/**
 * Script rules (issue 4): plain JSON so a script file, REST and the
 * in-process API share them. In-process rules may also use a RegExp for
 * `match`/`tag` and functions for `send` and `when`.
 */
import type { ScriptResponse } from './response.js';

import type { TransportRuleFields } from './transport.js';

/**
 * When a rule is considered. `smtp`: an SMTP command (MAIL, RCPT, DATA) of
 * the SMTP intake. `continuation`: a `+` line the server sends (before a
 * synchronizing literal, in AUTHENTICATE, when IDLE starts). `oauth`: a
 * request to the OAuth endpoints (docs/oauth.md).
 */
export type ScriptOn = 'greeting' | 'command' | 'input' | 'response' | 'quiet' | 'smtp' | 'continuation' | 'pop3' | 'oauth';

export const SCRIPT_EVENTS: readonly ScriptOn[] = ['greeting', 'command', 'input', 'response', 'quiet', 'smtp', 'continuation', 'pop3', 'oauth'];

/** When an `on: "pop3"` rule is asked (its `stage`; default `command`). */
export type Pop3Stage = 'greeting' | 'command' | 'response';
export const POP3_STAGES: readonly Pop3Stage[] = ['greeting', 'command', 'response'];

/** The POP3 commands `on: "pop3"` rules may name (`command`; `AUTH` also with its mechanism, `AUTH PLAIN`). */
export const POP3_SCRIPT_COMMANDS = ['USER', 'PASS', 'APOP', 'AUTH', 'STAT', 'LIST', 'RETR', 'DELE', 'NOOP', 'RSET', 'QUIT', 'TOP', 'UIDL', 'CAPA', 'STLS', 'UTF8', 'LANG'] as const;

/**
 * POP3 defects a command rule turns on for the command's answer
 * (docs/pop3.md, "Faults"): `lf-size` sizes in STAT/LIST counted with LF
 * line ends (not the CRLF octets RETR sends), `no-dot` / `double-dot` the
 * terminating line missing or sent twice, `no-stuffing` lines starting with
 * `.` not byte-stuffed, `uidl-repeat` every message given message 1's
 * unique-id, `uidl-change` unique-ids that differ in every session.
 */
export type Pop3Fault = 'lf-size' | 'no-dot' | 'double-dot' | 'no-stuffing' | 'uidl-repeat' | 'uidl-change';
export const POP3_FAULTS: readonly Pop3Fault[] = ['lf-size', 'no-dot', 'double-dot', 'no-stuffing', 'uidl-repeat', 'uidl-change'];

/** The fields an `on: "pop3"` rule may use. */
export const POP3_RULE_FIELDS: readonly string[] = [
  'on', 'stage', 'command', 'session', 'state', 'user', 'match', 'nth', 'times', 'chance', 'seedScope', 'when', 'description',
  'send', 'run', 'drop', 'delay', 'chunk', 'chunkDelay', 'truncate', 'close', 'before', 'after', 'pop3Fault', 'attacks',
];

/**
 * The fields an `on: "oauth"` rule may use (a request to the token service,
 * src/oauth/http.ts): `command` names an endpoint or grant type, `send` a
 * fault, `delay` a slow answer.
 */
export const OAUTH_RULE_FIELDS: readonly string[] = ['on', 'command', 'user', 'match', 'nth', 'times', 'chance', 'send', 'delay', 'description', 'seedScope'];

/** The SMTP commands `on: "smtp"` rules name (`command`). DATA is asked once the message has arrived. */
export const SMTP_SCRIPT_COMMANDS = ['MAIL', 'RCPT', 'DATA'] as const;

/**
 * The fields an `on: "smtp"` rule may use: the SMTP intake has no tags,
 * session numbers, states or mailboxes, and its replies are whole SMTP
 * replies, not IMAP output to shape. The transport faults act on its
 * connection (src/connection/), as on IMAP and POP3 ones.
 */
export const SMTP_RULE_FIELDS: readonly string[] = ['on', 'command', 'session', 'user', 'match', 'nth', 'times', 'chance', 'send', 'delay', 'close', 'when', 'description', 'seedScope', 'bandwidth', 'stall', 'halfClose', 'slowClose'];

/** What a rule sees about the event it is asked about. */
export interface ScriptContext {
  event: ScriptOn;
  session: number | null;
  /** Tag of the command concerned, null where there is none. */
  tag: string | null;
  /** Command name (`UID FETCH`, `AUTHENTICATE PLAIN`; `MAIL`, `RCPT`, `DATA` for smtp), null where there is none. */
  command: string | null;
  /** Session state as events show it (`Not Authenticated`, ...). */
  state: string | null;
  user: string | null;
  mailbox: string | null;
  /** The line or response text (latin1), literals included; for smtp `MAIL FROM:<a>`, `RCPT TO:<b>` or the message. */
  text: string;
  /** For `quiet`: the quiet time that elapsed, in ms. */
  quietFor?: number;
  /** For `pop3`: which point of the session asks. */
  stage?: Pop3Stage;
  // --- response rules (issue 14)
  /**
   * For `response`: the type of an untagged response (`EXISTS`, `FETCH`,
   * `OK`, `LIST`, upper case), null for a tagged one or a continuation.
   */
  untagged?: string | null;
  /** For `response` and `continuation`: the response as structure, when the session built it from values (read it; `mutate` changes it). */
  response?: ScriptResponse;
}

/** A rule as JSON carries it. */
export interface ScriptRuleJson {
  on: ScriptOn;
  // which
  /**
   * Command name(s), any case. A name without `UID ` matches its UID form
   * too (`FETCH` matches `FETCH` and `UID FETCH`) unless `uid` narrows it.
   */
  command?: string | readonly string[];
  /** With `command`: true only the `UID` form of its names, false only the plain form. */
  uid?: boolean;
  tag?: string;
  session?: number;
  state?: string;
  user?: string;
  mailbox?: string;
  match?: string;
  nth?: number;
  times?: number;
  chance?: number;
  quietFor?: number;
  // what
  send?: string;
  run?: boolean;
  drop?: boolean;
  delay?: number;
  chunk?: number;
  chunkDelay?: number | 'tick';
  truncate?: number;
  close?: boolean | 'reset';
  before?: string;
  after?: string;
  // --- rule language, issue 14 part 1 (src/script/mutate.ts, docs/script-rules.md)
  /** Only untagged responses of this type (`EXISTS`, `FETCH`, `OK`; `*` any). */
  untagged?: string;
  /** A free label, shown in listings and script events. */
  description?: string;
  /** Change the structured response before it is serialized. */
  mutate?: readonly MutateOp[];
  /** true: every string that may be a literal goes out as one. */
  literals?: boolean;
  /** `tagged`: after the next tagged response; `next`: with the next command's output. */
  defer?: 'tagged' | 'next';
  /** Which PRNG stream `chance` draws from (default `server`). */
  seedScope?: SeedScope;
  // --- end issue 14 part 1
  /**
   * For on: greeting and command: capabilities the session is not offered
   * from then on (client checker, docs/client-check.md): not advertised, and
   * their commands answer BAD as unknown. A greeting rule's greeting already
   * leaves them out.
   */
  hideCapabilities?: string[];
  /** For on: pop3: the stage asked about (default `command`). */
  stage?: Pop3Stage;
  /** For on: pop3 command rules: a POP3 defect in the command's answer (the command runs). */
  pop3Fault?: Pop3Fault;
  /** For on: greeting (and on: pop3, stage: greeting): the STARTTLS attacks this session meets (docs/tls.md), instead of the `attacks` option's. */
  attacks?: readonly string[];
}

/** Where a `chance` rule draws from: one stream for the server, one per session and rule, or one per rule. */
export type SeedScope = 'server' | 'session' | 'rule';

export const SEED_SCOPES: readonly SeedScope[] = ['server', 'session', 'rule'];

/**
 * A value in a `mutate` op (JSON): a number, `null` (NIL), a string (quoted
 * or a literal as the serializer chooses), a list, or an object naming the
 * form: `{ atom }` goes out exactly as given (raw bytes), `{ literal }` as a
 * literal, `{ quoted }` quoted whatever it holds.
 */
export type MutateValue = number | null | string | MutateValue[] | { atom: string } | { literal: string } | { quoted: string };

/**
 * One step of a declarative `mutate`. Items are the named parts of a
 * response: FETCH and STATUS data items (`UID`, `BODY[]`, `MESSAGES`),
 * response codes (`UIDVALIDITY`, `APPENDUID`), `text` (resp-text), the
 * number of `* n EXISTS`-style responses (named by their type), and LIST's
 * `attributes`, `delimiter` and `mailbox`.
 */
export type MutateOp =
  | ({ set: string; value: MutateValue } & MutateAt)
  | ({ add: string; value: number } & MutateAt)
  | ({ drop: string } & MutateAt)
  | { order: string[] }
  | ({ literal: string } & MutateAt)
  | ({ quoted: string } & MutateAt)
  | ({ unescaped: string } & MutateAt)
  | ({ unquote: string } & MutateAt)
  | ({ suffix: string; text: string } & MutateAt)
  | { replace: string; with: string };

/** `at`: list indexes into the item's value (`BODYSTRUCTURE` at `[7]` is a text part's line count). */
export interface MutateAt {
  at?: number[];
}

/** The structured response a `mutate` function receives (see src/script/response.ts). */
export type { ScriptResponse };

/** A rule as the in-process API accepts it. */
export interface ScriptRule extends Omit<ScriptRuleJson, 'match' | 'tag' | 'send' | 'mutate'> {
  match?: string | RegExp;
  tag?: string | RegExp;
  send?: string | ((ctx: ScriptContext) => string);
  when?: (ctx: ScriptContext) => boolean;
  /**
   * Ops as in JSON, or a function of the structured response: change it in
   * place or return a new one; `null` drops the response.
   */
  mutate?: readonly MutateOp[] | ((response: ScriptResponse, ctx: ScriptContext) => ScriptResponse | null | void);
}

/** A rule in the engine's listing. */
export interface ScriptRuleInfo {
  id: number;
  rule: ScriptRule;
  matched: number;
  hits: number;
}

/** What `add()` returns for each rule. */
export interface ScriptRuleHandle extends ScriptRuleInfo {
  remove(): boolean;
}

/** The rule as events show it: a RegExp becomes `{}`, functions are left out. */
export function ruleForEvent(rule: ScriptRule): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rule)) {
    if (typeof value === 'function') continue;
    out[key] = value instanceof RegExp ? {} : value;
  }
  return out;
}

/** Transport faults (issue 14, src/script/transport.ts): `bandwidth`, `stall`, `halfClose`, `slowClose`, `tlsFailure`, `stripStartTls`. */
export interface ScriptRuleJson extends TransportRuleFields {}

/**
 * Script rules (issue 4): plain JSON so a script file, REST and the
 * in-process API share them. In-process rules may also use a RegExp for
 * `match`/`tag` and functions for `send` and `when`.
 */

/** When a rule is considered. `smtp`: an SMTP command (MAIL, RCPT, DATA) of the SMTP intake. */
export type ScriptOn = 'greeting' | 'command' | 'input' | 'response' | 'quiet' | 'smtp';

export const SCRIPT_EVENTS: readonly ScriptOn[] = ['greeting', 'command', 'input', 'response', 'quiet', 'smtp'];

/** The SMTP commands `on: "smtp"` rules name (`command`). DATA is asked once the message has arrived. */
export const SMTP_SCRIPT_COMMANDS = ['MAIL', 'RCPT', 'DATA'] as const;

/**
 * The fields an `on: "smtp"` rule may use: the SMTP intake has no tags,
 * session numbers, states or mailboxes, and its replies are whole SMTP
 * replies, not IMAP output to shape.
 */
export const SMTP_RULE_FIELDS: readonly string[] = ['on', 'command', 'user', 'match', 'nth', 'times', 'chance', 'send', 'delay', 'close', 'when'];

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
}

/** A rule as JSON carries it. */
export interface ScriptRuleJson {
  on: ScriptOn;
  // which
  command?: string;
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
}

/** A rule as the in-process API accepts it. */
export interface ScriptRule extends Omit<ScriptRuleJson, 'match' | 'tag' | 'send'> {
  match?: string | RegExp;
  tag?: string | RegExp;
  send?: string | ((ctx: ScriptContext) => string);
  when?: (ctx: ScriptContext) => boolean;
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

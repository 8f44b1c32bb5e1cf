/**
 * Validation of script rules when they are added: an unknown field, a wrong
 * type or a contradictory combination is a ServiceError('INVALID') naming
 * the field, with a "did you mean" when the field (or value) is close to a
 * known one. Given the command table of a server, a `command` that neither
 * the core nor a loaded plugin defines is refused too: such a rule would
 * never match.
 */
import { combinationProblem, isAttack, STARTTLS_ATTACKS, type AttackName } from '../tls/attacks/catalog.js';
import { ServiceError } from '../errors.js';
import { suggestKey } from '../options/typos.js';
import { TRANSPORT_FIELD_CHECKS, transportProblem } from './transport.js';
import { OAUTH_RULE_FIELDS, POP3_FAULTS, POP3_RULE_FIELDS, POP3_SCRIPT_COMMANDS, POP3_STAGES, SCRIPT_EVENTS, SEED_SCOPES, SMTP_RULE_FIELDS, SMTP_SCRIPT_COMMANDS, type ScriptOn, type ScriptRule } from './rule.js';
import { OAUTH_COMMANDS, OAUTH_FAULTS, TOKEN_GRANT_COMMANDS } from '../oauth/rule-names.js';
import { checkRuleLanguage } from './validate-language.js';

/** The session states events and rules name (`state`). */
export const SESSION_STATES = ['Not Authenticated', 'Authenticated', 'Selected', 'Logout', 'Authorization', 'Transaction', 'Update'] as const;

/** The states of POP3 sessions (RFC 1939), only for on: pop3 rules. */
const POP3_STATES: readonly string[] = ['Authorization', 'Transaction', 'Update'];

/**
 * The commands a server defines, by upper-case name (`FETCH`, `UID FETCH`,
 * `AUTHENTICATE`): the keys of `imapProtocol(server).commands`.
 */
export type CommandTable = ReadonlyMap<string, unknown>;

type Check = (value: unknown) => string | null;

const str: Check = (v) => (typeof v === 'string' ? null : 'a string');
const strOrRegExp: Check = (v) => (typeof v === 'string' || v instanceof RegExp ? null : 'a string or RegExp');
const bool: Check = (v) => (typeof v === 'boolean' ? null : 'a boolean');
const fn: Check = (v) => (typeof v === 'function' ? null : 'a function');
const intAtLeast =
  (min: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= min ? null : `an integer >= ${min}`;
/** Longest timer Node can run (2^31 - 1 ms, about 24.8 days); a longer one would fire after 1 ms. */
const MAX_TIMER = 2_147_483_647;
const milliseconds =
  (min: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= MAX_TIMER ? null : `an integer from ${min} to ${MAX_TIMER} (milliseconds)`;

/**
 * The known fields. Read only through `checkFor`: a rule's keys are user
 * input, and `hasOwnProperty`, `toString`, `__proto__` ... must be unknown
 * fields, not members of Object.prototype.
 */
const FIELDS: Readonly<Record<string, Check>> = {
  on: (v) => (typeof v === 'string' && (SCRIPT_EVENTS as readonly string[]).includes(v) ? null : `one of ${SCRIPT_EVENTS.join(', ')}`),
  command: (v) =>
    typeof v === 'string' || (Array.isArray(v) && v.length > 0 && v.every((c) => typeof c === 'string')) ? null : 'a command name or a non-empty array of them',
  uid: bool,
  tag: strOrRegExp,
  session: intAtLeast(1),
  state: (v) => (typeof v === 'string' && (SESSION_STATES as readonly string[]).includes(v) ? null : `one of ${SESSION_STATES.join(', ')}`),
  user: str,
  mailbox: str,
  match: (v) => {
    if (v instanceof RegExp) return null;
    if (typeof v !== 'string') return 'a regular expression (string or RegExp)';
    try {
      new RegExp(v);
      return null;
    } catch {
      return 'a valid regular expression';
    }
  },
  nth: intAtLeast(1),
  times: intAtLeast(1),
  chance: (v) => (typeof v === 'number' && v >= 0 && v <= 1 ? null : 'a number from 0 to 1'),
  quietFor: milliseconds(1),
  send: (v) => (typeof v === 'string' || typeof v === 'function' ? null : 'a string'),
  run: bool,
  drop: bool,
  delay: milliseconds(0),
  chunk: intAtLeast(1),
  chunkDelay: (v) => (v === 'tick' || milliseconds(0)(v) === null ? null : `an integer from 0 to ${MAX_TIMER} (milliseconds) or "tick"`),
  truncate: intAtLeast(0),
  close: (v) => (v === true || v === false || v === 'reset' ? null : 'true, false or "reset"'),
  before: str,
  after: str,
  attacks: (v) => {
    if (!Array.isArray(v) || !v.every((a) => typeof a === 'string' && isAttack(a))) return `an array of attack names (${STARTTLS_ATTACKS.join(', ')})`;
    return combinationProblem(v as AttackName[]) === null ? null : 'attacks that go together (at most one that decides the answer to STARTTLS or the greeting)';
  },
  hideCapabilities: (v) => (Array.isArray(v) && v.every((c) => typeof c === 'string' && /^[^\x00-\x20\x7f(){%*"\\\]]+$/.test(c)) ? null : 'an array of capability names'),
  when: fn,
  // --- rule language, issue 14 part 1 (checks in ./validate-language.ts)
  untagged: (v) => (typeof v === 'string' && /^(\*|[A-Za-z0-9.=-]+)$/.test(v) ? null : 'a response type such as "EXISTS", "FETCH", "OK", or "*"'),
  description: (v) => (typeof v === 'string' && v.length <= 1000 ? null : 'a string of at most 1000 characters'),
  mutate: (v) => (typeof v === 'function' || Array.isArray(v) ? null : 'an array of ops (in-process also a function)'),
  literals: bool,
  defer: (v) => (v === 'tagged' || v === 'next' ? null : '"tagged" or "next"'),
  seedScope: (v) => (typeof v === 'string' && (SEED_SCOPES as readonly string[]).includes(v) ? null : `one of ${SEED_SCOPES.join(', ')}`),
  // --- end issue 14 part 1
  stage: (v) => (typeof v === 'string' && (POP3_STAGES as readonly string[]).includes(v) ? null : `one of ${POP3_STAGES.join(', ')}`),
  pop3Fault: (v) => (typeof v === 'string' && (POP3_FAULTS as readonly string[]).includes(v) ? null : `one of ${POP3_FAULTS.join(', ')}`),
  // Transport faults (issue 14): src/script/transport.ts.
  ...TRANSPORT_FIELD_CHECKS,
};

const KNOWN = new Map<string, Check>(Object.entries(FIELDS));

/** Every field a rule may have (`when` only in-process: it is a function). */
export const RULE_FIELDS: readonly string[] = [...KNOWN.keys()];

/** Fields whose values are names from a fixed list: a close miss gets a suggestion. */
const VALUE_LISTS: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ['on', SCRIPT_EVENTS],
  ['state', SESSION_STATES],
  ['seedScope', SEED_SCOPES],
]);

function invalid(where: string, field: string, message: string): ServiceError {
  return new ServiceError('INVALID', `${where}${field}: ${message}`);
}

/** A key as a message shows it: plain when it reads as a name, else quoted (and shortened). */
function label(key: string): string {
  const shown = key.length > 64 ? `${key.slice(0, 64)}...` : key;
  return /^[A-Za-z_$][\w$-]*$/.test(shown) ? shown : JSON.stringify(shown);
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const didYouMean = (hint: string | undefined): string => (hint === undefined ? '' : `; did you mean ${JSON.stringify(hint)}?`);

/**
 * Why `command` names no command of `commands`, or null when it does.
 * `UID <name>` counts when `<name>` exists, `AUTHENTICATE <mechanism>` when
 * AUTHENTICATE does (sessions report `AUTHENTICATE PLAIN` in command events).
 */
function commandProblem(command: string, on: ScriptOn, commands: CommandTable): string | null {
  const name = command.toUpperCase();
  const auth = /^AUTHENTICATE (\S+)$/.exec(name);
  if (auth && commands.has('AUTHENTICATE')) {
    // Only command events carry the mechanism; while AUTHENTICATE runs (input, response, quiet) it is `AUTHENTICATE`.
    return on === 'command' ? null : `the mechanism is only part of the name in command events; for on: ${on} use "AUTHENTICATE"`;
  }
  if (commands.has(name)) return null;
  const uid = /^UID (\S+)$/.exec(name);
  if (uid && commands.has(uid[1]!)) return null;
  const names = [...commands.keys()].sort();
  let hint = suggestKey(name, names);
  if (hint === undefined && name.includes(' ')) {
    // A typo in the first word (`AUTHENTICTE PLAIN`, `UDI FETCH`): suggest it with the rest kept.
    const [first, ...rest] = name.split(' ');
    const head = suggestKey(first!, [...names.filter((n) => !n.includes(' ')), 'UID']);
    if (head !== undefined) hint = [head, ...rest].join(' ');
  }
  const what = `no command ${JSON.stringify(command)} on this server: neither the core nor a loaded plugin defines it, so the rule would never match`;
  if (hint !== undefined) return `${what}${didYouMean(hint)}`;
  return `${what}; commands: ${names.join(', ')}; to answer a command the server does not know, leave out command and use match (for example ${JSON.stringify(`^\\S+ ${escapeRegExp(command.split(' ')[0]!)}\\b`)})`;
}

/**
 * Validates one rule; returns a shallow copy. `where` prefixes messages
 * (`script[2].`). With `commands` (a server's command table), `command` must
 * name one of them.
 */
export function validateRule(value: unknown, where = '', commands?: CommandTable): ScriptRule {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ServiceError('INVALID', `${where || 'rule'}: expected an object`);
  }
  const rule = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(rule)) {
    const check = KNOWN.get(key);
    if (!check) {
      const hint = suggestKey(key, RULE_FIELDS);
      throw invalid(where, label(key), `unknown field${hint === undefined ? `; known fields: ${RULE_FIELDS.join(', ')}` : didYouMean(hint)}`);
    }
    if (v === undefined) continue;
    const expected = check(v);
    if (expected) {
      const list = VALUE_LISTS.get(key);
      const hint = list && typeof v === 'string' ? suggestKey(v, list) : undefined;
      throw invalid(where, key, `expected ${expected}${typeof v === 'string' ? `, got ${JSON.stringify(v.length > 64 ? `${v.slice(0, 64)}...` : v)}` : ''}${didYouMean(hint)}`);
    }
  }
  if (!Object.hasOwn(rule, 'on') || rule.on === undefined) throw invalid(where, 'on', 'required');
  const on = rule.on as ScriptOn;
  const has = (k: string): boolean => Object.hasOwn(rule, k) && rule[k] !== undefined;
  if (on === 'smtp') return validateSmtpRule(rule, where);
  if (on === 'pop3') return validatePop3Rule(rule, where);
  if (on === 'oauth') return validateOAuthRule(rule, where);
  for (const k of ['stage', 'pop3Fault']) if (has(k)) throw invalid(where, k, 'only for on: pop3');
  if (has('state') && POP3_STATES.includes(rule.state as string)) throw invalid(where, 'state', 'a POP3 state, only for on: pop3');
  if (rule.drop === true) {
    for (const k of ['send', 'run', 'before', 'after', 'truncate']) {
      if (has(k)) throw invalid(where, k, 'cannot be combined with drop');
    }
  }
  if (has('truncate') && !has('send') && !has('before') && !has('after') && rule.run !== true && on !== 'response' && on !== 'greeting') {
    throw invalid(where, 'truncate', 'needs something to send (send, before, after or run)');
  }
  if (has('truncate') && on === 'quiet' && !has('send')) throw invalid(where, 'truncate', 'needs send');
  if (rule.run === true && !(on === 'command' || on === 'input' || on === 'greeting' || on === 'response')) {
    throw invalid(where, 'run', `not meaningful for on: ${on}`);
  }
  if (on === 'quiet') {
    if (!has('quietFor')) throw invalid(where, 'quietFor', 'required for on: quiet');
    if (has('run')) throw invalid(where, 'run', 'not meaningful for on: quiet');
  } else if (has('quietFor')) {
    throw invalid(where, 'quietFor', 'only for on: quiet');
  }
  if (has('chunkDelay') && !has('chunk')) throw invalid(where, 'chunkDelay', 'needs chunk');
  const language = checkRuleLanguage(rule, on);
  if (language) throw invalid(where, language.field, language.message);
  if (has('hideCapabilities') && on !== 'greeting' && on !== 'command') throw invalid(where, 'hideCapabilities', 'only for on: greeting or on: command');
  if (has('attacks') && on !== 'greeting') throw invalid(where, 'attacks', 'only for on: greeting (an attack starts with the session)');
  if (on === 'greeting' || on === 'quiet') {
    for (const k of ['command', 'tag']) if (has(k) && on === 'greeting') throw invalid(where, k, 'no command at greeting');
  }
  // Transport faults (issue 14).
  const transport = transportProblem(rule);
  if (transport) throw invalid(where, transport.field, transport.message);
  const names = commandList(rule.command);
  if (has('uid')) {
    if (names.length === 0) throw invalid(where, 'uid', 'needs command (it narrows which form of the named commands matches)');
    const written = names.find((n) => /^UID /i.test(n));
    if (written !== undefined && rule.uid === false) throw invalid(where, 'uid', `false contradicts command ${JSON.stringify(written)}`);
  }
  if (commands) {
    names.forEach((name, i) => {
      const at = typeof rule.command === 'string' ? 'command' : `command[${i}]`;
      const p = commandProblem(name, on, commands);
      if (p) throw invalid(where, at, p);
      if (rule.uid === true && !/^UID /i.test(name) && !commands.has(`UID ${name.toUpperCase()}`)) {
        throw invalid(where, at, `${JSON.stringify(name)} has no UID form on this server, so with uid: true the rule would never match`);
      }
    });
  }
  return { ...(rule as unknown as ScriptRule), ...(Array.isArray(rule.command) ? { command: [...(rule.command as string[])] } : {}) };
}

/** The names of a (type-checked) `command` field. */
function commandList(command: unknown): readonly string[] {
  if (typeof command === 'string') return [command];
  return Array.isArray(command) ? (command as string[]) : [];
}

/** An SMTP reply as `send` gives it for `on: "smtp"`: a 4xx or 5xx code, then text (`451 4.3.0 Try again later`). */
export const SMTP_REPLY = /^[45][0-9][0-9](?:[ -][^\r\n]*)?(?:\r\n)?$/;

/** The checks of an `on: "smtp"` rule (its field types are checked already). */
function validateSmtpRule(rule: Record<string, unknown>, where: string): ScriptRule {
  const allowed = new Set(SMTP_RULE_FIELDS);
  for (const key of Object.keys(rule)) {
    if (rule[key] !== undefined && !allowed.has(key)) {
      throw invalid(where, key, `not meaningful for on: smtp (its fields: ${SMTP_RULE_FIELDS.join(', ')})`);
    }
  }
  for (const [i, name] of commandList(rule.command).entries()) {
    if ((SMTP_SCRIPT_COMMANDS as readonly string[]).includes(name.toUpperCase())) continue;
    const hint = suggestKey(name.toUpperCase(), SMTP_SCRIPT_COMMANDS);
    const at = typeof rule.command === 'string' ? 'command' : `command[${i}]`;
    throw invalid(where, at, `for on: smtp one of ${SMTP_SCRIPT_COMMANDS.join(', ')}, got ${JSON.stringify(name)}${didYouMean(hint)}`);
  }
  if (typeof rule.send === 'string' && !SMTP_REPLY.test(rule.send)) {
    throw invalid(where, 'send', `for on: smtp an SMTP reply with a 4xx or 5xx code, e.g. "451 4.3.0 Try again later", got ${JSON.stringify(rule.send.slice(0, 64))}`);
  }
  return { ...(rule as unknown as ScriptRule) };
}

/**
 * The checks of an `on: "oauth"` rule (a request to the token service):
 * `command` names endpoints or grant types, `send` a fault. `token` is
 * written out as the token endpoint's grant types, which requests to it
 * are asked under.
 */
function validateOAuthRule(rule: Record<string, unknown>, where: string): ScriptRule {
  const allowed = new Set(OAUTH_RULE_FIELDS);
  for (const key of Object.keys(rule)) {
    if (rule[key] !== undefined && !allowed.has(key)) {
      throw invalid(where, key, `not meaningful for on: oauth (its fields: ${OAUTH_RULE_FIELDS.join(', ')})`);
    }
  }
  const names: string[] = [];
  for (const [i, given] of commandList(rule.command).entries()) {
    const name = given.toLowerCase();
    if ((OAUTH_COMMANDS as readonly string[]).includes(name)) {
      names.push(...(name === 'token' ? TOKEN_GRANT_COMMANDS : [name]));
      continue;
    }
    const hint = suggestKey(name, OAUTH_COMMANDS);
    const at = typeof rule.command === 'string' ? 'command' : `command[${i}]`;
    throw invalid(where, at, `for on: oauth one of ${OAUTH_COMMANDS.join(', ')}, got ${JSON.stringify(given)}${didYouMean(hint)}`);
  }
  if (typeof rule.send === 'string' && !(OAUTH_FAULTS as readonly string[]).includes(rule.send)) {
    const hint = suggestKey(rule.send, OAUTH_FAULTS);
    throw invalid(where, 'send', `for on: oauth one of ${OAUTH_FAULTS.join(', ')}, got ${JSON.stringify(rule.send.slice(0, 64))}${didYouMean(hint)}`);
  }
  return { ...(rule as unknown as ScriptRule), ...(rule.command !== undefined ? { command: [...new Set(names)] } : {}) };
}

/** The checks of an `on: "pop3"` rule (its field types are checked already). */
function validatePop3Rule(rule: Record<string, unknown>, where: string): ScriptRule {
  const allowed = new Set(POP3_RULE_FIELDS);
  const has = (k: string): boolean => Object.hasOwn(rule, k) && rule[k] !== undefined;
  for (const key of Object.keys(rule)) {
    if (rule[key] !== undefined && !allowed.has(key)) throw invalid(where, key, `not meaningful for on: pop3 (its fields: ${POP3_RULE_FIELDS.join(', ')})`);
  }
  const stage = (rule.stage as string | undefined) ?? 'command';
  for (const [i, name] of commandList(rule.command).entries()) {
    const upper = name.toUpperCase();
    const verb = upper.startsWith('AUTH ') ? 'AUTH' : upper;
    const at = typeof rule.command === 'string' ? 'command' : `command[${i}]`;
    if (!(POP3_SCRIPT_COMMANDS as readonly string[]).includes(verb)) {
      throw invalid(where, at, `for on: pop3 one of ${POP3_SCRIPT_COMMANDS.join(', ')}, got ${JSON.stringify(name)}${didYouMean(suggestKey(upper, POP3_SCRIPT_COMMANDS))}`);
    }
  }
  if (stage === 'greeting' && has('command')) throw invalid(where, 'command', 'no command at greeting');
  if (has('attacks') && stage !== 'greeting') throw invalid(where, 'attacks', 'only for stage: greeting (an attack starts with the session)');
  if (has('pop3Fault') && stage !== 'command') throw invalid(where, 'pop3Fault', 'only for stage: command (it changes the answer of the command)');
  if (has('pop3Fault') && (has('send') || rule.drop === true)) throw invalid(where, 'pop3Fault', 'cannot be combined with send or drop (the command runs, with the fault in its answer)');
  if (rule.drop === true) {
    for (const k of ['send', 'run', 'before', 'after', 'truncate']) if (has(k)) throw invalid(where, k, 'cannot be combined with drop');
  }
  if (rule.run === true && stage !== 'command') throw invalid(where, 'run', 'only for stage: command');
  if (has('chunkDelay') && !has('chunk')) throw invalid(where, 'chunkDelay', 'needs chunk');
  if (has('state') && !POP3_STATES.includes(rule.state as string)) {
    throw invalid(where, 'state', 'for on: pop3 one of Authorization, Transaction, Update');
  }
  return { ...(rule as unknown as ScriptRule), ...(Array.isArray(rule.command) ? { command: [...(rule.command as string[])] } : {}) };
}

/** Validates a rule or an array of rules; all or nothing. */
export function validateRules(value: unknown, where = '', commands?: CommandTable): ScriptRule[] {
  if (Array.isArray(value)) return value.map((r, i) => validateRule(r, `${where}[${i}].`, commands));
  return [validateRule(value, where, commands)];
}

/**
 * The script engine: an ordered list of rules, their counters and the
 * seeded PRNG behind `chance`. Sessions ask it about each event; the first
 * rule that matches and acts handles the event.
 */
import { Prng, mix32 } from '../util/prng.js';
import { ruleForEvent, type ScriptContext, type ScriptOn, type ScriptRule, type ScriptRuleHandle, type ScriptRuleInfo } from './rule.js';
import { validateRules, type CommandTable } from './validate.js';

interface Entry {
  id: number;
  rule: ScriptRule;
  matched: number;
  hits: number;
  match: RegExp | null;
  /** The upper-case command names the rule matches, its `UID` forms included; null without `command`. */
  commands: ReadonlySet<string> | null;
}

/** What a session must do: the acting rule and the bytes it sends (with `$TAG` replaced). */
export interface ScriptAction {
  rule: ScriptRule;
  send: Buffer | null;
}

/** The payload of the server's `script` event. */
export interface ScriptFiring {
  rule: Record<string, unknown>;
  event: ScriptOn;
  session: number | null;
  tag: string | null;
  command: string | null;
}

export class ScriptEngine {
  private entries: Entry[] = [];
  private nextId = 1;
  private prng: Prng;
  /** `seedScope` "session" and "rule" streams, by `s<session>:<rule>` / `r<rule>`; a session's go when it closes. */
  private streams = new Map<string, Prng>();

  constructor(
    private readonly seed: number,
    private readonly onFire: (firing: ScriptFiring) => void = () => undefined,
    /**
     * The server's command table: a rule's `command` must name one of its
     * commands. Without it (an engine on its own) any name is taken.
     */
    private readonly commands?: () => CommandTable,
  ) {
    this.prng = new Prng(seed);
  }

  /** Adds a rule (or rules, atomically); validates first. */
  add(rules: readonly ScriptRule[]): ScriptRuleHandle[];
  add(rule: ScriptRule): ScriptRuleHandle;
  add(rules: ScriptRule | readonly ScriptRule[]): ScriptRuleHandle | ScriptRuleHandle[] {
    const handles = this.insert(validateRules(rules, '', this.commands?.()));
    return Array.isArray(rules) ? handles : handles[0]!;
  }

  /** Adds the rules of the `script` option; messages name them as the options do (`script: [0].command: ...`). */
  addOptionRules(rules: readonly ScriptRule[]): void {
    this.insert(validateRules(rules, 'script: ', this.commands?.()));
  }

  private insert(valid: readonly ScriptRule[]): ScriptRuleHandle[] {
    return valid.map((rule) => {
      const entry: Entry = {
        id: this.nextId++,
        rule,
        matched: 0,
        hits: 0,
        match: rule.match === undefined ? null : rule.match instanceof RegExp ? rule.match : new RegExp(rule.match),
        commands: commandNames(rule),
      };
      this.entries.push(entry);
      return this.handle(entry);
    });
  }

  private handle(entry: Entry): ScriptRuleHandle {
    const engine = this;
    return {
      id: entry.id,
      rule: entry.rule,
      get matched() {
        return entry.matched;
      },
      get hits() {
        return entry.hits;
      },
      remove: () => engine.remove(entry.id),
    };
  }

  /** Removes a rule by id; false when there is none. */
  remove(id: number): boolean {
    const at = this.entries.findIndex((e) => e.id === id);
    if (at < 0) return false;
    this.entries.splice(at, 1);
    return true;
  }

  get rules(): ScriptRuleInfo[] {
    return this.entries.map((e) => ({ id: e.id, rule: e.rule, matched: e.matched, hits: e.hits }));
  }

  clear(): void {
    this.entries = [];
  }

  /** Keeps rules and counters; restarts the seeded sequence. */
  reset(): void {
    this.prng = new Prng(this.seed);
    this.streams.clear();
  }

  /** Forgets a closed session's `seedScope: "session"` streams (bounded memory). */
  forgetSession(session: number): void {
    if (this.streams.size === 0) return;
    const prefix = `s${session}:`;
    for (const key of [...this.streams.keys()]) if (key.startsWith(prefix)) this.streams.delete(key);
  }

  /**
   * The next draw for a `chance` rule. `server`: the one shared sequence
   * (which event a rule hits depends on how sessions interleave);
   * `session`: a sequence per session and rule, seeded from the seed, the
   * session number and the rule id, so a session's faults depend only on
   * its own events; `rule`: a sequence per rule, shared by sessions.
   */
  private draw(entry: Entry, ctx: ScriptContext): number {
    const scope = entry.rule.seedScope ?? 'server';
    if (scope === 'server') return this.prng.next();
    const session = ctx.session ?? 0;
    const key = scope === 'rule' ? `r${entry.id}` : `s${session}:${entry.id}`;
    let stream = this.streams.get(key);
    if (!stream) {
      stream = new Prng(mixSeed(this.seed, entry.id, scope === 'rule' ? 0 : session + 1));
      this.streams.set(key, stream);
    }
    return stream.next();
  }

  /** True when some rule listens for this event kind (a cheap pre-check). */
  has(on: ScriptOn): boolean {
    // A loop, not some(): asked several times for every command and every write, with no closure to make.
    const entries = this.entries;
    for (let i = 0; i < entries.length; i++) if (entries[i]!.rule.on === on) return true;
    return false;
  }

  /** The distinct `quietFor` values of quiet rules, ascending. */
  quietTimes(): number[] {
    const times = new Set<number>();
    for (const e of this.entries) if (e.rule.on === 'quiet' && e.rule.quietFor !== undefined) times.add(e.rule.quietFor);
    return [...times].sort((a, b) => a - b);
  }

  /** Asks the rules about an event; returns what to do, or null for normal behaviour. Emits the script event. */
  fire(ctx: ScriptContext): ScriptAction | null {
    return this.fireAll(ctx, () => false)[0] ?? null;
  }

  /**
   * Like `fire`, but after a rule acts the next matching rules are asked
   * too while `more(rule)` says the acting rule leaves the event to them
   * (rules that only change a response: mutate, literals, defer). Each
   * acting rule counts a hit and emits its script event.
   */
  fireAll(ctx: ScriptContext, more: (rule: ScriptRule) => boolean): ScriptAction[] {
    const actions: ScriptAction[] = [];
    for (const entry of [...this.entries]) {
      if (!this.matches(entry, ctx)) continue;
      entry.matched++;
      const rule = entry.rule;
      if (rule.nth !== undefined && entry.matched !== rule.nth) continue;
      if (rule.times !== undefined && entry.hits >= rule.times) continue;
      if (rule.chance !== undefined && !(this.draw(entry, ctx) < rule.chance)) continue;
      entry.hits++;
      let send: Buffer | null = null;
      if (rule.send !== undefined) {
        const text = typeof rule.send === 'function' ? rule.send(ctx) : rule.send;
        send = Buffer.from(text.replace(/\$TAG/g, ctx.tag ?? '*'), 'latin1');
      }
      this.onFire({ rule: ruleForEvent(rule), event: ctx.event, session: ctx.session, tag: ctx.tag, command: ctx.command });
      actions.push({ rule, send });
      if (!more(rule)) break;
    }
    return actions;
  }

  private matches(entry: Entry, ctx: ScriptContext): boolean {
    const r = entry.rule;
    if (r.on !== ctx.event) return false;
    if (ctx.event === 'pop3' && (r.stage ?? 'command') !== ctx.stage) return false;
    if (r.quietFor !== undefined && ctx.quietFor !== r.quietFor) return false;
    if (entry.commands !== null && !commandMatches(entry.commands, ctx.command)) return false;
    if (r.tag !== undefined) {
      if (ctx.tag === null) return false;
      if (r.tag instanceof RegExp ? !testRe(r.tag, ctx.tag) : r.tag !== ctx.tag) return false;
    }
    if (r.session !== undefined && r.session !== ctx.session) return false;
    if (r.state !== undefined && r.state !== ctx.state) return false;
    if (r.user !== undefined && r.user !== ctx.user) return false;
    if (r.mailbox !== undefined && r.mailbox !== ctx.mailbox) return false;
    // On command rules `untagged` picks the responses mutate/literals/defer act on (the session applies it).
    if (r.untagged !== undefined && ctx.event === 'response') {
      const type = ctx.untagged ?? null;
      if (type === null || (r.untagged !== '*' && r.untagged.toUpperCase() !== type)) return false;
    }
    if (entry.match && !testRe(entry.match, ctx.text)) return false;
    if (r.when && !r.when(ctx)) return false;
    return true;
  }
}

/**
 * The names a rule's `command` stands for. Clients send `UID FETCH` for most
 * of what a test means by "a FETCH" (imapflow whenever `{ uid: true }` is
 * passed), so a name without `UID ` also stands for its UID form unless
 * `uid` narrows it: `uid: true` only the UID form, `uid: false` only the
 * plain one. A name written with `UID ` is that form only.
 */
function commandNames(rule: ScriptRule): ReadonlySet<string> | null {
  if (rule.command === undefined) return null;
  const names = new Set<string>();
  const smtp = rule.on === 'smtp' || rule.on === 'pop3';
  for (const given of typeof rule.command === 'string' ? [rule.command] : rule.command) {
    const name = given.toUpperCase();
    if (smtp || name.startsWith('UID ') || name.includes(' ')) {
      names.add(name);
      continue;
    }
    if (rule.uid !== true) names.add(name);
    if (rule.uid !== false) names.add(`UID ${name}`);
  }
  return names;
}

/**
 * Whether a command event's name is one of `names`. `AUTHENTICATE` stands
 * for every mechanism (command events name it: `AUTHENTICATE PLAIN`), so a
 * rule for "the login" can list `['LOGIN', 'AUTHENTICATE']` whichever way
 * the client logs in.
 */
function commandMatches(names: ReadonlySet<string>, command: string | null): boolean {
  if (command === null) return false;
  const upper = command.toUpperCase();
  return names.has(upper) || (upper.startsWith('AUTHENTICATE ') && names.has('AUTHENTICATE')) || (upper.startsWith('AUTH ') && names.has('AUTH'));
}

/** A 32-bit seed from the server seed and two numbers (murmur3's finalizer over a mix). */
function mixSeed(seed: number, a: number, b: number): number {
  return mix32((seed ^ Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b)) >>> 0);
}

function testRe(re: RegExp, text: string): boolean {
  re.lastIndex = 0;
  return re.test(text);
}

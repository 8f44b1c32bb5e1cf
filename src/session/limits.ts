/**
 * Connection limits per user and rate limits per command class (issue 14),
 * with the refusal texts real providers send, so a client's handling of a
 * throttled server can be tested:
 *
 * - Gmail refuses the login: `NO [ALERT] Too many simultaneous connections. (Failure)`
 *   (zone-eu/wildduck#35 "Limit concurrent connections"; imapsync/imapsync#61: 15 per account).
 * - Outlook accepts the login and then answers every command with
 *   `BAD User is authenticated but not connected.` (mscdex/node-imap#523, its
 *   reporter traced it to Office 365's concurrent connection limit of 20).
 * - Dovecot refuses the login: `NO [UNAVAILABLE] Maximum number of connections
 *   from user+IP exceeded (mail_max_userip_connections=N)` (mscdex/node-imap#606).
 * - Yahoo's rate limit: `* BYE IMAP4rev1 Server logging out` and then
 *   `NO [LIMIT] <COMMAND> Rate limit hit.` (postalsys/imapflow#75 "Rate limiting on Yahoo servers").
 *
 * Windows are measured on the server clock, so a pinned clock makes them exact.
 */
import type { CommandResult } from '../imap/command.js';

/** The provider whose refusal a connection limit imitates. */
export type ConnectionLimitStyle = 'gmail' | 'outlook' | 'dovecot';
export const CONNECTION_LIMIT_STYLES: readonly ConnectionLimitStyle[] = ['gmail', 'outlook', 'dovecot'];

/** The `maxConnectionsPerUser` option: a number, or the limit with the provider's behaviour and text. */
export type MaxConnectionsPerUserOption =
  | number
  | {
      limit: number;
      /** Whose refusal: `gmail` (default) and `dovecot` refuse the login, `outlook` refuses every command after it. */
      style?: ConnectionLimitStyle;
      /** Your own refusal instead, the tagged response after the tag: `NO [ALERT] ...` or `BAD ...`. */
      text?: string;
    };

/** Command classes a rate limit may name instead of command names. */
export const COMMAND_CLASSES: ReadonlyMap<string, readonly string[] | 'all'> = new Map<string, readonly string[] | 'all'>([
  ['all', 'all'],
  ['fetch', ['FETCH', 'UID FETCH']],
  ['search', ['SEARCH', 'UID SEARCH', 'SORT', 'UID SORT', 'THREAD', 'UID THREAD']],
  ['store', ['STORE', 'UID STORE']],
  ['copy', ['COPY', 'UID COPY', 'MOVE', 'UID MOVE']],
  ['append', ['APPEND']],
  ['select', ['SELECT', 'EXAMINE']],
  ['list', ['LIST', 'LSUB', 'STATUS', 'NAMESPACE']],
  ['auth', ['LOGIN', 'AUTHENTICATE']],
  ['expunge', ['EXPUNGE', 'UID EXPUNGE', 'CLOSE']],
]);

/** One rate limit of the `rateLimits` option. */
export interface RateLimitOption {
  /** Command names (`FETCH`, `UID FETCH`) or classes (`fetch`, `search`, `store`, `copy`, `append`, `select`, `list`, `auth`, `expunge`, `all`). */
  commands: string[];
  /** Commands allowed per window. */
  max: number;
  /** The window in ms (server clock). */
  per: number;
  /** Counted per `session` (default) or per `user` across the user's sessions. */
  scope?: 'session' | 'user';
  /** `yahoo`: `* BYE` then `NO [LIMIT] <COMMAND> Rate limit hit.` and the connection closes. */
  style?: 'yahoo';
  /** Your own refusal, the tagged response after the tag (`NO [LIMIT] Slow down`); default `NO [LIMIT] Rate limit hit, try again later`. */
  text?: string;
  /** Send `* BYE` and close after the refusal. Default false (true for `style: "yahoo"`). */
  close?: boolean;
}

export interface ResolvedRateLimit {
  names: ReadonlySet<string> | 'all';
  max: number;
  per: number;
  scope: 'session' | 'user';
  style: 'yahoo' | null;
  text: string | null;
  close: boolean;
}

export interface ResolvedThrottling {
  perUser: { limit: number; style: ConnectionLimitStyle; text: string | null } | null;
  rateLimits: readonly ResolvedRateLimit[];
}

export const NO_THROTTLING: ResolvedThrottling = Object.freeze({ perUser: null, rateLimits: [] });

/** Largest `max` of a rate limit: each window holds that many times. */
export const MAX_RATE = 100_000;

/** A tagged response as an option gives it (`NO [ALERT] text`). */
const RESPONSE = /^(NO|BAD) (?:\[([^\]\r\n]+)\] ?)?([^\r\n]*)$/;

function parseResponse(text: string): CommandResult {
  const m = RESPONSE.exec(text)!;
  return { status: m[1] as 'NO' | 'BAD', ...(m[2] ? { code: m[2] } : {}), text: m[3]! };
}

type Report = (path: string, message: string) => void;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const posInt = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const describe = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v.length > 64 ? `${v.slice(0, 64)}...` : v) : Array.isArray(v) ? 'an array' : v === null ? 'null' : typeof v);

function unknownKeys(value: Record<string, unknown>, known: readonly string[], path: string, report: Report): void {
  for (const key of Object.keys(value)) if (!known.includes(key)) report(`${path}.${key}`, `unknown key; known keys: ${known.join(', ')}`);
}

function responseText(v: unknown, path: string, report: Report): string | null {
  if (v === undefined) return null;
  if (typeof v === 'string' && RESPONSE.test(v)) return v;
  report(path, `expected a tagged response after the tag, "NO [CODE] text" or "BAD text", got ${describe(v)}`);
  return null;
}

/** Validates `maxConnectionsPerUser` and `rateLimits`; problems go to `report` with the option path. */
export function resolveThrottling(perUser: unknown, rateLimits: unknown, report: Report): ResolvedThrottling {
  let resolvedPerUser: ResolvedThrottling['perUser'] = null;
  if (perUser !== undefined) {
    if (posInt(perUser, 1)) resolvedPerUser = { limit: perUser, style: 'gmail', text: null };
    else if (isObject(perUser)) {
      unknownKeys(perUser, ['limit', 'style', 'text'], 'maxConnectionsPerUser', report);
      const limit = perUser.limit;
      if (!posInt(limit, 1)) report('maxConnectionsPerUser.limit', `expected an integer >= 1, got ${describe(limit)}`);
      const style = perUser.style ?? 'gmail';
      if (!(CONNECTION_LIMIT_STYLES as readonly unknown[]).includes(style)) {
        report('maxConnectionsPerUser.style', `expected one of ${CONNECTION_LIMIT_STYLES.join(', ')}, got ${describe(style)}`);
      }
      const text = responseText(perUser.text, 'maxConnectionsPerUser.text', report);
      if (posInt(limit, 1)) resolvedPerUser = { limit, style: style as ConnectionLimitStyle, text };
    } else {
      report('maxConnectionsPerUser', `expected an integer >= 1 or {limit, style?, text?}, got ${describe(perUser)}`);
    }
  }
  const limits: ResolvedRateLimit[] = [];
  if (rateLimits !== undefined) {
    if (!Array.isArray(rateLimits)) report('rateLimits', `expected an array of {commands, max, per}, got ${describe(rateLimits)}`);
    else
      rateLimits.forEach((item: unknown, i) => {
        const path = `rateLimits[${i}]`;
        if (!isObject(item)) return report(path, `expected {commands, max, per}, got ${describe(item)}`);
        unknownKeys(item, ['commands', 'max', 'per', 'scope', 'style', 'text', 'close'], path, report);
        let names: Set<string> | 'all' = new Set();
        if (!Array.isArray(item.commands) || item.commands.length === 0) {
          report(`${path}.commands`, `expected a non-empty array of command names or classes (${[...COMMAND_CLASSES.keys()].join(', ')}), got ${describe(item.commands)}`);
        } else {
          item.commands.forEach((c: unknown, j) => {
            if (typeof c !== 'string' || c.trim() === '') return report(`${path}.commands[${j}]`, `expected a command name or class, got ${describe(c)}`);
            const cls = COMMAND_CLASSES.get(c.toLowerCase());
            if (cls === 'all') names = 'all';
            else if (names !== 'all') for (const n of cls ?? [c.toUpperCase().replace(/\s+/g, ' ')]) names.add(n);
          });
        }
        // A window keeps the times of the last `max` commands: bounded, so a peer's command count cannot grow it.
        if (!posInt(item.max, 1) || item.max > MAX_RATE) report(`${path}.max`, `expected an integer from 1 to ${MAX_RATE} (commands per window), got ${describe(item.max)}`);
        if (!posInt(item.per, 1)) report(`${path}.per`, `expected an integer >= 1 (the window in milliseconds), got ${describe(item.per)}`);
        if (item.scope !== undefined && item.scope !== 'session' && item.scope !== 'user') report(`${path}.scope`, `expected "session" or "user", got ${describe(item.scope)}`);
        if (item.style !== undefined && item.style !== 'yahoo') report(`${path}.style`, `expected "yahoo", got ${describe(item.style)}`);
        if (item.close !== undefined && typeof item.close !== 'boolean') report(`${path}.close`, `expected a boolean, got ${describe(item.close)}`);
        const text = responseText(item.text, `${path}.text`, report);
        if (posInt(item.max, 1) && item.max <= MAX_RATE && posInt(item.per, 1)) {
          const style = item.style === 'yahoo' ? 'yahoo' : null;
          limits.push({
            names,
            max: item.max,
            per: item.per,
            scope: item.scope === 'user' ? 'user' : 'session',
            style,
            text,
            close: typeof item.close === 'boolean' ? item.close : style === 'yahoo',
          });
        }
      });
  }
  return { perUser: resolvedPerUser, rateLimits: limits };
}

/** What the limits need of a session. */
export interface LimitedSession {
  readonly id: number;
  readonly user: string | null;
  readonly server: {
    now(): number;
    readonly options: { readonly throttling: ResolvedThrottling };
    readonly sessions: { list(): readonly { readonly id: number; readonly user: string | null; info(): { state: string } }[] };
  };
  writeText(text: string): void;
  setState(state: 'logout'): void;
}

/** A sliding window of the times of the last `max` commands (bounded by `max`). */
class Window {
  private times: number[] = [];
  private at = 0;

  /** Records a command at `now`; false when `max` were already within `per`. */
  take(now: number, max: number, per: number): boolean {
    if (this.times.length < max) {
      this.times.push(now);
      return true;
    }
    // The oldest of the last `max` is at `at` (a ring).
    const oldest = this.times[this.at]!;
    if (now - oldest < per) return false;
    this.times[this.at] = now;
    this.at = (this.at + 1) % max;
    return true;
  }
}

/**
 * The limits' state of one server: per-user windows live here (per-session
 * ones in the session's `SessionLimits`). Users' windows are kept by name in
 * a Map; there is one per user of the store at most.
 */
export class ServerLimits {
  readonly userWindows = new Map<string, Window[]>();
}

const serverLimits = new WeakMap<object, ServerLimits>();

/** The per-session side: rate windows and the Outlook-style "not connected" mark. */
export class SessionLimits {
  private readonly windows: Window[];
  /** Set by an Outlook-style connection limit: every later command is refused. */
  private notConnected = false;

  static forSession(session: LimitedSession): SessionLimits | null {
    const t = session.server.options.throttling;
    if (t.perUser === null && t.rateLimits.length === 0) return null;
    return new SessionLimits(session);
  }

  private constructor(private readonly session: LimitedSession) {
    this.windows = session.server.options.throttling.rateLimits.map(() => new Window());
  }

  /**
   * Called by login before the session counts as logged in: the refusal
   * when `user` has `limit` sessions already (Gmail, Dovecot), or null. The
   * Outlook style lets the login succeed and refuses what follows.
   */
  login(user: string): CommandResult | null {
    const perUser = this.session.server.options.throttling.perUser;
    if (perUser === null) return null;
    let others = 0;
    // A session that has logged out (its connection still closing) no longer counts.
    for (const s of this.session.server.sessions.list()) if (s.user === user && s.id !== this.session.id && s.info().state !== 'Logout') others++;
    if (others < perUser.limit) return null;
    if (perUser.text !== null) {
      const refusal = parseResponse(perUser.text);
      if (refusal.status === 'BAD' && perUser.style === 'outlook') {
        this.notConnected = true;
        return null;
      }
      return refusal;
    }
    switch (perUser.style) {
      case 'outlook':
        this.notConnected = true;
        return null;
      case 'dovecot':
        return { status: 'NO', code: 'UNAVAILABLE', text: `Maximum number of connections from user+IP exceeded (mail_max_userip_connections=${perUser.limit})` };
      default:
        return { status: 'NO', code: 'ALERT', text: 'Too many simultaneous connections. (Failure)' };
    }
  }

  /** The refusal of command `name` (a limit hit), or null to run it. */
  command(name: string): CommandResult | null {
    if (this.notConnected && name !== 'LOGOUT') {
      const text = this.session.server.options.throttling.perUser?.text;
      return text ? parseResponse(text) : { status: 'BAD', text: 'User is authenticated but not connected.' };
    }
    const limits = this.session.server.options.throttling.rateLimits;
    if (limits.length === 0) return null;
    const now = this.session.server.now();
    for (let i = 0; i < limits.length; i++) {
      const limit = limits[i]!;
      if (limit.names !== 'all' && !limit.names.has(name)) continue;
      if (this.window(i, limit).take(now, limit.max, limit.per)) continue;
      if (limit.close) {
        // Yahoo sends its BYE before the tagged refusal; the session closes after that answer.
        this.session.writeText('* BYE IMAP4rev1 Server logging out\r\n');
        this.session.setState('logout');
      }
      if (limit.text !== null) return parseResponse(limit.text);
      if (limit.style === 'yahoo') return { status: 'NO', code: 'LIMIT', text: `${name} Rate limit hit.` };
      return { status: 'NO', code: 'LIMIT', text: 'Rate limit hit, try again later' };
    }
    return null;
  }

  private window(index: number, limit: ResolvedRateLimit): Window {
    if (limit.scope === 'session' || this.session.user === null) return this.windows[index]!;
    let shared = serverLimits.get(this.session.server);
    if (!shared) {
      shared = new ServerLimits();
      serverLimits.set(this.session.server, shared);
    }
    let windows = shared.userWindows.get(this.session.user);
    if (!windows) {
      windows = this.session.server.options.throttling.rateLimits.map(() => new Window());
      shared.userWindows.set(this.session.user, windows);
    }
    return windows[index]!;
  }
}

/**
 * Server-clock timers of a session (issue 14): inactivity autologout (per
 * state), the longest IDLE, and a BYE at a set server-clock time. Every
 * deadline is a server-clock time (the `now` option plus what
 * `control.advanceClock` added), so a test with a pinned clock decides to
 * the millisecond when each fires:
 *
 * - a real-time timer wakes the session when the deadline should be near,
 *   and only acts when the server clock says it is due (else it waits again);
 * - moving the clock (`advanceClock`, `POST /v1/clock`) checks every
 *   session's deadlines at once.
 */
import type { SessionState } from '../events.js';

/** Longest timer Node can run (2^31 - 1 ms). */
const MAX_TIMER = 2_147_483_647;

/** Inactivity limits in ms by where the session is (0: none). */
export interface AutologoutLimits {
  notAuthenticated: number;
  authenticated: number;
  selected: number;
  /** Inside IDLE; 0 falls back to the state's limit. */
  idle: number;
  text: string;
}

export interface ResolvedTimers {
  autologout: AutologoutLimits | null;
  maxIdle: { ms: number; text: string } | null;
  byeAt: { at: number; text: string } | null;
}

export const NO_TIMERS: ResolvedTimers = Object.freeze({ autologout: null, maxIdle: null, byeAt: null });

export const DEFAULT_AUTOLOGOUT_TEXT = 'Autologout; idle for too long';
export const DEFAULT_MAX_IDLE_TEXT = 'IDLE for too long, reconnect';
export const DEFAULT_BYE_AT_TEXT = 'Server going down for maintenance';

/** What the timers need of the server. */
export interface ClockSource {
  now(): number;
  /** Called with no arguments whenever the server clock is moved. */
  readonly clockListeners: Set<() => void>;
  readonly options: { readonly timers: ResolvedTimers };
}

/** What the timers need of a session. */
export interface TimedSession {
  readonly server: ClockSource;
  readonly idling: boolean;
  info(): { state: SessionState };
  /** `* BYE` now between commands and in IDLE, else right after the running command's answer. */
  byeWhenIdle(text: string): void;
}

export class SessionTimers {
  private lastInput: number;
  private idleSince: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly onClock = (): void => this.check();

  /** The session's timers, or null when the options set none (then nothing runs). */
  static forSession(session: TimedSession): SessionTimers | null {
    const t = session.server.options.timers;
    if (t.autologout === null && t.maxIdle === null && t.byeAt === null) return null;
    return new SessionTimers(session, t);
  }

  private constructor(
    private readonly session: TimedSession,
    private readonly options: ResolvedTimers,
  ) {
    this.lastInput = session.server.now();
    session.server.clockListeners.add(this.onClock);
    this.arm();
  }

  /** The client sent something: inactivity counts from now. The timer is not re-armed (it checks when it fires). */
  activity(): void {
    this.lastInput = this.session.server.now();
  }

  /** The session's state changed or IDLE began (`waiting`): its limits may differ. */
  sessionEvent(type: string, command?: string): void {
    if (type === 'waiting' && command === 'IDLE') this.idleSince = this.session.server.now();
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.session.server.clockListeners.delete(this.onClock);
  }

  /** The next deadline and the BYE text it sends, or null. */
  private next(): { at: number; text: string } | null {
    const s = this.session;
    if (!s.idling) this.idleSince = null;
    let best: { at: number; text: string } | null = null;
    const take = (at: number, text: string): void => {
      if (best === null || at < best.at) best = { at, text };
    };
    const a = this.options.autologout;
    if (a) {
      const state = s.info().state;
      const byState = state === 'Not Authenticated' ? a.notAuthenticated : state === 'Authenticated' ? a.authenticated : state === 'Selected' ? a.selected : 0;
      const limit = s.idling && a.idle > 0 ? a.idle : byState;
      if (limit > 0) take(this.lastInput + limit, a.text);
    }
    const m = this.options.maxIdle;
    if (m && this.idleSince !== null) take(this.idleSince + m.ms, m.text);
    const b = this.options.byeAt;
    if (b) take(b.at, b.text);
    return best;
  }

  /** Sends the BYE of a deadline the server clock has reached, else waits for the next one. */
  check(): void {
    if (this.stopped) return;
    const due = this.next();
    if (due === null) return this.clearTimer();
    if (this.session.server.now() >= due.at) {
      this.stop();
      this.session.byeWhenIdle(due.text);
      return;
    }
    this.arm();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (this.stopped) return;
    this.clearTimer();
    const due = this.next();
    if (due === null) return;
    const delay = Math.min(MAX_TIMER, Math.max(1, due.at - this.session.server.now()));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.check();
    }, delay);
    this.timer.unref();
  }
}

/** What a scheduled BYE needs of the server. */
export interface ByeTarget {
  now(): number;
  readonly clockListeners: Set<() => void>;
  /** The live sessions that can be told BYE. */
  byeTargets(): readonly { readonly id: number; byeWhenIdle(text: string): void }[];
}

/**
 * A BYE at a server-clock time, set at run time (`control.scheduleBye`,
 * `POST /v1/clock/bye`): to every session live at that time, or to one.
 * Real-time timer plus clock listener, as for the session timers.
 */
export class ScheduledBye {
  private timer: NodeJS.Timeout | null = null;
  private done = false;
  private readonly onClock = (): void => this.check();

  constructor(
    private readonly target: ByeTarget,
    readonly at: number,
    readonly text: string,
    readonly session: number | null,
  ) {
    target.clockListeners.add(this.onClock);
    this.check();
  }

  cancel(): void {
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.target.clockListeners.delete(this.onClock);
  }

  private check(): void {
    if (this.done) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const left = this.at - this.target.now();
    if (left <= 0) {
      this.cancel();
      for (const s of this.target.byeTargets()) if (this.session === null || s.id === this.session) s.byeWhenIdle(this.text);
      return;
    }
    this.timer = setTimeout(() => this.check(), Math.min(MAX_TIMER, left));
    this.timer.unref();
  }
}

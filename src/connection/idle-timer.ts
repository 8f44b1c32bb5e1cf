/** What the idle timer reads: the time of the connection's last traffic (`performance.now()`). */
export interface TrafficClock {
  readonly lastActive: number;
}

/**
 * The autologout timer of a connection: `onIdle` runs once `ms` pass with
 * no traffic. Node's own socket timeout does this by moving its timer to
 * the end of the timers' list on every read and write; with 10,000 idling
 * sessions each write of a change's fan-out relinked a timer between two
 * other sessions' (three objects fetched from memory, issue 37). Here
 * traffic only notes the time on the connection (`TrafficClock`), and the
 * one timer, when it fires, compares that time with the timeout and waits
 * again for what is left.
 */
export class IdleTimer {
  private timer: NodeJS.Timeout | null = null;
  /** The last traffic's time `onIdle` was called for: once per silence, as a socket's timeout fires once. */
  private firedFor = Number.NaN;

  constructor(
    private readonly clock: TrafficClock,
    private ms: number,
    private readonly onIdle: () => void,
  ) {
    this.arm(ms);
  }

  /** A new length, counted from the last traffic. */
  restart(ms: number): void {
    this.ms = ms;
    this.stop();
    this.arm(Math.max(0, ms - (performance.now() - this.clock.lastActive)));
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Called by the timer: idle long enough, or a wait for the rest. */
  check(): void {
    const last = this.clock.lastActive;
    const idle = performance.now() - last;
    if (idle < this.ms) {
      // What is left, rounded up to a 64th of the timeout: Node keeps one list per distinct delay, and
      // busy connections would otherwise each make their own. Later, never sooner (RFC 3501 §5.4's 'at least').
      const step = Math.ceil(this.ms / 64);
      this.arm(Math.ceil((this.ms - idle) / step) * step);
      return;
    }
    // Waits on while the connection lives, so traffic never has to re-arm it.
    this.arm(this.ms);
    if (this.firedFor === last) return;
    this.firedFor = last;
    this.onIdle();
  }

  private arm(delay: number): void {
    // Like a socket's timeout, it keeps no process alive; no closure per timer either.
    this.timer = setTimeout(fire, Math.max(1, Math.ceil(delay)), this);
    this.timer.unref();
  }
}

function fire(timer: IdleTimer): void {
  timer.check();
}

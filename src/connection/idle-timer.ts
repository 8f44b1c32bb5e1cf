/**
 * The autologout timer of a connection: `onIdle` runs once `ms` pass with
 * no traffic (`touch`). Node's own socket timeout does this by moving its
 * timer to the end of the timers' list on every read and write; with
 * 10,000 idling sessions each write of a change's fan-out relinked a timer
 * between two other sessions' (three objects fetched from memory, issue
 * 37). Here traffic only notes the time, and the one timer, when it fires,
 * looks at the time and waits again for what is left.
 */
export class IdleTimer {
  private lastActive: number;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private ms: number,
    private readonly onIdle: () => void,
  ) {
    this.lastActive = performance.now();
    this.arm(ms);
  }

  /** Traffic: the idle time starts again. */
  touch(): void {
    this.lastActive = performance.now();
    // After it fired, the next traffic starts a new wait (as a socket's timeout does).
    if (this.timer === null) this.arm(this.ms);
  }

  /** A new length; the idle time starts again. */
  restart(ms: number): void {
    this.ms = ms;
    this.lastActive = performance.now();
    this.stop();
    this.arm(ms);
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Called by the timer: idle long enough, or a wait for the rest. */
  check(): void {
    this.timer = null;
    const idle = performance.now() - this.lastActive;
    if (idle >= this.ms) this.onIdle();
    else this.arm(this.ms - idle);
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

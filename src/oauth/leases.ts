/**
 * Mail sessions logged in with a token of the token service, until their
 * token ends: at its expiry (server clock: a real-time timer for the
 * earliest deadline, plus a look at every clock move) or when it is
 * revoked, the session ends as the provider ends it (src/oauth/styles.ts)
 * and an `expired` or `revoked` event names it. A lease whose session
 * closed first goes at the next look; so the map holds at most the open
 * sessions plus those closed since the last look.
 */
import type { OAuthStyle } from './options.js';
import type { OAuthEvent } from './service.js';
import { sessionEndFor } from './styles.js';

/** What a lease needs of a mail session (IMAP now; POP3 and SMTP sessions can offer the same). */
export interface LeasedSession {
  readonly id: number;
  /** The user logged in now, or null (after UNAUTHENTICATE). */
  leaseUser(): string | null;
  /** Ends the session: BYE now (between commands, in IDLE) or in answer to the next command. */
  tokenEnded(text: string, atNextCommand: boolean): void;
}

export interface LeaseInfo {
  token: string;
  grant: number;
  user: string;
  client: string;
  /** Server-clock ms. */
  expiresAt: number;
}

interface Lease extends LeaseInfo {
  session: LeasedSession;
  style: OAuthStyle;
}

/** Longest timer Node can run (2^31 - 1 ms). */
const MAX_TIMER = 2_147_483_647;

export class SessionLeases {
  private readonly leases = new Map<number, Lease>();
  private timer: NodeJS.Timeout | null = null;
  private listening = false;
  /** Server-clock time the timer is set for (Infinity: none). */
  private armedAt = Infinity;
  /** Leases after the last look: a look comes again once there are twice as many, so adding stays O(1) amortized. */
  private lookedAt = 0;
  private readonly onClock = (): void => this.look();

  constructor(
    private readonly ctx: { now(): number; clockListeners: Set<() => void>; sessionOpen(id: number): boolean },
    private readonly emit: (event: OAuthEvent) => void,
  ) {}

  get size(): number {
    return this.leases.size;
  }

  add(session: LeasedSession, info: LeaseInfo, style: OAuthStyle): void {
    this.leases.set(session.id, { ...info, session, style });
    if (!this.listening) {
      this.ctx.clockListeners.add(this.onClock);
      this.listening = true;
    }
    // A look walks every lease: only when due, when the new deadline comes first, or when closed sessions may have piled up.
    if (info.expiresAt <= this.ctx.now() || this.leases.size > 2 * this.lookedAt + 64) this.look();
    else if (info.expiresAt < this.armedAt) this.arm(info.expiresAt);
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = at;
    this.timer = setTimeout(() => this.look(), Math.min(MAX_TIMER, Math.max(1, at - this.ctx.now())));
    this.timer.unref();
  }

  clear(): void {
    this.leases.clear();
    this.stop();
  }

  /** Ends the sessions of the leases `which` picks: their token was revoked. */
  revoked(which: (lease: LeaseInfo) => boolean, style: OAuthStyle): void {
    for (const [id, lease] of [...this.leases]) {
      if (!which(lease)) continue;
      this.leases.delete(id);
      if (!this.current(lease)) continue;
      const end = sessionEndFor(style, 'revoked');
      lease.session.tokenEnded(end.text, end.atNextCommand);
    }
    if (this.leases.size === 0) this.stop();
  }

  /** True while the lease's session is open and still logged in as the lease's user. */
  private current(lease: Lease): boolean {
    return this.ctx.sessionOpen(lease.session.id) && lease.session.leaseUser() === lease.user;
  }

  /** Ends the sessions whose token is over, drops leases of closed sessions, and waits for the next deadline. */
  private look(): void {
    const now = this.ctx.now();
    let next = Infinity;
    for (const [id, lease] of [...this.leases]) {
      if (!this.current(lease)) {
        this.leases.delete(id);
        continue;
      }
      if (now >= lease.expiresAt) {
        this.leases.delete(id);
        const end = sessionEndFor(lease.style, 'expired');
        this.emit({ type: 'expired', client: lease.client, user: lease.user, grant: lease.grant, via: 'session', reason: 'access token expired', session: id });
        lease.session.tokenEnded(end.text, end.atNextCommand);
        continue;
      }
      next = Math.min(next, lease.expiresAt);
    }
    this.lookedAt = this.leases.size;
    if (this.leases.size === 0) return this.stop();
    this.arm(next);
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedAt = Infinity;
    if (this.listening) this.ctx.clockListeners.delete(this.onClock);
    this.listening = false;
  }
}

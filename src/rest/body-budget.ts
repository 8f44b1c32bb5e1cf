/**
 * The budget for request bodies in flight across all REST requests
 * (`rest.maxBodyBytesInFlight`). One request's body is bounded by MAX_BODY;
 * this bounds them together, so eight concurrent 64 MiB POSTs cost at most
 * the budget and not eight times the limit.
 *
 * A body of declared length holds its length from the moment it is let in
 * until its response has gone (the parsed body lives as long as its
 * handler). One that does not fit waits in line, unread: TCP holds the
 * client back, so a waiting request costs its socket and nothing more.
 * A chunked body holds what has come so far and grows chunk by chunk; it
 * cannot wait in the middle (two half-read bodies waiting for each other
 * would only time out), so a chunk that does not fit refuses the request.
 * A body alone in flight always fits, whatever its size: a budget below
 * MAX_BODY serializes large bodies instead of refusing them.
 */
export class BodyBudget {
  inFlight = 0;
  private readonly queue: Waiter[] = [];

  constructor(readonly max: number) {}

  /** Requests waiting for room. */
  get waiting(): number {
    return this.queue.length;
  }

  /** A hold of `bytes` now, or null when they do not fit (or others are waiting first). */
  tryHold(bytes: number): BodyHold | null {
    if (this.queue.length > 0 || !this.fits(bytes)) return null;
    return this.take(bytes);
  }

  /**
   * Waits in line for `bytes`, at most `ms` (0: as long as it takes).
   * Resolves with the hold, or null when the time is up or `cancel` ran
   * (the client went away).
   */
  wait(bytes: number, ms: number): { hold: Promise<BodyHold | null>; cancel: () => void } {
    let waiter!: Waiter;
    const hold = new Promise<BodyHold | null>((resolve) => {
      waiter = { bytes, resolve, timer: null };
    });
    const give = (): void => {
      const at = this.queue.indexOf(waiter);
      if (at < 0) return;
      this.queue.splice(at, 1);
      if (waiter.timer) clearTimeout(waiter.timer);
      waiter.resolve(null);
      // The first in line may have been holding back others that fit.
      this.pump();
    };
    if (ms > 0) {
      waiter.timer = setTimeout(give, ms);
      waiter.timer.unref();
    }
    this.queue.push(waiter);
    return { hold, cancel: give };
  }

  private fits(bytes: number): boolean {
    return this.inFlight === 0 || this.inFlight + bytes <= this.max;
  }

  private take(bytes: number): BodyHold {
    this.inFlight += bytes;
    return new BodyHold(this, bytes);
  }

  /** @internal A hold gave octets back: lets in those first in line that now fit. */
  released(bytes: number): void {
    this.inFlight -= bytes;
    this.pump();
  }

  /** @internal A hold asks for `bytes` more (a chunked body); true when they fit. */
  grow(hold: BodyHold, bytes: number): boolean {
    // Alone in flight a body may grow to MAX_BODY, as one alone is always let in.
    if (this.inFlight !== hold.bytes && this.inFlight + bytes > this.max) return false;
    this.inFlight += bytes;
    return true;
  }

  private pump(): void {
    while (this.queue.length > 0 && this.fits(this.queue[0]!.bytes)) {
      const next = this.queue.shift()!;
      if (next.timer) clearTimeout(next.timer);
      next.resolve(this.take(next.bytes));
    }
  }
}

interface Waiter {
  bytes: number;
  resolve: (hold: BodyHold | null) => void;
  timer: NodeJS.Timeout | null;
}

/** Octets one request holds of the budget; released once, when its response is done. */
export class BodyHold {
  private released = false;

  constructor(
    private readonly budget: BodyBudget,
    /** Octets held now. */
    public bytes: number,
  ) {}

  /** Holds `n` more octets; false (nothing held) when they do not fit. */
  grow(n: number): boolean {
    if (this.released || !this.budget.grow(this, n)) return false;
    this.bytes += n;
    return true;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.released(this.bytes);
  }
}

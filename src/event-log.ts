/**
 * The event backlog and the waiters on it. Every server event gets the next
 * id (ids only grow; `reset` does not restart them, so an id a client holds
 * stays meaningful across resets). The last `backlog` events (and at most
 * `backlogBytes` of their JSON) are kept, so a stream that connects late or
 * reconnects, and a wait that starts after the event, miss nothing.
 */
import { ServiceError } from './errors.js';
import { CommandEventPacker, digits, type EventParts } from './event-parts.js';
import type { SessionProtocol } from './events.js';

/** One event with its id, as the backlog and `waitFor` give it. */
export interface EventRecord<T = unknown> {
  id: number;
  type: string;
  data: T;
}

/** An event as kept: serialized once, for the backlog and every stream alike. */
export interface LoggedEvent {
  id: number;
  type: string;
  /** The JSON of the data; null when it could not be serialized (never kept, never streamed). */
  json: string | null;
  bytes: number;
}

export interface EventLogLimits {
  /** Events kept (0: none). */
  backlog: number;
  /** Bytes of event JSON kept at most. */
  backlogBytes: number;
  /** Waits pending at once (in-process and REST together). */
  maxWaiters: number;
}

export type EventTest = (data: unknown, record: EventRecord) => boolean;

export interface WaitOptions {
  /** Milliseconds before the wait fails with TIMEOUT; `Infinity` waits for ever. */
  timeout: number;
  /** Look in the backlog from the event after this id first. */
  since?: number;
  signal?: AbortSignal;
}

interface Waiter {
  types: ReadonlySet<string> | null;
  test: EventTest;
  settle(error: unknown, record?: EventRecord): void;
}

interface StateWaiter {
  check(): void;
  fail(error: unknown): void;
}

/** Listener of every logged event (the REST streams); gets the live data too. */
export type LogListener = (event: LoggedEvent, data: unknown) => void;

export class EventLog {
  /**
   * The backlog, as parallel lists (index `head` is the oldest kept): ids
   * and sizes are small integers kept unboxed, so a kept event costs the
   * collector one string (its JSON), not an object as well. Deliveries in
   * a loop keep thousands of events alive through every young collection.
   */
  private ids: number[] = [];
  private types: string[] = [];
  /**
   * The event's JSON; for an append kept in parts (`uids[i] > 0`), its
   * mailbox path; for an event kept in parts (`recordParts`), those parts.
   */
  private jsons: (string | EventParts)[] = [];
  private sizes: number[] = [];
  /**
   * Appends of one message (`recordAppend`) are kept as their parts, UID
   * here and origin in `origins` (-1: null), and written out as JSON only
   * when read: a delivery then costs no serialization and no string. 0:
   * the event's JSON is in `jsons`. A command event kept packed
   * (`recordCommand`) has -1 - its session here, its packed words in
   * `origins` and its tag in `jsons`.
   */
  private uids: number[] = [];
  private readonly packer = new CommandEventPacker();
  private origins: number[] = [];
  /** Bytes of a mailbox path as a JSON string, by path (bounded). */
  private readonly pathBytes = new Map<string, number>();
  private head = 0;
  private bytes = 0;
  private last = 0;
  /** Id of the newest event no longer kept: a position before it has lost events. */
  private evictedThrough = 0;
  private readonly listeners = new Set<LogListener>();
  private readonly waiters = new Set<Waiter>();
  /** Waiters by event type; `null` waiters (any type) are in `anyType`. */
  private readonly byType = new Map<string, Set<Waiter>>();
  private readonly anyType = new Set<Waiter>();
  /** Waits on a state of the server, checked after every event and store change. */
  private readonly stateWaiters = new Set<StateWaiter>();

  constructor(private readonly limits: EventLogLimits) {}

  /** Id of the newest event (0 before the first). */
  get lastId(): number {
    return this.last;
  }

  /** Id of the oldest event still kept, or null when none is. */
  get oldestId(): number | null {
    return this.head < this.ids.length ? this.ids[this.head]! : null;
  }

  /** True when events after `since` are no longer all kept. */
  lost(since: number): boolean {
    return since < this.evictedThrough;
  }

  get waiting(): number {
    return this.waiters.size + this.stateWaiters.size;
  }

  listen(listener: LogListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  record(type: string, data: unknown): void {
    const id = ++this.last;
    const keep = this.limits.backlog > 0;
    if (keep || this.listeners.size > 0) {
      let json: string | null = null;
      try {
        json = JSON.stringify(data ?? null);
      } catch {
        json = null; // an event that cannot be serialized is not kept; it must not break the operation that emitted it
      }
      const bytes = json === null ? 0 : Buffer.byteLength(json) + type.length;
      if (keep && json !== null) this.keep(id, type, json, bytes, 0, 0);
      // An event that cannot be serialized is never streamed, kept or not: it loses no one their place.
      else if (!keep) this.evictedThrough = id;
      if (this.listeners.size > 0) {
        const event: LoggedEvent = { id, type, json, bytes };
        for (const l of this.listeners) l(event, data);
      }
    } else {
      this.evictedThrough = id;
    }
    this.notify(id, type, data);
  }

  /**
   * Records an `append` event whose data is exactly `{ path, uids: [uid],
   * origin }` (one message; `data` is that object, for waits): the same as
   * `record('append', data)`, but kept as its parts until read.
   */
  recordAppend(path: string, uid: number, origin: number | null, data: unknown): void {
    // Streams need the JSON now, and the parts need a UID > 0 to be told apart.
    if (this.listeners.size > 0 || this.limits.backlog === 0 || !Number.isSafeInteger(uid) || uid < 1 || (origin !== null && !(Number.isSafeInteger(origin) && origin >= 0))) {
      return this.record('append', data);
    }
    const id = ++this.last;
    const originCode = origin === null ? -1 : origin;
    this.keep(id, 'append', path, this.appendBytes(path, uid, originCode), uid, originCode);
    this.notify(id, 'append', data);
  }

  /**
   * Records a `command` event, kept as its numbers and tag (see
   * CommandEventPacker); `data` makes the event's data, called only when a
   * listener or wait needs it. False when the event cannot be packed (the
   * caller then records it another way).
   */
  recordCommand(session: number, tag: string, command: string, status: string, user: string | null, protocol: SessionProtocol, data: () => unknown): boolean {
    if (this.listeners.size > 0 || this.limits.backlog === 0 || !(Number.isSafeInteger(session) && session >= 0)) return false;
    const packed = this.packer.pack(command, status, user, protocol);
    if (packed < 0) return false;
    const id = ++this.last;
    this.keep(id, 'command', tag, this.packer.bytes(session, tag, packed) + 'command'.length, -1 - session, packed);
    if (this.waiters.size > 0) this.offer({ id, type: 'command', data: data() });
    if (this.stateWaiters.size > 0) this.poke();
    return true;
  }

  /**
   * Records an event whose data is what `parts` writes as JSON (`data` is
   * that data, for listeners and waits): the same as `record(type, data)`,
   * but kept as its parts until read. For the events every client makes
   * many of (src/event-parts.ts): they then cost no serialization.
   */
  recordParts(type: string, parts: EventParts, data: unknown): void {
    // Streams need the JSON now.
    if (this.listeners.size > 0 || this.limits.backlog === 0) return this.record(type, data);
    const id = ++this.last;
    this.keep(id, type, parts, parts.bytes() + type.length, 0, 0);
    this.notify(id, type, data);
  }

  private notify(id: number, type: string, data: unknown): void {
    if (this.waiters.size > 0) this.offer({ id, type, data });
    if (this.stateWaiters.size > 0) this.poke();
  }

  /** Bytes `appendJson` makes, plus the type's length (what `record` counts), without making it. */
  private appendBytes(path: string, uid: number, origin: number): number {
    let quoted = this.pathBytes.get(path);
    if (quoted === undefined) {
      quoted = Buffer.byteLength(JSON.stringify(path));
      if (this.pathBytes.size >= 1024) this.pathBytes.clear();
      this.pathBytes.set(path, quoted);
    }
    return APPEND_FIXED_BYTES + quoted + digits(uid) + (origin < 0 ? 4 : digits(origin)) + 'append'.length;
  }

  /** The JSON of kept event `i`. */
  private jsonAt(i: number): string {
    const kept = this.jsons[i]!;
    if (typeof kept !== 'string') return kept.json();
    const uid = this.uids[i]!;
    if (uid < 0) return this.packer.parts(-1 - uid, kept, this.origins[i]!).json();
    return uid > 0 ? appendJson(kept, uid, this.origins[i]!) : kept;
  }

  /** Checks the state waits again (the store changed). */
  poke(): void {
    for (const w of this.stateWaiters) w.check();
  }

  /**
   * Resolves with what `check` returns once it returns something other than
   * null: now, or after a later event or store change (`poke`).
   */
  waitState<T>(check: () => T | null, what: string, options: Omit<WaitOptions, 'since'>): Promise<T> {
    let now: T | null;
    try {
      now = check();
    } catch (err) {
      return Promise.reject(err);
    }
    if (now !== null) return Promise.resolve(now);
    if (options.signal?.aborted) return Promise.reject(new ServiceError('CANNOT', 'The wait was cancelled'));
    if (this.waiting >= this.limits.maxWaiters) return Promise.reject(this.overLimit());
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | null = null;
      const onAbort = (): void => settle(new ServiceError('CANNOT', 'The wait was cancelled'));
      const settle = (error: unknown, value?: T): void => {
        if (!this.stateWaiters.delete(waiter)) return;
        if (timer) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (value !== undefined) resolve(value);
        else reject(error);
      };
      const waiter: StateWaiter = {
        check: () => {
          let value: T | null;
          try {
            value = check();
          } catch (err) {
            settle(err);
            return;
          }
          if (value !== null) settle(null, value);
        },
        fail: (error) => settle(error),
      };
      this.stateWaiters.add(waiter);
      if (Number.isFinite(options.timeout)) {
        timer = setTimeout(() => settle(new ServiceError('TIMEOUT', `${what}: not so within ${options.timeout} ms`)), options.timeout);
      }
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private overLimit(): ServiceError {
    const error = new ServiceError('LIMIT', `Too many waits: ${this.waiting} are pending, the limit is ${this.limits.maxWaiters} (events.maxWaiters); retry when one has ended`);
    return Object.assign(error, { retryAfter: 1 });
  }

  /** Kept events after `since`, oldest first. */
  *after(since: number): Generator<LoggedEvent> {
    let last = since;
    let i = this.firstAfter(last);
    while (i < this.ids.length) {
      const id = this.ids[i]!;
      yield { id, type: this.types[i]!, json: this.jsonAt(i), bytes: this.sizes[i]! };
      last = id;
      // The lists may have been shifted or evicted from meanwhile (a caller that
      // records events itself): then find the place again by id, not by index.
      i = i >= this.head && this.ids[i] === id ? i + 1 : this.firstAfter(last);
    }
  }

  /**
   * The first event of `types` (null: any) passing `test`: from the backlog
   * after `since` when given, else the next one to happen.
   */
  wait(types: readonly string[] | null, test: EventTest, options: WaitOptions): Promise<EventRecord> {
    const wanted = types === null ? null : new Set(types);
    if (options.since !== undefined) {
      const since = options.since;
      if (since > this.last) {
        return Promise.reject(new ServiceError('INVALID', `since: ${since} is newer than the newest event id ${this.last}`));
      }
      if (this.lost(since)) {
        return Promise.reject(
          new ServiceError('EXPIRED', `since: events after ${since} are no longer all kept (the oldest kept id is ${this.oldestId ?? this.last + 1}); the backlog holds ${this.limits.backlog} events`),
        );
      }
      for (const e of this.after(since)) {
        if (e.json === null || (wanted && !wanted.has(e.type))) continue;
        const record: EventRecord = { id: e.id, type: e.type, data: JSON.parse(e.json) as unknown };
        try {
          if (test(record.data, record)) return Promise.resolve(record);
        } catch (err) {
          return Promise.reject(err);
        }
      }
    }
    if (options.signal?.aborted) return Promise.reject(new ServiceError('CANNOT', 'The wait was cancelled'));
    if (this.waiting >= this.limits.maxWaiters) return Promise.reject(this.overLimit());
    return new Promise<EventRecord>((resolve, reject) => {
      let timer: NodeJS.Timeout | null = null;
      const onAbort = (): void => waiter.settle(new ServiceError('CANNOT', 'The wait was cancelled'));
      const waiter: Waiter = {
        types: wanted,
        test,
        settle: (error, record) => {
          if (!this.waiters.delete(waiter)) return;
          if (wanted) for (const t of wanted) this.byType.get(t)?.delete(waiter);
          else this.anyType.delete(waiter);
          if (timer) clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
          if (record) resolve(record);
          else reject(error);
        },
      };
      this.waiters.add(waiter);
      if (wanted) {
        for (const t of wanted) {
          let set = this.byType.get(t);
          if (!set) this.byType.set(t, (set = new Set()));
          set.add(waiter);
        }
      } else this.anyType.add(waiter);
      if (Number.isFinite(options.timeout)) {
        const what = types === null ? 'event' : `${types.join(' or ')} event`;
        timer = setTimeout(() => waiter.settle(new ServiceError('TIMEOUT', `No matching ${what} within ${options.timeout} ms`)), options.timeout);
      }
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Fails every pending wait (the server stops). */
  cancelAll(error: ServiceError): void {
    for (const w of [...this.waiters]) w.settle(error);
    for (const w of [...this.stateWaiters]) w.fail(error);
  }

  private offer(record: EventRecord): void {
    const typed = this.byType.get(record.type);
    for (const set of [typed, this.anyType]) {
      if (!set) continue;
      for (const w of set) {
        let hit: boolean;
        try {
          hit = w.test(record.data, record);
        } catch (err) {
          w.settle(err);
          continue;
        }
        if (hit) w.settle(null, record);
      }
    }
  }

  /** Index of the oldest kept event newer than `id` (the lists' length when there is none). */
  private firstAfter(id: number): number {
    let lo = this.head;
    let hi = this.ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ids[mid]! <= id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private keep(id: number, type: string, json: string | EventParts, bytes: number, uid: number, origin: number): void {
    this.ids.push(id);
    this.types.push(type);
    this.jsons.push(json);
    this.sizes.push(bytes);
    this.uids.push(uid);
    this.origins.push(origin);
    this.bytes += bytes;
    const { backlog, backlogBytes } = this.limits;
    while (this.ids.length - this.head > backlog || (this.bytes > backlogBytes && this.ids.length - this.head > 0)) {
      const h = this.head;
      this.jsons[h] = '';
      this.head++;
      this.bytes -= this.sizes[h]!;
      this.evictedThrough = this.ids[h]!;
    }
    // Shift the lists now and then, not per event: eviction stays O(1) amortized.
    if (this.head > 1024 && this.head * 2 > this.ids.length) {
      const h = this.head;
      this.ids = this.ids.slice(h);
      this.types = this.types.slice(h);
      this.jsons = this.jsons.slice(h);
      this.sizes = this.sizes.slice(h);
      this.uids = this.uids.slice(h);
      this.origins = this.origins.slice(h);
      this.head = 0;
    }
  }
}

/** `{"path":` + `,"uids":[` + `],"origin":` + `}`: the bytes of an append's JSON besides its values. */
const APPEND_FIXED_BYTES = 8 + 9 + 11 + 1;

/** The JSON `JSON.stringify({ path, uids: [uid], origin })` makes (origin -1: null). */
function appendJson(path: string, uid: number, origin: number): string {
  return `{"path":${JSON.stringify(path)},"uids":[${uid}],"origin":${origin < 0 ? 'null' : origin}}`;
}


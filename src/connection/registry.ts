import type { SessionInfo } from '../events.js';

/** What the control API may do with a live session, whatever its protocol. */
export interface SessionHandle {
  readonly id: number;
  readonly user: string | null;
  info(): SessionInfo;
  /** Ends the session with its protocol's goodbye (`* BYE <text>` in IMAP), or with a TCP reset. */
  disconnect(options: { text?: string; reset?: boolean }): void;
  /** Writes bytes to the client verbatim. */
  inject(data: Buffer): void;
}

/** Live sessions by number. Numbers start at 1 and are never reused within a server. */
export class SessionRegistry {
  private readonly sessions = new Map<number, SessionHandle>();
  private lastId = 0;

  nextId(): number {
    return ++this.lastId;
  }

  add(session: SessionHandle): void {
    this.sessions.set(session.id, session);
  }

  remove(id: number): void {
    this.sessions.delete(id);
  }

  get(id: number): SessionHandle | undefined {
    return this.sessions.get(id);
  }

  list(): SessionHandle[] {
    return [...this.sessions.values()];
  }

  get size(): number {
    return this.sessions.size;
  }
}

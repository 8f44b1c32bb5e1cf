import type { SessionHandle, SessionRegistry } from './registry.js';

/** What admission needs of the server. */
export interface AdmissionServer {
  readonly sessions: SessionRegistry;
  /** A connection logged in or closed before it did: it no longer counts against `maxUnauthenticated`. */
  unauthenticatedLeft(): void;
}

/**
 * A connection's standing with the server, whatever its protocol: it
 * counts among the unauthenticated connections (the server counted it when
 * it accepted it) until it logs in or closes; it is ended by `onTimeout`
 * when it has not logged in within `loginTimeout` (0: never); and it is
 * listed in the sessions registry (`GET /v1/sessions`) from `register`
 * until `unregister`.
 */
export class Admission {
  /** Ends a connection that has not logged in within `loginTimeout`. */
  private loginTimer: NodeJS.Timeout | null = null;
  /** Counted in the server's unauthenticated connections until login or close. */
  private counted = true;

  constructor(
    private readonly server: AdmissionServer,
    loginTimeout: number,
    onTimeout: () => void,
  ) {
    if (loginTimeout > 0) {
      this.loginTimer = setTimeout(() => {
        this.loginTimer = null;
        onTimeout();
      }, loginTimeout);
      this.loginTimer.unref();
    }
  }

  /** Lists the session in the registry. */
  register(handle: SessionHandle): void {
    this.server.sessions.add(handle);
  }

  /** Takes the session out of the listing (a disconnect by the control API, or the close). */
  unregister(id: number): void {
    this.server.sessions.remove(id);
  }

  /** The connection logged in, or closed: the login timer stops and it no longer counts as unauthenticated. */
  leaveUnauthenticated(): void {
    if (!this.counted) return;
    this.counted = false;
    if (this.loginTimer) clearTimeout(this.loginTimer);
    this.loginTimer = null;
    this.server.unauthenticatedLeft();
  }

  /** The connection closed: its timer stops. */
  closed(): void {
    if (this.loginTimer) clearTimeout(this.loginTimer);
    this.leaveUnauthenticated();
  }
}

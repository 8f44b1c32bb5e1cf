/**
 * The server's transcripts: a recorder per live session, the transcripts of
 * the last `keepClosed` closed sessions, and the files of `transcript.dir`.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CredentialFilter } from './redact.js';
import { Pop3CredentialFilter } from './redact-pop3.js';
import { SmtpCredentialFilter } from './redact-smtp.js';
import { TranscriptRing } from './ring.js';
import { SharedChunks } from './shared-chunks.js';
import { Transcript } from './transcript.js';
import type { SessionProtocol } from '../events.js';

/** The `transcript` option, resolved. */
export interface TranscriptSettings {
  enabled: boolean;
  /** Bytes kept per session (both directions together); the oldest go first. */
  maxBytes: number;
  /** Bytes all live sessions keep together; past it the recording session loses its oldest. */
  maxTotalBytes: number;
  /** Closed sessions whose transcripts are kept (the most recent). */
  keepClosed: number;
  /** Directory each closed session's transcript is written to, or null. */
  dir: string | null;
  /** Replace credentials with `***`. */
  redact: boolean;
}

/** A session with a transcript, without its bytes. */
export interface TranscriptSummary {
  session: number;
  user: string | null;
  open: boolean;
  openedAt: number;
  closedAt: number | null;
  /** Bytes kept. */
  bytes: number;
  droppedBytes: number;
}

/** Who the recorded session is logged in as: the session itself, read when a transcript is asked for (no closure per session). */
export interface UserSource {
  readonly user: string | null;
}

/** The user of a recording that never logs in. */
export const NO_USER_SOURCE: UserSource = Object.freeze({ user: null });

/**
 * Records one session. The session calls `fromClient` / `fromServer` at its
 * socket boundary and `close` when the connection is gone.
 */
export class SessionRecorder {
  private readonly ring: TranscriptRing;
  private filter: CredentialFilter | Pop3CredentialFilter | SmtpCredentialFilter | null;
  private readonly redacted: boolean;
  /** `filter.watchesServer` as of the filter's last call: false when there is no filter. */
  private serverWatched: boolean;
  private closedAt: number | null = null;
  /** The user when the session closed; before that `userOf.user` tells. */
  private user: string | null = null;

  constructor(
    private readonly owner: Transcripts,
    readonly session: number,
    private readonly remoteAddress: string | null,
    private readonly openedAt: number,
    private readonly userOf: UserSource,
    protocol: SessionProtocol = 'imap',
  ) {
    this.ring = new TranscriptRing(owner.settings.maxBytes, owner.shared);
    this.filter = owner.settings.redact ? credentialFilter(protocol) : null;
    this.serverWatched = this.filter?.watchesServer ?? false;
    this.redacted = this.filter !== null;
  }

  fromClient(chunk: Buffer): void {
    const filter = this.filter;
    const data = filter ? filter.client(chunk) : chunk;
    if (filter) this.serverWatched = filter.watchesServer;
    if (data) this.record('client', data);
  }

  fromServer(chunk: Buffer): void {
    // The filter's state moves only in these two calls, so its answer is kept here: most output
    // (a notice to each of 10,000 idling sessions) never reads the filter.
    if (this.serverWatched) {
      this.filter!.server(chunk);
      this.serverWatched = this.filter!.watchesServer;
    }
    this.record('server', chunk);
  }

  /** Adds to the ring; past the server-wide budget, the oldest sessions' oldest bytes go (Transcripts.makeRoom). */
  private record(from: 'client' | 'server', data: Buffer): void {
    const before = this.ring.size;
    this.ring.add(this.owner.now(), from, data);
    this.owner.liveBytes += this.ring.size - before;
    if (this.owner.liveBytes > this.owner.settings.maxTotalBytes) this.owner.makeRoom();
  }

  /** Drops up to `bytes` of the oldest kept bytes; returns how many went. */
  trimOldest(bytes: number): number {
    const cut = Math.min(bytes, this.ring.size);
    this.ring.trim(cut);
    return cut;
  }

  get size(): number {
    return this.ring.size;
  }

  close(): void {
    if (this.closedAt !== null) return;
    this.user = this.userOf.user;
    this.closedAt = this.owner.now();
    // A closed session keeps only its bytes, in a buffer of their size.
    this.filter = null;
    this.serverWatched = false;
    // Closed transcripts are bounded by keepClosed: they leave the live budget.
    this.owner.liveBytes -= this.ring.size;
    this.ring.compact();
    this.owner.closed(this);
  }

  summary(): TranscriptSummary {
    return {
      session: this.session,
      user: this.closedAt === null ? this.userOf.user : this.user,
      open: this.closedAt === null,
      openedAt: this.openedAt,
      closedAt: this.closedAt,
      bytes: this.ring.size,
      droppedBytes: this.ring.dropped,
    };
  }

  snapshot(): Transcript {
    return new Transcript({
      session: this.session,
      user: this.closedAt === null ? this.userOf.user : this.user,
      remoteAddress: this.remoteAddress,
      openedAt: this.openedAt,
      closedAt: this.closedAt,
      droppedBytes: this.ring.dropped,
      redacted: this.redacted,
      chunks: this.ring.list(),
    });
  }
}

export class Transcripts {
  private readonly live = new Map<number, SessionRecorder>();
  /** Closed sessions' recorders, oldest first (Map keeps insertion order); read on demand. */
  private readonly closedOnes = new Map<number, SessionRecorder>();
  /** Where closed sessions' transcripts are written; `setDir` changes it between tests. */
  private dir: string | null;
  /** Bytes the live sessions' rings keep, against `settings.maxTotalBytes`. */
  liveBytes = 0;
  /** One copy of the chunks many sessions record alike (greeting, login, SELECT), which their rings share. */
  readonly shared = new SharedChunks();

  constructor(
    readonly settings: TranscriptSettings,
    readonly now: () => number,
    /** Names files apart when several servers write to one directory (the IMAP port). */
    private readonly label: () => string,
  ) {
    this.dir = settings.dir;
  }

  get enabled(): boolean {
    return this.settings.enabled;
  }

  /** A recorder for a new session, or null when transcripts are off; `userOf` is the session itself (its `user` is read when needed). */
  open(session: number, remoteAddress: string | null, userOf: UserSource, protocol: SessionProtocol = 'imap'): SessionRecorder | null {
    if (!this.settings.enabled) return null;
    const recorder = new SessionRecorder(this, session, remoteAddress, this.now(), userOf, protocol);
    this.live.set(session, recorder);
    return recorder;
  }

  /** A session's transcript so far (live) or as it ended (closed and still kept). */
  get(session: number): Transcript | undefined {
    return (this.live.get(session) ?? this.closedOnes.get(session))?.snapshot();
  }

  /** One line per session with a transcript (GET /v1/transcripts), in session order. */
  summaries(): TranscriptSummary[] {
    return this.sessions().map((n) => (this.live.get(n) ?? this.closedOnes.get(n))!.summary());
  }

  /** Sessions with a transcript: live ones and the kept closed ones. */
  sessions(): number[] {
    return [...new Set([...this.closedOnes.keys(), ...this.live.keys()])].sort((a, b) => a - b);
  }

  /** Directory for the transcripts of sessions that close from now on (null: none). */
  setDir(dir: string | null): void {
    this.dir = dir;
  }

  /** The file a session's transcript is written to under `transcript.dir`, or null without one. */
  fileOf(session: number): string | null {
    return this.dir === null ? null : join(this.dir, `rookery-${this.label()}-session-${session}.txt`);
  }

  /**
   * Brings the live transcripts back within `maxTotalBytes`: the sessions
   * recorded longest ago lose their oldest bytes first, so the session that
   * is recording keeps its newest. A session trimmed here goes to the back
   * of the order, so each call starts at sessions that still hold bytes.
   */
  makeRoom(): void {
    let excess = this.liveBytes - this.settings.maxTotalBytes;
    // Moved sessions come round again in this loop: one pass over the sessions at most.
    let visits = this.live.size;
    for (const recorder of this.live.values()) {
      if (excess <= 0 || visits-- <= 0) break;
      const cut = recorder.trimOldest(excess);
      excess -= cut;
      this.liveBytes -= cut;
      this.live.delete(recorder.session);
      this.live.set(recorder.session, recorder);
    }
  }

  closed(recorder: SessionRecorder): void {
    this.live.delete(recorder.session);
    if (this.settings.keepClosed > 0) {
      this.closedOnes.set(recorder.session, recorder);
      while (this.closedOnes.size > this.settings.keepClosed) this.closedOnes.delete(this.closedOnes.keys().next().value!);
    }
    const file = this.fileOf(recorder.session);
    if (file) {
      try {
        mkdirSync(this.dir!, { recursive: true });
        // Synchronous: once the session's close event is out (and after stop()), the file is there;
        // renamed into place, so that a reader never sees it half written.
        const partial = `${file}.${process.pid}.partial`;
        writeFileSync(partial, recorder.snapshot().text());
        renameSync(partial, file);
      } catch (err) {
        process.emitWarning(`transcript.dir: cannot write ${file}: ${(err as Error).message}`);
      }
    }
  }
}

/** Each protocol frames its credentials its own way. */
function credentialFilter(protocol: SessionProtocol): CredentialFilter | Pop3CredentialFilter | SmtpCredentialFilter {
  if (protocol === 'pop3') return new Pop3CredentialFilter();
  if (protocol === 'smtp') return new SmtpCredentialFilter();
  return new CredentialFilter();
}

/**
 * The typed events of the server. The same payloads go to in-process
 * listeners (`server.on(type, ...)`) and to the REST event stream.
 */
import type { TlsVerdict } from './tls/verdicts.js';
import type { ClientFinding } from './client-check/findings.js';
import type { MailboxChangeType } from './store/changes.js';
import type { OAuthEvent } from './oauth/service.js';

export type { OAuthEvent };

/** IMAP's states; a POP3 session is in `Authorization`, `Transaction` or `Update` (RFC 1939), and `Logout` once closed. */
export type SessionState = 'Not Authenticated' | 'Authenticated' | 'Selected' | 'Logout' | 'Authorization' | 'Transaction' | 'Update';

/** The protocol a session speaks. */
export type SessionProtocol = 'imap' | 'pop3' | 'smtp';

/** A session as the control API and events show it. */
export interface SessionInfo {
  session: number;
  user: string | null;
  state: SessionState;
  mailbox: string | null;
  readOnly: boolean;
  enabled: string[];
  secure: boolean;
  compressed: boolean;
  remoteAddress: string | null;
  protocol: SessionProtocol;
}

export type SessionEventType = 'open' | 'login' | 'select' | 'unselect' | 'unauthenticate' | 'logout' | 'waiting' | 'close';

export interface SessionEvent {
  type: SessionEventType;
  session: SessionInfo;
  /** The waiting command (for example `IDLE`), on `waiting` events. */
  command?: string;
}

export interface CommandEvent {
  session: number;
  tag: string;
  command: string;
  status: 'OK' | 'NO' | 'BAD';
  user: string | null;
  /** POP3 commands have no tag: `tag` is their number in the session (`"1"` for the first). */
  protocol: SessionProtocol;
}

export interface MailboxEvent {
  type: MailboxChangeType;
  path: string;
  oldPath: string | null;
  origin: number | null;
  /** With `userMailboxes`: whose own tree the mailbox is in (null: the shared tree). Absent otherwise. */
  user?: string | null;
}

export interface ExpungeEvent {
  path: string;
  uids: number[];
  origin: number | null;
  /** With `userMailboxes`: whose own tree the mailbox is in (null: the shared tree). Absent otherwise. */
  user?: string | null;
}

/**
 * Messages were added to a mailbox: APPEND, COPY, MOVE, SMTP delivery, or the
 * control API / REST. Without it a watcher (the dashboard) could see new mail
 * only by asking again and again.
 */
export interface AppendEvent {
  path: string;
  uids: number[];
  origin: number | null;
  /** With `userMailboxes`: whose own tree the mailbox is in (null: the shared tree). Absent otherwise. */
  user?: string | null;
}

export interface FlagsEvent {
  path: string;
  messages: { uid: number; flags: string[] }[];
  origin: number | null;
  /** With `userMailboxes`: whose own tree the mailbox is in (null: the shared tree). Absent otherwise. */
  user?: string | null;
}

export interface AclEvent {
  path: string;
  /** With `userMailboxes`: whose own tree the mailbox is in (null: the shared tree). Absent otherwise. */
  user?: string | null;
}

export interface ScriptEvent {
  rule: Record<string, unknown>;
  event: string;
  session: number | null;
  tag: string | null;
  command: string | null;
}

export type ResetEvent = Record<string, never>;

/** A message accepted over SMTP and stored (one event per message, whatever the number of recipients). */
export interface DeliveryEvent {
  /** Envelope sender (MAIL FROM); `""` for the null sender `<>`. */
  from: string;
  /** Envelope recipients (RCPT TO) that were accepted, as the client wrote them. */
  to: string[];
  /** Storage name of the mailbox the message went to. */
  mailbox: string;
  uid: number;
  /** With `userMailboxes`: the user whose INBOX got this copy (one event per user). Absent otherwise. */
  user?: string;
}

/** Where a client broke the protocol (the client checker, docs/client-check.md). */
export type ClientEvent = ClientFinding;

/**
 * A replay (`script: { replay }`, `rookery replay`) left its recording: the
 * client sent something else than the recorded client did (`deviation`, the
 * client got `BAD [CLIENTBUG]`), or played it to its end (`done`).
 */
export interface ReplayEvent {
  type: 'deviation' | 'done';
  /** The live session. */
  session: number;
  /** Session number in the recording. */
  recorded: number;
  /** What the recording expected from the client (one line of text), or null past its end. */
  expected: string | null;
  /** What the client sent instead; null for `done`. */
  received: string | null;
}

/**
 * A marker a test suite put in the stream (`control.mark`, POST
 * /v1/events/mark): the test helpers post one as each test starts and ends,
 * so the dashboard, a transcript reader or a waiter can tell which test did
 * what. Rookery itself never emits one.
 */
export interface MarkEvent {
  /** The caller's words: a test's name, or any note. */
  text: string;
  /** `start` or `end` of the test named by `text`; null for a plain note. */
  phase: 'start' | 'end' | null;
  /** With `end`: whether the test passed (`pass`, `fail`), or null when the helper cannot tell. */
  outcome: 'pass' | 'fail' | null;
}

/** Event type → payload. */
export interface ServerEvents {
  session: SessionEvent;
  command: CommandEvent;
  mailbox: MailboxEvent;
  expunge: ExpungeEvent;
  append: AppendEvent;
  flags: FlagsEvent;
  acl: AclEvent;
  script: ScriptEvent;
  reset: ResetEvent;
  delivery: DeliveryEvent;
  client: ClientEvent;
  replay: ReplayEvent;
  mark: MarkEvent;
  /** The token service issued, refreshed or revoked tokens, a session's token expired, or a token or request was refused (docs/oauth.md). */
  oauth: OAuthEvent;
  /** A session of the TLS bench ended: its verdict (docs/tls.md). */
  verdict: TlsVerdict;
}

export type ServerEventType = keyof ServerEvents;

export const EVENT_TYPES: readonly ServerEventType[] = ['session', 'command', 'mailbox', 'expunge', 'flags', 'acl', 'script', 'reset', 'delivery', 'client', 'replay', 'append', 'mark', 'oauth', 'verdict'];

/** The event map of `Server` as Node's typed EventEmitter wants it. */
export type ServerEventMap = { [K in ServerEventType]: [ServerEvents[K]] };

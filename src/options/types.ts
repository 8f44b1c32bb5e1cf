/**
 * The public option types (what a caller passes to `createServer`) and the
 * resolved form the rest of the server works with. `resolveOptions` in
 * `./resolve.ts` turns the first into the second, validating as it goes.
 */
import type { AttackName } from '../tls/attacks/catalog.js';
import type { ListenerTlsOptions, ResolvedListenerTls, TlsListener } from '../tls/settings.js';
import type { Extension, Plugin } from '../extensions/extension.js';
import type { ScriptRule } from '../script/rule.js';
import type { InternalDate } from '../store/internal-date.js';
import type { GenerateOptions } from '../generator/options.js';
import type { PresetName } from '../presets/names.js';
import type { FaultsOption, ResolvedFaults } from '../script/transport.js';
import type { ResolvedTimers } from '../imap/timers.js';
import type { MaxConnectionsPerUserOption, RateLimitOption, ResolvedThrottling } from '../session/limits.js';
import type { TranscriptOptions } from './transcript.js';
import type { TranscriptSettings } from '../transcript/transcripts.js';
import type { Transcript } from '../transcript/transcript.js';
import type { OAuthOptions, ResolvedOAuth } from '../oauth/options.js';

export type { TranscriptOptions } from './transcript.js';

/**
 * `script: { replay }`: serve a recorded transcript back to clients instead
 * of running commands (docs/debugging.md). `replay` is a path to a
 * transcript file, or the transcript text itself (text with a line break).
 */
export interface ScriptReplay {
  replay: string;
}

/** A message in the storage option: raw source, or an object with it. */
export type StorageMessage =
  | string
  | {
      /** Message source. A string is UTF-8 text unless `encoding` says otherwise. */
      raw: string | Uint8Array;
      /** How `raw` is given when it is a string: `utf-8` (default), `binary` (one char per byte, as snapshots write it) or `base64`. */
      encoding?: 'utf-8' | 'binary' | 'base64';
      flags?: string[];
      /** RFC 3501 date-time, `dd-Mon-yyyy hh:mm:ss +zzzz`, or a Date. */
      internaldate?: string | Date;
      uid?: number;
      modseq?: number;
      [key: string]: unknown;
    };

/** A mailbox in the storage option (hoodiecrow-era shape). */
export interface StorageMailbox {
  messages?: StorageMessage[];
  folders?: Record<string, StorageMailbox>;
  /** Mailbox attributes such as `\Noselect`. */
  flags?: string[];
  subscribed?: boolean;
  uidvalidity?: number;
  uidnext?: number;
  HIGHESTMODSEQ?: number;
  'special-use'?: string | string[];
  permanentFlags?: string[];
  /**
   * Messages read from mail files when the options are resolved, after
   * `messages`: a directory of `.eml` files, an mbox file or a Maildir
   * (relative to the working directory; the command makes paths in a
   * `--storage` or `--config` file relative to that file). See docs/fixtures.md.
   */
  import?: string | string[];
  /** Generated messages after those (docs/generator.md), e.g. `{ seed: 7, count: 10000 }`. */
  generate?: GenerateOptions;
  /** Keys owned by extensions (`acl`, `metadata`, ...). */
  [key: string]: unknown;
}

/** A namespace entry: top-level keys other than INBOX. `""` is the personal namespace. */
export interface StorageNamespace {
  type?: 'personal' | 'user' | 'shared';
  separator?: string;
  folders?: Record<string, StorageMailbox>;
  [key: string]: unknown;
}

/** The storage option: `INBOX` plus namespace prefixes. Default `{ "INBOX": {}, "": {} }`. */
export type Storage = { INBOX?: StorageMailbox } & Record<string, StorageMailbox | StorageNamespace | undefined>;

export interface UserOptions {
  password?: string;
  xoauth2?: { accessToken: string; sessionTimeout?: number } | null;
  /** Capabilities this user's sessions do not get once logged in (`{ hide: ["MOVE"] }`), beside the server-wide ones. */
  capabilities?: CapabilityOptions;
}

/** Capability masking (docs/client-check.md): hidden capabilities are not advertised and their commands are unknown. */
export interface CapabilityOptions {
  /** Capability names (`MOVE`, `LITERAL+`, `IDLE`), any case. */
  hide?: string[];
}

export interface RestOptions {
  /** Port of the REST API; 0 picks a free one. Without a port the REST API does not start. */
  port?: number;
  /** Address to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Bearer token every request must send. Required on a non-loopback host; an empty token fails `start()`. */
  token?: string;
  /** Milliseconds between `: ping` comments on event streams. Default 15000. */
  pingInterval?: number;
  /** Event streams (`GET /v1/events`) open at once; one more gets 503 LIMIT. Default 100. */
  maxEventStreams?: number;
  /** Bytes an event stream may have queued for a client that does not read; past it the stream is closed. Default 1 MiB. */
  maxStreamBuffer?: number;
  /**
   * REST connections open at once, requests whose headers have not come
   * yet included; one more gets a minimal `503` with the error object
   * (LIMIT) and is closed. Default 1000. At start the caps of IMAP, REST and
   * SMTP are lowered together when the process's descriptor limit cannot
   * hold them all (docs/rest.md, "Limits").
   */
  maxConnections?: number;
  /** Milliseconds a client has to send the request line and headers; then 408 TIMEOUT. Default 20000 (at most `requestTimeout`). */
  headersTimeout?: number;
  /** Milliseconds a client has to send the whole request, body included (0: no limit); then 408 TIMEOUT. Default 30000. */
  requestTimeout?: number;
  /** Milliseconds a request body may go without a byte (0: no limit); then 408 TIMEOUT. Default 10000. */
  bodyTimeout?: number;
  /**
   * Octets of request bodies being received or handled at once, all
   * requests together. A body that does not fit waits (unread, so TCP holds
   * it back) up to `bodyTimeout`, then gets 503 LIMIT with Retry-After; one
   * body alone is always let in. Default 128 MiB.
   */
  maxBodyBytesInFlight?: number;
}

/**
 * SMTP intake (needs the optional peer package smtp-server). Mail accepted
 * over SMTP is appended to INBOX through the same store path as APPEND and
 * the control API's addMessage.
 */
export interface SmtpOptions {
  /** Port of the SMTP listener; 0 picks a free one. Without a port SMTP does not start. */
  port?: number;
  /** Address to listen on. Default `127.0.0.1` (loopback, whatever `host` says). */
  host?: string;
  /** Implicit TLS (as on port 465), with the `tls` certificate. Default false. */
  secure?: boolean;
  /** Offer STARTTLS, with the `tls` certificate. Default false (see `starttls` of IMAP for why). */
  starttls?: boolean;
  /** Require AUTH (PLAIN, LOGIN, XOAUTH2 with the IMAP users) before MAIL. Without it AUTH is optional. Default false. */
  auth?: boolean;
  /** Accept every recipient, not only those that name a user. Default false. */
  catchAll?: boolean;
  /** Recipient address → user name, for addresses whose local part is not a user name. */
  addresses?: Record<string, string>;
  /** Server name in the greeting and in `Received:`. Default `localhost`. */
  name?: string;
}

/**
 * The POP3 listener (RFC 1939, docs/pop3.md). The maildrop is the user's
 * INBOX; users, passwords and tokens are those of IMAP.
 */
export interface Pop3Options {
  /** Port of the POP3 listener; 0 picks a free one. Without a port POP3 does not start. */
  port?: number;
  /** Address to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Implicit TLS (as on port 995), with the `tls` certificate. Default false. */
  secure?: boolean;
  /** Offer STLS (RFC 2595), with the `tls` certificate. Default false. */
  stls?: boolean;
  /** Offer APOP: a timestamp in the greeting (RFC 1939 §7). Default true. */
  apop?: boolean;
  /** RFC 2449 EXPIRE: `"NEVER"` (default) or days a retrieved message stays (0: deleted at QUIT anyway). Advertised only. */
  expire?: number | 'NEVER';
  /** Per-user EXPIRE (`{ alice: 0 }`): CAPA says `EXPIRE <least> USER` before login and the user's value after (RFC 2449 §6.7). */
  expireUsers?: Record<string, number | 'NEVER'>;
  /** RFC 2449 LOGIN-DELAY in seconds (0: none, default): a second login of a user sooner gets `-ERR [LOGIN-DELAY]`. */
  loginDelay?: number;
  /** Per-user LOGIN-DELAY in seconds, announced like `expireUsers` (RFC 2449 §6.5). */
  loginDelayUsers?: Record<string, number>;
  /** Refuse a second POP3 session of a user with `-ERR [IN-USE]` (RFC 1939's exclusive lock). Default false. */
  exclusive?: boolean;
  /** Autologout in ms without a command (0: never). Default 600000, RFC 1939's ten-minute floor; lower values are for tests. */
  idleTimeout?: number;
  /** Longest command line in octets, CRLF included (at least 255, RFC 2449 §4). Default 8192. */
  maxLineLength?: number;
  /** How the server treats names and deletions; presets set it (src/pop3/behaviour.ts). */
  behaviour?: Pop3Behaviour;
}

/** Provider behaviour the POP3 session reads through src/pop3/behaviour.ts. Defaults are RFC 1939's. */
export interface Pop3Behaviour {
  /** User-name prefixes stripped before the credentials are checked (Gmail's `recent:`); the session learns which one was used. */
  userPrefixes?: string[];
  /** What QUIT does with the messages DELE marked: `delete` (default, RFC 1939), `keep`, `read` (adds \Seen), `archive` (moves them). */
  deleteAction?: 'delete' | 'keep' | 'read' | 'archive';
  /** Mailbox `archive` moves to (made when missing). Default `Archive`. */
  archiveMailbox?: string;
  /**
   * A login with a user prefix sees only INBOX messages whose internal date is within this many days of the
   * server clock, those earlier sessions acted on included (Gmail's recent mode: 30). 0 (default): all of INBOX.
   */
  recentDays?: number;
  /**
   * A login without a prefix does not see the messages an earlier session acted on at its QUIT (retrieved under
   * EXPIRE 0, or marked by DELE) and left in INBOX (Gmail's "popped" messages). Default false.
   */
  hideRetrieved?: boolean;
  /** Hex digits of the UIDL form (UID and UIDVALIDITY, eight digits each): `upper` (default) or `lower`, as Dovecot's `%08Xu%08Xv` writes them. */
  uidlHex?: 'upper' | 'lower';
}

export interface ResolvedPop3 {
  port: number;
  host: string;
  secure: boolean;
  stls: boolean;
  apop: boolean;
  expire: number | 'NEVER';
  expireUsers: Map<string, number | 'NEVER'>;
  loginDelay: number;
  loginDelayUsers: Map<string, number>;
  exclusive: boolean;
  idleTimeout: number;
  maxLineLength: number;
  behaviour: Readonly<Required<Pop3Behaviour>>;
}

/** The clock: a fixed instant or a function returning the current one. */
export type ClockOption = Date | number | (() => Date | number);

/**
 * The storage option with `userMailboxes: true`: each user's own tree (INBOX
 * and personal namespace) in the usual shape, keyed by user name, and the
 * shared namespaces (type `shared`; server-wide fields on `shared[""]`).
 * A user without an entry starts with `{ "INBOX": {}, "": {} }`.
 */
export interface UserStorage {
  users?: Record<string, Storage>;
  shared?: Storage;
}

/** What a lenient server accepts in a command's arguments (the `leniency` option). */
export interface LeniencyOptions {
  /** 8-bit octets in a quoted string without UTF8=ACCEPT (RFC 3501 §9 allows 7-bit only), taken as sent. */
  eightBitQuoted?: boolean;
  /** `\x` in a quoted string is `x` for any character (RFC 3501 §9: only `\"` and `\\`). */
  anyEscape?: boolean;
  /** Several spaces where the grammar has one, spaces inside list parentheses, spaces at the end of the line. */
  extraSpaces?: boolean;
  /** A sequence set that ends in a comma (`FETCH 1,2, FLAGS`). */
  trailingComma?: boolean;
}

export interface ServerOptions {
  /** Initial mailboxes and messages (design §3 shape); with `userMailboxes`, a UserStorage. */
  storage?: Storage | UserStorage;
  /**
   * Per-user mailboxes: every user has their own tree (INBOX and personal
   * namespace); other users' mailboxes show under the Other Users namespace
   * as ACL allows, shared namespaces under Shared. Default false: one tree
   * for everyone. See docs/user-mailboxes.md.
   */
  userMailboxes?: boolean;
  /** Users by name. Default `{ testuser: { password: 'testpass', xoauth2: { accessToken: 'testtoken' } } }`. */
  users?: Record<string, UserOptions>;
  /**
   * Extensions to load: built-in names, `"all"`, and plugin objects of your
   * own (commands, capabilities, REST routes).
   */
  plugins?: (string | Plugin)[] | 'all';
  /**
   * Options of loaded plugins by plugin name, each checked against the
   * plugin's own schema (`{ APPENDLIMIT: { limit: 10485760 } }`).
   */
  pluginOptions?: Record<string, Record<string, unknown>>;
  /** Seed of the PRNG behind script rules' `chance`. Default 1. */
  scriptSeed?: number;
  /**
   * Script rules to start with: an array, or a path to a JSON file holding
   * one; or `{ replay: transcript }` to serve a recorded transcript back.
   */
  script?: ScriptRule[] | string | ScriptReplay;
  /**
   * Real server defects to reproduce, by name from the defects library
   * (`['uidvalidity-zero']`; docs/script-rules.md): their rules go after
   * those of `script`.
   */
  defects?: string[];
  /** Clock used for internal dates, token expiry and timers. Default: the real clock. */
  now?: ClockOption;
  /** REST API; started by `start()` only when a port is given. */
  rest?: RestOptions;
  /** SMTP intake; started by `start()` only when a port is given (needs the package smtp-server). */
  smtp?: SmtpOptions;
  /** POP3 listener; started by `start()` only when a port is given. */
  pop3?: Pop3Options;
  /** IMAP listener port for `start()`. Default 0 (a free port). */
  port?: number;
  /** IMAP listener address for `start()`. Default `127.0.0.1`. */
  host?: string;
  /** Implicit TLS on the IMAP listener (as on port 993). Default false. */
  secure?: boolean;
  /**
   * Offer STARTTLS on plain connections (with the `tls` certificate). An
   * option rather than a plugin so that `plugins: "all"` never makes clients
   * that upgrade whenever they can (imapflow) meet a self-signed certificate.
   * Default false.
   */
  starttls?: boolean;
  /**
   * Advertise LOGINDISABLED and refuse LOGIN and AUTHENTICATE with
   * `NO [PRIVACYREQUIRED]` until the connection uses TLS. Turns `starttls` on.
   * Default false.
   */
  loginDisabled?: boolean;
  /**
   * Certificate and key for TLS: PEM text, a Buffer of it or a path to a PEM
   * file. Default: the built-in self-signed test certificate for localhost
   * (exported as TEST_CERTIFICATE).
   */
  tls?: TlsOptions;
  /**
   * STARTTLS attacks (docs/tls.md) every plain-text IMAP, POP3 and SMTP (with `smtp.starttls`; not preauth) session meets, e.g.
   * `['starttls-buffering']`; each session ends in a verdict. Default none.
   */
  attacks?: readonly AttackName[];
  /** Greeting text after `* OK`. */
  greeting?: string;
  /**
   * Put the `[CAPABILITY ...]` response code in the greeting (RFC 3501
   * §7.1: optional). Some servers (Gmail, Microsoft 365) leave it out, so a
   * client must ask with CAPABILITY. Default true.
   */
  greetingCapabilities?: boolean;
  /**
   * A provider's quirk preset (`gmail`, `outlook`, `yahoo`, `icloud`,
   * `dovecot`): plugins, greeting, mailbox layout, limits and script rules
   * as `presets[name]` lists them. Options given next to it win: objects are
   * merged key by key, everything else (arrays included) replaces the
   * preset's value. See docs/presets.md.
   */
  preset?: PresetName;
  /** Longest command line in bytes, literals excluded. Default 65536. */
  maxLineLength?: number;
  /** Largest literal before login. Default 64 KiB. */
  maxLiteralBeforeLogin?: number;
  /** Largest literal after login (and largest APPEND). Default 64 MiB. */
  maxLiteral?: number;
  /** Largest command before login, all its literals together, in bytes. Default 128 KiB (a LOGIN with two literals of the largest size allowed before login). */
  maxCommandBeforeLogin?: number;
  /** Most IMAP connections at once; one more gets `* BYE` and is closed. Default 5000. */
  maxConnections?: number;
  /** Most connections that have not logged in yet; one more gets `* BYE`. Default 1000. */
  maxUnauthenticated?: number;
  /**
   * The store's budget, server-wide (every user's tree together): most
   * octets of message sources (a copy counts in full). Adding past it fails
   * as a full server does: IMAP `NO [OVERQUOTA]`, SMTP 452, REST 409
   * OVERQUOTA. Default: no limit.
   */
  maxStoreBytes?: number;
  /** Most messages in the store, server-wide; past it adds fail as for `maxStoreBytes`. Default: no limit. */
  maxMessages?: number;
  /** Milliseconds a connection may take to log in before `* BYE` (0: no limit). Default 60000. */
  loginTimeout?: number;
  /**
   * Milliseconds without any traffic after which a logged-in session gets
   * `* BYE` (RFC 3501 §5.4 autologout; 0: never). Default 30 minutes.
   */
  idleTimeout?: number;
  /**
   * Bytes of output a client may leave unread. Commands wait for the client
   * to read above 1 MiB; past this limit (a client that never reads while
   * updates pile up) the connection is closed. Default 128 MiB.
   */
  maxOutputBuffer?: number;
  /**
   * Milliseconds a graceful shutdown waits for clients to leave after
   * `* BYE` before it closes them (0: close at once). Default 10000.
   */
  shutdownTimeout?: number;
  /**
   * The event backlog and waits. `backlog`: events kept for late and
   * reconnecting streams (`since`, `Last-Event-ID`) and for `waitFor` with
   * `since` (0: none; default 10000). `backlogBytes`: most bytes of event
   * JSON kept (default 16 MiB); the oldest go first. `maxWaiters`: waits
   * pending at once, in-process and REST together (default 10000); one more
   * fails with LIMIT (REST 503).
   */
  events?: { backlog?: number; backlogBytes?: number; maxWaiters?: number };
  // ---- Issue 14: transport faults, server-clock timers, throttling (docs/faults-and-timers.md)
  /** Transport faults every session starts with (script rules can turn them on per session). */
  faults?: FaultsOption;
  /**
   * Inactivity autologout on the server clock (`now`): ms without input
   * before `* BYE`, or per state `{ notAuthenticated, authenticated,
   * selected, idle, text }` (0: none). Unlike `idleTimeout` (real time,
   * after login only) a pinned clock makes it exact.
   */
  autologout?: number | { notAuthenticated?: number; authenticated?: number; selected?: number; idle?: number; text?: string };
  /** Longest IDLE on the server clock, ms (or `{ ms, text }`): then `* BYE`. */
  maxIdle?: number | { ms: number; text?: string };
  /** `* BYE` to every session when the server clock reaches this time (Date, epoch ms, ISO 8601), or `{ at, text }`. */
  byeAt?: Date | number | string | { at: Date | number | string; text?: string };
  /** Logged-in sessions one user may have, with the refusal of a provider (`gmail`, `outlook`, `dovecot`) or your own. */
  maxConnectionsPerUser?: MaxConnectionsPerUserOption;
  /** Commands per window (server clock) by command name or class; the refusal of a provider (`yahoo`) or your own. */
  rateLimits?: RateLimitOption[];
  /**
   * Wire log: every line in and out of every session, credentials redacted,
   * as `S<n> C: <line>` / `S<n> S: <line>`. `true` writes to stderr; a
   * function receives each line. Default off.
   */
  debug?: boolean | ((line: string) => void);
  /**
   * The client checker (docs/client-check.md): `report` records where a
   * client breaks the protocol (findings, `client` events) and changes no
   * response; `strict` also answers the offending command with
   * `BAD [CLIENTBUG] <rule>: <text>`; `off` checks nothing. Default `report`.
   */
  clientCheck?: 'off' | 'report' | 'strict';
  /** Rules of the checker turned on or off by id (`{ "no-logout": true }`); the others keep their default. */
  clientCheckRules?: Record<string, boolean>;
  /** Capabilities hidden from every session (`{ hide: ["MOVE", "LITERAL+"] }`), to test a client's fallbacks. */
  capabilities?: CapabilityOptions;
  /**
   * Grammar a real server accepts beyond the RFC, to behave like it
   * (docs/presets.md; `preset: 'dovecot'` turns these on). Each is off by
   * default: Rookery answers BAD where the RFC's grammar says so. The
   * client checker records the same commands either way.
   */
  leniency?: LeniencyOptions;
  /**
   * Per-session transcripts: every byte in and out with server-clock times,
   * in a bounded ring per session (`server.transcript(n)`, REST
   * `GET /v1/sessions/{n}/transcript`). `true`/`false` turns them on/off
   * with the defaults. Default on, 256 KiB per session, the last 32 closed
   * sessions kept, credentials redacted. See docs/debugging.md.
   */
  transcript?: boolean | TranscriptOptions;
  /**
   * The test authorization server on the REST listener and the token
   * lifecycle of mail logins: clients, scopes, lifetimes, approval, token
   * format, the provider style of refusals, faults. See docs/oauth.md.
   */
  oauth?: OAuthOptions;
}

/** A message as the store receives it: bytes and decoded metadata. */
export interface SeedMessage {
  raw: Buffer;
  /**
   * `raw.length`, when it can be told without making `raw` (a source given
   * as text is encoded when its mailbox is first read, not when the server
   * is built just to count its bytes).
   */
  readonly rawLength?: number;
  flags: string[];
  internaldate: InternalDate;
  uid?: number;
  modseq?: number;
  /** Keys of the message object that the core does not know; kept for snapshots. */
  extra: Record<string, unknown>;
}

export interface SeedMailbox {
  /** Full storage name (modified UTF-7), e.g. `INBOX`, `Work/Projects`, `Shared/team`. */
  path: string;
  /** Hierarchy delimiter of its namespace. */
  delimiter: string;
  messages: SeedMessage[];
  /** Mailbox attributes from the storage `flags` key, e.g. `\Noselect`. */
  flags: string[];
  subscribed: boolean;
  uidvalidity?: number;
  uidnext?: number;
  highestModseq?: number;
  specialUse: string[];
  permanentFlags?: string[];
  /** Extension-owned and unknown keys (`acl`, `metadata`, ...), deep-copied. */
  extra: Record<string, unknown>;
}

export interface SeedNamespace {
  /** Prefix as written in storage: `""`, `"Other Users/"`, `"#shared."`. */
  prefix: string;
  type: 'personal' | 'user' | 'shared';
  separator: string;
  extra: Record<string, unknown>;
}

/** The storage option after validation: flat, ordered parents before children. */
export interface StorageSeed {
  namespaces: SeedNamespace[];
  mailboxes: SeedMailbox[];
}

export interface UserRecord {
  password: string | null;
  /** Capabilities hidden from this user's sessions once logged in (upper case). */
  hide?: readonly string[];
  xoauth2: { accessToken: string; sessionTimeout: number | null } | null;
}

export interface ResolvedOptions {
  /** The one tree; with `userMailboxes`, the shared namespaces (and server-wide fields). */
  storage: StorageSeed;
  /** With `userMailboxes`: each user's own tree from `storage.users`; null without. */
  userStorage: Map<string, StorageSeed> | null;
  users: Map<string, UserRecord>;
  /** Loaded plugin names: built-ins (dependencies included) in a stable order, then plugin objects'. */
  plugins: string[];
  /** Plugin objects given in `plugins`, in the order given. */
  customPlugins: Plugin[];
  /** Every loaded extension in canonical order (built-ins in catalog order, then plugin objects by name). */
  extensions: Extension[];
  /** Validated `pluginOptions` entries by canonical plugin name. */
  pluginOptions: Map<string, Record<string, unknown>>;
  scriptSeed: number;
  /** Validated script rules from the `script` option. */
  script: ScriptRule[];
  /** The clock in epoch milliseconds. */
  now: () => number;
  rest: {
    port: number;
    host: string;
    token: string | null;
    pingInterval: number;
    maxEventStreams: number;
    maxStreamBuffer: number;
    maxConnections: number;
    headersTimeout: number;
    requestTimeout: number;
    bodyTimeout: number;
    maxBodyBytesInFlight: number;
  } | null;
  /** SMTP intake, or null when no SMTP port is configured. `addresses` keys are lower-case. */
  smtp: {
    port: number;
    host: string;
    secure: boolean;
    starttls: boolean;
    auth: boolean;
    catchAll: boolean;
    addresses: Map<string, string>;
    name: string;
  } | null;
  /** POP3 listener, or null when no POP3 port is configured. */
  pop3: ResolvedPop3 | null;
  port: number;
  host: string;
  secure: boolean;
  starttls: boolean;
  loginDisabled: boolean;
  /** `builtin`: the test certificate is in use. */
  tls: {
    key: string | Buffer;
    cert: string | Buffer;
    builtin: boolean;
    /** A new CA per server instead of TEST_CA. */
    freshCa: boolean;
    /** Profiles, SNI, client certificates, versions and ALPN of each listener. */
    listeners: ReadonlyMap<TlsListener, ResolvedListenerTls>;
  };
  attacks: AttackName[];
  greeting: string;
  greetingCapabilities: boolean;
  /** The preset the options were merged over, or null. */
  preset: PresetName | null;
  maxLineLength: number;
  maxLiteralBeforeLogin: number;
  maxLiteral: number;
  maxCommandBeforeLogin: number;
  maxConnections: number;
  maxUnauthenticated: number;
  loginTimeout: number;
  idleTimeout: number;
  maxOutputBuffer: number;
  shutdownTimeout: number;
  /** The store's budget: most octets of message sources and most messages, null for no limit. */
  maxStoreBytes: number | null;
  maxMessages: number | null;
  /** The wire log's sink, or null when `debug` is off. */
  debug: ((line: string) => void) | null;
  events: { backlog: number; backlogBytes: number; maxWaiters: number };
  clientCheck: 'off' | 'report' | 'strict';
  /** Ids of the checker's rules that are on. */
  clientCheckRules: ReadonlySet<string>;
  /** Capabilities hidden from every session (upper case). */
  hideCapabilities: readonly string[];
  /** The `leniency` option, every flag set. */
  leniency: Required<LeniencyOptions>;
  /** Issue 14: transport faults every session starts with, server-clock timers, throttling. */
  faults: ResolvedFaults;
  timers: ResolvedTimers;
  throttling: ResolvedThrottling;
  transcript: TranscriptSettings;
  /** Sessions of `script: { replay }`, in order, or null when the server runs commands. */
  replay: Transcript[] | null;
  /** The `oauth` option, every default filled in. */
  oauth: ResolvedOAuth;
}

/**
 * The `tls` option: a key and certificate of your own, or the test CA's
 * profiles (docs/tls.md); the listener keys (`profile`, `certificates`,
 * ...) apply to every listener, and `imap`, `pop3`, `smtp` override them
 * for one.
 */
export interface TlsOptions extends ListenerTlsOptions {
  key?: string | Buffer;
  cert?: string | Buffer;
  /** A new CA for this server instead of TEST_CA (then trust `server.tlsCa()`). Default false. */
  freshCa?: boolean;
  imap?: ListenerTlsOptions;
  pop3?: ListenerTlsOptions;
  smtp?: ListenerTlsOptions;
}

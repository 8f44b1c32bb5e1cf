import type { OAuthControl } from '../oauth/control.js';
import { ServiceError } from '../errors.js';
import { sourceOctets, utf8Bytes } from '../store/raw-bytes.js';
import type { MarkEvent, SessionInfo } from '../events.js';
import type { Storage, UserRecord, UserStorage } from '../options/types.js';
import type { SessionRegistry } from '../session/registry.js';
import { internalDateFromMs, parseInternalDate, type InternalDate } from '../store/internal-date.js';
import type { Mailbox } from '../store/mailbox.js';
import { snapshotStore } from '../store/snapshot.js';
import type { FlagMode, Store, UidMode } from '../store/store.js';
import type { UserTrees } from '../store/user-trees.js';
import {
  checkInteger,
  checkObject,
  checkOneOf,
  checkString,
  checkFlags,
  checkUids,
  invalid,
  optionalBoolean,
  optionalInteger,
  optionalString,
} from './check.js';
import type { ShownFields } from '../imap/protocol.js';
import type { ClientFinding, ClientFindingLog, ClientFindingsQuery } from '../client-check/findings.js';
import type { ClientCheckMode } from '../client-check/rules.js';
import { mailboxInfo, messageInfo, type MailboxInfo, type MessageInfo, type UserInfo } from './resources.js';

/** A check run before a message is added with `checks: true` (QUOTA, APPENDLIMIT): throws to refuse. */
export type AppendCheck = (mailbox: Mailbox, size: number) => void;

/** What the control API needs from the server that owns it. */
export interface ControlContext {
  readonly store: Store;
  /** The token service's operations; the server makes the service on first use. */
  oauth(): OAuthControl;
  /** With `userMailboxes`: every user's own tree (null: one tree for everyone). */
  readonly trees?: UserTrees | null;
  readonly sessions: SessionRegistry;
  now(): number;
  shutdown(graceful: boolean): Promise<void>;
  /** The checks APPEND runs (extensions' and `server.appendChecks`); throws to refuse. */
  checkAppend(mailbox: Mailbox, size: number): void;
  /** Store fields the loaded extensions show in MailboxInfo/MessageInfo (default none). */
  shownFields?(): ShownFields;
  /** The client checker's findings (none without it). */
  clientFindings?(): ClientFindingLog;
  /** Capabilities hidden from every session. */
  hiddenCapabilities?(): readonly string[];
  /** Moves the server clock forward (issue 14); absent: the clock cannot be moved. */
  advanceClock?(ms: number): number;
  /** Schedules `* BYE` at a server-clock time (issue 14). */
  scheduleBye?(at: number, text: string, session: number | null): void;
  /** Emits a `mark` event and answers its event id; absent: marks cannot be made. */
  mark?(event: MarkEvent): number;
}

/** What `control.mark` takes: a note, or a test's start or end. */
export interface MarkInput {
  text: string;
  phase?: 'start' | 'end' | null;
  outcome?: 'pass' | 'fail' | null;
}

/** The longest mark text kept (a test name rarely needs more; a mark is no way to store data). */
export const MAX_MARK_TEXT = 1024;

export interface XOAuth2Input {
  accessToken: string;
  sessionTimeout?: number;
}

export interface AddUserInput {
  name: string;
  password?: string;
  xoauth2?: XOAuth2Input;
}

export interface UpdateUserInput {
  password?: string;
  xoauth2?: XOAuth2Input | null;
}

export interface AddMessageInput {
  /** Message source: UTF-8 text, base64 text when `encoding` is `base64`, or bytes. */
  raw: string | Uint8Array;
  encoding?: 'utf-8' | 'base64';
  flags?: string[];
  /** RFC 3501 date-time; default: the server clock. */
  internaldate?: string;
  /** Refuse the message as APPEND would (QUOTA, APPENDLIMIT). */
  checks?: boolean;
}

/**
 * Whose mailboxes a mailbox or message operation is about, the last
 * argument of each. With `userMailboxes`, `user` names the user whose own
 * tree the path is in (`addMessage('INBOX', { raw }, { user: 'alice' })`);
 * without it, the path must be in a shared namespace. Without
 * `userMailboxes` there is one tree and `user` is refused (INVALID).
 */
export interface MailboxScope {
  user?: string;
}

/** Options of `createMailbox(path, options)`. */
export interface CreateMailboxOptions {
  /** Subscribe the new mailbox. Default true, as for mailboxes from the storage option. */
  subscribed?: boolean;
}

/** The object form of `createMailbox` (the REST body). */
export interface CreateMailboxInput extends CreateMailboxOptions {
  path: string;
}

export interface ResetUidValidityInput {
  uidvalidity?: number;
  uids?: UidMode;
  offset?: number;
  seed?: number;
}

export interface UidMapping {
  uid: number;
  targetUid: number;
}

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

/** Decodes a message source given as text (UTF-8 or base64) or bytes. */
export function decodeSource(raw: unknown, encoding: unknown, name = 'raw'): Buffer {
  const source = sourceOf(raw, encoding, name);
  return typeof source === 'string' ? utf8Bytes(source) : source;
}

/**
 * A message source as the store may keep it: bytes, or UTF-8 text left as
 * text for the message to encode on its first read (Message.raw).
 */
export function sourceOf(raw: unknown, encoding: unknown, name = 'raw'): Buffer | string {
  const enc = checkOneOf(encoding, 'encoding', ['utf-8', 'base64'] as const, 'utf-8');
  if (raw instanceof Uint8Array) return Buffer.from(raw);
  const text = checkString(raw, name);
  if (enc === 'base64') {
    if (!BASE64.test(text)) throw invalid(`${name}: not valid base64`);
    return Buffer.from(text, 'base64');
  }
  return text;
}

const NO_FIELDS: ShownFields = { mailbox: [], message: [] };

/**
 * The control API: every operation of the spec, for in-process tests. REST
 * calls exactly these. Changes go through the store, so connected IMAP
 * sessions see them exactly as they see another session's changes.
 */
export class ControlApi {
  /** The token service's operations (src/oauth/control.ts, docs/oauth.md). */
  get oauth(): OAuthControl {
    return this.ctx.oauth();
  }

  constructor(private readonly ctx: ControlContext) {}

  private shown(): ShownFields {
    return this.ctx.shownFields?.() ?? NO_FIELDS;
  }

  private get store(): Store {
    return this.ctx.store;
  }

  /**
   * The tree a scope names (see MailboxScope): the user's own, or the shared
   * (one) tree; with `userMailboxes` and no user, `paths` must be in a shared
   * namespace. Extensions' control APIs resolve their paths through it.
   */
  treeOf(scope: MailboxScope | undefined, ...paths: unknown[]): Store {
    const o = scope === undefined ? {} : checkObject(scope, 'scope', ['user']);
    const user = optionalString(o.user, 'user');
    const trees = this.ctx.trees ?? null;
    if (user === undefined) {
      if (trees) {
        for (const path of paths) {
          if (typeof path !== 'string') continue;
          const ns = this.store.namespaceOf(path);
          if (ns.type !== 'shared' || ns.prefix === '') {
            throw invalid(`user: required for ${JSON.stringify(path)} (userMailboxes: every user has their own tree; only shared namespaces need none)`);
          }
        }
      }
      return this.store;
    }
    if (!trees) throw invalid('user: only with the userMailboxes option (without it all users share one tree)');
    if (!this.store.users.has(user)) throw new ServiceError('NONEXISTENT', `User ${JSON.stringify(user)} does not exist`);
    return trees.tree(user);
  }

  // ------------------------------------------------------------ server

  /** The server clock (issue 14): epoch ms and ISO 8601. */
  clock(): { now: number; iso: string } {
    const now = this.ctx.now();
    return { now, iso: new Date(now).toISOString() };
  }

  /**
   * Moves the server clock forward by `advance` ms (a pinned `now` too):
   * server-clock timers that fall due (autologout, maxIdle, byeAt, rate
   * windows, token expiry at the next command) act at once.
   */
  /**
   * `* BYE <text>` when the server clock reaches `at` (epoch ms or ISO 8601
   * with zone) or `in` ms from now, to every session live then or to
   * `session` only. Answers when it is due.
   */
  scheduleBye(input: { at?: number | string; in?: number; text?: string; session?: number }): { at: number; iso: string; text: string; session: number | null } {
    if (!this.ctx.scheduleBye) throw new ServiceError('CANNOT', 'This server cannot schedule a BYE');
    const body = input ?? {};
    let at: number;
    if (body.at !== undefined && body.in !== undefined) throw new ServiceError('INVALID', 'at: give either at or in, not both');
    if (body.in !== undefined) {
      if (!(typeof body.in === 'number' && Number.isSafeInteger(body.in) && body.in >= 0)) throw new ServiceError('INVALID', `in: expected an integer >= 0 (milliseconds), got ${JSON.stringify(body.in) ?? String(body.in)}`);
      at = this.ctx.now() + body.in;
    } else if (typeof body.at === 'number' && Number.isFinite(body.at)) {
      at = body.at;
    } else if (typeof body.at === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(body.at) && !Number.isNaN(Date.parse(body.at))) {
      at = Date.parse(body.at);
    } else {
      throw new ServiceError('INVALID', `at: expected epoch milliseconds or an ISO 8601 time with its zone, got ${JSON.stringify(body.at) ?? String(body.at)}`);
    }
    const text = body.text ?? 'Server going down for maintenance';
    if (typeof text !== 'string' || text === '' || /[\r\n\0]/.test(text)) throw new ServiceError('INVALID', 'text: expected a non-empty single-line string');
    const session = body.session ?? null;
    if (session !== null) {
      if (!(typeof session === 'number' && Number.isSafeInteger(session) && session >= 1)) throw new ServiceError('INVALID', 'session: expected a session number');
      if (!this.ctx.sessions.get(session)) throw new ServiceError('NONEXISTENT', `No session ${session}`);
    }
    this.ctx.scheduleBye(at, text, session);
    return { at, iso: new Date(at).toISOString(), text, session };
  }

  advanceClock(input: { advance: number }): { now: number; iso: string } {
    if (!this.ctx.advanceClock) throw new ServiceError('CANNOT', 'This server clock cannot be moved');
    const advance = input?.advance;
    if (!(typeof advance === 'number' && Number.isSafeInteger(advance) && advance >= 0)) {
      throw new ServiceError('INVALID', `advance: expected an integer >= 0 (milliseconds), got ${JSON.stringify(advance) ?? String(advance)}`);
    }
    this.ctx.advanceClock(advance);
    return this.clock();
  }

  /**
   * The whole store in the shape of the storage option (no credentials).
   * With `userMailboxes` it is the per-user form `{ users, shared }`
   * (a UserStorage; `userSnapshot()` gives it typed as such).
   */
  snapshot(): Storage {
    if (this.ctx.trees) return this.ctx.trees.snapshot() as Storage;
    return snapshotStore(this.store);
  }

  /** The per-user snapshot `{ users: { name: tree }, shared }` (userMailboxes); INVALID without the option. */
  userSnapshot(): UserStorage {
    if (!this.ctx.trees) throw invalid('userSnapshot: only with the userMailboxes option; snapshot() gives the one tree');
    return this.ctx.trees.snapshot();
  }

  /**
   * Where clients broke the protocol (docs/client-check.md), oldest first:
   * all kept, or those of one `session`, or those with an id above `since`.
   */
  clientFindings(query: ClientFindingsQuery = {}): ClientFinding[] {
    return this.ctx.clientFindings?.().list(query) ?? [];
  }

  /** Drops every client finding; returns how many there were. */
  clearClientFindings(): { deleted: number } {
    return { deleted: this.ctx.clientFindings?.().clear() ?? 0 };
  }

  /** The client checker's mode and the capabilities hidden from every session. */
  clientCheck(): { clientCheck: ClientCheckMode; rules: string[]; hide: string[] } {
    const log = this.ctx.clientFindings?.();
    return { clientCheck: log?.mode ?? 'off', rules: log ? [...log.rules] : [], hide: [...(this.ctx.hiddenCapabilities?.() ?? [])] };
  }

  /**
   * Puts a `mark` event in the stream: a note, or where a test starts and
   * ends (the test helpers post one for each test). Answers the event's id,
   * a `since` for waits that must see only what came after it.
   */
  mark(input: MarkInput): { id: number } {
    const o = checkObject(input, 'mark', ['text', 'phase', 'outcome']);
    const text = checkString(o.text, 'text', { nonEmpty: true });
    if (text.length > MAX_MARK_TEXT) throw invalid(`text: at most ${MAX_MARK_TEXT} characters, got ${text.length}`);
    const phase = o.phase ?? null;
    if (phase !== null && phase !== 'start' && phase !== 'end') throw invalid(`phase: expected "start", "end" or null, got ${JSON.stringify(phase)}`);
    const outcome = o.outcome ?? null;
    if (outcome !== null && outcome !== 'pass' && outcome !== 'fail') throw invalid(`outcome: expected "pass", "fail" or null, got ${JSON.stringify(outcome)}`);
    if (outcome !== null && phase !== 'end') throw invalid('outcome: only a test\'s end (phase "end") has an outcome');
    if (!this.ctx.mark) throw new ServiceError('CANNOT', 'This server cannot emit marks');
    return { id: this.ctx.mark({ text, phase, outcome }) };
  }

  /** Restores mailboxes and users to those of the options; every session gets `* BYE Server reset`. */
  reset(): { reset: true } {
    // Users' trees are dropped first: the shared store's reset event finds them made again from the seeds.
    this.ctx.trees?.reset();
    this.store.reset();
    return { reset: true };
  }

  /** Stops the server; graceful (default) waits until the last client has gone. */
  async shutdown(options: { graceful?: boolean } = {}): Promise<{ shutdown: true }> {
    const o = checkObject(options, 'options', ['graceful']);
    const graceful = optionalBoolean(o.graceful, 'graceful') ?? true;
    await this.ctx.shutdown(graceful);
    return { shutdown: true };
  }

  // ------------------------------------------------------------ sessions

  sessions(): SessionInfo[] {
    return this.ctx.sessions.list().map((s) => s.info());
  }

  private requireSession(session: number): NonNullable<ReturnType<SessionRegistry['get']>> {
    const id = checkInteger(session, 'session', 1);
    const handle = this.ctx.sessions.get(id);
    if (!handle) throw new ServiceError('NONEXISTENT', `Session ${id} does not exist`);
    return handle;
  }

  /** Ends a session with `* BYE <text>` (default `Disconnected by the server`) or a TCP reset. */
  disconnect(session: number, options: { text?: string; reset?: boolean } = {}): { disconnected: true } {
    const o = checkObject(options, 'options', ['text', 'reset']);
    const text = optionalString(o.text, 'text');
    const reset = optionalBoolean(o.reset, 'reset');
    const handle = this.requireSession(session);
    handle.disconnect({ text: text ?? 'Disconnected by the server', reset: reset ?? false });
    return { disconnected: true };
  }

  /** Writes bytes to a session verbatim: UTF-8 text, base64 text, or bytes. */
  inject(session: number, data: string | Uint8Array, encoding: 'utf-8' | 'base64' = 'utf-8'): { injected: true } {
    const bytes = decodeSource(data, encoding, 'data');
    this.requireSession(session).inject(bytes);
    return { injected: true };
  }

  // ------------------------------------------------------------ users

  listUsers(): UserInfo[] {
    return [...this.store.users].map(([name, u]) => ({ name, xoauth2: u.xoauth2 !== null }));
  }

  addUser(input: AddUserInput): { name: string } {
    const o = checkObject(input, 'user', ['name', 'password', 'xoauth2']);
    const name = checkString(o.name, 'name', { nonEmpty: true });
    const record: UserRecord = {
      password: optionalString(o.password, 'password') ?? null,
      xoauth2: parseXOAuth2(o.xoauth2) ?? null,
    };
    this.store.addUser(name, record, null);
    return { name };
  }

  updateUser(name: string, input: UpdateUserInput): { name: string } {
    checkString(name, 'name');
    const o = checkObject(input, 'user', ['password', 'xoauth2']);
    const patch: Partial<UserRecord> = {};
    const password = optionalString(o.password, 'password');
    if (password !== undefined) patch.password = password;
    const xoauth2 = parseXOAuth2(o.xoauth2);
    if (xoauth2 !== undefined) patch.xoauth2 = xoauth2;
    this.store.updateUser(name, patch, null);
    return { name };
  }

  /** Deletes a user and, unless `disconnect` is false, ends its sessions. */
  deleteUser(name: string, options: { disconnect?: boolean } = {}): { deleted: true } {
    checkString(name, 'name');
    const o = checkObject(options, 'options', ['disconnect']);
    this.store.deleteUser(name, optionalBoolean(o.disconnect, 'disconnect') ?? true, null);
    return { deleted: true };
  }

  // ------------------------------------------------------------ mailboxes

  /** Every mailbox, ordered by name. */
  listMailboxes(scope?: MailboxScope): MailboxInfo[] {
    const tree = this.treeOf(scope);
    let list = tree.list();
    // Without a user, the shared tree shows its shared namespaces (its own INBOX is nobody's).
    if (this.ctx.trees && tree === this.store) list = list.filter((m) => tree.namespaceOf(m.path).type === 'shared' && tree.namespaceOf(m.path).prefix !== '');
    return list.map((m) => mailboxInfo(tree, m, this.shown().mailbox));
  }

  /**
   * Creates a mailbox with any missing superior levels. Takes the path, as
   * every other mailbox operation does (`createMailbox('A/B')`, options
   * second), or the REST body `{ path, subscribed }`.
   */
  createMailbox(path: string, options?: CreateMailboxOptions, scope?: MailboxScope): MailboxInfo;
  createMailbox(input: CreateMailboxInput, scope?: MailboxScope): MailboxInfo;
  createMailbox(input: string | CreateMailboxInput, second: CreateMailboxOptions | MailboxScope = {}, third?: MailboxScope): MailboxInfo {
    let o: Record<string, unknown>;
    const scope = typeof input === 'string' ? third : (second as MailboxScope);
    if (typeof input === 'string') o = { ...checkObject(second, 'options', ['subscribed']), path: input };
    else {
      if (typeof input !== 'object' || input === null) {
        throw invalid(`mailbox: expected a path or an object { path, subscribed }, got ${input === null ? 'null' : typeof input}`);
      }
      o = checkObject(input, 'mailbox', ['path', 'subscribed']);
    }
    const path = checkString(o.path, 'path', { nonEmpty: true });
    // One rule for mailboxes a test makes (storage, control API, REST): subscribed unless told
    // otherwise. Only a client's own IMAP CREATE leaves the subscription to the client.
    const subscribed = optionalBoolean(o.subscribed, 'subscribed') ?? true;
    const tree = this.treeOf(scope, path);
    const mailbox = tree.createMailbox(path, null, { subscribed });
    return mailboxInfo(tree, mailbox, this.shown().mailbox);
  }

  getMailbox(path: string, scope?: MailboxScope): MailboxInfo {
    const tree = this.treeOf(scope, path);
    return mailboxInfo(tree, this.mailbox(path, tree), this.shown().mailbox);
  }

  /** Deletes a mailbox; sessions that have it selected get BYE. INBOX: CANNOT. */
  deleteMailbox(path: string, scope?: MailboxScope): { deleted: true } {
    this.treeOf(scope, path).deleteMailbox(checkString(path, 'path'), null);
    return { deleted: true };
  }

  /** Renames a mailbox with its children; renaming INBOX moves its messages. */
  renameMailbox(path: string, input: { newPath: string }, scope?: MailboxScope): MailboxInfo {
    checkString(path, 'path');
    const o = checkObject(input, 'rename', ['newPath']);
    const newPath = checkString(o.newPath, 'newPath', { nonEmpty: true });
    const tree = this.treeOf(scope, path, newPath);
    return mailboxInfo(tree, tree.renameMailbox(path, newPath, null), this.shown().mailbox);
  }

  /** Subscribes an existing mailbox. */
  subscribe(path: string, scope?: MailboxScope): { changed: boolean } {
    return { changed: this.treeOf(scope, path).subscribe(checkString(path, 'path'), null, { mustExist: true }) };
  }

  /** Unsubscribes a name; it need not be a mailbox. */
  unsubscribe(path: string, scope?: MailboxScope): { changed: boolean } {
    return { changed: this.treeOf(scope, path).unsubscribe(checkString(path, 'path'), null) };
  }

  /** New UIDVALIDITY and optionally new UIDs; sessions that have the mailbox selected get BYE. */
  resetUidValidity(
    path: string,
    input: ResetUidValidityInput = {},
    scope?: MailboxScope,
  ): { uidvalidity: number; uidnext: number; uids: { uid: number; newUid: number }[] } {
    const tree = this.treeOf(scope, path);
    const mailbox = this.mailbox(path, tree);
    const o = checkObject(input, 'options', ['uidvalidity', 'uids', 'offset', 'seed']);
    const uids = checkOneOf(o.uids, 'uids', ['keep', 'renumber', 'offset', 'shuffle'] as const, 'keep');
    const options: ResetUidValidityInput = { uids };
    const uidvalidity = optionalInteger(o.uidvalidity, 'uidvalidity', 1, 0xffffffff);
    if (uidvalidity !== undefined) options.uidvalidity = uidvalidity;
    const offset = optionalInteger(o.offset, 'offset');
    if (offset !== undefined) options.offset = offset;
    const seed = optionalInteger(o.seed, 'seed');
    if (seed !== undefined) options.seed = seed;
    return tree.resetUidValidity(mailbox, options, null);
  }

  // ------------------------------------------------------------ messages

  private mailbox(path: string, tree: Store): Mailbox {
    return tree.require(checkString(path, 'path'));
  }

  /** Messages ordered by UID; `uids` keeps only those, `raw` adds the source in base64. */
  listMessages(path: string, options: { uids?: number[]; raw?: boolean } = {}, scope?: MailboxScope): MessageInfo[] {
    const mailbox = this.mailbox(path, this.treeOf(scope, path));
    const o = checkObject(options, 'options', ['uids', 'raw']);
    const raw = optionalBoolean(o.raw, 'raw') ?? false;
    const shown = this.shown().message;
    if (o.uids === undefined) return mailbox.messages.map((m) => messageInfo(m, raw, shown));
    const wanted = [...new Set(checkUids(o.uids))].sort((a, b) => a - b);
    const out: MessageInfo[] = [];
    for (const uid of wanted) {
      const m = mailbox.byUid(uid);
      if (m) out.push(messageInfo(m, raw, shown));
    }
    return out;
  }

  /** One message, always with its source in base64. */
  getMessage(path: string, uid: number, scope?: MailboxScope): MessageInfo {
    const tree = this.treeOf(scope, path);
    const mailbox = this.mailbox(path, tree);
    const [m] = tree.requireMessages(mailbox, [checkInteger(uid, 'uid', 1)]);
    return messageInfo(m!, true, this.shown().message);
  }

  /** Adds a message like a delivery. With `checks: true` it is refused as APPEND would refuse it. */
  addMessage(path: string, input: AddMessageInput, scope?: MailboxScope): { uid: number; uidvalidity: number } {
    const tree = this.treeOf(scope, path);
    const mailbox = this.mailbox(path, tree);
    const o = checkObject(input, 'message', ['raw', 'encoding', 'flags', 'internaldate', 'checks']);
    if (o.raw === undefined) throw invalid('raw: required');
    // UTF-8 text stays text until the message is first read (Message.raw): a suite that adds
    // thousands and reads a few does not pay to encode the rest.
    const raw = sourceOf(o.raw, o.encoding);
    // No flags given: the store's shared empty set, no list or set made for this message.
    const flags = o.flags === undefined ? undefined : checkFlags(o.flags, 'flags');
    let internaldate: InternalDate;
    if (o.internaldate === undefined) internaldate = internalDateFromMs(this.ctx.now());
    else {
      const text = checkString(o.internaldate, 'internaldate');
      const parsed = parseInternalDate(text);
      if (!parsed) throw invalid(`internaldate: not an RFC 3501 date-time ("dd-Mon-yyyy hh:mm:ss +zzzz"): ${JSON.stringify(text)}`);
      internaldate = parsed;
    }
    if (optionalBoolean(o.checks, 'checks')) this.ctx.checkAppend(mailbox, sourceOctets(raw));
    const message = tree.append(mailbox, [flags === undefined ? { raw, internaldate } : { raw, flags, internaldate }], null)[0]!;
    return { uid: message.uid, uidvalidity: mailbox.uidvalidity };
  }

  /** Sets, adds or removes flags; answers with the new flags of every named message. */
  setFlags(path: string, input: { uids: number[]; flags: string[]; mode?: FlagMode }, scope?: MailboxScope): { uid: number; flags: string[] }[] {
    const tree = this.treeOf(scope, path);
    const mailbox = this.mailbox(path, tree);
    const o = checkObject(input, 'options', ['uids', 'flags', 'mode']);
    const uids = checkUids(o.uids);
    const flags = checkFlags(o.flags, 'flags');
    const mode = checkOneOf(o.mode, 'mode', ['set', 'add', 'remove'] as const, 'set');
    const messages = tree.requireMessages(mailbox, uids);
    tree.setFlags(mailbox, messages, flags, mode, null);
    return messages.map((m) => ({ uid: m.uid, flags: [...m.flags] }));
  }

  /** Removes messages; answers with the UIDs removed (unknown UIDs are skipped). */
  expungeMessages(path: string, input: { uids: number[] }, scope?: MailboxScope): { uids: number[] } {
    const tree = this.treeOf(scope, path);
    const mailbox = this.mailbox(path, tree);
    const o = checkObject(input, 'options', ['uids']);
    return { uids: tree.expunge(mailbox, checkUids(o.uids), null) };
  }

  /** Copies messages to `target`, a mailbox of the same user's tree. */
  copyMessages(path: string, input: { uids: number[]; target: string }, scope?: MailboxScope): { uidvalidity: number; uids: UidMapping[] } {
    return this.transfer(path, input, false, scope);
  }

  /** Moves messages to `target`, a mailbox of the same user's tree. */
  moveMessages(path: string, input: { uids: number[]; target: string }, scope?: MailboxScope): { uidvalidity: number; uids: UidMapping[] } {
    return this.transfer(path, input, true, scope);
  }

  private transfer(path: string, input: unknown, move: boolean, scope: MailboxScope | undefined): { uidvalidity: number; uids: UidMapping[] } {
    const tree = this.treeOf(scope, path);
    const source = this.mailbox(path, tree);
    const o = checkObject(input, 'options', ['uids', 'target']);
    const uids = checkUids(o.uids);
    const target = this.treeOf(scope, o.target).require(checkString(o.target, 'target'));
    const messages = tree.requireMessages(source, uids);
    const pairs = move ? tree.move(source, messages, target, null) : tree.copy(messages, target, null);
    return { uidvalidity: target.uidvalidity, uids: pairs };
  }
}

function parseXOAuth2(value: unknown): UserRecord['xoauth2'] | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  const o = checkObject(value, 'xoauth2', ['accessToken', 'sessionTimeout']);
  const accessToken = checkString(o.accessToken, 'xoauth2.accessToken', { nonEmpty: true });
  const timeout = optionalInteger(o.sessionTimeout, 'xoauth2.sessionTimeout', 0);
  return { accessToken, sessionTimeout: timeout ?? null };
}

import { ServiceError } from '../errors.js';
import type { SeedMailbox, SeedMessage, SeedNamespace, StorageSeed, UserRecord } from '../options/types.js';
import { Prng } from '../util/prng.js';
import type { ChangeListener, ChangeObserver, Origin, StoreChange } from './changes.js';
import { canonicalFlag, isSettableFlag } from './flags.js';
import type { InternalDate } from './internal-date.js';
import type { StoreBudget, UncountedBytes } from './budget.js';
import { Mailbox } from './mailbox.js';
import { Message, NO_FLAGS } from './message.js';
import { isValidMutf7 } from './mutf7.js';
import { sourceOctets } from './raw-bytes.js';

export type FlagMode = 'set' | 'add' | 'remove';

/** The largest UID (a 32-bit nz-number). */
const MAX_UID = 0xffffffff;
export type UidMode = 'keep' | 'renumber' | 'offset' | 'shuffle';

/**
 * Told when a mailbox's messages are first copied from the seed (at start
 * or after a reset, on the first read): an extension that gives seeded
 * messages a value (OBJECTID's EMAILID) gives it here, to the messages a
 * test reads, instead of walking every message of every mailbox at reset.
 * Runs before anything else sees the messages.
 */
export type SeedLoadListener = (mailbox: Mailbox, messages: readonly Message[]) => void;

/** What a seed mailbox's message list implies for its counters: worked out once per seed, not per reset. */
const seedFactsCache = new WeakMap<SeedMailbox, { lastUid: number; highestModseq: number }>();

function seedFacts(seed: SeedMailbox): { lastUid: number; highestModseq: number } {
  let facts = seedFactsCache.get(seed);
  if (!facts) {
    let uid = 0;
    let modseq = 1;
    for (const m of seed.messages) {
      uid = m.uid ?? uid + 1;
      const ms = m.modseq ?? 1;
      if (ms > modseq) modseq = ms;
    }
    facts = { lastUid: uid, highestModseq: modseq };
    seedFactsCache.set(seed, facts);
  }
  return facts;
}

/**
 * The octets of a seed mailbox's sources, once measured. Apart from the
 * facts above: measuring reads every source (text ones are counted, which
 * still walks them), and a server a test builds and drops may never need it.
 */
const seedBytesCache = new WeakMap<SeedMailbox, number>();

function seedBytes(seed: SeedMailbox): number {
  let bytes = seedBytesCache.get(seed);
  if (bytes === undefined) {
    bytes = 0;
    for (const m of seed.messages) bytes += m.rawLength ?? m.raw.length;
    seedBytesCache.set(seed, bytes);
  }
  return bytes;
}

/**
 * A changeable copy of a seed's unknown keys. Most have none, and
 * `structuredClone({})` costs about a microsecond: once per mailbox and
 * namespace at every start and reset.
 */
function cloneExtra(extra: Record<string, unknown>): Record<string, unknown> {
  for (const key in extra) if (Object.hasOwn(extra, key)) return structuredClone(extra);
  return {};
}

/** Fresh, changeable messages of a seed mailbox (the raw bytes are shared, never copied). */
function seedMessages(seed: SeedMailbox): Message[] {
  let uid = 0;
  const messages: Message[] = new Array<Message>(seed.messages.length);
  let i = 0;
  for (const m of seed.messages) {
    uid = m.uid ?? uid + 1;
    messages[i++] = new Message({
      uid,
      modseq: m.modseq ?? 1,
      flags: m.flags,
      raw: m.raw,
      internaldate: m.internaldate,
      extra: Object.keys(m.extra).length ? structuredClone(m.extra) : null,
    });
  }
  return messages;
}

const NOT_MOVING: { moving?: boolean } = Object.freeze({});
const MOVING: { moving?: boolean } = Object.freeze({ moving: true });

export interface AppendInput {
  /** The source's bytes, or UTF-8 text the message encodes when first read (see `Message.raw`). */
  raw: Buffer | string;
  flags?: Iterable<string>;
  internaldate: InternalDate;
  extra?: Record<string, unknown> | null;
  /** The memos of the message this one copies (same raw bytes): see ./memo.ts. */
  memo?: unknown[] | null;
}

/**
 * The mail model: users, namespaces, mailboxes, messages, subscriptions.
 * Every change goes through a method here and is announced on the change
 * feed; nothing in here knows IMAP or HTTP.
 */
export class Store implements UncountedBytes {
  readonly users = new Map<string, UserRecord>();
  namespaces: SeedNamespace[] = [];
  private readonly mailboxes = new Map<string, Mailbox>();
  private readonly subscriptions = new Set<string>();
  private readonly listeners = new Set<ChangeListener | ChangeObserver>();
  /**
   * The listeners as a list, made when a change is announced after the set
   * changed: a change goes to the listeners there were when it was made
   * (one that a listener adds or removes meanwhile does not change that),
   * without copying the set for every change.
   */
  private listenerList: readonly (ChangeListener | ChangeObserver)[] | null = null;
  private nextUidValidity = 1;
  /** The seed messages of mailboxes whose messages are not copied yet (`pendingSeed`). */
  private pending = new WeakMap<Mailbox, readonly SeedMessage[]>();
  /**
   * Seed mailboxes held with their message count but not their octets yet
   * (`seedBytes`): counted when the mailbox is first read or when the
   * budget's total is (`countBytes`).
   */
  private uncounted: Map<Mailbox, SeedMailbox> | null = null;
  constructor(
    private readonly seed: StorageSeed,
    private readonly seedUsers: ReadonlyMap<string, UserRecord>,
    /** The server's budget, shared by every tree; null: none kept. */
    readonly budget: StoreBudget | null = null,
    /** Told when seeded messages are copied (`SeedLoadListener`); user trees share the shared store's set. */
    readonly seedLoadListeners: Set<SeedLoadListener> = new Set(),
  ) {
    this.load();
  }

  /**
   * The seed messages a mailbox will be filled from when first read, or
   * null once its messages are copied (or when it has none from the seed):
   * what an extension counts instead of reading the messages.
   */
  pendingSeed(mailbox: Mailbox): readonly SeedMessage[] | null {
    if (mailbox.loaded) return null;
    return this.pending.get(mailbox) ?? null;
  }

  /**
   * Moves the held counts of `mailbox` and the budget by a change's size.
   * The mailbox may be of another tree (IMAP appends through the shared
   * store with `userMailboxes`): the counts are the mailbox's and the
   * server's, never a tree's, so that does not matter.
   */
  private hold(mailbox: Mailbox, messages: number, bytes: number): void {
    mailbox.heldMessages += messages;
    mailbox.heldBytes += bytes;
    this.budget?.add(messages, bytes);
  }

  /**
   * Gives back what this tree's mailboxes hold of the budget: the tree is
   * being dropped or reloaded (a reset, a deleted user). A walk over the
   * mailboxes, not the messages, as the reload itself is.
   */
  release(): void {
    // What was never counted was never added: nothing of it to give back.
    this.uncounted = null;
    if (!this.budget) return;
    this.budget.forget(this);
    for (const m of this.mailboxes.values()) {
      this.budget.remove(m.heldMessages, m.heldBytes);
      m.heldMessages = 0;
      m.heldBytes = 0;
    }
  }

  // ---------------------------------------------------------------- feed

  /**
   * Listens to every change; returns the function that stops listening.
   * Listeners hear a change in the order they started listening, functions
   * and observers alike.
   */
  onChange(listener: ChangeListener | ChangeObserver): () => void {
    this.listeners.add(listener);
    this.listenerList = null;
    return () => this.offChange(listener);
  }

  /** Stops `listener` (given to `onChange`) from listening: for listeners that keep no closure for it. */
  offChange(listener: ChangeListener | ChangeObserver): void {
    if (this.listeners.delete(listener)) this.listenerList = null;
  }

  private emit(change: StoreChange): void {
    // Indexed: a change runs this once (V8 may not have optimized it), over every session's listener.
    const list = (this.listenerList ??= [...this.listeners]);
    for (let i = 0; i < list.length; i++) {
      const listener = list[i]!;
      if (typeof listener === 'function') listener(change);
      else listener.storeChanged(change);
    }
  }

  // ---------------------------------------------------------------- per-user mailboxes (userMailboxes)

  /**
   * Announces a change made in another tree (a user's own tree, with
   * `userMailboxes`) on this store's feed, so sessions, extensions and
   * events follow every tree through one feed.
   */
  relay(change: StoreChange): void {
    this.emit(change);
  }

  /** The name a mailbox has in this tree: its path (a MailboxView of one tree). */
  nameOf(mailbox: Mailbox): string {
    return mailbox.path;
  }

  /** Whose tree a name is in: no one's (a MailboxView of one tree). */
  ownerAt(_path: string): string | null {
    return null;
  }

  /** A path of this tree as its one user sees it: itself (a MailboxView of one tree). */
  nameAt(_owner: string | null, path: string): string | null {
    return path;
  }

  // ---------------------------------------------------------------- load and reset

  /** Restores mailboxes, messages, subscriptions and users to those of the options. */
  reset(): void {
    this.load();
    this.emit({ kind: 'reset', origin: null });
  }

  private load(): void {
    this.release();
    this.mailboxes.clear();
    this.subscriptions.clear();
    this.users.clear();
    for (const [name, user] of this.seedUsers) {
      this.users.set(name, { password: user.password, xoauth2: user.xoauth2 ? { ...user.xoauth2 } : null });
    }
    this.namespaces = this.seed.namespaces.map((ns) => ({ ...ns, extra: cloneExtra(ns.extra) }));
    // The personal namespace always exists: new top-level mailboxes live there.
    if (!this.namespaces.some((ns) => ns.prefix === '')) {
      this.namespaces.unshift({ prefix: '', type: 'personal', separator: '/', extra: {} });
    }
    let maxValidity = 0;
    for (const m of this.seed.mailboxes) maxValidity = Math.max(maxValidity, m.uidvalidity ?? 0);
    this.nextUidValidity = maxValidity + 1;
    for (const seed of this.seed.mailboxes) this.loadMailbox(seed);
    if (!this.mailboxes.has('INBOX')) this.insertMailbox('INBOX', '/');
  }

  // ---------------------------------------------------------------- seed copies (reset in O(mailboxes))

  /** Counts the octets of every seed mailbox held uncounted (the budget's total is being read). */
  countBytes(): void {
    const owing = this.uncounted;
    if (owing === null) return;
    this.uncounted = null;
    for (const [mailbox, seed] of owing) this.hold(mailbox, 0, seedBytes(seed));
  }

  private countSeed(mailbox: Mailbox): void {
    const seed = this.uncounted?.get(mailbox);
    if (seed === undefined) return;
    this.uncounted!.delete(mailbox);
    this.hold(mailbox, 0, seedBytes(seed));
  }

  private loadMailbox(seed: SeedMailbox): void {
    const { lastUid, highestModseq } = seedFacts(seed);
    const mailbox = new Mailbox({
      path: seed.path,
      delimiter: seed.delimiter,
      uidvalidity: seed.uidvalidity ?? this.nextUidValidity++,
      uidnext: Math.max(seed.uidnext ?? 1, lastUid + 1),
      highestModseq: Math.max(seed.highestModseq ?? 1, highestModseq),
      attributes: [...seed.flags],
      specialUse: [...seed.specialUse],
      permanentFlags: seed.permanentFlags ? [...seed.permanentFlags] : null,
      extra: cloneExtra(seed.extra),
    });
    // The messages are copied from the seed when first read: the seed is never changed, so a late copy is the same copy.
    if (seed.messages.length > 0) {
      this.pending.set(mailbox, seed.messages);
      mailbox.deferMessages(() => {
        const messages = seedMessages(seed);
        this.pending.delete(mailbox);
        // The sources are bytes now: counting them is a sum of lengths.
        this.countSeed(mailbox);
        for (const listener of this.seedLoadListeners) listener(mailbox, messages);
        return messages;
      });
    }
    mailbox.recentFloor = mailbox.uidnext;
    const bytes = seedBytesCache.get(seed);
    this.hold(mailbox, seed.messages.length, bytes ?? 0);
    if (bytes === undefined && seed.messages.length > 0) {
      (this.uncounted ??= new Map()).set(mailbox, seed);
      this.budget?.owe(this);
    }
    this.mailboxes.set(mailbox.path, mailbox);
    if (seed.subscribed) this.subscriptions.add(mailbox.path);
  }

  // ---------------------------------------------------------------- names

  /** INBOX is case-insensitive, also as the first level of a path. */
  normalizePath(path: string): string {
    // The common name, spelled as stored: no upper-casing (a new string) to find that out.
    if (path === 'INBOX') return path;
    if (path.length < 5) return path.toUpperCase() === 'INBOX' ? 'INBOX' : path;
    const head = path.slice(0, 5);
    if (head.toUpperCase() !== 'INBOX') return path;
    if (path.length === 5) return 'INBOX';
    const sep = path[5];
    return sep === this.delimiterFor('INBOX') ? 'INBOX' + path.slice(5) : path;
  }

  /** The namespace a path belongs to: the longest matching prefix, else the personal one. */
  namespaceOf(path: string): SeedNamespace {
    let best: SeedNamespace | undefined;
    for (const ns of this.namespaces) {
      if (ns.prefix !== '' && path.startsWith(ns.prefix) && (!best || ns.prefix.length > best.prefix.length)) best = ns;
    }
    return best ?? this.namespaces.find((ns) => ns.prefix === '') ?? { prefix: '', type: 'personal', separator: '/', extra: {} };
  }

  delimiterFor(path: string): string {
    return this.namespaceOf(path).separator;
  }

  /** The parent's path, or null at the top of a namespace. */
  parentOf(path: string): string | null {
    const ns = this.namespaceOf(path);
    const inner = path.slice(ns.prefix.length);
    const at = inner.lastIndexOf(ns.separator);
    return at <= 0 ? null : ns.prefix + inner.slice(0, at);
  }

  private validateName(path: string): void {
    if (path === '') throw new ServiceError('INVALID', 'Mailbox name is empty');
    if (!isValidMutf7(path)) {
      throw new ServiceError('INVALID', `Mailbox name ${JSON.stringify(path)} is not valid modified UTF-7`);
    }
    const ns = this.namespaceOf(path);
    const inner = path.slice(ns.prefix.length);
    if (inner === '' || inner.split(ns.separator).some((level) => level === '')) {
      throw new ServiceError('INVALID', `Mailbox name ${JSON.stringify(path)} has an empty hierarchy level`);
    }
  }

  // ---------------------------------------------------------------- mailboxes

  has(path: string): boolean {
    return this.mailboxes.has(this.normalizePath(path));
  }

  get(path: string): Mailbox | undefined {
    return this.mailboxes.get(this.normalizePath(path));
  }

  /** The mailbox, or a NONEXISTENT error. */
  require(path: string): Mailbox {
    const mailbox = this.get(path);
    if (!mailbox) throw new ServiceError('NONEXISTENT', `Mailbox ${JSON.stringify(path)} does not exist`);
    return mailbox;
  }

  /** Every mailbox, ordered by name. */
  list(): Mailbox[] {
    return [...this.mailboxes.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Paths of mailboxes directly below this one. */
  hasChildren(mailbox: Mailbox): boolean {
    const prefix = mailbox.path + mailbox.delimiter;
    for (const path of this.mailboxes.keys()) if (path.startsWith(prefix)) return true;
    return false;
  }

  private descendants(path: string, delimiter: string): Mailbox[] {
    const prefix = path + delimiter;
    return [...this.mailboxes.values()].filter((m) => m.path.startsWith(prefix));
  }

  private insertMailbox(path: string, delimiter: string): Mailbox {
    const mailbox = new Mailbox({
      path,
      delimiter,
      uidvalidity: this.nextUidValidity++,
      uidnext: 1,
      highestModseq: 1,
    });
    this.mailboxes.set(path, mailbox);
    return mailbox;
  }

  /** Creates a mailbox and any missing superior levels. */
  createMailbox(path: string, origin: Origin, options: { subscribed?: boolean; specialUse?: string[] } = {}): Mailbox {
    path = this.normalizePath(path);
    this.validateName(path);
    if (this.mailboxes.has(path)) throw new ServiceError('ALREADYEXISTS', `Mailbox ${JSON.stringify(path)} already exists`);
    const missing: string[] = [];
    for (let parent = this.parentOf(path); parent !== null && !this.mailboxes.has(parent); parent = this.parentOf(parent)) {
      missing.unshift(parent);
    }
    const delimiter = this.delimiterFor(path);
    let created: Mailbox | undefined;
    for (const p of [...missing, path]) {
      created = this.insertMailbox(p, delimiter);
      this.emit({ kind: 'mailbox', type: 'create', path: p, oldPath: null, mailbox: created, origin });
    }
    if (options.specialUse) created!.specialUse = [...options.specialUse];
    if (options.subscribed) this.subscribe(path, origin);
    return created!;
  }

  /** Deletes a mailbox. INBOX cannot be deleted; a mailbox with children neither (as Dovecot). */
  deleteMailbox(path: string, origin: Origin): void {
    const mailbox = this.require(path);
    if (mailbox.path === 'INBOX') throw new ServiceError('CANNOT', 'INBOX cannot be deleted');
    if (this.hasChildren(mailbox)) {
      throw new ServiceError('HASCHILDREN', `Mailbox ${JSON.stringify(mailbox.path)} has children, delete them first`);
    }
    this.mailboxes.delete(mailbox.path);
    // Octets never counted were never added to the budget.
    this.uncounted?.delete(mailbox);
    this.hold(mailbox, -mailbox.heldMessages, -mailbox.heldBytes);
    this.emit({ kind: 'mailbox', type: 'delete', path: mailbox.path, oldPath: null, mailbox, origin });
  }

  /**
   * Renames a mailbox with its children. Renaming INBOX moves its messages
   * to the new mailbox and leaves an empty INBOX (RFC 3501 §6.3.5).
   */
  renameMailbox(path: string, newPath: string, origin: Origin): Mailbox {
    const source = this.require(path);
    newPath = this.normalizePath(newPath);
    this.validateName(newPath);
    if (this.mailboxes.has(newPath)) throw new ServiceError('ALREADYEXISTS', `Mailbox ${JSON.stringify(newPath)} already exists`);
    if (newPath.startsWith(source.path + source.delimiter)) {
      throw new ServiceError('CANNOT', `Cannot rename ${JSON.stringify(source.path)} below itself`);
    }
    const oldPath = source.path;
    if (oldPath === 'INBOX') return this.renameInbox(source, newPath, origin);
    // Create missing superior levels of the new name first.
    const parent = this.parentOf(newPath);
    if (parent !== null && !this.mailboxes.has(parent)) this.createMailbox(parent, origin);
    const moving = [source, ...this.descendants(oldPath, source.delimiter)];
    for (const m of moving) this.mailboxes.delete(m.path);
    for (const m of moving) {
      const before = m.path;
      m.path = newPath + before.slice(oldPath.length);
      this.mailboxes.set(m.path, m);
      this.emit({ kind: 'mailbox', type: 'rename', path: m.path, oldPath: before, mailbox: m, origin });
    }
    return source;
  }

  private renameInbox(inbox: Mailbox, newPath: string, origin: Origin): Mailbox {
    const target = this.createMailbox(newPath, origin);
    const moved = inbox.messages;
    const oldUids = moved.map((m) => m.uid);
    inbox.messages = [];
    inbox.recount();
    // The same messages, held by another mailbox of this tree: the totals stay.
    const { heldMessages, heldBytes } = inbox;
    this.hold(inbox, -heldMessages, -heldBytes);
    this.hold(target, heldMessages, heldBytes);
    const modseq = ++target.highestModseq;
    // New objects for the new mailbox: a session with INBOX selected still holds the old
    // ones (with their INBOX UIDs) until it has been told of the expunge.
    const copies = moved.map(
      (m) => new Message({ uid: target.uidnext++, modseq, flags: m.flags, raw: m.raw, internaldate: m.internaldate, extra: m.extra, memo: m.memo }),
    );
    target.messages = copies;
    target.recount();
    for (const m of copies) target.noteKeywords(m.flags);
    if (moved.length) {
      inbox.highestModseq++;
      this.emit({ kind: 'expunge', mailbox: inbox, uids: oldUids, messages: moved, origin });
      // A list of its own: `copies` is the mailbox's list, which later changes grow, and listeners keep the change's.
      this.emit({ kind: 'append', mailbox: target, messages: copies.slice(), origin });
    }
    this.emit({ kind: 'mailbox', type: 'rename', path: target.path, oldPath: 'INBOX', mailbox: target, origin });
    return target;
  }

  // ---------------------------------------------------------------- subscriptions

  isSubscribed(path: string): boolean {
    return this.subscriptions.has(this.normalizePath(path));
  }

  subscribedNames(): string[] {
    return [...this.subscriptions].sort();
  }

  /** Subscribes a name; true when the subscription changed. */
  subscribe(path: string, origin: Origin, options: { mustExist?: boolean } = {}): boolean {
    path = this.normalizePath(path);
    if (options.mustExist) this.require(path);
    if (this.subscriptions.has(path)) return false;
    this.subscriptions.add(path);
    this.emit({ kind: 'mailbox', type: 'subscribe', path, oldPath: null, mailbox: this.get(path) ?? null, origin });
    return true;
  }

  /** Unsubscribes a name (it need not be a mailbox); true when it was subscribed. */
  unsubscribe(path: string, origin: Origin): boolean {
    path = this.normalizePath(path);
    if (!this.subscriptions.delete(path)) return false;
    this.emit({ kind: 'mailbox', type: 'unsubscribe', path, oldPath: null, mailbox: this.get(path) ?? null, origin });
    return true;
  }

  // ---------------------------------------------------------------- messages

  /**
   * Adds messages at the end of a mailbox (APPEND, delivery). `moving`: the
   * copies of a MOVE, whose originals go right after; the budget does not
   * refuse them (the store ends no fuller), so a full store can still move.
   */
  append(mailbox: Mailbox, inputs: AppendInput[], origin: Origin, options: { moving?: boolean } = NOT_MOVING): Message[] {
    if (inputs.length === 0) return [];
    // UIDs and UIDNEXT are 32-bit numbers (RFC 3501 §2.3.1.1): past them the mailbox needs a new UIDVALIDITY.
    if (mailbox.uidnext + inputs.length > MAX_UID) {
      throw new ServiceError(
        'LIMIT',
        `${JSON.stringify(mailbox.path)} has no UIDs left (UIDNEXT ${mailbox.uidnext}); give it a new UIDVALIDITY with renumbered UIDs first`,
      );
    }
    let bytes = 0;
    for (const input of inputs) bytes += sourceOctets(input.raw);
    // Before anything changes: a refused batch (MULTIAPPEND, COPY, MOVE) stores none of its messages.
    if (!options.moving) this.budget?.admit(inputs.length, bytes);
    const modseq = ++mailbox.highestModseq;
    const added = inputs.map((input) => {
      const flags = input.flags === undefined ? NO_FLAGS : normalizeFlags(input.flags);
      return new Message({
        uid: mailbox.uidnext++,
        modseq,
        flags: flags.size === 0 ? NO_FLAGS : flags,
        ownFlags: true,
        raw: input.raw,
        internaldate: input.internaldate,
        extra: input.extra ?? null,
        memo: input.memo ?? null,
      });
    });
    for (const m of added) {
      mailbox.messages.push(m);
      if (!m.seen) mailbox.unseen++;
      mailbox.noteKeywords(m.flags);
    }
    this.hold(mailbox, added.length, bytes);
    this.emit({ kind: 'append', mailbox, messages: added, origin });
    return added;
  }

  /** Messages with these UIDs; every UID must exist (NONEXISTENT otherwise). */
  requireMessages(mailbox: Mailbox, uids: readonly number[]): Message[] {
    return uids.map((uid) => {
      const m = mailbox.byUid(uid);
      if (!m) throw new ServiceError('NONEXISTENT', `No message with UID ${uid} in ${JSON.stringify(mailbox.path)}`);
      return m;
    });
  }

  /**
   * Changes flags. Only messages whose flags really change get a new MODSEQ
   * and appear in the change record; the result lists every given message.
   */
  setFlags(
    mailbox: Mailbox,
    messages: readonly Message[],
    flags: Iterable<string>,
    mode: FlagMode,
    origin: Origin,
    options: { silent?: boolean; unchangedSince?: number } = {},
  ): Message[] {
    const wanted = normalizeFlags(flags);
    const changed: Message[] = [];
    let modseq = 0;
    for (const m of messages) {
      const before = m.flags;
      let after: Set<string>;
      if (mode === 'set') after = new Set(wanted);
      else if (mode === 'add') after = new Set([...before, ...wanted]);
      else {
        after = new Set(before);
        for (const f of wanted) after.delete(f);
      }
      if (sameFlags(before, after)) continue;
      if (mode !== 'remove') mailbox.noteKeywords(after);
      if (modseq === 0) modseq = ++mailbox.highestModseq;
      const wasSeen = before.has('\\Seen');
      m.flags = after;
      m.modseq = modseq;
      const isSeen = after.has('\\Seen');
      if (wasSeen !== isSeen) mailbox.unseen += isSeen ? -1 : 1;
      changed.push(m);
    }
    if (changed.length) this.emit({ kind: 'flags', mailbox, messages: changed, origin, silent: options.silent ?? false });
    return changed;
  }

  /**
   * Gives messages a new MODSEQ without changing their flags, announced as a
   * flags change: for message state the store does not hold itself (Gmail
   * labels), so CONDSTORE clients see the message changed.
   */
  touch(mailbox: Mailbox, messages: readonly Message[], origin: Origin): void {
    const present = messages.filter((m) => mailbox.byUid(m.uid) === m);
    if (present.length === 0) return;
    const modseq = ++mailbox.highestModseq;
    for (const m of present) m.modseq = modseq;
    this.emit({ kind: 'flags', mailbox, messages: present, origin, silent: false });
  }

  /** Removes messages; returns the UIDs removed, in UID order. Unknown UIDs are ignored. */
  expunge(mailbox: Mailbox, uids: Iterable<number>, origin: Origin): number[] {
    // Found by binary search (the list is in UID order), each once however often it is named.
    const at: number[] = [];
    for (const uid of uids) {
      const i = mailbox.indexOfUid(uid);
      if (i >= 0) at.push(i);
    }
    if (at.length === 0) return [];
    at.sort((a, b) => a - b);
    const messages = mailbox.messages;
    const removed: number[] = [];
    const gone: Message[] = [];
    let unseenRemoved = 0;
    let bytesRemoved = 0;
    // A new list, as before (whoever holds the old one keeps it whole), made of the runs between the
    // gaps: native copies, not a push per message of a mailbox of 100,000 for one expunge.
    const runs: Message[][] = [];
    let from = 0;
    for (let j = 0; j < at.length; j++) {
      const i = at[j]!;
      if (j > 0 && i === at[j - 1]) continue;
      if (i > from) runs.push(messages.slice(from, i));
      from = i + 1;
      const m = messages[i]!;
      removed.push(m.uid);
      gone.push(m);
      bytesRemoved += m.rawLength;
      if (!m.seen) unseenRemoved++;
    }
    if (from < messages.length) runs.push(messages.slice(from));
    mailbox.messages = runs.length === 0 ? [] : runs.length === 1 ? runs[0]! : concatRuns(runs);
    mailbox.unseen -= unseenRemoved;
    this.hold(mailbox, -gone.length, -bytesRemoved);
    mailbox.highestModseq++;
    this.emit({ kind: 'expunge', mailbox, uids: removed, messages: gone, origin });
    return removed;
  }

  /** Copies messages (sharing their bytes); returns pairs of source and target UID. `moving`: see append. */
  copy(messages: readonly Message[], target: Mailbox, origin: Origin, options: { moving?: boolean } = NOT_MOVING): { uid: number; targetUid: number }[] {
    const ordered = [...messages].sort((a, b) => a.uid - b.uid);
    const added = this.append(
      target,
      ordered.map((m) => ({
        raw: m.raw,
        flags: m.flags,
        internaldate: m.internaldate,
        extra: m.extra ? structuredClone(m.extra) : null,
        memo: m.memo,
      })),
      origin,
      options,
    );
    return ordered.map((m, i) => ({ uid: m.uid, targetUid: added[i]!.uid }));
  }

  /** Moves messages: a copy, then an expunge in the source. */
  move(source: Mailbox, messages: readonly Message[], target: Mailbox, origin: Origin): { uid: number; targetUid: number }[] {
    if (source === target) throw new ServiceError('CANNOT', 'Source and target mailbox are the same');
    const pairs = this.copy(messages, target, origin, MOVING);
    this.expunge(
      source,
      pairs.map((p) => p.uid),
      origin,
    );
    return pairs;
  }

  /**
   * Gives a mailbox a new UIDVALIDITY and, optionally, new UIDs.
   * `keep` leaves UIDs alone, `renumber` makes them 1..n, `offset` adds
   * `offset`, `shuffle` permutes the existing UIDs with a seeded PRNG.
   */
  resetUidValidity(
    mailbox: Mailbox,
    options: { uidvalidity?: number; uids?: UidMode; offset?: number; seed?: number },
    origin: Origin,
  ): { uidvalidity: number; uidnext: number; uids: { uid: number; newUid: number }[] } {
    const mode = options.uids ?? 'keep';
    const oldUids = mailbox.messages.map((m) => m.uid);
    let newUids: number[];
    switch (mode) {
      case 'keep':
        newUids = oldUids;
        break;
      case 'renumber':
        newUids = oldUids.map((_, i) => i + 1);
        mailbox.uidnext = oldUids.length + 1;
        break;
      case 'offset': {
        const offset = options.offset ?? 0;
        if (oldUids.length && oldUids[0]! + offset < 1) {
          throw new ServiceError('INVALID', `offset ${offset} would make UID ${oldUids[0]} smaller than 1`);
        }
        if (mailbox.uidnext + offset < 1) throw new ServiceError('INVALID', `offset ${offset} would make UIDNEXT smaller than 1`);
        if (mailbox.uidnext + offset > MAX_UID) {
          throw new ServiceError('INVALID', `offset ${offset} would make UIDNEXT larger than ${MAX_UID}, the largest UID`);
        }
        newUids = oldUids.map((u) => u + offset);
        mailbox.uidnext += offset;
        break;
      }
      case 'shuffle': {
        const prng = new Prng(options.seed ?? 1);
        newUids = [...oldUids];
        for (let i = newUids.length - 1; i > 0; i--) {
          const j = prng.below(i + 1);
          [newUids[i], newUids[j]] = [newUids[j]!, newUids[i]!];
        }
        break;
      }
    }
    const uidvalidity = options.uidvalidity ?? mailbox.uidvalidity + 1;
    if (!Number.isInteger(uidvalidity) || uidvalidity < 1 || uidvalidity > 0xffffffff) {
      throw new ServiceError('INVALID', 'uidvalidity must be an integer from 1 to 4294967295');
    }
    const pairs = oldUids.map((uid, i) => ({ uid, newUid: newUids[i]! }));
    mailbox.messages.forEach((m, i) => (m.uid = newUids[i]!));
    if (mode === 'shuffle') mailbox.messages.sort((a, b) => a.uid - b.uid);
    mailbox.uidvalidity = uidvalidity;
    mailbox.recentFloor = mailbox.uidnext;
    this.nextUidValidity = Math.max(this.nextUidValidity, uidvalidity + 1);
    this.emit({ kind: 'uidvalidity', mailbox, origin });
    return { uidvalidity, uidnext: mailbox.uidnext, uids: pairs };
  }

  // ---------------------------------------------------------------- users

  addUser(name: string, record: UserRecord, origin: Origin): void {
    if (this.users.has(name)) throw new ServiceError('ALREADYEXISTS', `User ${JSON.stringify(name)} already exists`);
    this.users.set(name, record);
    this.emit({ kind: 'user', type: 'add', name, disconnect: false, origin });
  }

  updateUser(name: string, patch: Partial<UserRecord>, origin: Origin): void {
    const user = this.users.get(name);
    if (!user) throw new ServiceError('NONEXISTENT', `User ${JSON.stringify(name)} does not exist`);
    if (patch.password !== undefined) user.password = patch.password;
    if (patch.xoauth2 !== undefined) user.xoauth2 = patch.xoauth2;
    this.emit({ kind: 'user', type: 'update', name, disconnect: false, origin });
  }

  deleteUser(name: string, disconnect: boolean, origin: Origin): void {
    if (!this.users.delete(name)) throw new ServiceError('NONEXISTENT', `User ${JSON.stringify(name)} does not exist`);
    this.emit({ kind: 'user', type: 'delete', name, disconnect, origin });
  }
}

/** Canonical, deduplicated flags; `\Recent` and `\*` are dropped (never stored). */
export function normalizeFlags(flags: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const f of flags) {
    const c = canonicalFlag(f);
    if (isSettableFlag(c)) out.add(c);
  }
  return out;
}

function sameFlags(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const f of a) if (!b.has(f)) return false;
  return true;
}

/** The runs one after another, in one list (an expunge's survivors). */
function concatRuns(runs: readonly Message[][]): Message[] {
  // concat takes many arguments at once; past a few thousand runs, a list at a time stays within the call's limits.
  if (runs.length <= 1024) return ([] as Message[]).concat(...runs);
  const out: Message[] = [];
  for (const run of runs) for (let i = 0; i < run.length; i++) out.push(run[i]!);
  return out;
}

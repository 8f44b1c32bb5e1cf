/**
 * The label model of X-GM-EXT-1 on top of a plain store. One Gmail message
 * is a group of copies, one per mailbox it is in, that share the message
 * field `xGmMsgid` (COPY copies message fields, so a COPY adds a label to
 * the same message). The state keeps msgid → copies from the store's change
 * feed and makes the copies behave as one message:
 *
 * - flags are shared: a flag change on one copy is made on the others
 *   (except `\Deleted`, which stays per label, so deleting in one mailbox
 *   and expunging removes that label only, as Gmail does);
 * - a message new to a label mailbox gets a copy in All Mail (`\All`), when
 *   such a mailbox exists;
 * - a second copy in the same mailbox is dropped again (one message is in a
 *   label once);
 * - a copy arriving in Trash or Spam takes the message out of every other
 *   mailbox (All Mail included), as Gmail's "move to Trash"; a copy arriving
 *   in another label takes it out of Trash and Spam again;
 * - expunging the All Mail copy deletes the message from every label, but
 *   a MOVE out of All Mail (a copy and an expunge in one turn) only adds
 *   the target label: the message comes back to All Mail under a new UID;
 * - `\Flagged` is the `\Starred` label: the `\Flagged` special-use mailbox
 *   (Starred), when one exists, holds exactly the flagged messages (none
 *   that are in Trash or Spam);
 * - a label change gives every copy that stays a new MODSEQ (`store.touch`).
 *
 * Limits: copies are real messages of each mailbox (own UIDs, QUOTA counts
 * each); seeded copies keep the flags the fixture gives each; ids and
 * threads follow the order the server first sees messages in.
 *
 * The state's own store changes are marked (`depth`) and cause no further
 * cascades. Messages without a msgid get one when first seen (setup, reset,
 * a new message); it is written to the message's fields, so snapshots keep
 * it and a fixture may give it (and `xGmThrid`) itself.
 */
import { ServiceError } from '../../errors.js';
import type { Server } from '../../server.js';
import type { StoreChange } from '../../store/changes.js';
import { getField, setField } from '../../store/fields.js';
import { Mailbox } from '../../store/mailbox.js';
import type { Message } from '../../store/message.js';
import type { FlagMode } from '../../store/store.js';
import { canonicalLabel, findRoles, labelOf, sortLabels, type Roles } from './labels.js';
import { threadKeys, Threads } from './threads.js';

export const MSGID_KEY = 'xGmMsgid';
export const THRID_KEY = 'xGmThrid';

/** The first X-GM-MSGID given out: Gmail's ids are 64-bit numbers of this size. */
const FIRST_ID = 1_700_000_000_000_000_000n;
const MAX_ID = 0xffff_ffff_ffff_ffffn;

/** One mailbox's copy of a Gmail message. */
export interface Copy {
  mailbox: Mailbox;
  message: Message;
}

/** A message's Gmail identity and labels, as the control API and REST answer it. */
export interface GmailMessageInfo {
  msgid: string;
  thrid: string;
  /** Every label of the message (the mailbox it was named by included), Gmail's order. */
  labels: string[];
  /** Where its copies are. */
  copies: { path: string; uid: number }[];
}

/** The Gmail mailboxes `gmailLayout()` creates, with their special use. */
export const GMAIL_LAYOUT: readonly { path: string; use: string }[] = [
  { path: '[Gmail]/All Mail', use: '\\All' },
  { path: '[Gmail]/Drafts', use: '\\Drafts' },
  { path: '[Gmail]/Important', use: '\\Important' },
  { path: '[Gmail]/Sent Mail', use: '\\Sent' },
  { path: '[Gmail]/Spam', use: '\\Junk' },
  { path: '[Gmail]/Starred', use: '\\Flagged' },
  { path: '[Gmail]/Trash', use: '\\Trash' },
];

/** The control API: `server.extension('X-GM-EXT-1')`. */
export interface GmailApi {
  /** X-GM-MSGID, X-GM-THRID, labels and copies of the message `uid` of `path`. */
  getMessage(path: string, uid: number): GmailMessageInfo;
  /** Every label of a message (the mailbox's own included). */
  getLabels(path: string, uid: number): string[];
  /**
   * Sets (`set`, default: exactly these labels, the mailbox's own included),
   * adds or removes labels, as STORE X-GM-LABELS does; a user label without
   * a mailbox gets one. Sessions see the copies come and go (EXISTS,
   * EXPUNGE) and the FETCH of `\Starred` (`\Flagged`).
   */
  setLabels(path: string, uid: number, input: { labels: string[]; mode?: FlagMode }): GmailMessageInfo;
  /**
   * Creates the missing `[Gmail]/...` mailboxes (All Mail, Drafts, Important,
   * Sent Mail, Spam, Starred, Trash, with their special use; `[Gmail]` is
   * `\Noselect`), puts every message that is not in Trash or Spam into All
   * Mail and every flagged one into Starred. Returns the paths it created.
   */
  gmailLayout(): { created: string[] };
}

/** The decimal form of a 64-bit id given in storage or a command, or null when it is none. */
export function parseId(value: unknown): string | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? String(value) : null;
  if (typeof value !== 'string' || !/^[0-9]{1,20}$/.test(value)) return null;
  const n = BigInt(value);
  return n > 0n && n <= MAX_ID ? n.toString() : null;
}

export class GmailState implements GmailApi {
  private readonly groups = new Map<string, Copy[]>();
  private readonly threads = new Threads();
  private next = FIRST_ID;
  /** >0 while the state itself changes the store: those changes only update the index. */
  private depth = 0;
  /**
   * Messages that got a new label in this turn of the event loop. An expunge
   * from All Mail of one of them is the second half of a MOVE (a copy, then
   * an expunge, in one go): the message moves into the label and stays in
   * All Mail, rather than being deleted everywhere.
   */
  private readonly justLabelled = new Set<string>();

  constructor(private readonly server: Server) {
    this.rebuild();
  }

  private get store() {
    return this.server.store;
  }

  // ------------------------------------------------------------ index

  /** Indexes every message again (setup, reset): ids from the fields, new ones for messages without. */
  private rebuild(): void {
    this.groups.clear();
    this.threads.clear();
    this.next = FIRST_ID;
    const mailboxes = this.store.list();
    // Ids given in storage first, so a new id never takes one a later mailbox already has.
    for (const mailbox of mailboxes) {
      for (const m of mailbox.messages) {
        const id = parseId(getField(m, MSGID_KEY));
        if (id !== null && BigInt(id) >= this.next) this.next = BigInt(id) + 1n;
      }
    }
    for (const mailbox of mailboxes) for (const m of mailbox.messages) this.index(mailbox, m);
  }

  /** Adds a copy to its group, giving the message a msgid and a thread id when it has none. */
  private index(mailbox: Mailbox, message: Message): string {
    let id = parseId(getField(message, MSGID_KEY));
    if (id === null) {
      id = (this.next++).toString();
      setField(message, MSGID_KEY, id);
    } else if (BigInt(id) >= this.next) this.next = BigInt(id) + 1n;
    let group = this.groups.get(id);
    if (!group) this.groups.set(id, (group = []));
    group.push({ mailbox, message });
    let thrid = parseId(getField(message, THRID_KEY));
    if (group.length === 1 || thrid === null) {
      const keys = threadKeys(message);
      thrid ??= this.threads.threadOf(keys, id);
      this.threads.note(keys, thrid);
      setField(message, THRID_KEY, thrid);
    }
    return id;
  }

  private unindex(mailbox: Mailbox, message: Message): void {
    const id = msgidOf(message);
    const group = id === null ? undefined : this.groups.get(id);
    if (!group) return;
    const at = group.findIndex((c) => c.message === message && c.mailbox === mailbox);
    if (at >= 0) group.splice(at, 1);
    if (group.length === 0) this.groups.delete(id!);
  }

  /** The copies of a message (itself included). */
  copies(message: Message): readonly Copy[] {
    const id = msgidOf(message);
    return (id === null ? undefined : this.groups.get(id)) ?? [];
  }

  /** Copies of every message with this msgid. */
  byMsgid(msgid: string): readonly Copy[] {
    return this.groups.get(msgid) ?? [];
  }

  // ------------------------------------------------------------ labels

  /** The labels of a message; `viewed` (the mailbox it is seen in) is left out, as Gmail's FETCH does. */
  labels(message: Message, viewed: Mailbox | null): string[] {
    const out: string[] = [];
    for (const c of this.copies(message)) {
      if (c.mailbox === viewed) continue;
      const label = labelOf(c.mailbox);
      if (label !== null) out.push(label);
    }
    if (message.flags.has('\\Flagged')) out.push('\\Starred');
    return sortLabels(out);
  }

  /**
   * Applies a label change to the message `message` seen in `viewed` (null:
   * the control API, whose `set` covers every label). Throws ServiceError.
   */
  changeLabels(
    message: Message,
    viewed: Mailbox | null,
    given: readonly string[],
    mode: FlagMode,
    origin: number | null,
    /** Asks a session's rights (ACL): `i` to add a label's mailbox, `e` to leave one; null for the control API. */
    may: ((mailbox: Mailbox, right: 'i' | 'e') => boolean) | null = null,
  ): void {
    const roles = findRoles(this.store);
    const before = new Set(this.copies(message).map((c) => c.message));
    const wanted = new Set(given.map(canonicalLabel).filter((l) => l !== '\\All'));
    let add: string[] = [];
    let remove: string[] = [];
    if (mode === 'add') add = [...wanted];
    else if (mode === 'remove') remove = [...wanted];
    else {
      const current = this.labels(message, viewed);
      const currentKeys = new Set(current.map((l) => this.labelKey(l, roles)));
      const wantedKeys = new Set([...wanted].map((l) => this.labelKey(l, roles)));
      remove = current.filter((l) => !wantedKeys.has(this.labelKey(l, roles)));
      add = [...wanted].filter((l) => !currentKeys.has(this.labelKey(l, roles)));
    }
    // Resolve everything first: an unknown system label refuses the whole change.
    const removals = remove.map((l) => this.target(l, roles, false));
    const additions = add.map((l) => this.target(l, roles, true));
    if (may) {
      for (const t of additions) if (t instanceof Mailbox && !may(t, 'i')) throw new ServiceError('NOPERM', `Permission denied to add the label of ${t.path}`);
      for (const t of removals) if (t instanceof Mailbox && !may(t, 'e')) throw new ServiceError('NOPERM', `Permission denied to remove the label of ${t.path}`);
    }
    additions.forEach((t, i) => {
      if (t === 'starred') {
        const m = this.live(message);
        this.store.setFlags(this.home(m), [m], ['\\Flagged'], 'add', origin);
      } else if (t !== null) this.addCopy(this.live(message), t ?? this.createLabel(add[i]!, origin), origin);
    });
    for (const t of removals) {
      if (t === 'starred') {
        const m = this.liveOrNull(message);
        if (m) this.store.setFlags(this.home(m), [m], ['\\Flagged'], 'remove', origin);
      } else if (t) {
        const copy = this.copies(message).find((c) => c.mailbox === t);
        if (copy) this.store.expunge(t, [copy.message.uid], origin);
      }
    }
    // Its labels changed wherever it is: every copy gets a new MODSEQ (as Gmail), so
    // CHANGEDSINCE finds it. Copies made just now already have one.
    if (additions.length + removals.length > 0) {
      this.cascade(() => {
        for (const c of [...this.copies(message)]) if (before.has(c.message)) this.store.touch(c.mailbox, [c.message], origin);
      });
    }
  }

  /** A key that makes two spellings of one label equal (system labels by their mailbox). */
  private labelKey(label: string, roles: Roles): string {
    const l = canonicalLabel(label);
    if (l === '\\Starred') return 'starred';
    if (l.startsWith('\\')) return `path:${roles.system.get(l.toLowerCase())?.path ?? l}`;
    return `path:${this.store.get(l)?.path ?? l}`;
  }

  /**
   * The mailbox a label names, `starred` for `\Starred`, undefined for a user
   * label that has no mailbox yet (created when adding), null for nothing to do.
   */
  private target(label: string, roles: Roles, adding: boolean): Mailbox | 'starred' | null | undefined {
    const l = canonicalLabel(label);
    if (l === '\\Starred') return 'starred';
    if (l.startsWith('\\')) {
      const mailbox = roles.system.get(l.toLowerCase());
      if (!mailbox) throw new ServiceError('NONEXISTENT', `No mailbox has the label ${l} (give one its special use, or call gmailLayout())`);
      return mailbox;
    }
    const mailbox = this.store.get(l);
    if (mailbox) return labelOf(mailbox) === null ? null : mailbox;
    return adding ? undefined : null;
  }

  /** Gmail creates a user label on first use. */
  private createLabel(label: string, origin: number | null): Mailbox {
    return this.store.createMailbox(label, origin);
  }

  /** A copy of the message that still exists (the given one may have been expunged meanwhile). */
  private liveOrNull(message: Message): Message | null {
    return this.copies(message)[0]?.message ?? null;
  }

  private live(message: Message): Message {
    const m = this.liveOrNull(message);
    if (!m) throw new ServiceError('NONEXISTENT', 'The message no longer exists');
    return m;
  }

  private home(message: Message): Mailbox {
    return this.copies(message).find((c) => c.message === message)!.mailbox;
  }

  /** Puts the message into `mailbox` (once), with the shared flags. */
  private addCopy(message: Message, mailbox: Mailbox, origin: number | null): void {
    if (this.copies(message).some((c) => c.mailbox === mailbox)) return;
    const flags = [...message.flags].filter((f) => f !== '\\Deleted');
    this.store.append(
      mailbox,
      [{ raw: message.raw, flags, internaldate: message.internaldate, extra: message.extra ? structuredClone(message.extra) : null }],
      origin,
    );
  }

  // ------------------------------------------------------------ the change feed

  onChange(change: StoreChange): void {
    switch (change.kind) {
      case 'reset':
        this.rebuild();
        return;
      case 'append':
        for (const m of change.messages) this.index(change.mailbox, m);
        if (this.depth === 0) this.cascade(() => this.appended(change.mailbox, change.messages, change.origin));
        return;
      case 'expunge':
        for (const m of change.messages) this.unindex(change.mailbox, m);
        if (this.depth === 0) this.cascade(() => this.expunged(change.mailbox, change.messages, change.origin));
        return;
      case 'flags':
        if (this.depth === 0) this.cascade(() => this.flagged(change.mailbox, change.messages, change.origin));
        return;
      case 'mailbox':
        if (change.type === 'delete' && change.mailbox) for (const m of change.mailbox.messages) this.unindex(change.mailbox, m);
        return;
      default:
        return;
    }
  }

  /** Runs the state's own store changes, marked so they start no cascade of their own. */
  private cascade(run: () => void): void {
    this.depth++;
    try {
      run();
    } finally {
      this.depth--;
    }
  }

  private appended(mailbox: Mailbox, messages: readonly Message[], origin: number | null): void {
    const roles = findRoles(this.store);
    const binned = mailbox === roles.trash || mailbox === roles.junk;
    if (mailbox !== roles.all && !binned) this.noteLabelled(messages);
    for (const m of messages) {
      const others = this.copies(m).filter((c) => c.message !== m);
      if (others.some((c) => c.mailbox === mailbox)) {
        // Already in this label: the new copy goes again.
        this.store.expunge(mailbox, [m.uid], origin);
        continue;
      }
      if (binned) {
        this.expungeCopies(others, origin);
        continue;
      }
      // A label on a message in Trash or Spam takes it out of there (Gmail's "move to Inbox" from Trash).
      const restored = others.filter((c) => c.mailbox === roles.trash || c.mailbox === roles.junk);
      if (restored.length > 0) this.expungeCopies(restored, origin);
      const kept = restored.length > 0 ? this.copies(m).filter((c) => c.message !== m) : others;
      if (kept.length > 0) this.syncFlags(m, kept, origin);
      if (mailbox === roles.starred && !m.flags.has('\\Flagged')) {
        this.store.setFlags(mailbox, [m], ['\\Flagged'], 'add', origin);
        this.syncFlags(m, kept, origin);
      }
      if (roles.all && mailbox !== roles.all) this.addCopy(m, roles.all, origin);
      if (roles.starred && mailbox !== roles.starred && m.flags.has('\\Flagged')) this.addCopy(m, roles.starred, origin);
    }
  }

  private expunged(mailbox: Mailbox, messages: readonly Message[], origin: number | null): void {
    const roles = findRoles(this.store);
    for (const m of messages) {
      const others = this.copies(m);
      if (mailbox === roles.all) {
        const id = msgidOf(m);
        // MOVE out of All Mail: the message keeps its place there (under a new UID).
        if (id !== null && this.justLabelled.has(id) && others.length > 0) this.addCopy(others[0]!.message, mailbox, origin);
        else this.expungeCopies(others, origin);
      }
      else if (mailbox === roles.starred && others.length > 0 && others[0]!.message.flags.has('\\Flagged')) {
        // Leaving Starred is unstarring.
        this.store.setFlags(others[0]!.mailbox, [others[0]!.message], ['\\Flagged'], 'remove', origin);
        this.syncFlags(others[0]!.message, others.slice(1), origin);
      }
    }
  }

  private flagged(mailbox: Mailbox, messages: readonly Message[], origin: number | null): void {
    const roles = findRoles(this.store);
    for (const m of messages) {
      const others = this.copies(m).filter((c) => c.message !== m);
      this.syncFlags(m, others, origin);
      // A message in Trash or Spam is in no other mailbox, Starred included.
      if (!roles.starred || mailbox === roles.trash || mailbox === roles.junk || others.some((c) => c.mailbox === roles.trash || c.mailbox === roles.junk)) continue;
      const starredCopy = others.find((c) => c.mailbox === roles.starred) ?? (mailbox === roles.starred ? { mailbox, message: m } : undefined);
      if (m.flags.has('\\Flagged') && !starredCopy) this.addCopy(m, roles.starred, origin);
      else if (!m.flags.has('\\Flagged') && starredCopy) this.store.expunge(roles.starred, [starredCopy.message.uid], origin);
    }
  }

  private noteLabelled(messages: readonly Message[]): void {
    if (this.justLabelled.size === 0) queueMicrotask(() => this.justLabelled.clear());
    for (const m of messages) {
      const id = msgidOf(m);
      if (id !== null) this.justLabelled.add(id);
    }
  }

  /** Gives the other copies the flags of `source` (each keeps its own `\Deleted`). */
  private syncFlags(source: Message, others: readonly Copy[], origin: number | null): void {
    const shared = [...source.flags].filter((f) => f !== '\\Deleted');
    for (const c of others) {
      // Only copies still in their mailbox: the store keeps its counters for those.
      if (c.mailbox.byUid(c.message.uid) !== c.message) continue;
      const wanted = c.message.flags.has('\\Deleted') ? [...shared, '\\Deleted'] : shared;
      this.store.setFlags(c.mailbox, [c.message], wanted, 'set', origin);
    }
  }

  private expungeCopies(copies: readonly Copy[], origin: number | null): void {
    const byMailbox = new Map<Mailbox, number[]>();
    for (const c of copies) {
      const uids = byMailbox.get(c.mailbox) ?? [];
      uids.push(c.message.uid);
      byMailbox.set(c.mailbox, uids);
    }
    for (const [mailbox, uids] of byMailbox) this.store.expunge(mailbox, uids, origin);
  }

  // ------------------------------------------------------------ control API

  private messageAt(path: string, uid: number): { mailbox: Mailbox; message: Message } {
    const mailbox = this.store.require(path);
    if (!Number.isSafeInteger(uid) || uid < 1) throw new ServiceError('INVALID', 'uid: expected a UID (an integer >= 1)');
    const [message] = this.store.requireMessages(mailbox, [uid]);
    return { mailbox, message: message! };
  }

  private info(message: Message): GmailMessageInfo {
    return {
      msgid: msgidOf(message) ?? '',
      thrid: thridOf(message) ?? '',
      labels: this.labels(message, null),
      copies: this.copies(message)
        .map((c) => ({ path: c.mailbox.path, uid: c.message.uid }))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.uid - b.uid)),
    };
  }

  getMessage(path: string, uid: number): GmailMessageInfo {
    return this.info(this.messageAt(path, uid).message);
  }

  getLabels(path: string, uid: number): string[] {
    return this.labels(this.messageAt(path, uid).message, null);
  }

  setLabels(path: string, uid: number, input: { labels: string[]; mode?: FlagMode }): GmailMessageInfo {
    const { message } = this.messageAt(path, uid);
    if (input === null || typeof input !== 'object' || !Array.isArray(input.labels) || input.labels.some((l) => typeof l !== 'string' || l === '')) {
      throw new ServiceError('INVALID', 'labels: expected an array of label names');
    }
    const mode = input.mode ?? 'set';
    if (mode !== 'set' && mode !== 'add' && mode !== 'remove') throw new ServiceError('INVALID', 'mode: expected set, add or remove');
    this.changeLabels(message, null, input.labels, mode, null);
    const left = this.liveOrNull(message);
    return left ? this.info(left) : { msgid: msgidOf(message) ?? '', thrid: thridOf(message) ?? '', labels: [], copies: [] };
  }

  gmailLayout(): { created: string[] } {
    const created: string[] = [];
    const present = (use: string): boolean => this.store.list().some((m) => m.specialUse.some((a) => a.toLowerCase() === use.toLowerCase()));
    this.cascade(() => {
      for (const { path, use } of GMAIL_LAYOUT) {
        if (present(use) || this.store.has(path)) continue;
        const parentMissing = !this.store.has('[Gmail]');
        this.store.createMailbox(path, null, { specialUse: [use] });
        if (parentMissing) {
          this.store.get('[Gmail]')!.attributes.push('\\Noselect');
          created.push('[Gmail]');
        }
        created.push(path);
      }
      const after = findRoles(this.store);
      for (const group of [...this.groups.values()]) {
        const first = group[0];
        if (!first) continue;
        const binned = group.some((c) => c.mailbox === after.trash || c.mailbox === after.junk);
        if (after.all && !binned) this.addCopy(first.message, after.all, null);
        if (after.starred && !binned && first.message.flags.has('\\Flagged')) this.addCopy(first.message, after.starred, null);
      }
    });
    return { created };
  }
}

export function msgidOf(message: Message): string | null {
  return parseId(getField(message, MSGID_KEY));
}

export function thridOf(message: Message): string | null {
  return parseId(getField(message, THRID_KEY));
}

import { DEFAULT_PERMANENT_FLAGS } from '../store/flags.js';
import type { Mailbox } from '../store/mailbox.js';
import type { Message } from '../store/message.js';
import type { UpdateShape } from './protocol.js';
import type { ImapValue } from './wire/values.js';
import { atom, NO_RESPONSES } from './wire/values.js';

/** An untagged response waiting to go out, as its values. */
export type Untagged = ImapValue[];

/** The system flags every mailbox defines, in the order FLAGS lists them. */
const SYSTEM_FLAGS = ['\\Answered', '\\Flagged', '\\Deleted', '\\Seen', '\\Draft'];

/** What a view reads while it owes no expunge or flag change. */
const NO_UIDS: ReadonlySet<number> = new Set();
const NO_FLAG_CHANGES: ReadonlyMap<number, Message> = new Map();
const NO_KEYWORDS: ReadonlySet<string> = new Set();
/** Most expunges heard at once that close the view up by one splice each (beyond: one pass over the rest). */
const SPLICE_MAX = 16;
/** flagsResponses() of a mailbox without keywords, its own flag list or a missing right (read-write, read-only). */
const PLAIN_FLAGS: Untagged[] = [
  [atom('FLAGS'), SYSTEM_FLAGS.map((f) => atom(f))],
  [atom('OK'), atom(`[PERMANENTFLAGS (${[...DEFAULT_PERMANENT_FLAGS, '\\*'].join(' ')})]`), atom('Flags permitted.')],
];
const PLAIN_FLAGS_READ_ONLY: Untagged[] = [PLAIN_FLAGS[0]!, [atom('OK'), atom('[PERMANENTFLAGS ()]'), atom('Read-only mailbox.')]];
const NO_MESSAGES: Message[] = Object.freeze([]) as unknown as Message[];
/** A drain with nothing owed (shared; callers only iterate it). */
const NO_LINES_YET = NO_RESPONSES as unknown as (Untagged | string | Buffer)[];
/** The list `drain` returns when it owes the counts line alone: shared, valid until the next drain (its caller reads it at once). */
const ONE_LINE: (Untagged | string | Buffer)[] = [''];

/**
 * One session's view of its selected mailbox. Sequence numbers are this
 * view's, not the store's: a message expunged elsewhere keeps its number
 * (and its data) until the session may be told (RFC 3501 §7.4.1, RFC 2180).
 */
export class SelectedMailbox {
  /** Messages in this session's sequence order. */
  view: Message[];
  /** UIDs this session sees as \Recent. */
  get recent(): ReadonlySet<number> {
    return this.recentSet ?? NO_UIDS;
  }
  /** Made with the first \Recent message: a session sees few, and an empty Set costs ~150 bytes. */
  private recentSet: Set<number> | null = null;

  /** Forgets \Recent (a session that stopped seeing it: IMAP4rev2 enabled). */
  forgetRecent(): void {
    this.recentSet = null;
  }
  /** New messages not yet told; NO_MESSAGES (shared, never written) while there are none. */
  private pendingNew: Message[] = NO_MESSAGES;
  /**
   * True while `pendingNew` is the change's own list (shared by every
   * session that heard of it, never changed): copied before a second change
   * adds to it, so the usual single append costs an idling session no list.
   */
  private pendingNewShared = false;
  /**
   * The pending and held expunges and flag changes are made when first
   * needed, and dropped when drained: a Set costs ~150 bytes even empty,
   * and idle sessions are many (issue 37's budget per session).
   */
  private pendingExpungeSet: Set<number> | null = null;
  /**
   * Expunged elsewhere while the session holds others' updates back (NOTIFY
   * without a selected filter): gone like `pendingExpunge`, but not drained
   * until `releaseHeld`.
   */
  private heldExpungeSet: Set<number> | null = null;
  private pendingFlagsMap: Map<number, Message> | null = null;

  private get pendingExpunge(): ReadonlySet<number> {
    return this.pendingExpungeSet ?? NO_UIDS;
  }

  private get heldExpunge(): ReadonlySet<number> {
    return this.heldExpungeSet ?? NO_UIDS;
  }

  private get pendingFlags(): ReadonlyMap<number, Message> {
    return this.pendingFlagsMap ?? NO_FLAG_CHANGES;
  }
  /**
   * Keywords this session has been told of in FLAGS, in the order it heard
   * of them. A keyword never leaves during a selection: a client may keep
   * offering it (as Dovecot does).
   */
  get keywords(): ReadonlySet<string> {
    return this.keywordSet ?? NO_KEYWORDS;
  }
  /** Made with the first keyword: most mailboxes have none. */
  private keywordSet: Set<string> | null = null;
  /**
   * The flags the session's user may change here (RFC 4314 §5.1.1: PERMANENTFLAGS
   * reflects the user's rights), as SELECT found them through the access point;
   * null when every flag may be changed. `\*` follows the keywords' right.
   */
  changeableFlag: ((flag: string) => boolean) | null = null;
  /** How the session's updates are worded (extension `updates` points); null: as RFC 3501. */
  shape: UpdateShape | null = null;

  constructor(
    readonly mailbox: Mailbox,
    readonly readOnly: boolean,
  ) {
    this.view = [...mailbox.messages];
    if (mailbox.keywords.size > 0) this.keywordSet = new Set(mailbox.keywords);
    const floor = mailbox.recentFloor;
    for (let i = this.lowerBound(floor); i < this.view.length; i++) (this.recentSet ??= new Set()).add(this.view[i]!.uid);
    // SELECT claims \Recent; EXAMINE only looks (RFC 3501 §6.3.2).
    if (!readOnly) mailbox.recentFloor = mailbox.uidnext;
  }

  get exists(): number {
    return this.view.length;
  }

  /** Index of the first message in the view whose UID is >= uid. */
  lowerBound(uid: number): number {
    let lo = 0;
    let hi = this.view.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.view[mid]!.uid < uid) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Sequence number of a UID in this view, or 0. */
  seqOfUid(uid: number): number {
    const i = this.lowerBound(uid);
    return i < this.view.length && this.view[i]!.uid === uid ? i + 1 : 0;
  }

  /** True when some message was expunged elsewhere and the session has not been told yet. */
  get hasExpungesPending(): boolean {
    return this.pendingExpunge.size > 0 || this.heldExpunge.size > 0;
  }

  /** True when the message was expunged elsewhere and the session has not been told yet. */
  isExpungedPending(uid: number): boolean {
    return this.pendingExpunge.has(uid) || this.heldExpunge.has(uid);
  }

  /** UIDs expunged elsewhere that the session has not been told of yet. */
  get pendingExpunges(): ReadonlySet<number> {
    return this.pendingExpunge;
  }

  get hasPending(): boolean {
    return this.pendingNew.length > 0 || this.pendingExpunge.size > 0 || this.pendingFlags.size > 0;
  }

  noteAppend(messages: Message[]): void {
    // The change's list itself at first (see pendingNewShared); a copy only once a second change adds to it.
    if (this.pendingNew === NO_MESSAGES) {
      this.pendingNew = messages;
      this.pendingNewShared = true;
      return;
    }
    if (this.pendingNewShared) {
      this.pendingNew = this.pendingNew.slice();
      this.pendingNewShared = false;
    }
    for (const m of messages) this.pendingNew.push(m);
  }

  noteExpunge(uids: number[], held = false): void {
    for (const uid of uids) {
      (held ? (this.heldExpungeSet ??= new Set()) : (this.pendingExpungeSet ??= new Set())).add(uid);
      this.pendingFlagsMap?.delete(uid);
    }
  }

  /** Expunges held back (not yet pending). */
  get heldExpunges(): number {
    return this.heldExpunge.size;
  }

  /** Held expunges become pending: the next drain that may send EXPUNGE reports them. */
  releaseHeld(): void {
    const held = this.heldExpungeSet;
    if (held === null) return;
    const pending = (this.pendingExpungeSet ??= new Set());
    for (const uid of held) pending.add(uid);
    this.heldExpungeSet = null;
  }

  noteFlags(messages: Message[]): void {
    for (const m of messages) if (!this.isExpungedPending(m.uid)) (this.pendingFlagsMap ??= new Map()).set(m.uid, m);
  }

  /** True when a flag update of the message is still owed to the client. */
  hasFlagNotice(uid: number): boolean {
    return this.pendingFlags.size > 0 && this.pendingFlags.has(uid);
  }

  /** Forgets a pending flag notice (the session's own STORE answered it already). */
  dropFlagNotice(uid: number): void {
    this.pendingFlagsMap?.delete(uid);
  }

  /**
   * The untagged responses owed to the client, applied to the view:
   * EXPUNGE (unless held), EXISTS and RECENT, then FETCH FLAGS. A string
   * or Buffer is ready-made response text. The list may be shared: read it
   * before anything else runs, and never keep or change it.
   */
  /**
   * Applies the pending expunges to the view and returns their responses
   * as text. Apart from `drain` so that its closures' context is made only
   * when there are expunges, not for every new message of every idler.
   */
  private drainExpunges(): string {
    const pending = this.pendingExpunge;
    const view = this.view;
    // The view is in UID order: each expunged message is found by a binary search (k lookups in a
    // mailbox of n, not a set test per message).
    const at: number[] = [];
    for (const uid of pending) {
      const i = this.lowerBound(uid);
      if (i < view.length && view[i]!.uid === uid) at.push(i);
    }
    if (at.length > 1) at.sort((a, b) => a - b);
    const gone: number[] = new Array<number>(at.length);
    const goneUids: number[] = new Array<number>(at.length);
    for (let j = 0; j < at.length; j++) {
      const uid = view[at[j]!]!.uid;
      gone[j] = at[j]! + 1;
      goneUids[j] = uid;
      this.recentSet?.delete(uid);
    }
    // The view is the session's own (drain appends to it too): closed up in place. A few gaps are a
    // native move each, highest first; many, one pass that moves each survivor after the first gap once.
    if (at.length <= SPLICE_MAX) {
      for (let j = at.length - 1; j >= 0; j--) view.splice(at[j]!, 1);
    } else if (at.length > 0) {
      let w = at[0]!;
      for (let j = 0; j < at.length; j++) {
        const end = j + 1 < at.length ? at[j + 1]! : view.length;
        for (let r = at[j]! + 1; r < end; r++) view[w++] = view[r]!;
      }
      view.length = w;
    }
    // An extension may word them otherwise (VANISHED); else highest first, so each
    // number is still valid when the client reads it. Built as text: an expunge of
    // thousands of messages is one string.
    let text = goneUids.length ? this.shape?.expunges(goneUids) : '';
    if (text === undefined) {
      text = '';
      for (let i = gone.length - 1; i >= 0; i--) text += `* ${gone[i]} EXPUNGE\r\n`;
    }
    // Expunged before the session heard of them: drop from the new list too.
    if (this.pendingNew.length > 0) {
      this.pendingNew = this.pendingNew.filter((m) => !pending.has(m.uid));
      this.pendingNewShared = false;
    }
    this.pendingExpungeSet = null;
    return text;
  }

  drain(allowExpunge: boolean): (Untagged | string | Buffer)[] {
    // Made with its first line, to size (the usual drain is one counts line, for each of many idle sessions).
    let out: (Untagged | string | Buffer)[] | null = null;
    // Keywords that arrive with new messages or flag changes are announced
    // before the EXISTS or FETCH that carries them (RFC 3501 §7.2.6).
    if (this.learnKeywords()) out = [...this.flagsResponses()];
    if (allowExpunge && this.pendingExpunge.size) {
      const text = this.drainExpunges();
      if (text) (out ??= []).push(text);
    }
    if (this.pendingNew.length) {
      const first = this.view.length + 1;
      const withRecent = this.shape?.recent !== false;
      const fresh = this.pendingNew;
      for (let i = 0; i < fresh.length; i++) {
        const m = fresh[i]!;
        this.view.push(m);
        // The first session to hear of a new message sees it as \Recent.
        if (m.uid >= this.mailbox.recentFloor) {
          // A session without \Recent (IMAP4rev2) still takes it from the others, as the first to hear.
          if (withRecent) (this.recentSet ??= new Set()).add(m.uid);
          if (!this.readOnly) this.mailbox.recentFloor = m.uid + 1;
        }
      }
      const added = this.pendingNew;
      this.pendingNew = NO_MESSAGES;
      this.pendingNewShared = false;
      const counts = countsLine(this.view.length, withRecent ? this.recent.size : -1);
      // What an extension sends about each new message (NOTIFY's MessageNew fetch attributes).
      const responses = this.shape ? this.shape.newMessages(first, added) : NO_LINES_YET;
      if (out === null && responses.length === 0 && this.pendingFlags.size === 0) {
        // The usual drain of an idler: the counts line alone, in the shared list (no list per session).
        ONE_LINE[0] = counts;
        return ONE_LINE;
      }
      if (out === null) out = [counts];
      else out.push(counts);
      for (let i = 0; i < responses.length; i++) out.push([...responses[i]!]);
    }
    if (this.pendingFlags.size) {
      const seqs: [number, Message][] = [];
      for (const [uid, m] of this.pendingFlags) {
        const seq = this.seqOfUid(uid);
        if (seq) seqs.push([seq, m]);
      }
      seqs.sort((a, b) => a[0] - b[0]);
      for (const [seq, m] of seqs) (out ??= []).push([seq, atom('FETCH'), this.flagItems(m, false)]);
      this.pendingFlagsMap = null;
    }
    return out ?? NO_LINES_YET;
  }

  /**
   * Takes in the keywords the mailbox has gained since this session was
   * last told; true when there was any, and FLAGS must be sent again before
   * any response that shows flags. O(1) when nothing changed: the mailbox's
   * keyword list only grows.
   */
  learnKeywords(): boolean {
    if (this.mailbox.keywords.size === this.keywords.size) return false;
    const told = (this.keywordSet ??= new Set());
    for (const k of this.mailbox.keywords) told.add(k);
    return true;
  }

  /** `* FLAGS (...)` and `* OK [PERMANENTFLAGS (...)]` as this session knows them (SELECT, and on a new keyword). */
  flagsResponses(): Untagged[] {
    // Every SELECT asks; most mailboxes have no keyword, no flag list of their own and no right missing:
    // their two lines are the same for every session (the values are only read).
    if (this.keywordSet === null && this.changeableFlag === null && this.mailbox.permanentFlags === null) {
      return this.readOnly ? PLAIN_FLAGS_READ_ONLY : PLAIN_FLAGS;
    }
    const flags = [...SYSTEM_FLAGS, ...this.keywords].map((f) => atom(f));
    let permanent = '';
    if (!this.readOnly) {
      const list = new Set([...(this.mailbox.permanentFlags ?? DEFAULT_PERMANENT_FLAGS), ...this.keywords, '\\*']);
      const may = this.changeableFlag;
      permanent = [...list].filter((f) => may === null || may(f === '\\*' ? '$keyword' : f)).join(' ');
    }
    return [
      [atom('FLAGS'), flags],
      [atom('OK'), atom(`[PERMANENTFLAGS (${permanent})]`), atom(this.readOnly ? 'Read-only mailbox.' : 'Flags permitted.')],
    ];
  }

  /**
   * `FLAGS (...)` of a message as this session sees it, with `UID n` first
   * when asked or when the update shape wants it, and the shape's extra items.
   */
  flagItems(m: Message, withUid: boolean): ImapValue[] {
    const items: ImapValue[] = [];
    const extra = this.shape?.flagFetch(m);
    if (withUid || extra?.uid) items.push(atom('UID'), m.uid);
    items.push(atom('FLAGS'), this.flagList(m));
    if (extra) items.push(...extra.items);
    return items;
  }

  /** True when the message is \Recent for this session and the session has \Recent at all (not IMAP4rev2). */
  isRecent(uid: number): boolean {
    return this.recent.has(uid) && this.shape?.recent !== false;
  }

  /** False when the session has no \Recent (IMAP4rev2): asked once per FETCH, not per message. */
  get showsRecent(): boolean {
    return this.shape?.recent !== false;
  }

  flagList(m: Message): ImapValue[] {
    const flags: ImapValue[] = [...m.flags].map((f) => atom(f));
    if (this.isRecent(m.uid)) flags.push(atom('\\Recent'));
    return flags;
  }
}

/** The last `countsLine` made: every session idling in a mailbox is told the same counts of one change. */
let lastCounts: { exists: number; recent: number; bytes: Buffer } | null = null;

/**
 * `* n EXISTS` and, unless `recent` is -1, `* m RECENT`, as bytes shared by
 * every session told the same counts: a new message in a mailbox 10,000
 * sessions idle in is one encoding, not 10,000 (the bytes are never
 * changed after they are made; a copy goes to each transcript).
 */
function countsLine(exists: number, recent: number): Buffer {
  const last = lastCounts;
  if (last !== null && last.exists === exists && last.recent === recent) return last.bytes;
  const text = recent < 0 ? `* ${exists} EXISTS\r\n` : `* ${exists} EXISTS\r\n* ${recent} RECENT\r\n`;
  lastCounts = { exists, recent, bytes: Buffer.from(text, 'latin1') };
  return lastCounts.bytes;
}

/**
 * OBJECTID's identifiers (RFC 8474) and where they live: MAILBOXID and
 * EMAILID are store fields (`mailboxId` on mailbox objects, `emailId` on
 * message objects of the storage option), so snapshots keep them and
 * `reset()` restores them; the storage option may give them. Those it does
 * not give are numbered from one per-server counter (the server field
 * `objectIdNext`, the next number to give): `F<n>` for mailboxes, `M<n>`
 * for messages, at start and after a reset in a fixed order (mailboxes by
 * name, then their messages by UID), so two runs over the same options see
 * the same IDs. The counter is restored by reset with everything else, so
 * the IDs given after a reset repeat those given after the start.
 *
 * THREADID is computed, not stored: messages with the same thread root
 * (the first Message-ID of References, else of In-Reply-To, else the
 * message's own Message-ID) share `T` + a digest of that root; a message
 * with none of these is a thread of its own (`T` + a digest of its EMAILID). A storage
 * `threadId` wins. Being a function of the content, it never changes and
 * is the same for every message with one EMAILID (§5.2).
 */
import { nodeCrypto } from '../../util/node-crypto.js';
import { ServiceError } from '../../errors.js';
import { getMime, headerValues } from '../../mime/index.js';
import type { Server } from '../../server.js';
import { getField, serverFields, setField } from '../../store/fields.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { Message } from '../../store/message.js';
import type { SeedMessage } from '../../options/types.js';

export const MAILBOX_ID_KEY = 'mailboxId';
export const EMAIL_ID_KEY = 'emailId';
export const THREAD_ID_KEY = 'threadId';
export const COUNTER_KEY = 'objectIdNext';

/** RFC 8474 §7 `objectid`: 1 to 255 of base64url's characters (case-sensitive). */
const OBJECT_ID = /^[A-Za-z0-9_-]{1,255}$/;
/** IDs of the form this server gives: a given one pushes the counter past it. */
const NUMBERED = /^[FM]([1-9][0-9]{0,14})$/;
const MESSAGE_ID = /<([^<>]+)>/g;

export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && OBJECT_ID.test(value);
}

/** Checks an ID of the storage option. */
export function validateObjectId(value: unknown, report: (message: string) => void): unknown {
  if (!isObjectId(value)) report('expected an object ID: 1 to 255 characters of A-Z a-z 0-9 _ - (RFC 8474 section 7)');
  return value;
}

/** Checks the counter of the storage option. */
export function validateCounter(value: unknown, report: (message: string) => void): unknown {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) report('expected a positive integer');
  return value;
}

/** Per-server state and control API of OBJECTID. */
export class ObjectIds {
  private readonly threadIds = new WeakMap<Message, string | null>();
  /** The first M-number of the seed messages of a mailbox not read yet (`assignAll`, `seedLoaded`). */
  private readonly reserved = new WeakMap<Mailbox, number>();

  constructor(readonly server: Server) {}

  /** The MAILBOXID of a mailbox. */
  mailboxId(mailbox: Mailbox): string {
    const id = getField(mailbox, MAILBOX_ID_KEY);
    return isObjectId(id) ? id : this.giveMailboxId(mailbox);
  }

  /** The EMAILID of a message. */
  emailId(message: Message): string {
    const id = getField(message, EMAIL_ID_KEY);
    if (isObjectId(id)) return id;
    const made = this.next('M');
    setField(message, EMAIL_ID_KEY, made);
    return made;
  }

  /** The THREADID of a message (null: none, never for a message this server computed one for). */
  threadId(message: Message): string | null {
    const given = getField(message, THREAD_ID_KEY);
    if (isObjectId(given)) return given;
    let id = this.threadIds.get(message);
    if (id === undefined) {
      // A message without any Message-ID is a thread of its own: keyed by its EMAILID (NUL keeps
      // that key apart from every Message-ID). The digest keeps the ID short whatever the key.
      const key = threadRoot(message) ?? `\0${this.emailId(message)}`;
      id = `T${nodeCrypto().createHash('sha256').update(key).digest('base64url').slice(0, 20)}`;
      this.threadIds.set(message, id);
    }
    return id;
  }

  /** A new MAILBOXID for a mailbox (a new mailbox, or one whose UIDVALIDITY changed). */
  giveMailboxId(mailbox: Mailbox): string {
    const id = this.next('F');
    setField(mailbox, MAILBOX_ID_KEY, id);
    return id;
  }

  /**
   * Gives every mailbox and message of the store that has none its ID, in
   * a fixed order, after moving the counter past the IDs already there.
   * Two mailboxes with one MAILBOXID (storage option) cannot be: INVALID.
   *
   * Messages still waiting to be copied from the seed (every message right
   * after a reset) are not read: their numbers are set aside as a range,
   * counted from the seed once per seed, and written when the mailbox is
   * first read (`seedLoaded`), so a reset costs O(mailboxes) and the IDs
   * are those an eager pass would give.
   */
  assignAll(): void {
    const mailboxes = this.server.everyMailbox();
    let next = this.counter();
    const owners = new Map<string, string>();
    const bump = (id: string): void => {
      const m = NUMBERED.exec(id);
      if (m) next = Math.max(next, Number(m[1]) + 1);
    };
    for (const mailbox of mailboxes) {
      const id = getField(mailbox, MAILBOX_ID_KEY);
      if (!isObjectId(id)) continue;
      const owner = owners.get(id);
      if (owner !== undefined) {
        throw new ServiceError('INVALID', `storage: the mailboxId ${JSON.stringify(id)} is given to both ${JSON.stringify(owner)} and ${JSON.stringify(mailbox.path)}`);
      }
      owners.set(id, mailbox.path);
      bump(id);
    }
    for (const mailbox of mailboxes) {
      const seed = this.pendingSeed(mailbox);
      if (seed !== null) next = Math.max(next, seedIdFacts(seed).highest + 1);
      else for (const message of mailbox.messages) {
        const id = getField(message, EMAIL_ID_KEY);
        if (isObjectId(id)) bump(id);
      }
    }
    // One counter for the pass, written back once (a reset renumbers every seeded object).
    for (const mailbox of mailboxes) if (!isObjectId(getField(mailbox, MAILBOX_ID_KEY))) setField(mailbox, MAILBOX_ID_KEY, `F${next++}`);
    for (const mailbox of mailboxes) {
      const seed = this.pendingSeed(mailbox);
      if (seed !== null) {
        // Set aside once: a second pass (a new user's tree) must not move a range already given.
        if (this.reserved.has(mailbox)) continue;
        this.reserved.set(mailbox, next);
        next += seedIdFacts(seed).missing;
      } else {
        for (const message of mailbox.messages) if (!isObjectId(getField(message, EMAIL_ID_KEY))) setField(message, EMAIL_ID_KEY, `M${next++}`);
      }
    }
    this.setCounter(next);
  }

  /** The seed messages of a mailbox not read since the last reset, or null. */
  private pendingSeed(mailbox: Mailbox): readonly SeedMessage[] | null {
    return this.server.trees ? this.server.trees.treeOf(mailbox).pendingSeed(mailbox) : this.server.store.pendingSeed(mailbox);
  }

  /** A mailbox's messages were copied from the seed: those without an EMAILID get the range set aside for them. */
  seedLoaded(mailbox: Mailbox, messages: readonly Message[]): void {
    const first = this.reserved.get(mailbox);
    if (first === undefined) return;
    this.reserved.delete(mailbox);
    let n = first;
    for (const message of messages) if (!isObjectId(getField(message, EMAIL_ID_KEY))) setField(message, EMAIL_ID_KEY, `M${n++}`);
  }

  private counter(): number {
    const value = getField(serverFields(this.server.store), COUNTER_KEY);
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 ? value : 1;
  }

  private setCounter(value: number): void {
    setField(serverFields(this.server.store), COUNTER_KEY, value);
  }

  private next(prefix: 'F' | 'M'): string {
    const n = this.counter();
    this.setCounter(n + 1);
    return `${prefix}${n}`;
  }
}

/** What the seed gives of EMAILIDs: how many messages have none, and the highest M-number given. */
const seedFactsCache = new WeakMap<readonly SeedMessage[], { missing: number; highest: number }>();

/** Worked out once per seed (the seed never changes), not per reset. */
function seedIdFacts(seed: readonly SeedMessage[]): { missing: number; highest: number } {
  let facts = seedFactsCache.get(seed);
  if (facts === undefined) {
    let missing = 0;
    let highest = 0;
    for (const message of seed) {
      const id = Object.hasOwn(message.extra, EMAIL_ID_KEY) ? message.extra[EMAIL_ID_KEY] : undefined;
      if (!isObjectId(id)) missing++;
      else {
        const m = NUMBERED.exec(id);
        if (m) highest = Math.max(highest, Number(m[1]));
      }
    }
    facts = { missing, highest };
    seedFactsCache.set(seed, facts);
  }
  return facts;
}

/** The Message-ID a thread hangs from, or null when the message names none. */
function threadRoot(message: Message): string | null {
  const root = getMime(message.raw);
  for (const field of ['references', 'in-reply-to', 'message-id']) {
    for (const value of headerValues(root, message.raw, field)) {
      MESSAGE_ID.lastIndex = 0;
      const first = MESSAGE_ID.exec(value);
      if (first) return first[1]!.trim();
    }
  }
  return null;
}

/**
 * The QUOTA plugin's per-server state and control API: the limits of the
 * one quota root `""` and its usage, kept incrementally from the store's
 * change feed (never by scanning the store per operation).
 */
import { ServiceError } from '../../errors.js';
import { bareLfCount } from '../../mime/crlf.js';
import type { Server } from '../../server.js';
import type { StoreChange } from '../../store/changes.js';
import { getField, serverFields, setField } from '../../store/fields.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { MailboxView } from '../../store/view.js';
import type { MailboxScope } from '../../control/control.js';
import type { Message } from '../../store/message.js';

/** The resources this server limits (RFC 9208 §5): STORAGE in KiB, MESSAGE and MAILBOX as counts. */
export const RESOURCES = ['STORAGE', 'MESSAGE', 'MAILBOX'] as const;
export type QuotaResource = (typeof RESOURCES)[number];

/** Limits by resource; a resource that is left out has no limit. */
export type QuotaLimits = { [R in QuotaResource]?: number };
export type QuotaUsage = { [R in QuotaResource]: number };

/** Exact usage of one quota root. */
interface Usage {
  octets: number;
  messages: number;
  mailboxes: number;
}

/** The Quota resource of the control-service spec. */
export interface QuotaInfo {
  /** Always `""`: one quota root over the whole tree. */
  root: string;
  limits: QuotaLimits;
  /** STORAGE in KiB (octets / 1024, rounded up), MESSAGE and MAILBOX as counts. */
  usage: QuotaUsage;
}

/** The control API of QUOTA: `server.extension('QUOTA')`. */
export interface QuotaApi {
  /**
   * The quota root `""`: its limits and usage. With `userMailboxes` every
   * user's tree is a root `""` of its own (`scope.user`; without it, the
   * shared tree's); the limits are the same for all.
   */
  getQuota(scope?: MailboxScope): QuotaInfo;
  /**
   * Replaces all limits (a resource left out has none afterwards; `{}`
   * removes every limit). Limits are integers from 0; STORAGE is in KiB. A
   * limit below the current usage is allowed: later additions are refused.
   */
  setQuota(limits: QuotaLimits): QuotaInfo;
  /** Usage in exact units: STORAGE in octets (RFC822.SIZE summed), MESSAGE and MAILBOX as counts. */
  usageOctets(scope?: MailboxScope): { storage: number; messages: number; mailboxes: number };
}

/** The storage key of the limits on the server-wide object `storage[""]`. */
export const STORAGE_KEY = 'quota';

/** The name of the only quota root. */
export const ROOT = '';

/**
 * Checks a limits object (pluginOptions, storage, REST, control API) and
 * returns a clean copy; `report` gets one message per problem (the caller
 * decides whether that throws).
 */
export function checkLimits(value: unknown, report: (message: string) => void): QuotaLimits {
  const out: QuotaLimits = {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    report(`expected an object of limits such as { "STORAGE": 1024, "MESSAGE": 100, "MAILBOX": 10 }`);
    return out;
  }
  for (const [key, limit] of Object.entries(value as Record<string, unknown>)) {
    if (limit === undefined) continue;
    const resource = RESOURCES.find((r) => r === key);
    if (!resource) {
      const near = RESOURCES.find((r) => r === key.toUpperCase());
      report(`${key}: unknown quota resource${near ? `; did you mean "${near}"?` : `; valid: ${RESOURCES.join(', ')}`}`);
      continue;
    }
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0) {
      report(`${key}: expected an integer from 0${resource === 'STORAGE' ? ' (KiB)' : ''}, got ${JSON.stringify(limit)}`);
      continue;
    }
    out[resource] = limit;
  }
  return out;
}

/**
 * RFC822.SIZE of a message (bare LFs count as CRLF), computed without the
 * core's per-Buffer size cache: counting every append through that cache
 * costs a WeakMap entry per message and made pipelined APPEND ~20% slower.
 */
export const octetsOf = (m: Message): number => m.raw.length + bareLfCount(m.raw);

/** Octets in KiB as RFC 9208 counts STORAGE: rounded up, so any content shows and usage > limit exactly when over. */
export const kib = (octets: number): number => Math.ceil(octets / 1024);

export class QuotaState implements QuotaApi {
  /** Exact usage by root: the owner of a tree (null: the one tree, or the shared tree with userMailboxes). */
  private usages = new Map<string | null, Usage>();
  limits: QuotaLimits = {};

  constructor(
    private readonly server: Server,
    /** `pluginOptions.QUOTA`, used while the storage holds no limits of its own. */
    private readonly optionLimits: QuotaLimits,
  ) {
    this.recount();
  }

  private usageOf(owner: string | null): Usage {
    this.count();
    let usage = this.usages.get(owner);
    if (!usage) this.usages.set(owner, (usage = { octets: 0, messages: 0, mailboxes: 0 }));
    return usage;
  }

  /** The root a mailbox counts in: its owner's tree (always null without userMailboxes). */
  ownerOf(mailbox: Mailbox): string | null {
    return this.server.ownerOf(mailbox);
  }

  /** The root of a control API scope: the user's (checked as every control operation checks it), else null. */
  private ownerFor(scope: MailboxScope | undefined): string | null {
    if (scope === undefined) return null;
    this.server.control.treeOf(scope);
    return scope.user ?? null;
  }

  /**
   * False from setup and each reset until usage is first read: the count
   * walks every message, and most servers of a suite never ask. Changes
   * before the count need no bookkeeping, as the count sees them.
   */
  private counted = false;

  /** The limits now; the usage count waits for its first reader. */
  private recount(): void {
    this.counted = false;
    this.usages.clear();
    const stored = getField(serverFields(this.server.store), STORAGE_KEY);
    // Validated when the options were read; a malformed value would have failed construction.
    this.limits = stored === undefined ? { ...this.optionLimits } : checkLimits(stored, () => undefined);
  }

  /** The whole count, once after setup or a reset, when usage is first needed. */
  private count(): void {
    if (this.counted) return;
    this.counted = true;
    for (const mailbox of this.server.everyMailbox()) {
      const usage = this.usageOf(this.ownerOf(mailbox));
      usage.messages += mailbox.messages.length;
      for (const m of mailbox.messages) usage.octets += octetsOf(m);
      usage.mailboxes++;
    }
  }

  private add(usage: Usage, messages: readonly Message[], sign: 1 | -1): void {
    let octets = 0;
    for (const m of messages) octets += octetsOf(m);
    usage.octets += sign * octets;
    usage.messages += sign * messages.length;
  }

  /** Follows the store: every change that adds or removes messages or mailboxes. */
  onChange(change: StoreChange): void {
    if (!this.counted && change.kind !== 'reset') return;
    const usage = (): Usage => this.usageOf(this.server.trees?.userOf(change) ?? null);
    switch (change.kind) {
      case 'append':
        this.add(usage(), change.messages, 1);
        break;
      case 'expunge':
        this.add(usage(), change.messages, -1);
        break;
      case 'mailbox':
        if (change.type === 'create') usage().mailboxes++;
        else if (change.type === 'delete') {
          const u = usage();
          u.mailboxes--;
          if (change.mailbox) this.add(u, change.mailbox.messages, -1);
        }
        // A rename keeps every message and mailbox (renaming INBOX arrives as create, expunge and append).
        break;
      case 'reset':
        this.recount();
        break;
      default:
        break;
    }
  }

  getQuota(scope?: MailboxScope): QuotaInfo {
    return this.quotaOf(this.ownerFor(scope));
  }

  /** Limits and usage of one root. */
  quotaOf(owner: string | null): QuotaInfo {
    const u = this.usageOf(owner);
    return {
      root: ROOT,
      limits: { ...this.limits },
      usage: { STORAGE: kib(u.octets), MESSAGE: u.messages, MAILBOX: u.mailboxes },
    };
  }

  setQuota(limits: QuotaLimits): QuotaInfo {
    const problems: string[] = [];
    const clean = checkLimits(limits, (m) => problems.push(m));
    if (problems.length) throw new ServiceError('INVALID', problems.join('; '));
    this.limits = clean;
    // Kept in the store: snapshots write it, reset restores the storage's (or the options') limits.
    setField(serverFields(this.server.store), STORAGE_KEY, { ...clean });
    return this.getQuota();
  }

  /** Superior levels of `path` that do not exist yet (the store creates them with it). */
  missingParents(path: string, names: MailboxView = this.server.store): number {
    const store = names;
    let count = 0;
    for (let parent = store.parentOf(path); parent !== null && !store.has(parent); parent = store.parentOf(parent)) count++;
    return count;
  }

  usageOctets(scope?: MailboxScope): { storage: number; messages: number; mailboxes: number } {
    const u = this.usageOf(this.ownerFor(scope));
    return { storage: u.octets, messages: u.messages, mailboxes: u.mailboxes };
  }

  /**
   * Throws OVERQUOTA when adding `messages` messages of `octets` octets and
   * `mailboxes` mailboxes to `owner`'s root would pass a limit.
   */
  check(add: { octets?: number; messages?: number; mailboxes?: number }, owner: string | null = null): void {
    const { STORAGE, MESSAGE, MAILBOX } = this.limits;
    const used = this.usageOf(owner);
    const current = { octets: used.octets, messages: used.messages, mailboxes: used.mailboxes };
    const octets = add.octets ?? 0;
    const messages = add.messages ?? 0;
    const mailboxes = add.mailboxes ?? 0;
    if (STORAGE !== undefined && octets > 0 && current.octets + octets > STORAGE * 1024) {
      throw new ServiceError(
        'OVERQUOTA',
        `Quota exceeded: STORAGE would be ${kib(current.octets + octets)} KiB (${current.octets + octets} octets), the limit is ${STORAGE} KiB`,
      );
    }
    if (MESSAGE !== undefined && messages > 0 && current.messages + messages > MESSAGE) {
      throw new ServiceError('OVERQUOTA', `Quota exceeded: MESSAGE would be ${current.messages + messages}, the limit is ${MESSAGE}`);
    }
    if (MAILBOX !== undefined && mailboxes > 0 && current.mailboxes + mailboxes > MAILBOX) {
      throw new ServiceError('OVERQUOTA', `Quota exceeded: MAILBOX would be ${current.mailboxes + mailboxes}, the limit is ${MAILBOX}`);
    }
  }

  /** Resources that have a limit, in RFC order, with usage and limit (the QUOTA response's list). */
  quotaList(owner: string | null = null): { resource: QuotaResource; usage: number; limit: number }[] {
    const usage = this.quotaOf(owner).usage;
    const out: { resource: QuotaResource; usage: number; limit: number }[] = [];
    for (const r of RESOURCES) {
      const limit = this.limits[r];
      if (limit !== undefined) out.push({ resource: r, usage: usage[r], limit });
    }
    return out;
  }

  /** Octets of the messages flagged \Deleted in a mailbox (STATUS DELETED-STORAGE). */
  static deletedOctets(mailbox: Mailbox): number {
    let octets = 0;
    for (const m of mailbox.messages) if (m.flags.has('\\Deleted')) octets += octetsOf(m);
    return octets;
  }
}

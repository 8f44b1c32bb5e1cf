/**
 * Per-mailbox records of what changed at which MODSEQ, kept from the store's
 * change feed, so that `FETCH (CHANGEDSINCE m)` and QRESYNC's `VANISHED
 * (EARLIER)` cost O(changes since m), not O(mailbox).
 *
 * - The change log lists (UID, MODSEQ) for every append and flag change, in
 *   MODSEQ order (MODSEQs only grow, so appending keeps it sorted). It holds
 *   every change above `floor`; asked about anything older it answers null
 *   and the caller scans the mailbox. It is compacted (rebuilt from the
 *   messages' current MODSEQs) when it grows past twice the mailbox plus
 *   1,024 entries, so it never outgrows the mailbox by much.
 * - The expunge log lists (UID, MODSEQ of the expunge), at most
 *   `EXPUNGE_LOG_LIMIT` entries per mailbox (the older half is dropped past
 *   it, raising `expungeFloor`). Asked about expunges older than what it
 *   holds, the answer is marked incomplete and QRESYNC answers with every UID
 *   of the asked range that no longer exists (RFC 7162 §3.2.5.2 allows the
 *   superset).
 */
import type { Mailbox } from '../../store/mailbox.js';
import type { Message } from '../../store/message.js';
import type { StoreChange } from '../../store/changes.js';

/** Expunged UIDs remembered per mailbox for VANISHED (EARLIER). */
export const EXPUNGE_LOG_LIMIT = 100_000;

class MailboxLog {
  readonly uids: number[] = [];
  readonly modseqs: number[] = [];
  readonly expUids: number[] = [];
  readonly expModseqs: number[] = [];
  constructor(
    /** Every change with a MODSEQ above this is in the change log. */
    public floor: number,
    /** Every expunge with a MODSEQ above this is in the expunge log. */
    public expungeFloor: number,
  ) {}
}

/** First index whose value is > m in an ascending array. */
function upperBound(values: readonly number[], m: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! <= m) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class ModseqLog {
  private logs = new WeakMap<Mailbox, MailboxLog>();

  /** The log of a mailbox, made at its first change after setup (everything before is older than `modseq`). */
  private logOf(mailbox: Mailbox, modseq: number): MailboxLog {
    let log = this.logs.get(mailbox);
    if (!log) {
      log = new MailboxLog(modseq - 1, modseq - 1);
      this.logs.set(mailbox, log);
    }
    return log;
  }

  onChange(change: StoreChange): void {
    switch (change.kind) {
      case 'reset':
        this.logs = new WeakMap();
        return;
      case 'uidvalidity': {
        // UIDs may have changed: nothing older than now can be answered from the logs.
        const m = change.mailbox.highestModseq;
        this.logs.set(change.mailbox, new MailboxLog(m, m));
        return;
      }
      case 'append':
      case 'flags': {
        if (change.messages.length === 0) return;
        const log = this.logOf(change.mailbox, change.messages[0]!.modseq);
        for (const m of change.messages) {
          log.uids.push(m.uid);
          log.modseqs.push(m.modseq);
        }
        if (log.uids.length > 2 * change.mailbox.messages.length + 1024) this.compact(change.mailbox, log);
        return;
      }
      case 'expunge': {
        const modseq = change.mailbox.highestModseq;
        const log = this.logOf(change.mailbox, modseq);
        for (const uid of change.uids) {
          log.expUids.push(uid);
          log.expModseqs.push(modseq);
        }
        if (log.expUids.length > EXPUNGE_LOG_LIMIT) {
          const cut = log.expUids.length - EXPUNGE_LOG_LIMIT / 2;
          log.expungeFloor = log.expModseqs[cut - 1]!;
          log.expUids.splice(0, cut);
          log.expModseqs.splice(0, cut);
        }
        return;
      }
      default:
        return;
    }
  }

  /** Rebuilds the change log from the messages' current MODSEQs (each message once). */
  private compact(mailbox: Mailbox, log: MailboxLog): void {
    const changed = mailbox.messages.filter((m) => m.modseq > log.floor).sort((a, b) => a.modseq - b.modseq || a.uid - b.uid);
    log.uids.length = 0;
    log.modseqs.length = 0;
    for (const m of changed) {
      log.uids.push(m.uid);
      log.modseqs.push(m.modseq);
    }
  }

  /**
   * The mailbox's messages whose MODSEQ is above `modseq`, in UID order, or
   * null when the log does not reach back that far (scan the mailbox then).
   */
  changedSince(mailbox: Mailbox, modseq: number): Message[] | null {
    const log = this.logs.get(mailbox);
    if (!log) return modseq >= mailbox.highestModseq ? [] : null;
    if (modseq < log.floor) return null;
    const uids = new Set<number>();
    for (let i = upperBound(log.modseqs, modseq); i < log.uids.length; i++) uids.add(log.uids[i]!);
    const out: Message[] = [];
    for (const uid of uids) {
      const m = mailbox.byUid(uid);
      if (m && m.modseq > modseq) out.push(m);
    }
    return out.sort((a, b) => a.uid - b.uid);
  }

  /**
   * UIDs expunged with a MODSEQ above `modseq`, ascending; `complete` is
   * false when the log does not reach back that far (some are missing).
   */
  expungedSince(mailbox: Mailbox, modseq: number): { uids: number[]; complete: boolean } {
    const log = this.logs.get(mailbox);
    if (!log) return { uids: [], complete: modseq >= mailbox.highestModseq };
    const uids = log.expUids.slice(upperBound(log.expModseqs, modseq)).sort((a, b) => a - b);
    return { uids, complete: modseq >= log.expungeFloor };
  }
}

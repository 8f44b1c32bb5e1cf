/**
 * The maildrop of a POP3 session (RFC 1939 §8): the user's INBOX as it was
 * at login. Message numbers, sizes and unique-ids are fixed then; DELE and
 * RSET only mark; the marked messages are acted on at QUIT. Messages that
 * others remove meanwhile keep their numbers and sizes but can no longer be
 * retrieved (docs/pop3.md, "Changes while a session is open").
 */
import { servedSize } from '../mime/crlf.js';
import type { Mailbox } from '../store/mailbox.js';
import type { Message } from '../store/message.js';

export interface DropEntry {
  readonly message: Message;
  /** Octets RETR sends before the framing: the message in CRLF form, without byte-stuffing (RFC 1939 §5 LIST). */
  readonly size: number;
  readonly uidl: string;
  deleted: boolean;
  /** Removed by another session or the control API after login. */
  gone: boolean;
  /** RETR sent it (RFC 2449 EXPIRE 0 deletes those at QUIT). */
  retrieved: boolean;
}

/**
 * The unique-id of a message: its UID and the mailbox's UIDVALIDITY, each
 * as eight upper-case hex digits (Dovecot's default `%08Xu%08Xv`). The
 * same message keeps it across sessions; a new UIDVALIDITY gives every
 * message a new one, as clients that keep "seen" lists expect.
 */
export function uidlOf(uid: number, uidvalidity: number): string {
  return hex8(uid) + hex8(uidvalidity);
}

function hex8(n: number): string {
  return (n >>> 0).toString(16).toUpperCase().padStart(8, '0');
}

export class Maildrop {
  readonly entries: readonly DropEntry[];
  private readonly byMessage = new Map<Message, DropEntry>();
  /** Count and octets of the messages not marked deleted (STAT, RFC 1939 §5). */
  private liveCount: number;
  private liveOctets: number;

  constructor(
    readonly mailbox: Mailbox,
    messages: readonly Message[],
  ) {
    const uidvalidity = mailbox.uidvalidity;
    let octets = 0;
    this.entries = messages.map((message) => {
      const entry: DropEntry = { message, size: servedSize(message.raw), uidl: uidlOf(message.uid, uidvalidity), deleted: false, gone: false, retrieved: false };
      octets += entry.size;
      this.byMessage.set(message, entry);
      return entry;
    });
    this.liveCount = this.entries.length;
    this.liveOctets = octets;
  }

  /** Message `n` (1-based), or undefined when there is no such number. */
  get(n: number): DropEntry | undefined {
    return Number.isSafeInteger(n) && n >= 1 ? this.entries[n - 1] : undefined;
  }

  get count(): number {
    return this.liveCount;
  }

  get octets(): number {
    return this.liveOctets;
  }

  mark(entry: DropEntry): void {
    if (entry.deleted) return;
    entry.deleted = true;
    this.liveCount--;
    this.liveOctets -= entry.size;
  }

  /** RSET: every mark is taken back. */
  unmarkAll(): void {
    for (const e of this.entries) {
      if (!e.deleted) continue;
      e.deleted = false;
      this.liveCount++;
      this.liveOctets += e.size;
    }
  }

  /** Messages another session or the control API removed. */
  noteGone(messages: readonly Message[]): void {
    for (const m of messages) {
      const e = this.byMessage.get(m);
      if (e) e.gone = true;
    }
  }

  /**
   * The messages to act on at QUIT that are still in the mailbox, by their
   * UIDs now (a UIDVALIDITY reset may have renumbered them): those marked,
   * and with `expireRetrieved` (EXPIRE 0) those retrieved too.
   */
  doomed(expireRetrieved: boolean): Message[] {
    const out: Message[] = [];
    for (const e of this.entries) {
      if (!(e.deleted || (expireRetrieved && e.retrieved)) || e.gone) continue;
      if (this.mailbox.byUid(e.message.uid) === e.message) out.push(e.message);
    }
    return out;
  }
}

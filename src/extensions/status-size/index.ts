/**
 * STATUS=SIZE (RFC 8438): the STATUS item SIZE, the total of the RFC822.SIZE
 * of every message in the mailbox (`Message.size`, the size served).
 *
 * The total is kept per Mailbox object: computed once when first asked,
 * then adjusted from the change feed (an append adds the new messages'
 * sizes, an expunge subtracts the removed ones), so STATUS SIZE costs O(1)
 * however large the mailbox. Mailbox-level changes (create, delete,
 * rename, where a rename of INBOX moves its messages), a new UIDVALIDITY
 * and reset drop the kept totals; the next STATUS counts again.
 */
import type { StoreChange } from '../../store/changes.js';
import type { Mailbox } from '../../store/mailbox.js';
import { defineExtension } from '../extension.js';
import { always } from '../shared.js';

/** Per-server state: the kept totals, and the API tests and callers use. */
export class MailboxSizes {
  private totals = new WeakMap<Mailbox, number>();

  /** The total size of the mailbox's messages in octets. */
  size(mailbox: Mailbox): number {
    let total = this.totals.get(mailbox);
    if (total === undefined) {
      total = 0;
      for (const m of mailbox.messages) total += m.size;
      this.totals.set(mailbox, total);
    }
    return total;
  }

  onChange(change: StoreChange): void {
    switch (change.kind) {
      case 'append':
      case 'expunge': {
        const total = this.totals.get(change.mailbox);
        // Not counted yet: the first STATUS counts what is there then.
        if (total === undefined) return;
        let delta = 0;
        for (const m of change.messages) delta += m.size;
        this.totals.set(change.mailbox, change.kind === 'append' ? total + delta : total - delta);
        return;
      }
      case 'mailbox':
        if (change.type === 'subscribe' || change.type === 'unsubscribe') return;
        this.totals = new WeakMap();
        return;
      case 'uidvalidity':
        this.totals.delete(change.mailbox);
        return;
      case 'reset':
        this.totals = new WeakMap();
        return;
      default:
        return;
    }
  }
}

declare module '../extension.js' {
  interface ExtensionApis {
    'STATUS=SIZE': MailboxSizes;
  }
}

export const extension = defineExtension<MailboxSizes>({
  name: 'STATUS=SIZE',
  aliases: ['STATUS-SIZE'],
  setup: () => new MailboxSizes(),
  capabilities: always('STATUS=SIZE'),
  onChange: (change, state) => state.onChange(change),
  statusItems: [{ name: 'SIZE', value: (mailbox, _session, state) => state.size(mailbox) }],
});

/**
 * CONDSTORE (RFC 7162 §3.1): every message's MODSEQ (kept by the store),
 * `OK [HIGHESTMODSEQ n]` on every successful SELECT/EXAMINE (§3.1.2.1: every
 * mailbox keeps MODSEQs persistently, so NOMODSEQ is never sent), `SELECT/EXAMINE box
 * (CONDSTORE)`, `FETCH ... (CHANGEDSINCE n)` answered from a per-mailbox
 * change log in O(changes), `STORE ... (UNCHANGEDSINCE n)` with
 * `[MODIFIED set]`, `SEARCH MODSEQ` answered with `(MODSEQ n)`, STATUS
 * (HIGHESTMODSEQ), ENABLE CONDSTORE, and `UID n ... MODSEQ (n)` in every flag
 * FETCH (unsolicited, answering STORE, or after a FETCH set `\Seen`) once
 * CONDSTORE is on for the session (§3.1).
 * Changes of the control API and REST bump MODSEQ in the store exactly as
 * IMAP ones, so they reach sessions the same way.
 *
 * `pluginOptions.CONDSTORE.selectHighestModseq: "enabled"` models Dovecot
 * 2.3, which sends HIGHESTMODSEQ on SELECT only to a session that has
 * CONDSTORE on; the first CONDSTORE-enabling command in the selected mailbox
 * then sends `OK [HIGHESTMODSEQ n]` (§3.1), as it does whenever the SELECT
 * did not.
 */
import type { SelectedMailbox } from '../../imap/selected.js';
import type { ImapSession } from '../../imap/session.js';
import type { FetchAttribute, SearchKey } from '../../imap/syntax.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { Message } from '../../store/message.js';
import { defineExtension } from '../extension.js';
import { always, NO_RESPONSES } from '../shared.js';
import { ModseqLog } from './log.js';
import { narrow } from './sets.js';

/** The control API of CONDSTORE: `server.extension('CONDSTORE')` (QRESYNC reads the logs through it). */
export interface CondstoreApi {
  /** Messages with a MODSEQ above `modseq`, UID order; null when the log does not reach back that far. */
  changedSince(mailbox: Mailbox, modseq: number): Message[] | null;
  /** UIDs expunged above `modseq`, ascending; `complete` false when older expunges were forgotten. */
  expungedSince(mailbox: Mailbox, modseq: number): { uids: number[]; complete: boolean };
}

declare module '../extension.js' {
  interface ExtensionApis {
    CONDSTORE: CondstoreApi;
  }
}

interface State extends CondstoreApi {
  log: ModseqLog;
  /** Send HIGHESTMODSEQ on every SELECT (RFC 7162 §3.1.2.1), or only once the session has CONDSTORE on (Dovecot 2.3). */
  selectMode: 'always' | 'enabled';
  /** Selections whose HIGHESTMODSEQ the client was told (at SELECT or by the first enabling command). */
  told: WeakSet<SelectedMailbox>;
}

/** True when the session has CONDSTORE on (ENABLE CONDSTORE or QRESYNC, or a CONDSTORE-enabling command). */
export function condstoreOn(session: ImapSession): boolean {
  return session.hasEnabled('CONDSTORE') || session.hasEnabled('QRESYNC');
}

/** `OK [HIGHESTMODSEQ n] Highest` of a mailbox. */
function highestLine(mailbox: Mailbox): ImapValue[] {
  return [atom('OK'), atom(`[HIGHESTMODSEQ ${mailbox.highestModseq}]`), atom('Highest')];
}

/**
 * The HIGHESTMODSEQ response the selection still owes the client (RFC 7162
 * §3.1: a CONDSTORE enabling command in a selected mailbox the SELECT did not
 * report it for), marked as told; null when none is owed.
 */
function owedHighest(session: ImapSession, state: State): ImapValue[] | null {
  const selected = session.selected;
  if (!selected || state.told.has(selected)) return null;
  state.told.add(selected);
  return highestLine(selected.mailbox);
}

/** A CONDSTORE-enabling command (RFC 7162 §3.1): CONDSTORE is on from now on, and the client learns HIGHESTMODSEQ if it has not yet. */
function turnOn(session: ImapSession, state: State): void {
  session.enabled.add('CONDSTORE');
  const owed = owedHighest(session, state);
  if (owed) session.untaggedList(owed);
}

/** The messages changed since `modseq`, from the log or (when it does not reach back) by a scan. */
export function changedMessages(state: CondstoreApi, mailbox: Mailbox, modseq: number): Message[] {
  return state.changedSince(mailbox, modseq) ?? mailbox.messages.filter((m) => m.modseq > modseq);
}

/** True when the criteria use the MODSEQ key anywhere (under NOT/OR too). */
function usesModseq(keys: readonly SearchKey[]): boolean {
  return keys.some((k) => {
    switch (k.type) {
      case 'modseq':
        return true;
      case 'not':
        return usesModseq([k.key]);
      case 'or':
        return usesModseq([k.left, k.right]);
      case 'and':
        return usesModseq(k.keys);
      default:
        return false;
    }
  });
}

const MODSEQ_ITEM = { type: 'MODSEQ', label: 'MODSEQ' } as FetchAttribute;

/** mod-sequence-value: 1..2^63-1 (here up to 2^53-1). */
function modseqValue(args: { number64(): number }): number {
  return args.number64();
}

export const extension = defineExtension<State>({
  name: 'CONDSTORE',
  options: {
    type: 'object',
    properties: {
      selectHighestModseq: {
        type: 'string',
        enum: ['always', 'enabled'],
        description:
          'When SELECT/EXAMINE sends OK [HIGHESTMODSEQ n]: "always" (RFC 7162 section 3.1.2.1, the default) or "enabled": only once the session has CONDSTORE on, as Dovecot 2.3',
      },
    },
    additionalProperties: false,
  },
  setup: ({ options }) => {
    const log = new ModseqLog();
    return {
      log,
      selectMode: options.selectHighestModseq === 'enabled' ? 'enabled' : 'always',
      told: new WeakSet(),
      changedSince: (mailbox, modseq) => log.changedSince(mailbox, modseq),
      expungedSince: (mailbox, modseq) => log.expungedSince(mailbox, modseq),
    };
  },
  capabilities: always('CONDSTORE'),
  enable: ['CONDSTORE'],
  onChange: (change, state) => state.log.onChange(change),
  select: {
    parameters: [{ name: 'CONDSTORE' }],
    responses(session, selected, params, state) {
      if (params.has('CONDSTORE')) session.enabled.add('CONDSTORE');
      // RFC 7162 §3.1.2.1: with every successful SELECT/EXAMINE of a mailbox that keeps MODSEQs.
      if (state.selectMode === 'enabled' && !condstoreOn(session)) return [];
      state.told.add(selected);
      return [highestLine(selected.mailbox)];
    },
  },
  fetch: {
    modifiers: [{ name: 'CHANGEDSINCE', parse: modseqValue }],
    plan(ctx, state) {
      const since = ctx.params.get('CHANGEDSINCE') as number | undefined;
      const asksModseq = ctx.items.some((a) => a.type === 'MODSEQ');
      if (since === undefined && !asksModseq) return undefined;
      turnOn(ctx.session, state);
      if (since === undefined) return undefined;
      const changed = changedMessages(state, ctx.selected.mailbox, since);
      return {
        targets: narrow(changed, ctx.selected, ctx.set, ctx.uid, ctx.resolve),
        ...(asksModseq ? {} : { items: [...ctx.items, MODSEQ_ITEM] }),
      };
    },
  },
  search: {
    // RFC 7162 §3.1.5: a SEARCH with MODSEQ turns CONDSTORE on and ends with the highest MODSEQ of the matches.
    responseItems(ctx, state) {
      if (!usesModseq([ctx.criteria])) return undefined;
      turnOn(ctx.session, state);
      if (ctx.found.length === 0) return undefined;
      let max = 0;
      for (const f of ctx.found) if (f.message.modseq > max) max = f.message.modseq;
      return [[atom('MODSEQ'), max]];
    },
  },
  store: {
    modifiers: [{ name: 'UNCHANGEDSINCE', parse: modseqValue }],
    filter(ctx, state) {
      const limit = ctx.params.get('UNCHANGEDSINCE') as number | undefined;
      if (limit === undefined) return undefined;
      turnOn(ctx.session, state);
      return ctx.targets.filter((n) => n.message.modseq <= limit);
    },
  },
  // RFC 7162 §3.1: STATUS (HIGHESTMODSEQ) is a CONDSTORE enabling command; NOTIFY's own STATUS of a watched mailbox is not.
  statusItems: [
    {
      name: 'HIGHESTMODSEQ',
      value(mailbox, session, state, asked) {
        if (asked) turnOn(session, state);
        return mailbox.highestModseq;
      },
    },
  ],
  updates: {
    // RFC 7162 §3.1: once CONDSTORE is on, every untagged FETCH carries UID and MODSEQ, whatever caused it.
    flagFetch: (session, message) => (condstoreOn(session) ? { uid: true, items: [atom('MODSEQ'), [message.modseq]] } : undefined),
    // CONDSTORE turned on by a command this extension does not see (ENABLE while selected): HIGHESTMODSEQ at its end.
    after(session, settled, state) {
      if (!settled || !condstoreOn(session)) return NO_RESPONSES;
      const owed = owedHighest(session, state);
      return owed ? [owed] : NO_RESPONSES;
    },
  },
});

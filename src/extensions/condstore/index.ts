/**
 * CONDSTORE (RFC 7162 §3.1): every message's MODSEQ (kept by the store),
 * `OK [HIGHESTMODSEQ n]` on SELECT/EXAMINE once the session uses CONDSTORE
 * (as Dovecot; every mailbox has persistent MODSEQs, so NOMODSEQ is never sent), `SELECT/EXAMINE box
 * (CONDSTORE)`, `FETCH ... (CHANGEDSINCE n)` answered from a per-mailbox
 * change log in O(changes), `STORE ... (UNCHANGEDSINCE n)` with
 * `[MODIFIED set]`, `SEARCH MODSEQ` answered with `(MODSEQ n)`, ENABLE
 * CONDSTORE, and `MODSEQ (n)` in every flag FETCH
 * (unsolicited or answering STORE) once CONDSTORE is on for the session.
 * Changes of the control API and REST bump MODSEQ in the store exactly as
 * IMAP ones, so they reach sessions the same way.
 */
import type { ImapSession } from '../../imap/session.js';
import type { FetchAttribute, SearchKey } from '../../imap/syntax.js';
import { atom } from '../../imap/wire/values.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { Message } from '../../store/message.js';
import { defineExtension } from '../extension.js';
import { always } from '../shared.js';
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
}

/** True when the session has CONDSTORE on (ENABLE CONDSTORE or QRESYNC, or a CONDSTORE-enabling command). */
export function condstoreOn(session: ImapSession): boolean {
  return session.enabled.has('CONDSTORE') || session.enabled.has('QRESYNC');
}

/** A CONDSTORE-enabling command (RFC 7162 §3.1): CONDSTORE is on from now on. */
export function turnOn(session: ImapSession): void {
  session.enabled.add('CONDSTORE');
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
  setup: () => {
    const log = new ModseqLog();
    return {
      log,
      changedSince: (mailbox, modseq) => log.changedSince(mailbox, modseq),
      expungedSince: (mailbox, modseq) => log.expungedSince(mailbox, modseq),
    };
  },
  capabilities: always('CONDSTORE'),
  enable: ['CONDSTORE'],
  onChange: (change, state) => state.log.onChange(change),
  select: {
    parameters: [{ name: 'CONDSTORE' }],
    responses(session, selected, params) {
      if (params.has('CONDSTORE')) turnOn(session);
      // As Dovecot: only to a session that uses CONDSTORE (ENABLE, SELECT (CONDSTORE), an earlier enabling command).
      if (!condstoreOn(session)) return [];
      return [[atom('OK'), atom(`[HIGHESTMODSEQ ${selected.mailbox.highestModseq}]`), atom('Highest')]];
    },
  },
  fetch: {
    modifiers: [{ name: 'CHANGEDSINCE', parse: modseqValue }],
    plan(ctx, state) {
      const since = ctx.params.get('CHANGEDSINCE') as number | undefined;
      const asksModseq = ctx.items.some((a) => a.type === 'MODSEQ');
      if (since === undefined && !asksModseq) return undefined;
      turnOn(ctx.session);
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
    responseItems(ctx) {
      if (!usesModseq([ctx.criteria])) return undefined;
      turnOn(ctx.session);
      if (ctx.found.length === 0) return undefined;
      let max = 0;
      for (const f of ctx.found) if (f.message.modseq > max) max = f.message.modseq;
      return [[atom('MODSEQ'), max]];
    },
  },
  store: {
    modifiers: [{ name: 'UNCHANGEDSINCE', parse: modseqValue }],
    filter(ctx) {
      const limit = ctx.params.get('UNCHANGEDSINCE') as number | undefined;
      if (limit === undefined) return undefined;
      turnOn(ctx.session);
      return ctx.targets.filter((n) => n.message.modseq <= limit);
    },
  },
  updates: {
    flagFetch: (session, message) => (condstoreOn(session) ? { uid: false, items: [atom('MODSEQ'), [message.modseq]] } : undefined),
  },
});

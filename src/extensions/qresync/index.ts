/**
 * QRESYNC (RFC 7162 §3.2), on top of CONDSTORE (loaded with it): ENABLE
 * QRESYNC; `SELECT/EXAMINE box (QRESYNC (uidvalidity modseq [known-uids
 * [(seqs uids)]]))` answered with `VANISHED (EARLIER)` and FETCH (UID FLAGS
 * MODSEQ) of what changed since; `UID FETCH ... (CHANGEDSINCE m VANISHED)`;
 * `OK [CLOSED]` when a SELECT ends a selection; and, once enabled, expunges
 * (other sessions', the control API's, REST's and the session's own EXPUNGE
 * / UID EXPUNGE / MOVE) worded as `VANISHED uids`, flag FETCHes with UID.
 *
 * Expunges are read from CONDSTORE's per-mailbox expunge log (the last
 * EXPUNGE_LOG_LIMIT expunged UIDs of each mailbox with their MODSEQ). When
 * the client's MODSEQ is older than the log, VANISHED (EARLIER) lists every
 * UID of the asked range that no longer exists, a superset RFC 7162 allows.
 * `seq-match-data` is read and not needed: the answer is exact without it.
 */
import { failBad } from '../../imap/command.js';
import type { ArgParser } from '../../imap/parser.js';
import type { ImapSession } from '../../imap/session.js';
import { compressNumbers, type SequenceSet } from '../../imap/syntax.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import type { Mailbox } from '../../store/mailbox.js';
import { changedMessages, type CondstoreApi } from '../condstore/index.js';
import { inSet } from '../condstore/sets.js';
import { defineExtension } from '../extension.js';
import { always } from '../shared.js';

interface QresyncParams {
  uidvalidity: number;
  modseq: number;
  knownUids: SequenceSet | null;
}

interface State {
  condstore: () => CondstoreApi;
}

const on = (session: ImapSession): boolean => session.enabled.has('QRESYNC');

function parseParams(args: ArgParser): QresyncParams {
  args.char('(');
  const uidvalidity = args.nzNumber();
  args.sp();
  const modseq = args.number64();
  let knownUids: SequenceSet | null = null;
  if (args.trySp()) {
    if (args.peekChar() !== '(') {
      knownUids = args.sequenceSet();
      if (args.trySp()) seqMatch(args);
    } else seqMatch(args);
  }
  args.char(')');
  return { uidvalidity, modseq, knownUids };
}

/** `(known-sequence-set SP known-uid-set)`: read and not needed (the expunge log answers exactly). */
function seqMatch(args: ArgParser): void {
  args.char('(');
  args.sequenceSet();
  args.sp();
  args.sequenceSet();
  args.char(')');
}

/** Compressed text of the UIDs in `set` (`*` = the mailbox's last UID) below UIDNEXT that no longer exist. */
function missingUids(mailbox: Mailbox, set: SequenceSet | null): string {
  const top = mailbox.uidnext - 1;
  const last = mailbox.messages.length ? mailbox.messages[mailbox.messages.length - 1]!.uid : top;
  const ranges: [number, number][] = set
    ? set.ranges.map((r) => {
        const a = r.start === '*' ? last : r.start;
        const b = r.end === '*' ? last : r.end;
        return a <= b ? [a, b] : [b, a];
      })
    : [[1, top]];
  ranges.sort((x, y) => x[0] - y[0]);
  const parts: string[] = [];
  let done = 0;
  for (let [a, b] of ranges) {
    a = Math.max(a, done + 1);
    b = Math.min(b, top);
    if (a > b) continue;
    done = b;
    let cur = a;
    const list = mailbox.messages;
    for (let i = mailbox.lowerBound(a); i < list.length && list[i]!.uid <= b; i++) {
      const uid = list[i]!.uid;
      if (uid > cur) parts.push(uid - 1 === cur ? `${cur}` : `${cur}:${uid - 1}`);
      cur = uid + 1;
    }
    if (cur <= b) parts.push(cur === b ? `${cur}` : `${cur}:${b}`);
  }
  return parts.join(',');
}

/** `VANISHED (EARLIER) uids` for the UIDs of `set` expunged since `modseq` (null: nothing to say). */
function vanishedEarlier(api: CondstoreApi, mailbox: Mailbox, modseq: number, set: SequenceSet | null): ImapValue[] | null {
  const gone = api.expungedSince(mailbox, modseq);
  let text: string;
  if (gone.complete) {
    const last = mailbox.uidnext - 1;
    text = compressNumbers(set ? gone.uids.filter((uid) => inSet(set, uid, last)) : gone.uids);
  } else text = missingUids(mailbox, set);
  return text ? [atom('VANISHED'), [atom('EARLIER')], atom(text)] : null;
}

export const extension = defineExtension<State>({
  name: 'QRESYNC',
  requires: ['CONDSTORE'],
  setup: ({ server }) => ({ condstore: () => server.extension('CONDSTORE')! }),
  capabilities: always('QRESYNC'),
  enable: ['QRESYNC'],
  select: {
    parameters: [{ name: 'QRESYNC', parse: parseParams }],
    refuse: (session, params) => (params.has('QRESYNC') && !on(session) ? 'QRESYNC needs ENABLE QRESYNC first' : undefined),
    closing: (session) => (on(session) ? [[atom('OK'), atom('[CLOSED]'), atom('Previous mailbox closed.')]] : []),
    responses(_session, selected, params, state) {
      const p = params.get('QRESYNC') as QresyncParams | undefined;
      const mailbox = selected.mailbox;
      if (!p || p.uidvalidity !== mailbox.uidvalidity) return [];
      const api = state.condstore();
      const out: ImapValue[][] = [];
      const vanished = vanishedEarlier(api, mailbox, p.modseq, p.knownUids);
      if (vanished) out.push(vanished);
      const last = mailbox.uidnext - 1;
      for (const m of changedMessages(api, mailbox, p.modseq)) {
        if (p.knownUids && !inSet(p.knownUids, m.uid, last)) continue;
        const seq = selected.seqOfUid(m.uid);
        if (seq) out.push([seq, atom('FETCH'), [atom('UID'), m.uid, atom('FLAGS'), selected.flagList(m), atom('MODSEQ'), [m.modseq]]]);
      }
      return out;
    },
  },
  fetch: {
    modifiers: [{ name: 'VANISHED' }],
    plan(ctx, state) {
      if (!ctx.params.has('VANISHED')) return undefined;
      if (!ctx.uid) failBad('VANISHED is a UID FETCH modifier');
      if (!on(ctx.session)) failBad('VANISHED needs ENABLE QRESYNC first');
      const since = ctx.params.get('CHANGEDSINCE') as number | undefined;
      if (since === undefined) failBad('VANISHED needs CHANGEDSINCE');
      const vanished = vanishedEarlier(state.condstore(), ctx.selected.mailbox, since!, ctx.set.searchResult ? null : ctx.set);
      return vanished ? { responses: [vanished] } : undefined;
    },
  },
  updates: {
    flagFetch: (session) => (on(session) ? { uid: true, items: [] } : undefined),
    expunges: (session, uids) => (on(session) ? `* VANISHED ${compressNumbers(uids)}\r\n` : undefined),
  },
});

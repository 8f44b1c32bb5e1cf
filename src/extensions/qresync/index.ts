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
 * There `seq-match-data` narrows the answer: a pair (seq, uid) whose UID
 * still has as many messages at or below it as the client's sequence number
 * says means nothing at or below that UID was expunged, so only UIDs above
 * the highest such pair are reported.
 *
 * As Dovecot, once QRESYNC is on, an EXPUNGE or UID EXPUNGE that removed
 * something answers `OK [HIGHESTMODSEQ n]`, the MODSEQ after the expunge
 * (as in RFC 7162's examples), so a client need not SELECT again to learn it.
 * Likewise, once the session has been told of new messages (`* n EXISTS`,
 * its own APPEND or anyone's) or of expunges (`VANISHED`), it gets
 * `* OK [HIGHESTMODSEQ n] Highest` when its view is current again (after the
 * EXISTS and RECENT, before the tagged answer; inside IDLE at once): a sync
 * client (interimap) then need not look at the mailbox again on its next
 * run. Dovecot puts the code in the tagged OK when that has none (`OK
 * [HIGHESTMODSEQ 14] NOOP completed`); here it is always the untagged OK,
 * which says the same. Flag changes alone send none: their FETCH carries
 * the MODSEQ.
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
import { always, NO_RESPONSES } from '../shared.js';

interface QresyncParams {
  uidvalidity: number;
  modseq: number;
  knownUids: SequenceSet | null;
  /** `(known-sequence-set known-uid-set)` as pairs, ascending; empty when not given. */
  seqMatch: readonly SeqUid[];
}

/** One pair of the client's old view: message `seq` had UID `uid`. */
interface SeqUid {
  seq: number;
  uid: number;
}

interface State {
  condstore: () => CondstoreApi;
  /** Sessions told of new messages or expunges since they last learnt HIGHESTMODSEQ. */
  owed: WeakSet<ImapSession>;
  /** The HIGHESTMODSEQ each session was last told outside SELECT (EXPUNGE's tagged OK, the untagged OK). */
  reported: WeakMap<ImapSession, number>;
}

const on = (session: ImapSession): boolean => session.hasEnabled('QRESYNC');

function parseParams(args: ArgParser): QresyncParams {
  args.char('(');
  const uidvalidity = args.nzNumber();
  args.sp();
  const modseq = args.number64();
  let knownUids: SequenceSet | null = null;
  let pairs: SeqUid[] = [];
  if (args.trySp()) {
    if (args.peekChar() !== '(') {
      knownUids = args.sequenceSet();
      if (args.trySp()) pairs = seqMatch(args);
    } else pairs = seqMatch(args);
  }
  args.char(')');
  return { uidvalidity, modseq, knownUids, seqMatch: pairs };
}

/** At most this many numbers in each set of seq-match-data: it names a sample of the client's view, not all of it. */
const SEQ_MATCH_LIMIT = 100_000;

/** The numbers of a set without `*`, in its order; BAD when `*` is used or it is too long. */
function explicitNumbers(set: SequenceSet, what: string): number[] {
  const out: number[] = [];
  for (const r of set.ranges) {
    if (r.start === '*' || r.end === '*') failBad(`${what} may not contain *`);
    const a = Math.min(r.start as number, r.end as number);
    const b = Math.max(r.start as number, r.end as number);
    if (out.length + (b - a + 1) > SEQ_MATCH_LIMIT) failBad(`${what} names more than ${SEQ_MATCH_LIMIT} messages`);
    for (let n = a; n <= b; n++) out.push(n);
  }
  return out;
}

/**
 * `(known-sequence-set SP known-uid-set)`, RFC 7162 §3.2.5.2: two sets of
 * the same length in ascending order, the Nth number of one matching the Nth
 * of the other; anything else is BAD.
 */
function seqMatch(args: ArgParser): SeqUid[] {
  args.char('(');
  const seqs = explicitNumbers(args.sequenceSet(), 'known-sequence-set');
  args.sp();
  const uids = explicitNumbers(args.sequenceSet(), 'known-uid-set');
  args.char(')');
  if (seqs.length !== uids.length) failBad('known-sequence-set and known-uid-set must name as many messages');
  const pairs: SeqUid[] = [];
  for (let i = 0; i < seqs.length; i++) {
    if (i > 0 && (seqs[i]! <= seqs[i - 1]! || uids[i]! <= uids[i - 1]!)) failBad('seq-match-data must be in ascending order');
    pairs.push({ seq: seqs[i]!, uid: uids[i]! });
  }
  return pairs;
}

/**
 * The highest UID at or below which nothing was expunged since the client's
 * view, by its seq-match pairs (0 when none shows it). UIDs only grow, so if
 * as many messages are still at or below `uid` as the client counted
 * (`seq`), none of them went; then every lower pair holds too.
 */
function intactBelow(mailbox: Mailbox, pairs: readonly SeqUid[]): number {
  for (let i = pairs.length - 1; i >= 0; i--) {
    const { seq, uid } = pairs[i]!;
    if (mailbox.lowerBound(uid + 1) === seq && mailbox.indexOfUid(uid) >= 0) return uid;
  }
  return 0;
}

/** Compressed text of the UIDs in `set` (`*` = the mailbox's last UID) below UIDNEXT that no longer exist. */
function missingUids(mailbox: Mailbox, set: SequenceSet | null, floor: number): string {
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
  let done = floor;
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

/**
 * `VANISHED (EARLIER) uids` for the UIDs of `set` expunged since `modseq`
 * (null: nothing to say). `floor`: UIDs at or below it are known intact (seq-match-data).
 */
function vanishedEarlier(api: CondstoreApi, mailbox: Mailbox, modseq: number, set: SequenceSet | null, floor = 0): ImapValue[] | null {
  const gone = api.expungedSince(mailbox, modseq);
  let text: string;
  if (gone.complete) {
    const last = mailbox.uidnext - 1;
    text = compressNumbers(set ? gone.uids.filter((uid) => inSet(set, uid, last)) : gone.uids);
  } else text = missingUids(mailbox, set, floor);
  return text ? [atom('VANISHED'), [atom('EARLIER')], atom(text)] : null;
}

export const extension = defineExtension<State>({
  name: 'QRESYNC',
  requires: ['CONDSTORE'],
  setup: ({ server }) => ({ condstore: () => server.extension('CONDSTORE')!, owed: new WeakSet(), reported: new WeakMap() }),
  capabilities: always('QRESYNC'),
  enable: ['QRESYNC'],
  select: {
    parameters: [{ name: 'QRESYNC', parse: parseParams }],
    refuse: (session, params) => (params.has('QRESYNC') && !on(session) ? 'QRESYNC needs ENABLE QRESYNC first' : undefined),
    closing: (session) => (on(session) ? [[atom('OK'), atom('[CLOSED]'), atom('Previous mailbox closed.')]] : []),
    responses(session, selected, params, state) {
      // A new selection: what was told of the previous one says nothing of this one.
      state.reported.delete(session);
      state.owed.delete(session);
      const p = params.get('QRESYNC') as QresyncParams | undefined;
      const mailbox = selected.mailbox;
      if (!p || p.uidvalidity !== mailbox.uidvalidity) return [];
      const api = state.condstore();
      const out: ImapValue[][] = [];
      const vanished = vanishedEarlier(api, mailbox, p.modseq, p.knownUids, intactBelow(mailbox, p.seqMatch));
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
  wrap: ['EXPUNGE', 'UID EXPUNGE'].map((command) => ({
    command,
    ifLoaded: true,
    async run(ctx, next, state) {
      const mailbox = ctx.session.selected?.mailbox;
      const before = mailbox?.highestModseq;
      const result = await next();
      if (!mailbox || !on(ctx.session) || result.status !== 'OK' || result.code || mailbox.highestModseq === before) return result;
      state.reported.set(ctx.session, mailbox.highestModseq);
      return { ...result, code: `HIGHESTMODSEQ ${mailbox.highestModseq}` };
    },
  })),
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
    expunges(session, uids, state) {
      if (!on(session)) return undefined;
      state.owed.add(session);
      return `* VANISHED ${compressNumbers(uids)}\r\n`;
    },
    newMessages(session, _first, _added, state) {
      if (on(session)) state.owed.add(session);
      return NO_RESPONSES;
    },
    after(session, settled, state) {
      if (!settled || !state.owed.has(session)) return NO_RESPONSES;
      state.owed.delete(session);
      const mailbox = session.selected?.mailbox;
      if (!mailbox || !on(session) || state.reported.get(session) === mailbox.highestModseq) return NO_RESPONSES;
      state.reported.set(session, mailbox.highestModseq);
      return [[atom('OK'), atom(`[HIGHESTMODSEQ ${mailbox.highestModseq}]`), atom('Highest')]];
    },
  },
});

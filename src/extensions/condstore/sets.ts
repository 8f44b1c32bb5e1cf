/** Sequence-set helpers shared by CONDSTORE and QRESYNC. */
import type { SelectedMailbox } from '../../imap/selected.js';
import { checkMessageSet, type Numbered } from '../../imap/sequence.js';
import type { SequenceSet } from '../../imap/syntax.js';
import type { Message } from '../../store/message.js';

/** True when `n` is in `set`, `*` standing for `max` (ranges in any order). O(ranges). */
export function inSet(set: SequenceSet, n: number, max: number): boolean {
  for (const r of set.ranges) {
    let a = r.start === '*' ? max : r.start;
    let b = r.end === '*' ? max : r.end;
    if (a > b) [a, b] = [b, a];
    // "n:*" names the last message even when n is above it (RFC 3501 §6.4.8).
    if ((r.start === '*' || r.end === '*') && a > max) a = max;
    if (n >= a && n <= b) return true;
  }
  return false;
}

/**
 * The messages of `candidates` (UID order) that are in the session's view
 * and in `set` (UIDs or sequence numbers), with their sequence numbers.
 * O(candidates × (log view + ranges)); `resolve` is the core's full
 * resolution, used for `$` (SEARCHRES).
 */
export function narrow(
  candidates: readonly Message[],
  selected: SelectedMailbox,
  set: SequenceSet,
  byUid: boolean,
  resolve: () => Numbered[],
): Numbered[] {
  const out: Numbered[] = [];
  if (set.searchResult) {
    const wanted = new Set(candidates.map((m) => m.uid));
    return resolve().filter((n) => wanted.has(n.message.uid));
  }
  const view = selected.view;
  // `FETCH 1000 (FLAGS) (CHANGEDSINCE n)` is as BAD as the plain FETCH.
  if (!byUid) checkMessageSet(set, view.length);
  const max = byUid ? (view.length ? view[view.length - 1]!.uid : 0) : view.length;
  for (const m of candidates) {
    const seq = selected.seqOfUid(m.uid);
    if (seq === 0 || view[seq - 1] !== m) continue;
    if (inSet(set, byUid ? m.uid : seq, max)) out.push({ seq, message: m });
  }
  return out;
}

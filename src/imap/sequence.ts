import type { Message } from '../store/message.js';
import { failBad } from './command.js';
import type { SelectedMailbox } from './selected.js';
import type { SequenceSet } from './syntax.js';

/**
 * The search result variable `$` (RFC 5182) of each selection, as UIDs in
 * ascending order. A new selection (SELECT, EXAMINE) starts without one,
 * which is the empty set; only a SEARCH with `RETURN (SAVE)` sets it.
 */
const savedResults = new WeakMap<SelectedMailbox, readonly number[]>();

/** The UIDs `$` stands for in this selection (empty until a SEARCH saves some). */
export function searchResultOf(selected: SelectedMailbox): readonly number[] {
  return savedResults.get(selected) ?? [];
}

/** Sets `$` for this selection (UIDs, ascending). */
export function saveSearchResult(selected: SelectedMailbox, uids: readonly number[]): void {
  savedResults.set(selected, uids);
}

/** A message of the view with its sequence number. */
export interface Numbered {
  seq: number;
  message: Message;
}

/**
 * Resolves a sequence set (or a UID set) against a session's view, in
 * ascending order without duplicates. Sequence numbers beyond the mailbox
 * are an error (as Dovecot: "Invalid messageset"); UIDs that do not exist
 * simply match nothing. O(ranges log n + result).
 */
export function resolveSet(set: SequenceSet, selected: SelectedMailbox, byUid: boolean): Numbered[] {
  const view = selected.view;
  const n = view.length;
  if (set.searchResult) {
    // `$` (RFC 5182) names the same messages in UID and sequence-number commands;
    // saved messages expunged since are simply gone from it.
    const out: Numbered[] = [];
    for (const uid of searchResultOf(selected)) {
      const seq = selected.seqOfUid(uid);
      if (seq > 0) out.push({ seq, message: view[seq - 1]! });
    }
    return out;
  }
  const intervals: [number, number][] = [];
  if (byUid) {
    const maxUid = n ? view[n - 1]!.uid : 0;
    for (const r of set.ranges) {
      let a = r.start === '*' ? maxUid : r.start;
      let b = r.end === '*' ? maxUid : r.end;
      if (a > b) [a, b] = [b, a];
      // "n:*" always includes the last message, even when n is above it (RFC 3501 §6.4.8).
      if ((r.start === '*' || r.end === '*') && n && a > maxUid) a = maxUid;
      const from = selected.lowerBound(a);
      const to = selected.lowerBound(b + 1) - 1;
      if (from <= to) intervals.push([from, to]);
    }
  } else {
    for (const r of set.ranges) {
      let a = r.start === '*' ? n : r.start;
      let b = r.end === '*' ? n : r.end;
      if (a > b) [a, b] = [b, a];
      if (a < 1 || b > n) {
        // `*` in an empty mailbox names no message; naive clients send `1:*` there.
        if (n === 0 && (r.start === '*' || r.end === '*')) continue;
        failBad('Invalid messageset');
      }
      intervals.push([a - 1, b - 1]);
    }
  }
  intervals.sort((x, y) => x[0] - y[0]);
  const out: Numbered[] = [];
  let next = 0;
  for (const [from, to] of intervals) {
    for (let i = Math.max(from, next); i <= to; i++) out.push({ seq: i + 1, message: view[i]! });
    next = Math.max(next, to + 1);
  }
  return out;
}

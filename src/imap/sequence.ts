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

/**
 * Refuses a message set (FETCH, STORE, COPY, MOVE and their CONDSTORE
 * forms) that names a sequence number above EXISTS: "The server should
 * respond with a tagged BAD response to a command that uses a message
 * sequence number greater than the number of messages in the selected
 * mailbox" (RFC 3501 §9 and RFC 9051 §9, note on seq-number), as Dovecot
 * ("Invalid messageset"). `$` is exempt: it holds UIDs. One leniency is
 * kept on purpose: `*` in an empty mailbox names no message instead of
 * being BAD, because naive clients send `1:*` there (the client checker
 * still records `sequence-beyond-exists` for the `1`). O(ranges).
 */
export function checkMessageSet(set: SequenceSet, exists: number): void {
  if (set.searchResult) return;
  for (const r of set.ranges) {
    const star = r.start === '*' || r.end === '*';
    const a = r.start === '*' ? exists : r.start;
    const b = r.end === '*' ? exists : r.end;
    if (exists === 0 && star) continue;
    if (Math.min(a, b) < 1 || Math.max(a, b) > exists) failBad('Invalid messageset');
  }
}

/**
 * The sequence ranges of a SEARCH key (SEARCH, SORT, THREAD and the
 * CONTEXT updates they start) over a view of `exists` messages, ascending
 * bounds, each within 1..exists. Here a number above EXISTS is no error
 * but names no message; only `*` stands for the last one, so `1000`
 * matches nothing in a 6-message mailbox while `1000:*` (all numbers
 * between 6 and 1000, "regardless of order", RFC 9051 §9 seq-range) still
 * matches message 6. O(ranges).
 */
export function searchSequenceRanges(set: SequenceSet, exists: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (const r of set.ranges) {
    let a = r.start === '*' ? exists : r.start;
    let b = r.end === '*' ? exists : r.end;
    if (a > b) [a, b] = [b, a];
    if (a < 1 || a > exists) continue;
    out.push({ start: a, end: Math.min(b, exists) });
  }
  return out;
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
    checkMessageSet(set, n);
    for (const r of set.ranges) {
      let a = r.start === '*' ? n : r.start;
      let b = r.end === '*' ? n : r.end;
      if (a > b) [a, b] = [b, a];
      if (a >= 1) intervals.push([a - 1, b - 1]);
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

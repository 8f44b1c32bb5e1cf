/**
 * The ADDTO/REMOVEFROM items (RFC 5267 §4.3) that turn a result list the
 * client holds into the current one. For SEARCH results position 0 (as
 * Dovecot sends them too); for SORT results positions are 1-based places
 * in the full result list in sort order:
 * - REMOVEFROM first, one per run of removed entries that are neighbours in
 *   the old list, the last run first: each position is still right when the
 *   client applies it;
 * - then ADDTO, one per run of new entries that are neighbours in the new
 *   list, the first run first: everything before a run is in place when it
 *   is inserted at its position.
 * A run is cut where its numbers do not ascend, so every set is a plain
 * ascending sequence-set and its order is the list's order.
 */
import { atom, type ImapValue } from '../../imap/wire/values.js';
import { compressSet } from '../esearch/index.js';

/** Splits a run of numbers into pieces that ascend, each with its offset in the run. */
function ascendingPieces(numbers: readonly number[]): { offset: number; numbers: number[] }[] {
  const out: { offset: number; numbers: number[] }[] = [];
  for (let i = 0; i < numbers.length; i++) {
    const last = out[out.length - 1];
    if (last && numbers[i]! > last.numbers[last.numbers.length - 1]!) last.numbers.push(numbers[i]!);
    else out.push({ offset: i, numbers: [numbers[i]!] });
  }
  return out;
}

/** Runs of consecutive indices of `list` whose entries `pick` selects. */
function runs<T>(list: readonly T[], pick: (entry: T) => boolean): { start: number; entries: T[] }[] {
  const out: { start: number; entries: T[] }[] = [];
  let current: { start: number; entries: T[] } | null = null;
  list.forEach((entry, i) => {
    if (!pick(entry)) {
      current = null;
      return;
    }
    if (current === null) {
      current = { start: i, entries: [] };
      out.push(current);
    }
    current.entries.push(entry);
  });
  return out;
}

/**
 * Items for a SEARCH result, which is in mailbox order: position 0 (RFC
 * 5267's ABNF allows it for SEARCH, and the client knows where each number
 * goes), one REMOVEFROM with every removed message, one ADDTO with every
 * new one. Empty when nothing changed.
 */
export function searchChanges(before: readonly number[], after: readonly number[], number: (uid: number) => number): ImapValue[] {
  const inAfter = new Set(after);
  const inBefore = new Set(before);
  const removed = before.filter((uid) => !inAfter.has(uid)).map(number).sort((a, b) => a - b);
  const added = after.filter((uid) => !inBefore.has(uid)).map(number).sort((a, b) => a - b);
  const items: ImapValue[] = [];
  if (removed.length > 0) items.push(atom('REMOVEFROM'), [0, atom(compressSet(removed))]);
  if (added.length > 0) items.push(atom('ADDTO'), [0, atom(compressSet(added))]);
  return items;
}

/**
 * Items for a SORT result (positions as above); `before`/`after` are UIDs in sort order.
 * Items that take the client from `before` to `after` (UIDs, in result
 * order); `number` gives the number the client knows a UID by (itself, or
 * its sequence number). Empty when nothing changed.
 */
export function contextChanges(before: readonly number[], after: readonly number[], number: (uid: number) => number): ImapValue[] {
  const inAfter = new Set(after);
  const inBefore = new Set(before);
  let kept = before.filter((uid) => inAfter.has(uid));
  const keptAfter = after.filter((uid) => inBefore.has(uid));
  // Sort keys never change for a message, so kept entries keep their order; if they did not, start over.
  const reordered = kept.some((uid, i) => keptAfter[i] !== uid);
  if (reordered) kept = [];
  const keep = new Set(kept);
  const items: ImapValue[] = [];
  const removed = runs(before, (uid) => !keep.has(uid));
  for (let r = removed.length - 1; r >= 0; r--) {
    const run = removed[r]!;
    const pieces = ascendingPieces(run.entries.map(number));
    for (let p = pieces.length - 1; p >= 0; p--) {
      const piece = pieces[p]!;
      items.push(atom('REMOVEFROM'), [run.start + piece.offset + 1, atom(compressSet(piece.numbers))]);
    }
  }
  for (const run of runs(after, (uid) => !keep.has(uid))) {
    for (const piece of ascendingPieces(run.entries.map(number))) {
      items.push(atom('ADDTO'), [run.start + piece.offset + 1, atom(compressSet(piece.numbers))]);
    }
  }
  return items;
}

/**
 * SEARCHRES (RFC 5182): the SEARCH result option SAVE and the `$` variable.
 *
 * `SEARCH RETURN (SAVE) ...` keeps the matching messages of the selection
 * as `$` (by UID, so `$` names the same messages in sequence-number and UID
 * commands, and a message expunged since simply drops out of it). `$` may
 * then stand for a sequence set in FETCH, STORE, COPY, MOVE, SEARCH, UID
 * EXPUNGE and their UID forms. What is kept (§2.4):
 * - SAVE alone or with ALL or COUNT: every match (SAVE alone sends no
 *   ESEARCH response; with others ESEARCH answers them);
 * - SAVE with MIN and/or MAX only: the lowest and/or highest match;
 * - SAVE with PARTIAL (RFC 9394): the window PARTIAL returns, whatever
 *   else was asked, so `UID FETCH $` fetches the page just found.
 * `$` is the empty set (§2.1) after SELECT or EXAMINE (a new selection
 * starts without one), before any SAVE, and after a SEARCH with SAVE that
 * fails with NO (BADCHARSET, access); a SEARCH refused as BAD changes
 * nothing. A command on an empty `$` succeeds and touches no message.
 */
import { saveSearchResult } from '../../imap/sequence.js';
import { partialWindow, type PartialRange } from '../partial/range.js';
import { defineExtension, type SearchResultContext } from '../extension.js';
import { always } from '../shared.js';

/** The UIDs a SEARCH with SAVE keeps (RFC 5182 §2.4). */
export function savedUids(ctx: SearchResultContext): number[] {
  if (ctx.found === null) return [];
  const { options } = ctx;
  const range = options.has('PARTIAL') ? (ctx.returnArguments.get('PARTIAL') as PartialRange | undefined) : undefined;
  if (range !== undefined) return partialWindow(ctx.found, range).map((f) => f.message.uid);
  const uids = ctx.found.map((f) => f.message.uid);
  const minMax = options.has('MIN') || options.has('MAX');
  if (!minMax || options.has('ALL') || options.has('COUNT') || uids.length === 0) return uids;
  const out: number[] = [];
  if (options.has('MIN')) out.push(uids[0]!);
  if (options.has('MAX') && (out.length === 0 || uids[uids.length - 1] !== out[0])) out.push(uids[uids.length - 1]!);
  return out;
}

export const extension = defineExtension<undefined>({
  name: 'SEARCHRES',
  requires: ['ESEARCH'],
  capabilities: always('SEARCHRES'),
  search: {
    returnOptions: ['SAVE'],
    resultVariable: true,
    results: (ctx) => {
      if (ctx.options.has('SAVE')) saveSearchResult(ctx.selected, savedUids(ctx));
    },
  },
});

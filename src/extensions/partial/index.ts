/**
 * PARTIAL (RFC 9394): the SEARCH/SORT result option `PARTIAL range`, a
 * window of the results by position: `SEARCH RETURN (PARTIAL 1:10) ...`
 * answers `* ESEARCH (TAG "t") PARTIAL (1:10 4:9,12)` (`UID` and UIDs for
 * UID SEARCH/UID SORT), `-1:-10` the last ten, `NIL` when the window holds
 * no result. Positions are in the command's order: mailbox order for
 * SEARCH, sort order for SORT (ESORT), where the set lists the window in
 * sort order. MIN, MAX and COUNT given with it still answer for the whole
 * result; ALL with PARTIAL is BAD (RFC 5267 §4.4: one of them at most), as
 * is a second PARTIAL. With SAVE (SEARCHRES) `$` holds the window: paging
 * with `UID FETCH $` is the "paged FETCH" of the RFC; it defines no FETCH
 * modifier of its own.
 */
import { failBad } from '../../imap/command.js';
import { atom } from '../../imap/wire/values.js';
import { defineExtension, type SearchResultContext } from '../extension.js';
import { compressSet } from '../esearch/index.js';
import { always } from '../shared.js';
import { parsePartialRange, partialWindow, type PartialRange } from './range.js';

/** The PARTIAL range a SEARCH asked for, if any. */
export function partialRangeOf(ctx: SearchResultContext): PartialRange | undefined {
  return ctx.options.has('PARTIAL') ? (ctx.returnArguments.get('PARTIAL') as PartialRange) : undefined;
}

export const extension = defineExtension<undefined>({
  name: 'PARTIAL',
  requires: ['ESEARCH'],
  capabilities: always('PARTIAL'),
  search: {
    returnOptions: ['PARTIAL'],
    parseReturnOption: (_option, args) => {
      args.sp();
      const text = args.atom();
      const range = parsePartialRange(text);
      if (range === null) failBad(`Invalid PARTIAL range ${text.slice(0, 40)}`);
      return range!;
    },
    refuseReturnOptions: (options, _ctx) => (options.has('PARTIAL') && options.has('ALL') ? 'PARTIAL and ALL cannot be used together' : undefined),
    resultItems: (ctx) => {
      const range = partialRangeOf(ctx);
      if (range === undefined || ctx.found === null) return undefined;
      const window = partialWindow(ctx.found, range);
      const set = window.length === 0 ? null : atom(compressSet(window.map((f) => (ctx.uid ? f.message.uid : f.seq))));
      return { items: [atom('PARTIAL'), [atom(range.text), set]], returned: window };
    },
  },
});

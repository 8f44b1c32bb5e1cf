/**
 * SORT (RFC 5256 §3), SORT=DISPLAY (RFC 5957) and, while ESEARCH is loaded,
 * ESORT (RFC 5267 §3): `SORT (criteria) charset search-keys` and `UID SORT`
 * answer `* SORT n ...` in the requested order; `SORT RETURN (MIN MAX ALL
 * COUNT) ...` answers with ESEARCH data instead (see ./command.ts).
 *
 * Keys: ARRIVAL (INTERNALDATE), DATE (the Date: header in UTC, else
 * INTERNALDATE), SIZE, SUBJECT (the RFC 5256 §2.1 base subject), FROM, TO,
 * CC (the first address's local part), DISPLAYFROM, DISPLAYTO (its display
 * name, else its address), each optionally after REVERSE. Strings compare
 * with i;unicode-casemap (RFC 5051, src/util/casemap.ts).
 *
 * The per-message values are cached per server (./keys.ts), and so is each
 * sort order made (./order.ts SortCache): a second SORT with the same
 * criteria costs the search and one pass over the matches.
 */
import { SELECTED, type CommandContext } from '../../imap/command.js';
import { imapProtocol } from '../../imap/protocol.js';
import { defineExtension } from '../extension.js';
import { runSort } from './command.js';
import { SortCache } from './order.js';

export const extension = defineExtension<SortCache>({
  name: 'SORT',
  setup: () => new SortCache(),
  onChange: (change, cache) => cache.onChange(change),
  capabilities: (session) => (imapProtocol(session.server).has('ESEARCH') ? ['SORT', 'SORT=DISPLAY', 'ESORT'] : ['SORT', 'SORT=DISPLAY']),
  commands: [
    { name: 'SORT', states: SELECTED, holdsExpunges: true, run: (ctx) => runSort(ctx, cacheOf(ctx)) },
    { name: 'UID SORT', states: SELECTED, holdsExpunges: true, run: (ctx) => runSort(ctx, cacheOf(ctx)) },
  ],
});

function cacheOf(ctx: CommandContext): SortCache {
  return imapProtocol(ctx.session.server).api('SORT') as SortCache;
}

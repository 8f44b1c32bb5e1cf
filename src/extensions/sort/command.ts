/**
 * SORT and UID SORT (RFC 5256 §3, RFC 5957 DISPLAYFROM/DISPLAYTO, RFC 5267
 * §3 ESORT result options).
 *
 *   sort = ["UID" SP] "SORT" [SP "RETURN" SP "(" options ")"] SP
 *          "(" ["REVERSE" SP] key *(SP ["REVERSE" SP] key) ")" SP charset 1*(SP search-key)
 *
 * The search part is the core SEARCH's (same keys, extension keys, charset
 * check, access). Messages equal under every key keep mailbox order (by
 * sequence number, whatever REVERSE says: §3 "sorted according to the order
 * in which they appear in the mailbox"). With `RETURN (...)` the matches,
 * in sort order, go to the extensions' SEARCH result options (ESEARCH
 * answers `* ESEARCH (TAG "t") [UID] MIN .. MAX .. ALL .. COUNT ..`, where
 * MIN and MAX are the first and last in sort order) and no `* SORT` is sent.
 */
import { failBad, ok, type CommandContext, type CommandResult } from '../../imap/command.js';
import { findMatches, readReturnOptions } from '../../imap/commands/search.js';
import { imapProtocol } from '../../imap/protocol.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import type { SearchMatch } from '../extension.js';
import { readSearchCriteria } from './criteria.js';
import { SORT_KEYS, type SortCache, type SortCriterion } from './order.js';

/** `(criterion ...)`: REVERSE applies to the key right after it; the list may not be empty. */
export function readSortCriteria(ctx: CommandContext): SortCriterion[] {
  const { args } = ctx;
  return args.list(
    () => {
      let word = args.atom().toUpperCase();
      let reverse = false;
      if (word === 'REVERSE') {
        reverse = true;
        args.sp();
        word = args.atom().toUpperCase();
      }
      const key = SORT_KEYS.find((k) => k === word);
      if (key === undefined) failBad(`Unknown sort key ${word.slice(0, 40)}`);
      return { key: key!, reverse };
    },
    { allowEmpty: false },
  );
}

export function runSort(ctx: CommandContext, cache: SortCache): CommandResult {
  const { session, args } = ctx;
  const protocol = imapProtocol(session.server);
  const returned = readReturnOptions(ctx);
  const criteria = readSortCriteria(ctx);
  args.sp();
  const program = readSearchCriteria(args);
  args.end();
  const selected = session.selected!;
  const answer = (found: readonly SearchMatch[] | null): void => {
    if (returned === null) return;
    // CONTEXT=SORT keeps the result: the same search, sorted the same way, over the view of the moment.
    const rerun = (): readonly SearchMatch[] | null => {
      const again = findMatches(ctx, program);
      return Array.isArray(again) ? cache.sort(selected.mailbox, again, criteria) : null;
    };
    protocol.searchResults({ session, selected, tag: ctx.tag, command: ctx.name, uid: ctx.uid, ...returned, criteria: program.keys, found, rerun });
  };
  const matched = findMatches(ctx, program);
  if (!Array.isArray(matched)) {
    answer(null);
    return matched;
  }
  const sorted = cache.sort(selected.mailbox, matched, criteria);
  if (returned !== null) {
    answer(sorted);
    return ok('Sort completed');
  }
  // The numbers as one pre-joined piece: a SORT of a large mailbox is one long line.
  const response: ImapValue[] = [atom('SORT')];
  if (sorted.length > 0) response.push(atom(cache.text(sorted, ctx.uid)));
  // Items extensions add to a SEARCH answer: CONDSTORE's `(MODSEQ n)` when the criteria use MODSEQ (RFC 7162 §3.1.5 covers SORT too).
  const extra = protocol.searchResponseItems({ session, selected, criteria: program.keys, found: matched });
  session.untaggedList(extra.length > 0 ? [...response, ...extra] : response);
  return ok('Sort completed');
}

/**
 * THREAD=ORDEREDSUBJECT and THREAD=REFERENCES (RFC 5256 §3):
 * `THREAD algorithm charset search-keys` and `UID THREAD` answer
 * `* THREAD (2)(3 6 (4 23)(44 7 96))` with sequence numbers (UIDs for UID
 * THREAD), or a bare `* THREAD` when nothing matches. The search part is the
 * core SEARCH's; an unknown algorithm is BAD, an unknown charset
 * `NO [BADCHARSET]`. Base subjects, sent dates and message IDs come from a
 * per-message cache of this server (src/extensions/sort/keys.ts), SORT's
 * when SORT is loaded.
 */
import { SELECTED, failBad, ok, type CommandContext, type CommandResult } from '../../imap/command.js';
import { findMatches } from '../../imap/commands/search.js';
import { imapProtocol } from '../../imap/protocol.js';
import { atom } from '../../imap/wire/values.js';
import { defineExtension } from '../extension.js';
import { readSearchCriteria } from '../sort/criteria.js';
import type { SortCache } from '../sort/order.js';
import { SortKeys } from '../sort/keys.js';
import { threadBySubject } from './ordered-subject.js';
import { threadByReferences } from './references.js';
import { formatThreads } from './tree.js';

const ALGORITHMS = new Map([
  ['ORDEREDSUBJECT', threadBySubject],
  ['REFERENCES', threadByReferences],
]);

function run(ctx: CommandContext): CommandResult {
  const { session, args } = ctx;
  const name = args.atom().toUpperCase();
  const algorithm = ALGORITHMS.get(name);
  if (algorithm === undefined) failBad(`Unknown threading algorithm ${name.slice(0, 40)}`);
  args.sp();
  const program = readSearchCriteria(args);
  args.end();
  const matched = findMatches(ctx, program);
  if (!Array.isArray(matched)) return matched;
  const protocol = imapProtocol(session.server);
  // With SORT loaded too, one cache of base subjects and dates serves both.
  const keys = (protocol.api('SORT') as SortCache | undefined)?.keys ?? (protocol.api('THREAD') as SortKeys);
  const roots = algorithm!(matched, keys.of(session.selected!.mailbox));
  session.untaggedList(roots.length > 0 ? [atom('THREAD'), atom(formatThreads(roots, ctx.uid))] : [atom('THREAD')]);
  return ok('Thread completed');
}

export const extension = defineExtension<SortKeys>({
  name: 'THREAD',
  setup: () => new SortKeys(),
  onChange: (change, keys) => keys.onChange(change),
  capabilities: () => ['THREAD=ORDEREDSUBJECT', 'THREAD=REFERENCES'],
  commands: [
    { name: 'THREAD', states: SELECTED, holdsExpunges: true, run },
    { name: 'UID THREAD', states: SELECTED, holdsExpunges: true, run },
  ],
});

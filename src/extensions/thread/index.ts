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
import type { StoreChange } from '../../store/changes.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { Message } from '../../store/message.js';
import { SELECTED, failBad, ok, type CommandContext, type CommandResult } from '../../imap/command.js';
import { findMatches } from '../../imap/commands/search.js';
import { imapProtocol } from '../../imap/protocol.js';
import { atom } from '../../imap/wire/values.js';
import { defineExtension } from '../extension.js';
import { readSearchCriteria } from '../sort/criteria.js';
import { sameMatches, type SortCache } from '../sort/order.js';
import { SortKeys } from '../sort/keys.js';
import { threadBySubject } from './ordered-subject.js';
import { threadByReferences } from './references.js';
import { formatThreads, type ThreadNode } from './tree.js';

const ALGORITHMS = new Map([
  ['ORDEREDSUBJECT', threadBySubject],
  ['REFERENCES', threadByReferences],
]);

type Found = readonly { seq: number; message: Message }[];

/**
 * Per-server state: the message values (used when SORT is not loaded) and
 * the last threads made per mailbox. Threads depend only on the matches
 * (their messages, whose values never change, and their sequence numbers),
 * so a THREAD whose matches are exactly the last ones' answers from them.
 */
export class ThreadState {
  readonly keys = new SortKeys();
  private last = new WeakMap<Mailbox, { algorithm: string; found: Found; roots: ThreadNode[] }>();
  /** The wire form of kept threads, per kind (sequence numbers, UIDs), made once. */
  private texts = new WeakMap<ThreadNode[], { seq?: string; uid?: string }>();

  /** `formatThreads(roots, uid)`, kept while `roots` are the mailbox's last threads. */
  text(roots: ThreadNode[], uid: boolean): string {
    let texts = this.texts.get(roots);
    if (texts === undefined) {
      texts = {};
      this.texts.set(roots, texts);
    }
    return (texts[uid ? 'uid' : 'seq'] ??= formatThreads(roots, uid));
  }

  threads(mailbox: Mailbox, algorithm: string, found: Found, make: () => ThreadNode[]): ThreadNode[] {
    const last = this.last.get(mailbox);
    if (last !== undefined && last.algorithm === algorithm && sameMatches(last.found, found)) return last.roots;
    const roots = make();
    this.last.set(mailbox, { algorithm, found, roots });
    return roots;
  }

  onChange(change: StoreChange): void {
    this.keys.onChange(change);
    // Keep no removed messages alive through the last threads.
    if (change.kind === 'expunge' || change.kind === 'uidvalidity') this.last.delete(change.mailbox);
    else if (change.kind === 'reset' || (change.kind === 'mailbox' && (change.type === 'rename' || change.type === 'delete'))) this.last = new WeakMap();
  }
}


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
  const state = protocol.api('THREAD') as ThreadState;
  // With SORT loaded too, one cache of base subjects and dates serves both.
  const keys = (protocol.api('SORT') as SortCache | undefined)?.keys ?? state.keys;
  const mailbox = session.selected!.mailbox;
  const roots = state.threads(mailbox, name, matched, () => algorithm!(matched, keys.of(mailbox)));
  session.untaggedList(roots.length > 0 ? [atom('THREAD'), atom(state.text(roots, ctx.uid))] : [atom('THREAD')]);
  return ok('Thread completed');
}

export const extension = defineExtension<ThreadState>({
  name: 'THREAD',
  setup: () => new ThreadState(),
  onChange: (change, state) => state.onChange(change),
  capabilities: () => ['THREAD=ORDEREDSUBJECT', 'THREAD=REFERENCES'],
  commands: [
    { name: 'THREAD', states: SELECTED, holdsExpunges: true, run },
    { name: 'UID THREAD', states: SELECTED, holdsExpunges: true, run },
  ],
});

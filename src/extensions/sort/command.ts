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
import type { Message } from '../../store/message.js';
import { readSearchCriteria } from './criteria.js';
import type { StoreChange } from '../../store/changes.js';
import type { Mailbox } from '../../store/mailbox.js';
import { SortKeys, type MessageKeys } from './keys.js';

const KEYS = ['ARRIVAL', 'CC', 'DATE', 'FROM', 'SIZE', 'SUBJECT', 'TO', 'DISPLAYFROM', 'DISPLAYTO'] as const;
export type SortKeyName = (typeof KEYS)[number];

export interface SortCriterion {
  key: SortKeyName;
  reverse: boolean;
}

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
      const key = KEYS.find((k) => k === word);
      if (key === undefined) failBad(`Unknown sort key ${word.slice(0, 40)}`);
      return { key: key!, reverse };
    },
    { allowEmpty: false },
  );
}

type Found = { seq: number; message: Message };

function valueOf(keys: MessageKeys, key: SortKeyName, m: Message): string | number {
  switch (key) {
    case 'ARRIVAL':
      return m.internaldate.ms;
    case 'DATE':
      return keys.sentDate(m);
    case 'SIZE':
      return keys.size(m);
    case 'SUBJECT':
      return keys.subject(m);
    case 'FROM':
      return keys.mailbox(m, 'from');
    case 'TO':
      return keys.mailbox(m, 'to');
    case 'CC':
      return keys.mailbox(m, 'cc');
    case 'DISPLAYFROM':
      return keys.display(m, 'from');
    case 'DISPLAYTO':
      return keys.display(m, 'to');
  }
}

/**
 * Indexes of `found` in sort order. `found` is ascending by sequence number,
 * so the index itself breaks ties (RFC 5256 §3: mailbox order).
 */
function sortIndexes(found: readonly Found[], criteria: readonly SortCriterion[], keys: MessageKeys): number[] {
  const columns = criteria.map((c) => found.map((f) => valueOf(keys, c.key, f.message)));
  const signs = criteria.map((c) => (c.reverse ? -1 : 1));
  const order = found.map((_, i) => i);
  if (columns.length === 1) {
    const col = columns[0]!;
    const sign = signs[0]!;
    order.sort((a, b) => {
      const x = col[a]!;
      const y = col[b]!;
      return x === y ? a - b : x < y ? -sign : sign;
    });
    return order;
  }
  const n = columns.length;
  order.sort((a, b) => {
    for (let i = 0; i < n; i++) {
      const x = columns[i]![a]!;
      const y = columns[i]![b]!;
      if (x !== y) return x < y ? -signs[i]! : signs[i]!;
    }
    return a - b;
  });
  return order;
}

/** Rankings kept per mailbox and criteria; at most this many criteria per mailbox. */
const RANKINGS_PER_MAILBOX = 8;

/**
 * Sort orders already computed. A message's sort values never change (see
 * ./keys.ts) and ties go by UID, which is sequence order in every view, so
 * the order of a set of messages holds for any subset of it: a ranking
 * (message -> position) made by one SORT answers every later SORT with the
 * same criteria whose matches it covers, in O(matches) without comparing.
 * A match it lacks (a new message) makes a new ranking; an expunge drops
 * the mailbox's rankings so they do not hold removed messages.
 */
export class SortCache {
  readonly keys = new SortKeys();
  private rankings = new WeakMap<Mailbox, Map<string, Map<Message, number>>>();

  sort(mailbox: Mailbox, found: readonly Found[], criteria: readonly SortCriterion[]): Found[] {
    const id = criteria.map((c) => (c.reverse ? `-${c.key}` : c.key)).join(' ');
    let byCriteria = this.rankings.get(mailbox);
    if (byCriteria === undefined) {
      byCriteria = new Map();
      this.rankings.set(mailbox, byCriteria);
    }
    const ranking = byCriteria.get(id);
    if (ranking !== undefined) {
      // Bucket the matches by their kept positions; one match without a position means a new ranking.
      const slots = new Int32Array(ranking.size).fill(-1);
      let covered = true;
      for (let i = 0; i < found.length; i++) {
        const position = ranking.get(found[i]!.message);
        if (position === undefined) {
          covered = false;
          break;
        }
        slots[position] = i;
      }
      if (covered) {
        const out: Found[] = [];
        for (let p = 0; p < slots.length; p++) if (slots[p]! >= 0) out.push(found[slots[p]!]!);
        return out;
      }
    }
    const order = sortIndexes(found, criteria, this.keys.of(mailbox));
    const made = new Map<Message, number>();
    const out: Found[] = new Array(order.length);
    order.forEach((index, position) => {
      out[position] = found[index]!;
      made.set(found[index]!.message, position);
    });
    byCriteria.delete(id);
    byCriteria.set(id, made);
    if (byCriteria.size > RANKINGS_PER_MAILBOX) byCriteria.delete(byCriteria.keys().next().value!);
    return out;
  }

  onChange(change: StoreChange): void {
    this.keys.onChange(change);
    if (change.kind === 'expunge') this.rankings.delete(change.mailbox);
    else if (change.kind === 'reset') this.rankings = new WeakMap();
  }
}

export function runSort(ctx: CommandContext, cache: SortCache): CommandResult {
  const { session, args } = ctx;
  const protocol = imapProtocol(session.server);
  const options = readReturnOptions(ctx);
  const criteria = readSortCriteria(ctx);
  args.sp();
  const program = readSearchCriteria(args);
  args.end();
  const selected = session.selected!;
  const matched = findMatches(ctx, program);
  if (!Array.isArray(matched)) {
    if (options !== null) protocol.searchResults({ session, selected, tag: ctx.tag, uid: ctx.uid, options, criteria: program.keys, found: null });
    return matched;
  }
  const sorted = cache.sort(selected.mailbox, matched, criteria);
  if (options !== null) {
    protocol.searchResults({ session, selected, tag: ctx.tag, uid: ctx.uid, options, criteria: program.keys, found: sorted });
    return ok('Sort completed');
  }
  // The numbers as one pre-joined piece: a SORT of a large mailbox is one long line.
  const response: ImapValue[] = [atom('SORT')];
  if (sorted.length > 0) response.push(atom(sorted.map((r) => (ctx.uid ? r.message.uid : r.seq)).join(' ')));
  // Items extensions add to a SEARCH answer: CONDSTORE's `(MODSEQ n)` when the criteria use MODSEQ (RFC 7162 §3.1.5 covers SORT too).
  const extra = protocol.searchResponseItems({ session, selected, criteria: program.keys, found: matched });
  session.untaggedList(extra.length > 0 ? [...response, ...extra] : response);
  return ok('Sort completed');
}

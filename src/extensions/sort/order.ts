/**
 * Sort orders: the sort values of the matches compared key by key (ties in
 * mailbox order), and the orders already made, kept per mailbox and
 * criteria (SortCache).
 */
import type { StoreChange } from '../../store/changes.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { Message } from '../../store/message.js';
import { SortKeys, type MessageKeys } from './keys.js';

export const SORT_KEYS = ['ARRIVAL', 'CC', 'DATE', 'FROM', 'SIZE', 'SUBJECT', 'TO', 'DISPLAYFROM', 'DISPLAYTO'] as const;
export type SortKeyName = (typeof SORT_KEYS)[number];

export interface SortCriterion {
  key: SortKeyName;
  reverse: boolean;
}

export type Found = { seq: number; message: Message };

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
  /** Per mailbox the last answer: the same criteria over exactly the same matches is the same order. */
  private last = new WeakMap<Mailbox, { id: string; found: readonly Found[]; sorted: Found[] }>();
  /** The `* SORT` numbers of a sorted list, per kind (sequence numbers, UIDs), made once. */
  private texts = new WeakMap<readonly Found[], { seq?: string; uid?: string }>();

  sort(mailbox: Mailbox, found: readonly Found[], criteria: readonly SortCriterion[]): Found[] {
    const id = criteria.map((c) => (c.reverse ? `-${c.key}` : c.key)).join(' ');
    // A repeated SORT (a client refreshing its view) answers without a lookup per match.
    const last = this.last.get(mailbox);
    if (last !== undefined && last.id === id && sameMatches(last.found, found)) return last.sorted;
    const sorted = this.rank(mailbox, found, criteria, id);
    this.last.set(mailbox, { id, found, sorted });
    return sorted;
  }

  /** The numbers of `sorted` (as returned by `sort`) joined by spaces: UIDs, or sequence numbers. */
  text(sorted: readonly Found[], uid: boolean): string {
    let texts = this.texts.get(sorted);
    if (texts === undefined) {
      texts = {};
      this.texts.set(sorted, texts);
    }
    const kind = uid ? 'uid' : 'seq';
    return (texts[kind] ??= sorted.map((r) => (uid ? r.message.uid : r.seq)).join(' '));
  }

  private rank(mailbox: Mailbox, found: readonly Found[], criteria: readonly SortCriterion[], id: string): Found[] {
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
    if (change.kind === 'expunge') {
      this.rankings.delete(change.mailbox);
      this.last.delete(change.mailbox);
    } else if (change.kind === 'uidvalidity') {
      // UIDs renumbered in place: the kept UID text would be stale.
      this.last.delete(change.mailbox);
    } else if (change.kind === 'reset') {
      this.rankings = new WeakMap();
      this.last = new WeakMap();
    }
  }
}

/** The same messages at the same sequence numbers, in the same order. */
export function sameMatches(a: readonly Found[], b: readonly Found[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.message !== b[i]!.message || a[i]!.seq !== b[i]!.seq) return false;
  return true;
}


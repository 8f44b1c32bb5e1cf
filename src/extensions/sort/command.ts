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
import { compareKeys } from './collate.js';
import { readSearchCriteria } from './criteria.js';
import type { SortKeys } from './keys.js';

const KEYS = ['ARRIVAL', 'CC', 'DATE', 'FROM', 'SIZE', 'SUBJECT', 'TO', 'DISPLAYFROM', 'DISPLAYTO'] as const;
export type SortKeyName = (typeof KEYS)[number];

export interface SortCriterion {
  key: SortKeyName;
  reverse: boolean;
}

/** `(criterion ...)`: REVERSE applies to the key right after it; the list may not be empty. */
export function readSortCriteria(ctx: CommandContext, display: boolean): SortCriterion[] {
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
      if (key === undefined || (!display && key.startsWith('DISPLAY'))) failBad(`Unknown sort key ${word.slice(0, 40)}`);
      return { key: key!, reverse };
    },
    { allowEmpty: false },
  );
}

interface Row {
  seq: number;
  message: Message;
  values: (string | number)[];
}

function valueOf(keys: SortKeys, key: SortKeyName, m: Message): string | number {
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

/** The matches in sort order. */
export function sortMessages(found: readonly { seq: number; message: Message }[], criteria: readonly SortCriterion[], keys: SortKeys): Row[] {
  const rows: Row[] = found.map((f) => ({ seq: f.seq, message: f.message, values: criteria.map((c) => valueOf(keys, c.key, f.message)) }));
  const signs = criteria.map((c) => (c.reverse ? -1 : 1));
  const n = criteria.length;
  rows.sort((a, b) => {
    for (let i = 0; i < n; i++) {
      const x = a.values[i]!;
      const y = b.values[i]!;
      if (x !== y) return (typeof x === 'number' ? (x < (y as number) ? -1 : 1) : compareKeys(x, y as string)) * signs[i]!;
    }
    return a.seq - b.seq;
  });
  return rows;
}

export function runSort(ctx: CommandContext, keys: SortKeys, display: boolean): CommandResult {
  const { session, args } = ctx;
  const protocol = imapProtocol(session.server);
  const options = readReturnOptions(ctx);
  const criteria = readSortCriteria(ctx, display);
  args.sp();
  const program = readSearchCriteria(args);
  args.end();
  const selected = session.selected!;
  const matched = findMatches(ctx, program);
  if (!Array.isArray(matched)) {
    if (options !== null) protocol.searchResults({ session, selected, tag: ctx.tag, uid: ctx.uid, options, criteria: program.keys, found: null });
    return matched;
  }
  const sorted = sortMessages(matched, criteria, keys);
  if (options !== null) {
    protocol.searchResults({ session, selected, tag: ctx.tag, uid: ctx.uid, options, criteria: program.keys, found: sorted });
    return ok('Sort completed');
  }
  const response: ImapValue[] = [atom('SORT')];
  for (const r of sorted) response.push(ctx.uid ? r.message.uid : r.seq);
  session.untaggedList(response);
  return ok('Sort completed');
}

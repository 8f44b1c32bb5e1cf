/**
 * ESEARCH (RFC 4731): SEARCH and UID SEARCH result options MIN, MAX, ALL and
 * COUNT. `SEARCH RETURN (MIN COUNT) ...` answers one
 * `* ESEARCH (TAG "tag") [UID] MIN n MAX n ALL set COUNT n` instead of
 * `* SEARCH`: items in that order, whatever the order asked; `RETURN ()`
 * means ALL (§3.1). With no match MIN, MAX and ALL are left out and COUNT
 * is 0, but the ESEARCH response is still sent. ALL is a sequence set
 * with runs compressed to ranges (`2,10:11`), of UIDs for UID SEARCH.
 * Options of other extensions (SEARCHRES's SAVE) alone send no ESEARCH.
 * Items other extensions add to SEARCH answers (CONDSTORE's `MODSEQ n`
 * when the criteria use MODSEQ) follow, for the messages returned.
 */
import { imapProtocol } from '../../imap/protocol.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import { defineExtension, type SearchResultContext } from '../extension.js';
import { always } from '../shared.js';

const OWN = ['MIN', 'MAX', 'ALL', 'COUNT'] as const;

/** Ascending numbers as an IMAP sequence set with consecutive runs as ranges: `1:3,7,9:10`. */
export function compressSet(numbers: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < numbers.length; ) {
    let j = i;
    while (j + 1 < numbers.length && numbers[j + 1] === numbers[j]! + 1) j++;
    parts.push(j === i ? String(numbers[i]) : `${numbers[i]}:${numbers[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * The ESEARCH response for a SEARCH with result options, or null when
 * neither one of ESEARCH's was asked nor another extension gave ESEARCH
 * data items (PARTIAL's).
 */
export function esearchResponse(ctx: SearchResultContext): ImapValue[] | null {
  if (ctx.found === null) return null;
  const protocol = imapProtocol(ctx.session.server);
  const asked = ctx.options.size === 0 ? new Set<string>(['ALL']) : ctx.options;
  const others = protocol.searchResultItems(ctx);
  if (!OWN.some((o) => asked.has(o)) && others.length === 0) return null;
  const numbers = ctx.found.map((f) => (ctx.uid ? f.message.uid : f.seq));
  const out: ImapValue[] = [atom('ESEARCH'), [atom('TAG'), ctx.tag]];
  if (ctx.uid) out.push(atom('UID'));
  if (numbers.length > 0) {
    if (asked.has('MIN')) out.push(atom('MIN'), numbers[0]!);
    if (asked.has('MAX')) out.push(atom('MAX'), numbers[numbers.length - 1]!);
    if (asked.has('ALL')) out.push(atom('ALL'), atom(compressSet(numbers)));
  }
  if (asked.has('COUNT')) out.push(atom('COUNT'), numbers.length);
  for (const other of others) out.push(...other.items);
  // Items other extensions add to a SEARCH answer, as `name value` pairs
  // (CONDSTORE's MODSEQ, RFC 4731 §3.2 / RFC 7162 §3.1.5): of the messages
  // returned, i.e. only the MIN/MAX ones (and those of other extensions'
  // items) unless ALL or COUNT was asked.
  const found = ctx.found;
  let returned = found;
  if (!asked.has('ALL') && !asked.has('COUNT')) {
    const picked = new Set(found.filter((_, i) => (asked.has('MIN') && i === 0) || (asked.has('MAX') && i === found.length - 1)));
    for (const other of others) for (const m of other.returned) picked.add(m);
    returned = found.filter((m) => picked.has(m));
  }
  const extra = protocol.searchResponseItems({ session: ctx.session, selected: ctx.selected, criteria: ctx.criteria, found: returned });
  for (const item of extra) if (Array.isArray(item) && item.length === 2) out.push(item[0]!, item[1]!);
  return out;
}

export const extension = defineExtension<undefined>({
  name: 'ESEARCH',
  capabilities: always('ESEARCH'),
  search: {
    returnOptions: OWN,
    results: (ctx) => {
      const response = esearchResponse(ctx);
      if (response) ctx.session.untaggedList(response);
    },
  },
});

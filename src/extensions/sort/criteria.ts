/**
 * Grammar SORT and THREAD share (RFC 5256 §4): `search-criteria = charset
 * 1*(SP search-key)`, where the charset is mandatory and has no CHARSET
 * keyword before it (unlike SEARCH's).
 */
import type { ArgParser } from '../../imap/parser.js';
import type { SearchKey, SearchProgram } from '../../imap/syntax.js';

export function readSearchCriteria(args: ArgParser): SearchProgram {
  const charset = args.astring().toString('latin1');
  args.sp();
  const keys: SearchKey[] = [args.searchKey()];
  while (args.trySp()) keys.push(args.searchKey());
  return { charset, keys: keys.length === 1 ? keys[0]! : { type: 'and', keys } };
}

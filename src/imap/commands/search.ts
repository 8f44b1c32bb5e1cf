/** SEARCH and UID SEARCH (RFC 3501 §6.4.4). */
import { SELECTED, no, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { SEARCH_CHARSETS, SearchEvaluator } from '../search.js';
import { atom } from '../wire/values.js';

function run(ctx: CommandContext): CommandResult {
  const { session, args } = ctx;
  const program = args.searchProgram();
  args.end();
  const charset = program.charset?.toUpperCase() ?? null;
  if (charset !== null && !SEARCH_CHARSETS.includes(charset)) {
    let supported = true;
    try {
      new TextDecoder(charset);
    } catch {
      supported = false;
    }
    if (!supported) return no(`Unsupported charset ${program.charset}`, `BADCHARSET (${SEARCH_CHARSETS.join(' ')})`);
  }
  const selected = session.selected!;
  const found = new SearchEvaluator(selected, charset, session.server.now()).run(program.keys);
  const response: (number | ReturnType<typeof atom>)[] = [atom('SEARCH')];
  for (const f of found) response.push(ctx.uid ? f.message.uid : f.seq);
  session.untaggedList(response);
  return ok('Search completed');
}

export const search: CommandSpec = { name: 'SEARCH', states: SELECTED, holdsExpunges: true, run };
export const uidSearch: CommandSpec = { name: 'UID SEARCH', states: SELECTED, holdsExpunges: true, run };

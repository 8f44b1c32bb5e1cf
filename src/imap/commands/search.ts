/** SEARCH and UID SEARCH (RFC 3501 §6.4.4). Extension points: access (`r`), SEARCH keys. */
import type { Message } from '../../store/message.js';
import { accessRefusal, imapProtocol } from '../protocol.js';
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
  const refused = accessRefusal(session, 'r', selected.mailbox, selected.mailbox.path, ctx.name);
  if (refused) return refused;
  const protocol = imapProtocol(session.server);
  const matchExtension = (name: string, message: Message, data: unknown): boolean => protocol.searchMatches(name, message, data, session, selected);
  const found = new SearchEvaluator(selected, charset, session.server.now(), matchExtension).run(program.keys);
  const response: (number | ReturnType<typeof atom>)[] = [atom('SEARCH')];
  for (const f of found) response.push(ctx.uid ? f.message.uid : f.seq);
  session.untaggedList(response);
  return ok('Search completed');
}

export const search: CommandSpec = { name: 'SEARCH', states: SELECTED, holdsExpunges: true, run };
export const uidSearch: CommandSpec = { name: 'UID SEARCH', states: SELECTED, holdsExpunges: true, run };

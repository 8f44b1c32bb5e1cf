/**
 * SEARCH and UID SEARCH (RFC 3501 §6.4.4). Extension points: access (`r`),
 * SEARCH keys, and result options: while an extension adds some (ESEARCH,
 * SEARCHRES), `RETURN (options)` may come first (RFC 4466 §2.6); a SEARCH
 * with it sends no `* SEARCH` line, the extensions answer.
 */
import type { Message } from '../../store/message.js';
import { accessRefusal, imapProtocol } from '../protocol.js';
import { SELECTED, failBad, no, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { SEARCH_CHARSETS, SearchEvaluator } from '../search.js';
import { atom, type ImapValue } from '../wire/values.js';

function run(ctx: CommandContext): CommandResult {
  const { session, args } = ctx;
  const protocol = imapProtocol(session.server);
  // `RETURN (opt ...)`, options of loaded extensions only; `RETURN ()` is allowed.
  let options: Set<string> | null = null;
  if (protocol.searchReturn.size > 0 && args.tryKeyword('RETURN')) {
    args.sp();
    const given = new Set<string>();
    args.list(() => {
      const option = args.atom().toUpperCase();
      if (!protocol.searchReturn.has(option)) failBad(`Unknown SEARCH result option ${option.slice(0, 40)}`);
      given.add(option);
    });
    args.sp();
    options = given;
  }
  const program = args.searchProgram();
  args.end();
  const selected = session.selected!;
  const failed = (result: CommandResult): CommandResult => {
    if (options !== null) protocol.searchResults({ session, selected, tag: ctx.tag, uid: ctx.uid, options, criteria: program.keys, found: null });
    return result;
  };
  const charset = program.charset?.toUpperCase() ?? null;
  if (charset !== null && !SEARCH_CHARSETS.includes(charset)) {
    let supported = true;
    try {
      new TextDecoder(charset);
    } catch {
      supported = false;
    }
    if (!supported) return failed(no(`Unsupported charset ${program.charset}`, `BADCHARSET (${SEARCH_CHARSETS.join(' ')})`));
  }
  const refused = accessRefusal(session, 'r', selected.mailbox, selected.mailbox.path, ctx.name);
  if (refused) return failed(refused);
  const matchExtension = (name: string, message: Message, data: unknown): boolean => protocol.searchMatches(name, message, data, session, selected);
  const found = new SearchEvaluator(selected, charset, session.server.now(), matchExtension, protocol.searchResultVariable).run(program.keys);
  if (options !== null) {
    protocol.searchResults({ session, selected, tag: ctx.tag, uid: ctx.uid, options, criteria: program.keys, found });
    return ok('Search completed');
  }
  const response: ImapValue[] = [atom('SEARCH')];
  for (const f of found) response.push(ctx.uid ? f.message.uid : f.seq);
  // Extensions may add items after the numbers (CONDSTORE: `(MODSEQ n)`).
  const extra = protocol.searchResponseItems({ session, selected, criteria: program.keys, found });
  session.untaggedList(extra.length ? [...response, ...extra] : response);
  return ok('Search completed');
}

export const search: CommandSpec = { name: 'SEARCH', states: SELECTED, holdsExpunges: true, run };
export const uidSearch: CommandSpec = { name: 'UID SEARCH', states: SELECTED, holdsExpunges: true, run };

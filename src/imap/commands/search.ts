/**
 * SEARCH and UID SEARCH (RFC 3501 §6.4.4). Extension points: access (`r`),
 * SEARCH keys, and result options: while an extension adds some (ESEARCH,
 * SEARCHRES), `RETURN (options)` may come first (RFC 4466 §2.6); a SEARCH
 * with it sends no `* SEARCH` line, the extensions answer. The RETURN
 * options and the search itself are exported for commands with search
 * criteria of their own (SORT, THREAD).
 */
import type { Message } from '../../store/message.js';
import type { SearchMatch } from '../../extensions/extension.js';
import { accessRefusal, imapProtocol } from '../protocol.js';
import { SELECTED, bad, failBad, no, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { SEARCH_CHARSETS, SearchEvaluator } from '../search.js';
import type { SearchProgram } from '../syntax.js';
import { atom } from '../wire/values.js';

function run(ctx: CommandContext): CommandResult {
  const { session, args } = ctx;
  const protocol = imapProtocol(session.server);
  let returned = readReturnOptions(ctx);
  // IMAP4rev2 (RFC 9051 §6.4.4): no RETURN means RETURN (), answered by ESEARCH.
  if (returned === null && protocol.searchReturn.size > 0 && protocol.rules(session).searchReturnsByDefault) {
    returned = { options: new Set(), returnArguments: new Map() };
  }
  const program = args.searchProgram();
  args.end();
  const selected = session.selected!;
  const answer = (found: readonly SearchMatch[] | null): void => {
    if (returned === null) return;
    const rerun = (): readonly SearchMatch[] | null => {
      const again = findMatches(ctx, program);
      return Array.isArray(again) ? again : null;
    };
    protocol.searchResults({ session, selected, tag: ctx.tag, command: ctx.name, uid: ctx.uid, ...returned, criteria: program.keys, found, rerun });
  };
  // RFC 6855 §3: after ENABLE UTF8=ACCEPT a charset label conflicts with the session's UTF-8
  // (SEARCH only: SORT and THREAD always name a charset, RFC 5256). IMAP4rev2 keeps CHARSET (RFC 9051 §6.4.4).
  if (program.charset !== null && protocol.utf8(session) && !protocol.rules(session).searchCharsetWithUtf8) {
    answer(null);
    return bad('SEARCH CHARSET is not allowed after ENABLE UTF8=ACCEPT');
  }
  const found = findMatches(ctx, program);
  if (!Array.isArray(found)) {
    answer(null);
    return found;
  }
  if (returned !== null) {
    answer(found);
    return ok('Search completed');
  }
  const numbers = new Array<number>(found.length);
  for (let i = 0; i < found.length; i++) numbers[i] = ctx.uid ? found[i]!.message.uid : found[i]!.seq;
  // Extensions may add items after the numbers (CONDSTORE: `(MODSEQ n)`).
  const extra = protocol.searchResponseItems({ session, selected, criteria: program.keys, found });
  if (extra.length > 0) session.untaggedList([atom('SEARCH'), ...numbers, ...extra]);
  // Numbers only: the serializer's bytes, joined at once (a value tree of a number each cost more than the search).
  else session.writeText(numbers.length > 0 ? `* SEARCH ${numbers.join(' ')}\r\n` : '* SEARCH\r\n');
  return ok('Search completed');
}

/** The result options of a `RETURN (...)`, and the arguments of those that take some. */
export interface ReturnOptions {
  readonly options: ReadonlySet<string>;
  readonly returnArguments: ReadonlyMap<string, unknown>;
}

/**
 * `RETURN (opt ...) SP` before the criteria (RFC 4466 §2.6), options of
 * loaded extensions only, each with the arguments its extension reads
 * (PARTIAL's range); `RETURN ()` is allowed. An option with arguments given
 * twice, or options an extension refuses together, are BAD. Null when not
 * given or when no loaded extension has result options. Also read by SORT
 * (ESORT).
 */
export function readReturnOptions(ctx: CommandContext): ReturnOptions | null {
  const { args } = ctx;
  const protocol = imapProtocol(ctx.session.server);
  if (protocol.searchReturn.size === 0 || !args.tryKeyword('RETURN')) return null;
  args.sp();
  const options = new Set<string>();
  const returnArguments = new Map<string, unknown>();
  const command = ctx.name.replace(/^UID /, '');
  args.list(() => {
    const option = args.atom().toUpperCase();
    if (!protocol.searchReturn.has(option)) failBad(`Unknown ${command} result option ${option.slice(0, 40)}`);
    const value = protocol.searchReturnArguments(option, args);
    if (value !== undefined) {
      if (returnArguments.has(option)) failBad(`${option} given twice`);
      returnArguments.set(option, value);
    }
    options.add(option);
  });
  args.sp();
  const refused = protocol.searchReturnRefusal(options, { session: ctx.session, tag: ctx.tag, command: ctx.name });
  if (refused !== undefined) failBad(refused);
  return { options, returnArguments };
}

/**
 * The search part of SEARCH, also run by commands that take search criteria
 * (SORT, THREAD): the charset check (`NO [BADCHARSET]`), the access check
 * (`r`) and the evaluation over the session's view with the loaded
 * extensions' keys. Returns the matches, ascending, or the NO to answer.
 */
export function findMatches(ctx: CommandContext, program: SearchProgram): SearchMatch[] | CommandResult {
  const { session } = ctx;
  const protocol = imapProtocol(session.server);
  const selected = session.selected!;
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
  const refused = accessRefusal(session, 'r', selected.mailbox, selected.mailbox.path, ctx.name);
  if (refused) return refused;
  const matchExtension = (name: string, message: Message, data: unknown): boolean => protocol.searchMatches(name, message, data, session, selected);
  return new SearchEvaluator(selected, charset, matchExtension, protocol.searchResultVariable).run(program.keys);
}

export const search: CommandSpec = { name: 'SEARCH', states: SELECTED, holdsExpunges: true, run };
export const uidSearch: CommandSpec = { name: 'UID SEARCH', states: SELECTED, holdsExpunges: true, run };

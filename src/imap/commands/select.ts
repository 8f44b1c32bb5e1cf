/**
 * SELECT and EXAMINE (RFC 3501 §6.3.1-2). Extension points: parameters
 * (RFC 4466), access (`r`; `s`/`t`/`w` for PERMANENTFLAGS), read-only selection, untagged responses after
 * the core ones (response codes such as HIGHESTMODSEQ).
 */
import { AUTHENTICATED, bad, no, ok, readParameters, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { accessRefusal, flagFilter, imapProtocol } from '../protocol.js';
import { atom } from '../wire/values.js';
import { InvalidName, mailboxArg } from './mailboxes.js';

function open(ctx: CommandContext, examine: boolean): CommandResult {
  const { session, args } = ctx;
  const path = mailboxArg(args);
  const protocol = imapProtocol(session.server);
  let params: ReadonlyMap<string, unknown> = new Map();
  if (!args.atEnd()) {
    args.sp();
    params = readParameters(args, protocol.selectParameters, ctx.name);
  }
  args.end();
  const refusal = params.size ? protocol.selectRefusal(session, params) : undefined;
  if (refusal !== undefined) return bad(refusal);
  // A SELECT ends the previous selection first, even when it fails (RFC 3501 §6.3.1).
  if (session.selected) for (const response of protocol.selectClosing(session)) session.untaggedList(response);
  session.unselect();
  if (path instanceof InvalidName) return path.no('NONEXISTENT');
  const mailbox = session.mailboxes.get(path);
  if (!mailbox) return no(`Mailbox doesn't exist: ${path}`, 'NONEXISTENT');
  const refused = accessRefusal(session, 'r', mailbox, mailbox.path, ctx.name);
  if (refused) return refused;
  if (!mailbox.selectable) return no(`Mailbox isn't selectable: ${path}`, 'CANNOT');
  const readOnly = examine || protocol.selectReadOnly(session, mailbox);
  const selected = session.select(mailbox, readOnly);
  selected.changeableFlag = flagFilter(session, mailbox, ctx.name);
  // O(n) only for the sessions that still get OK [UNSEEN n].
  const firstUnseen = protocol.rules(session).noUnseenCode ? 0 : selected.view.findIndex((m) => !m.flags.has('\\Seen')) + 1;
  const [flags, permanentFlags] = selected.flagsResponses();
  session.untaggedList(flags!);
  session.untagged(selected.exists, atom('EXISTS'));
  const rules = protocol.rules(session);
  if (!rules.noRecent) session.untagged(selected.recent.size, atom('RECENT'));
  if (firstUnseen && !rules.noUnseenCode) session.untagged(atom('OK'), atom(`[UNSEEN ${firstUnseen}]`), atom(`First unseen.`));
  session.untaggedList(permanentFlags!);
  session.untagged(atom('OK'), atom(`[UIDVALIDITY ${mailbox.uidvalidity}]`), atom('UIDs valid'));
  session.untagged(atom('OK'), atom(`[UIDNEXT ${mailbox.uidnext}]`), atom('Predicted next UID'));
  for (const response of protocol.selectResponses(session, selected, params)) session.untaggedList(response);
  return ok(examine ? 'Examine completed' : 'Select completed', readOnly ? 'READ-ONLY' : 'READ-WRITE');
}

export const select: CommandSpec = { name: 'SELECT', states: AUTHENTICATED, run: (ctx) => open(ctx, false) };
export const examine: CommandSpec = { name: 'EXAMINE', states: AUTHENTICATED, run: (ctx) => open(ctx, true) };

/** SELECT and EXAMINE (RFC 3501 §6.3.1-2). */
import { DEFAULT_PERMANENT_FLAGS } from '../../store/flags.js';
import { AUTHENTICATED, no, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { imapProtocol } from '../protocol.js';
import { atom } from '../wire/values.js';

const SYSTEM = ['\\Answered', '\\Flagged', '\\Deleted', '\\Seen', '\\Draft'];

function open(ctx: CommandContext, readOnly: boolean): CommandResult {
  const { session, args } = ctx;
  const path = args.mailbox();
  args.end();
  // A SELECT ends the previous selection first, even when it fails (RFC 3501 §6.3.1).
  session.unselect();
  const mailbox = session.server.store.get(path);
  if (!mailbox) return no(`Mailbox doesn't exist: ${path}`, 'NONEXISTENT');
  if (!mailbox.selectable) return no(`Mailbox isn't selectable: ${path}`, 'CANNOT');
  const selected = session.select(mailbox, readOnly);
  const keywords = new Set<string>();
  let firstUnseen = 0;
  selected.view.forEach((m, i) => {
    for (const f of m.flags) if (!f.startsWith('\\')) keywords.add(f);
    if (firstUnseen === 0 && !m.flags.has('\\Seen')) firstUnseen = i + 1;
  });
  const flags = [...SYSTEM, ...keywords].map(atom);
  const permanent = mailbox.permanentFlags ?? [...DEFAULT_PERMANENT_FLAGS];
  session.untagged(atom('FLAGS'), flags);
  session.untagged(selected.exists, atom('EXISTS'));
  session.untagged(selected.recent.size, atom('RECENT'));
  if (firstUnseen) session.untagged(atom('OK'), atom(`[UNSEEN ${firstUnseen}]`), atom(`First unseen.`));
  const permanentList = readOnly ? '' : [...permanent, ...keywords, '\\*'].join(' ');
  session.untagged(atom('OK'), atom(`[PERMANENTFLAGS (${permanentList})]`), atom(readOnly ? 'Read-only mailbox.' : 'Flags permitted.'));
  session.untagged(atom('OK'), atom(`[UIDVALIDITY ${mailbox.uidvalidity}]`), atom('UIDs valid'));
  session.untagged(atom('OK'), atom(`[UIDNEXT ${mailbox.uidnext}]`), atom('Predicted next UID'));
  if (imapProtocol(session.server).has('CONDSTORE')) {
    session.untagged(atom('OK'), atom(`[HIGHESTMODSEQ ${mailbox.highestModseq}]`), atom('Highest'));
  }
  return ok(readOnly ? 'Examine completed' : 'Select completed', readOnly ? 'READ-ONLY' : 'READ-WRITE');
}

export const select: CommandSpec = { name: 'SELECT', states: AUTHENTICATED, run: (ctx) => open(ctx, false) };
export const examine: CommandSpec = { name: 'EXAMINE', states: AUTHENTICATED, run: (ctx) => open(ctx, true) };

/** STORE and UID STORE (RFC 3501 §6.4.6). */
import type { FlagMode } from '../../store/store.js';
import { SELECTED, failBad, no, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { resolveSet } from '../sequence.js';
import { atom } from '../wire/values.js';

const MODES: Record<string, FlagMode> = { '': 'set', '+': 'add', '-': 'remove' };

function run(ctx: CommandContext): CommandResult {
  const { session, args } = ctx;
  const set = args.sequenceSet();
  args.sp();
  const item = args.atom().toUpperCase();
  const m = /^([+-]?)FLAGS(\.SILENT)?$/.exec(item);
  if (!m) failBad(`Invalid STORE item ${item}`);
  const mode = MODES[m![1]!]!;
  const silent = m![2] !== undefined;
  args.sp();
  const flags = args.peekChar() === '(' ? args.flagList({ allowRecent: false }) : args.flags({ allowRecent: false });
  args.end();
  const selected = session.selected!;
  if (selected.readOnly) return no('Mailbox is read-only', 'READ-ONLY');
  const targets = resolveSet(set, selected, ctx.uid).filter((n) => !selected.isExpungedPending(n.message.uid));
  session.server.store.setFlags(
    selected.mailbox,
    targets.map((n) => n.message),
    flags,
    mode,
    session.id,
    { silent },
  );
  // A keyword new to the mailbox is announced even to a .SILENT store (RFC 3501 §7.2.6).
  if (selected.learnKeywords(targets.map((n) => n.message))) {
    for (const response of selected.flagsResponses()) session.untaggedList(response);
  }
  if (!silent) {
    session.batch(() => {
      for (const { seq, message } of targets) {
        selected.dropFlagNotice(message.uid);
        session.untagged(seq, atom('FETCH'), selected.flagItems(message, ctx.uid));
      }
    });
  }
  return ok('Store completed');
}

export const store: CommandSpec = { name: 'STORE', states: SELECTED, holdsExpunges: true, run };
export const uidStore: CommandSpec = { name: 'UID STORE', states: SELECTED, holdsExpunges: true, run };

/**
 * CLOSE and EXPUNGE (RFC 3501 §6.4.2-3); UID EXPUNGE (RFC 4315) is
 * registered by UIDPLUS. Extension point: access (`e`; CLOSE without it
 * leaves the messages).
 */
import { SELECTED, no, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { accessRefusal } from '../protocol.js';
import { resolveSet } from '../sequence.js';

/** Expunges the \Deleted messages of the session's view (only those in `uids` when given). */
function expungeDeleted(ctx: CommandContext, uids: Set<number> | null): void {
  const selected = ctx.session.selected!;
  const doomed: number[] = [];
  for (const m of selected.view) {
    if (m.flags.has('\\Deleted') && (!uids || uids.has(m.uid)) && !selected.isExpungedPending(m.uid)) doomed.push(m.uid);
  }
  ctx.session.server.store.expunge(selected.mailbox, doomed, ctx.session.id);
}

export const close: CommandSpec = {
  name: 'CLOSE',
  states: SELECTED,
  run(ctx) {
    ctx.args.end();
    // Messages go silently: the session leaves the mailbox before any EXPUNGE could be sent.
    const selected = ctx.session.selected!;
    if (!selected.readOnly && !accessRefusal(ctx.session, 'e', selected.mailbox, selected.mailbox.path, ctx.name)) expungeDeleted(ctx, null);
    ctx.session.unselect();
    return ok('Close completed');
  },
};

export const expunge: CommandSpec = {
  name: 'EXPUNGE',
  states: SELECTED,
  run(ctx) {
    ctx.args.end();
    const selected = ctx.session.selected!;
    if (selected.readOnly) return no('Mailbox is read-only', 'READ-ONLY');
    const refused = accessRefusal(ctx.session, 'e', selected.mailbox, selected.mailbox.path, ctx.name);
    if (refused) return refused;
    expungeDeleted(ctx, null);
    return ok('Expunge completed');
  },
};

export const uidExpunge: CommandSpec = {
  name: 'UID EXPUNGE',
  states: SELECTED,
  run(ctx): CommandResult {
    const set = ctx.args.sequenceSet();
    ctx.args.end();
    const selected = ctx.session.selected!;
    if (selected.readOnly) return no('Mailbox is read-only', 'READ-ONLY');
    const refused = accessRefusal(ctx.session, 'e', selected.mailbox, selected.mailbox.path, ctx.name);
    if (refused) return refused;
    const uids = new Set(resolveSet(set, selected, true).map((n) => n.message.uid));
    expungeDeleted(ctx, uids);
    return ok('Expunge completed');
  },
};

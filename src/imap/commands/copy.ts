/** COPY (RFC 3501 §6.4.7) and MOVE (RFC 6851), with COPYUID when UIDPLUS is loaded. */
import { compressNumbers } from '../syntax.js';
import { SELECTED, no, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { imapProtocol } from '../protocol.js';
import { resolveSet } from '../sequence.js';
import { atom } from '../wire/values.js';
import { InvalidName, mailboxArg } from './mailboxes.js';

function transfer(ctx: CommandContext, move: boolean): CommandResult {
  const { session, args } = ctx;
  const set = args.sequenceSet();
  args.sp();
  const path = mailboxArg(args);
  args.end();
  // A name that cannot be created gets no TRYCREATE (RFC 3501 §6.4.7).
  if (path instanceof InvalidName) return path.no('NONEXISTENT');
  const selected = session.selected!;
  const store = session.server.store;
  const target = store.get(path);
  if (!target) return no(`Mailbox doesn't exist: ${path}`, 'TRYCREATE');
  if (!target.selectable) return no(`Mailbox isn't selectable: ${path}`, 'CANNOT');
  if (move && selected.readOnly) return no('Mailbox is read-only', 'READ-ONLY');
  const messages = resolveSet(set, selected, ctx.uid)
    .map((n) => n.message)
    .filter((m) => !selected.isExpungedPending(m.uid));
  const verb = move ? 'Move' : 'Copy';
  if (messages.length === 0) return ok(`No messages to ${verb.toLowerCase()}`);
  // The selected mailbox is a target like any other: the copies get new
  // UIDs and a MOVE expunges the originals, so the client sees EXPUNGE for
  // the old numbers and EXISTS for the copies (RFC 6851 §3.3).
  const pairs = store.copy(messages, target, session.id);
  if (move) store.expunge(selected.mailbox, pairs.map((p) => p.uid), session.id);
  const uidplus = imapProtocol(session.server).has('UIDPLUS');
  const code =
    uidplus
      ? `COPYUID ${target.uidvalidity} ${compressNumbers(pairs.map((p) => p.uid))} ${compressNumbers(pairs.map((p) => p.targetUid))}`
      : undefined;
  if (move) {
    // RFC 6851 §4.3: COPYUID goes in an untagged OK before the EXPUNGEs.
    if (code) session.untagged(atom('OK'), atom(`[${code}]`), atom('Moved UIDs.'));
    return ok(`${verb} completed`);
  }
  return ok(`${verb} completed`, code);
}

export const copy: CommandSpec = { name: 'COPY', states: SELECTED, run: (ctx) => transfer(ctx, false) };
export const uidCopy: CommandSpec = { name: 'UID COPY', states: SELECTED, run: (ctx) => transfer(ctx, false) };
export const move: CommandSpec = { name: 'MOVE', states: SELECTED, run: (ctx) => transfer(ctx, true) };
export const uidMove: CommandSpec = { name: 'UID MOVE', states: SELECTED, run: (ctx) => transfer(ctx, true) };

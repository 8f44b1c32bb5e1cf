/**
 * COPY (RFC 3501 §6.4.7) and MOVE (RFC 6851, registered by the MOVE
 * extension). Extension points: access (`i` on the target, `s`/`t`/`w` for
 * the flags the copies keep; a MOVE also `t` and `e` on the source), checks before the copy or move (quota), the
 * result code (COPYUID).
 */
import type { Mailbox } from '../../store/mailbox.js';
import type { Message } from '../../store/message.js';
import type { Store } from '../../store/store.js';
import { SELECTED, no, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { accessRefusal, checkResult, flagFilter, imapProtocol } from '../protocol.js';
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
  const protocol = imapProtocol(session.server);
  const target = session.mailboxes.get(path);
  if (!target) return no(`Mailbox doesn't exist: ${path}`, 'TRYCREATE');
  const refused = accessRefusal(session, 'i', target, target.path, ctx.name);
  if (refused) return refused.code === 'NONEXISTENT' ? no(refused.text, 'TRYCREATE') : refused;
  if (!target.selectable) return no(`Mailbox isn't selectable: ${path}`, 'CANNOT');
  if (move && selected.readOnly) return no('Mailbox is read-only', 'READ-ONLY');
  if (move) {
    const source = selected.mailbox;
    const denied = accessRefusal(session, 't', source, source.path, ctx.name) ?? accessRefusal(session, 'e', source, source.path, ctx.name);
    if (denied) return denied;
  }
  const messages = resolveSet(set, selected, ctx.uid)
    .map((n) => n.message)
    .filter((m) => !selected.isExpungedPending(m.uid));
  const verb = move ? 'Move' : 'Copy';
  if (messages.length === 0) return ok(`No messages to ${verb.toLowerCase()}`);
  const input = { source: selected.mailbox, messages, target, session };
  const failed = checkResult(() => (move ? protocol.checkMove(input) : protocol.checkCopy(input)));
  if (failed) return failed;
  // The selected mailbox is a target like any other: the copies get new
  // UIDs and a MOVE expunges the originals, so the client sees EXPUNGE for
  // the old numbers and EXISTS for the copies (RFC 6851 §3.3).
  // Flags the user has no right to set in the target are not copied (RFC 4314 §4).
  const keep = flagFilter(session, target, ctx.name);
  // A MOVE's copies are not refused by the store's budget: the originals go right after.
  const moving = { moving: move };
  const pairs = keep ? copyKeeping(store, messages, target, session.id, keep, moving) : store.copy(messages, target, session.id, moving);
  if (move) store.expunge(selected.mailbox, pairs.map((p) => p.uid), session.id);
  const code = protocol.copyCode(target, pairs);
  if (move) {
    // RFC 6851 §4.3: COPYUID goes in an untagged OK before the EXPUNGEs.
    if (code) session.untagged(atom('OK'), atom(`[${code}]`), atom('Moved UIDs.'));
    return ok(`${verb} completed`);
  }
  return ok(`${verb} completed`, code);
}

/** Copies like `store.copy`, the copies keeping only the flags `keep` accepts. */
function copyKeeping(
  store: Store,
  messages: readonly Message[],
  target: Mailbox,
  origin: number,
  keep: (flag: string) => boolean,
  options: { moving: boolean },
): { uid: number; targetUid: number }[] {
  const ordered = [...messages].sort((a, b) => a.uid - b.uid);
  const inputs = ordered.map((m) => ({
    raw: m.raw,
    flags: [...m.flags].filter(keep),
    internaldate: m.internaldate,
    extra: m.extra ? structuredClone(m.extra) : null,
    memo: m.memo,
  }));
  const added = store.append(target, inputs, origin, options);
  return ordered.map((m, i) => ({ uid: m.uid, targetUid: added[i]!.uid }));
}

export const copy: CommandSpec = { name: 'COPY', states: SELECTED, run: (ctx) => transfer(ctx, false) };
export const uidCopy: CommandSpec = { name: 'UID COPY', states: SELECTED, run: (ctx) => transfer(ctx, false) };
export const move: CommandSpec = { name: 'MOVE', states: SELECTED, run: (ctx) => transfer(ctx, true) };
export const uidMove: CommandSpec = { name: 'UID MOVE', states: SELECTED, run: (ctx) => transfer(ctx, true) };

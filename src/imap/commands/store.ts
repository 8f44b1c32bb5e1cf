/** STORE and UID STORE (RFC 3501 §6.4.6). Extension point: access (`s`, `t`, `w` per flag). */
import type { Right } from '../../extensions/extension.js';
import { flagRight as rightFor, imapProtocol } from '../protocol.js';
import type { FlagMode } from '../../store/store.js';
import { SELECTED, failBad, no, ok, readParameters, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { resolveSet, type Numbered } from '../sequence.js';
import type { SequenceSet } from '../syntax.js';
import { compressNumbers } from '../syntax.js';
import { atom } from '../wire/values.js';

const MODES: Record<string, FlagMode> = { '': 'set', '+': 'add', '-': 'remove' };


/** The messages a STORE changes: the set minus those expunged elsewhere and those a `store` filter keeps back. */
function storeTargets(
  ctx: CommandContext,
  set: SequenceSet,
  params: ReadonlyMap<string, unknown>,
): { targets: readonly Numbered[]; kept: readonly Numbered[] | undefined; modifiedCode: string | undefined } {
  const session = ctx.session;
  const selected = session.selected!;
  const protocol = imapProtocol(session.server);
  const named = resolveSet(set, selected, ctx.uid).filter((n) => !selected.isExpungedPending(n.message.uid));
  // A `store` filter may leave messages unchanged: they are reported as [MODIFIED set].
  const kept = protocol.storeFilter({ session, selected, uid: ctx.uid, targets: named, params });
  let modifiedCode: string | undefined;
  if (kept && kept.length < named.length) {
    const keep = new Set(kept.map((n) => n.message.uid));
    const left = named.filter((n) => !keep.has(n.message.uid)).map((n) => (ctx.uid ? n.message.uid : n.seq));
    modifiedCode = `MODIFIED ${compressNumbers(left)}`;
  }
  return { targets: kept ?? named, kept, modifiedCode };
}

/**
 * A STORE of an extension's data item (`+X-GM-LABELS (foo)`): the extension
 * changes the messages, the core answers with that item's FETCH unless `.SILENT`.
 */
function runItem(ctx: CommandContext, set: SequenceSet, params: ReadonlyMap<string, unknown>, name: string, mode: FlagMode, silent: boolean): CommandResult {
  const { session, args } = ctx;
  const protocol = imapProtocol(session.server);
  args.sp();
  const value = protocol.storeItems.get(name)!.parse(args);
  args.end();
  const selected = session.selected!;
  if (selected.readOnly) return no('Mailbox is read-only', 'READ-ONLY');
  const { targets, modifiedCode } = storeTargets(ctx, set, params);
  const result = protocol.storeItemApply(name, { session, selected, command: ctx.name, uid: ctx.uid, targets, mode, silent, value });
  if (result) return result;
  if (!silent) {
    session.batch(() => {
      for (const { seq, message } of targets) {
        // The item's new value stands for the change (a MODSEQ the extension gave it comes along).
        selected.dropFlagNotice(message.uid);
        const extra = selected.shape?.flagFetch(message);
        const items = [atom(name), protocol.fetchValue(name, message, session, selected), ...(extra?.items ?? [])];
        session.untagged(seq, atom('FETCH'), ctx.uid || extra?.uid ? [atom('UID'), message.uid, ...items] : items);
      }
    });
  }
  return modifiedCode ? ok('Conditional STORE failed', modifiedCode) : ok('Store completed');
}

function run(ctx: CommandContext): CommandResult {
  const { session, args } = ctx;
  const set = args.sequenceSet();
  args.sp();
  const protocol = imapProtocol(session.server);
  // Modifiers (RFC 4466 store-modifiers) come from the `store` points.
  let params: ReadonlyMap<string, unknown> = new Map();
  if (args.peekChar() === '(') {
    params = readParameters(args, protocol.storeModifiers, ctx.name);
    args.sp();
  }
  const item = args.atom().toUpperCase();
  const own = /^([+-]?)(.+?)(\.SILENT)?$/.exec(item);
  if (own && own[2] !== 'FLAGS' && protocol.storeItems.has(own[2]!)) {
    return runItem(ctx, set, params, own[2]!, MODES[own[1]!]!, own[3] !== undefined);
  }
  const m = /^([+-]?)FLAGS(\.SILENT)?$/.exec(item);
  if (!m) failBad(`Invalid STORE item ${item.slice(0, 40)}`);
  const mode = MODES[m![1]!]!;
  const silent = m![2] !== undefined;
  args.sp();
  const flags = args.peekChar() === '(' ? args.flagList({ allowRecent: false }) : args.flags({ allowRecent: false });
  args.end();
  const selected = session.selected!;
  if (selected.readOnly) return no('Mailbox is read-only', 'READ-ONLY');
  const { targets, kept, modifiedCode } = storeTargets(ctx, set, params);
  // Rights per flag (RFC 4314 §4): `s` for \Seen, `t` for \Deleted, `w` for the others. Flags the
  // user may not change stay as they are; a STORE that may change none of its flags is NO [NOPERM].
  const mailbox = selected.mailbox;
  const allowed = new Map<Right, boolean>();
  const may = (flag: string): boolean => {
    const right = rightFor(flag);
    let answer = allowed.get(right);
    if (answer === undefined) allowed.set(right, (answer = protocol.access(session, right, mailbox, mailbox.path, ctx.name).allow));
    return answer;
  };
  const store = session.server.store;
  const messages = targets.map((n) => n.message);
  const modseqBefore = mailbox.highestModseq;
  const categories: Right[] = ['s', 't', 'w'];
  if (categories.every((r) => may(r === 's' ? '\\Seen' : r === 't' ? '\\Deleted' : '\\Flagged'))) {
    store.setFlags(mailbox, messages, flags, mode, session.id, { silent });
  } else {
    const permitted = flags.filter(may);
    if (flags.length > 0 && permitted.length === 0) return no('Permission denied to change these flags', 'NOPERM');
    if (mode !== 'set') store.setFlags(mailbox, messages, permitted, mode, session.id, { silent });
    else {
      if (!categories.some((r) => may(r === 's' ? '\\Seen' : r === 't' ? '\\Deleted' : '\\Flagged'))) {
        return no('Permission denied to change flags', 'NOPERM');
      }
      // Each message keeps the flags the user may not change.
      for (const m of messages) {
        const kept = [...m.flags].filter((f) => !may(f));
        store.setFlags(mailbox, [m], [...permitted, ...kept], 'set', session.id, { silent });
      }
    }
  }
  // A keyword new to the mailbox is announced even to a .SILENT store (RFC 3501 §7.2.6).
  if (selected.learnKeywords()) {
    for (const response of selected.flagsResponses()) session.untaggedList(response);
  }
  if (!silent) {
    session.batch(() => {
      for (const { seq, message } of targets) {
        selected.dropFlagNotice(message.uid);
        session.untagged(seq, atom('FETCH'), selected.flagItems(message, ctx.uid));
      }
    });
  } else if (kept) {
    // A conditional STORE (a `store` filter ran) reports what it changed even when .SILENT:
    // UID and the update shape's items without FLAGS (RFC 7162 §3.1.3: `* 1 FETCH (UID 4 MODSEQ (..))`).
    session.batch(() => {
      for (const { seq, message } of targets) {
        if (message.modseq <= modseqBefore) continue;
        const extra = selected.shape?.flagFetch(message);
        if (!extra || extra.items.length === 0) continue;
        session.untagged(seq, atom('FETCH'), ctx.uid || extra.uid ? [atom('UID'), message.uid, ...extra.items] : [...extra.items]);
      }
    });
  }
  return modifiedCode ? ok('Conditional STORE failed', modifiedCode) : ok('Store completed');
}

export const store: CommandSpec = { name: 'STORE', states: SELECTED, holdsExpunges: true, run };
export const uidStore: CommandSpec = { name: 'UID STORE', states: SELECTED, holdsExpunges: true, run };

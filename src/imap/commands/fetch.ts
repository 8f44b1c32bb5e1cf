/** FETCH and UID FETCH (RFC 3501 §6.4.5, §7.4.2). */
import { bodyStructure, envelope, getMime, section as sectionOf } from '../../mime/index.js';
import { formatInternalDate } from '../../store/internal-date.js';
import type { Message } from '../../store/message.js';
import { SELECTED, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { resolveSet } from '../sequence.js';
import type { FetchAttribute, Partial } from '../syntax.js';
import type { SelectedMailbox } from '../selected.js';
import { atom, literal, type ImapValue } from '../wire/values.js';

function applyPartial(data: Buffer, partial: Partial | null): Buffer {
  if (!partial) return data;
  if (partial.offset >= data.length) return Buffer.alloc(0);
  return data.subarray(partial.offset, Math.min(data.length, partial.offset + partial.length));
}

/** True when fetching this item sets \Seen (a non-peek body section, RFC822, RFC822.TEXT). */
function setsSeen(att: FetchAttribute): boolean {
  return (att.type === 'BODY[]' && !att.peek) || (att.type === 'BINARY[]' && !att.peek) || att.type === 'RFC822' || att.type === 'RFC822.TEXT';
}

function itemValue(att: FetchAttribute, m: Message, selected: SelectedMailbox): ImapValue {
  switch (att.type) {
    case 'UID':
      return m.uid;
    case 'FLAGS':
      return selected.flagList(m);
    case 'INTERNALDATE':
      return formatInternalDate(m.internaldate);
    case 'RFC822.SIZE':
      return m.size;
    case 'MODSEQ':
      return [m.modseq];
    case 'ENVELOPE':
      return envelope(getMime(m.raw), m.raw);
    case 'BODYSTRUCTURE':
      return bodyStructure(getMime(m.raw), m.raw, true);
    case 'BODY':
      return bodyStructure(getMime(m.raw), m.raw, false);
    case 'RFC822':
      return literal(m.raw);
    case 'RFC822.HEADER':
      return literal(sectionOf(m.raw, getMime(m.raw), { part: [], text: 'HEADER' }) ?? Buffer.alloc(0));
    case 'RFC822.TEXT':
      return literal(sectionOf(m.raw, getMime(m.raw), { part: [], text: 'TEXT' }) ?? Buffer.alloc(0));
    case 'BODY[]': {
      const data = att.section.part.length === 0 && !att.section.text ? m.raw : sectionOf(m.raw, getMime(m.raw), att.section);
      return data === null ? null : literal(applyPartial(data, att.partial));
    }
    default:
      return null;
  }
}

function run(ctx: CommandContext): CommandResult {
  const { session, args } = ctx;
  const set = args.sequenceSet();
  args.sp();
  const atts = args.fetchAttributes();
  args.end();
  const selected = session.selected!;
  const targets = resolveSet(set, selected, ctx.uid);
  // UID FETCH always reports the UID (RFC 3501 §6.4.8), first as Dovecot does.
  const items = ctx.uid && !atts.some((a) => a.type === 'UID') ? [{ type: 'UID', label: 'UID' } as FetchAttribute, ...atts] : atts;
  const marksSeen = !selected.readOnly && items.some(setsSeen);
  const wantsFlags = items.some((a) => a.type === 'FLAGS');
  if (marksSeen) {
    const unseen = targets.map((n) => n.message).filter((m) => !m.flags.has('\\Seen') && !selected.isExpungedPending(m.uid));
    if (unseen.length) session.server.store.setFlags(selected.mailbox, unseen, ['\\Seen'], 'add', session.id, { silent: true });
  }
  session.socket.cork();
  try {
    for (const { seq, message } of targets) {
      const values: ImapValue[] = [];
      for (const att of items) values.push(atom(att.label), itemValue(att, message, selected));
      // A FETCH that set \Seen reports the new flags too.
      if (marksSeen && !wantsFlags) values.push(atom('FLAGS'), selected.flagList(message));
      selected.dropFlagNotice(message.uid);
      session.untagged(seq, atom('FETCH'), values);
    }
  } finally {
    session.socket.uncork();
  }
  return ok('Fetch completed');
}

export const fetch: CommandSpec = { name: 'FETCH', states: SELECTED, holdsExpunges: true, run };
export const uidFetch: CommandSpec = { name: 'UID FETCH', states: SELECTED, holdsExpunges: true, run };

/**
 * FETCH and UID FETCH (RFC 3501 §6.4.5, §7.4.2).
 *
 * Message data is served from `servedSource(m.raw)`: the stored bytes with
 * every bare LF turned into CRLF (as Dovecot serves them), and
 * RFC822.SIZE is the size of those bytes. The store keeps the bytes as
 * they were loaded.
 */
import { bodyStructure, envelope, getMime, servedSize, servedSource, section as sectionOf } from '../../mime/index.js';
import { formatInternalDate } from '../../store/internal-date.js';
import type { Message } from '../../store/message.js';
import { CommandFailure, SELECTED, ok, readParameters, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { resolveSet, type Numbered } from '../sequence.js';
import type { ImapSession } from '../session.js';
import type { FetchAttribute, Partial } from '../syntax.js';
import { accessRefusal, imapProtocol } from '../protocol.js';
import type { SelectedMailbox } from '../selected.js';
import { putAscii, putBytes, putNumber, roomFor } from '../wire/ascii-writer.js';
import { Atom, atom, literal, type ImapValue } from '../wire/values.js';

function applyPartial(data: Buffer, partial: Partial | null): Buffer {
  if (!partial) return data;
  if (partial.offset >= data.length) return Buffer.alloc(0);
  return data.subarray(partial.offset, Math.min(data.length, partial.offset + partial.length));
}

/** True when fetching this item sets \Seen (a non-peek body section, RFC822, RFC822.TEXT). */
function setsSeen(att: FetchAttribute): boolean {
  return (att.type === 'BODY[]' && !att.peek) || (att.type === 'OTHER' && att.seen === true) || att.type === 'RFC822' || att.type === 'RFC822.TEXT';
}

/** The value of one FETCH item of a message as the session sees it (also NOTIFY's MessageNew items). */
export function itemValue(att: FetchAttribute, m: Message, selected: SelectedMailbox, session: ImapSession): ImapValue {
  const raw = (): Buffer => servedSource(m.raw);
  switch (att.type) {
    case 'UID':
      return m.uid;
    case 'FLAGS':
      return selected.flagList(m);
    case 'INTERNALDATE':
      return formatInternalDate(m.internaldate);
    case 'RFC822.SIZE':
      return servedSize(m.raw);
    case 'MODSEQ':
      return [m.modseq];
    case 'ENVELOPE':
      return envelope(getMime(raw()), raw());
    case 'BODYSTRUCTURE':
      return bodyStructure(getMime(raw()), raw(), true);
    case 'BODY':
      return bodyStructure(getMime(raw()), raw(), false);
    case 'RFC822':
      return literal(raw());
    case 'RFC822.HEADER':
      return literal(sectionOf(raw(), getMime(raw()), { part: [], text: 'HEADER' }) ?? Buffer.alloc(0));
    case 'RFC822.TEXT':
      return literal(sectionOf(raw(), getMime(raw()), { part: [], text: 'TEXT' }) ?? Buffer.alloc(0));
    case 'BODY[]': {
      const src = raw();
      const data = att.section.part.length === 0 && !att.section.text ? src : sectionOf(src, getMime(src), att.section);
      return data === null ? null : literal(applyPartial(data, att.partial));
    }
    case 'OTHER':
      return imapProtocol(session.server).fetchValue(att.name, m, session, selected, att.data);
    default:
      return null;
  }
}

/** Items whose values are numbers, atoms or a fixed-form date: sync clients' hot path. */
const TEXT_ITEMS = new Set<FetchAttribute['type']>(['UID', 'FLAGS', 'RFC822.SIZE', 'MODSEQ', 'INTERNALDATE']);

/** Octets of the metadata FETCH lines (see `fetchMetadata`). */
const FETCH_OPEN = Buffer.from(' FETCH (', 'latin1');
const RECENT = Buffer.from('\\Recent', 'latin1');
/** Output of a metadata FETCH goes to the session in parts of about this size. */
const TEXT_PART = 64 * 1024;

/**
 * FETCH of metadata only (`1:* (UID FLAGS)`), written as bytes without the
 * generic value tree: the same bytes the serializer would produce, at a
 * fraction of the cost for 100,000 messages. Every item is ASCII by
 * grammar (numbers, flag atoms, a fixed-form date): a line costs its
 * octets.
 */
function fetchMetadata(session: ImapSession, selected: SelectedMailbox, targets: readonly Numbered[], items: readonly FetchAttribute[]): void {
  const count = items.length;
  // The session's wording cannot change during one FETCH: asked once, not per message.
  const recent = selected.showsRecent ? selected.recent : null;
  const wantsFlags = items.some((a) => a.type === 'FLAGS');
  const flagsOnly = wantsFlags && !updatesCarryMore(selected, targets, items);
  // Room per line beside its flags: "* n FETCH (", each item at most 48 octets, ")\r\n" (each flag makes its own).
  const lineRoom = 32 + 48 * count;
  let buf: Buffer = Buffer.allocUnsafe(Math.min(TEXT_PART, targets.length * (lineRoom >> 1)) + 256);
  let pos = 0;
  for (let t = 0; t < targets.length; t++) {
    const { seq, message: m } = targets[t]!;
    buf = roomFor(buf, pos, lineRoom);
    buf[pos++] = 0x2a; // "* "
    buf[pos++] = 0x20;
    pos = putNumber(buf, pos, seq);
    pos = putBytes(buf, pos, FETCH_OPEN);
    for (let i = 0; i < count; i++) {
      if (i) buf[pos++] = 0x20;
      switch (items[i]!.type) {
        case 'UID':
          pos = putAscii(buf, pos, 'UID ');
          pos = putNumber(buf, pos, m.uid);
          break;
        case 'FLAGS': {
          pos = putAscii(buf, pos, 'FLAGS (');
          let first = true;
          for (const f of m.flags) {
            // A keyword may be long: room for each, beside the line's.
            buf = roomFor(buf, pos, f.length + lineRoom);
            if (!first) buf[pos++] = 0x20;
            first = false;
            pos = putAscii(buf, pos, f);
          }
          if (recent !== null && recent.has(m.uid)) {
            if (!first) buf[pos++] = 0x20;
            pos = putBytes(buf, pos, RECENT);
          }
          buf[pos++] = 0x29;
          break;
        }
        case 'RFC822.SIZE':
          pos = putAscii(buf, pos, 'RFC822.SIZE ');
          pos = putNumber(buf, pos, servedSize(m.raw));
          break;
        case 'MODSEQ':
          pos = putAscii(buf, pos, 'MODSEQ (');
          pos = putNumber(buf, pos, m.modseq);
          buf[pos++] = 0x29;
          break;
        default:
          pos = putAscii(buf, pos, 'INTERNALDATE "');
          pos = putAscii(buf, pos, formatInternalDate(m.internaldate));
          buf[pos++] = 0x22;
      }
    }
    // Told by this line only when it is what the update would say (FLAGS, and no MODSEQ/UID the session's updates carry).
    if (flagsOnly && selected.hasFlagNotice(m.uid)) selected.dropFlagNotice(m.uid);
    buf[pos++] = 0x29;
    buf[pos++] = 0x0d;
    buf[pos++] = 0x0a;
    if (pos > TEXT_PART) {
      session.writeBytes(buf.subarray(0, pos));
      buf = Buffer.allocUnsafe(TEXT_PART + 256);
      pos = 0;
    }
  }
  if (pos > 0) session.writeBytes(buf.subarray(0, pos));
}

/** The item names a FETCH answer holds (`values` alternates name atoms and values). */
function namesIn(values: readonly ImapValue[]): Set<string> {
  const names = new Set<string>();
  for (let i = 0; i < values.length; i += 2) {
    const name = values[i];
    if (name instanceof Atom) names.add(name.value.toUpperCase());
  }
  return names;
}

/**
 * Adds what the session's flag updates carry besides FLAGS (UID first, and
 * e.g. MODSEQ) to the answer for a message whose \Seen this FETCH set,
 * leaving out items already asked for.
 */
function seenUpdateItems(selected: SelectedMailbox, message: Message, items: readonly FetchAttribute[], values: ImapValue[]): void {
  const extra = selected.shape?.flagFetch(message);
  if (!extra) return;
  const have = namesIn(values);
  for (let i = 0; i + 1 < extra.items.length; i += 2) {
    const name = extra.items[i];
    if (name instanceof Atom && have.has(name.value.toUpperCase())) continue;
    values.push(extra.items[i]!, extra.items[i + 1]!);
  }
  if (extra.uid && !items.some((a) => a.type === 'UID')) values.unshift(atom('UID'), message.uid);
}

/** True when an answer holding `values` says all a flag update of the message would (FLAGS, and the update's UID and extra items). */
function tellsFlagUpdate(selected: SelectedMailbox, message: Message, values: readonly ImapValue[]): boolean {
  const have = namesIn(values);
  if (!have.has('FLAGS')) return false;
  const extra = selected.shape?.flagFetch(message);
  if (!extra) return true;
  if (extra.uid && !have.has('UID')) return false;
  for (let i = 0; i < extra.items.length; i += 2) {
    const name = extra.items[i];
    if (name instanceof Atom && !have.has(name.value.toUpperCase())) return false;
  }
  return true;
}

/**
 * True when the session's flag updates carry an item the metadata FETCH
 * does not ask for (CONDSTORE's MODSEQ, UID): its lines then do not stand
 * for a pending update. Asked of one message: the wording is the session's,
 * not the message's.
 */
function updatesCarryMore(selected: SelectedMailbox, targets: readonly Numbered[], items: readonly FetchAttribute[]): boolean {
  if (targets.length === 0) return false;
  const extra = selected.shape?.flagFetch(targets[0]!.message);
  if (!extra) return false;
  if (extra.uid && !items.some((a) => a.type === 'UID')) return true;
  for (let i = 0; i < extra.items.length; i += 2) {
    const name = extra.items[i];
    if (name instanceof Atom && !items.some((a) => a.label.toUpperCase() === name.value.toUpperCase())) return true;
  }
  return false;
}

async function run(ctx: CommandContext): Promise<CommandResult> {
  const { session, args } = ctx;
  const set = args.sequenceSet();
  args.sp();
  const protocol = imapProtocol(session.server);
  const atts = args.fetchAttributes(protocol.fetchItems.size > 0 ? { items: protocol.fetchItemParsers } : {});
  // Modifiers (RFC 4466 fetch-modifiers) come from the `fetch` points.
  let params: ReadonlyMap<string, unknown> = new Map();
  if (!args.atEnd()) {
    args.sp();
    params = readParameters(args, protocol.fetchModifiers, ctx.name);
  }
  args.end();
  const selected = session.selected!;
  const refused = accessRefusal(session, 'r', selected.mailbox, selected.mailbox.path, ctx.name);
  if (refused) return refused;
  // UID FETCH always reports the UID (RFC 3501 §6.4.8), first as Dovecot does.
  const asked = ctx.uid && !atts.some((a) => a.type === 'UID') ? [{ type: 'UID', label: 'UID' } as FetchAttribute, ...atts] : atts;
  const plan = protocol.fetchPlan({ session, selected, uid: ctx.uid, set, items: asked, params, resolve: () => resolveSet(set, selected, ctx.uid) });
  const targets = plan.targets ?? resolveSet(set, selected, ctx.uid);
  const items = plan.items ?? asked;
  for (const response of plan.responses ?? []) session.untaggedList(response);
  // Without the `s` right a body FETCH reads without setting \Seen (RFC 4314 §4).
  const marksSeen =
    !selected.readOnly && items.some(setsSeen) && protocol.access(session, 's', selected.mailbox, selected.mailbox.path, ctx.name).allow;
  const wantsFlags = items.some((a) => a.type === 'FLAGS');
  // Only messages whose \Seen this FETCH sets report FLAGS unasked (RFC 3501 §6.4.5 "if this causes the flags to change"; Dovecot).
  const newlySeen = new Set<number>();
  if (marksSeen) {
    const unseen = targets.map((n) => n.message).filter((m) => !m.flags.has('\\Seen') && !selected.isExpungedPending(m.uid));
    for (const m of unseen) newlySeen.add(m.uid);
    if (unseen.length) session.server.store.setFlags(selected.mailbox, unseen, ['\\Seen'], 'add', session.id, { silent: true });
  }
  // Flags shown here may carry a keyword another session just added: FLAGS first (RFC 3501 §7.2.6).
  if ((wantsFlags || newlySeen.size > 0) && selected.learnKeywords()) {
    for (const response of selected.flagsResponses()) session.untaggedList(response);
  }
  if (items.every((a) => TEXT_ITEMS.has(a.type))) {
    // Not in a batch: its octets join the turn's output as they are (src/connection/connection.ts).
    fetchMetadata(session, selected, targets, items);
    return ok('Fetch completed');
  }
  // Bodies go out in runs: when the client has not read the last megabyte, wait for it
  // to, so that a FETCH of a thousand large messages never sits in memory at once.
  let next = 0;
  // An extension item that cannot be answered for a message (UNKNOWN-CTE) ends the FETCH with NO.
  let failed: CommandResult | null = null;
  while (next < targets.length && failed === null) {
    session.batch(() => {
      while (next < targets.length) {
        const { seq, message } = targets[next++]!;
        const values: ImapValue[] = [];
        try {
          for (const att of items) values.push(atom(att.label), itemValue(att, message, selected, session));
        } catch (err) {
          if (!(err instanceof CommandFailure)) throw err;
          failed = err.result;
          return;
        }
        // A FETCH that set \Seen reports the new flags too, worded as the session's flag updates
        // (UID and MODSEQ once CONDSTORE is on: RFC 7162 §3.1 names "a FETCH/UID FETCH that implicitly set the \Seen flag").
        if (newlySeen.has(message.uid)) {
          if (!wantsFlags) values.push(atom('FLAGS'), selected.flagList(message));
          seenUpdateItems(selected, message, items, values);
        }
        // A pending flag update is told by this answer only when it carries all that update would.
        if ((wantsFlags || newlySeen.has(message.uid)) && selected.hasFlagNotice(message.uid) && tellsFlagUpdate(selected, message, values)) {
          selected.dropFlagNotice(message.uid);
        }
        session.untaggedList([seq, atom('FETCH'), values]);
        if (session.outputPressure()) return;
      }
    });
    const room = session.outputRoom();
    if (room) await room;
    if (session.state === 'logout') break;
  }
  return failed ?? ok('Fetch completed');
}

export const fetch: CommandSpec = { name: 'FETCH', states: SELECTED, holdsExpunges: true, run };
export const uidFetch: CommandSpec = { name: 'UID FETCH', states: SELECTED, holdsExpunges: true, run };

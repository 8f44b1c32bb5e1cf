/**
 * CONTEXT=SEARCH and CONTEXT=SORT (RFC 5267 §4): results kept up to date.
 *
 * `SEARCH RETURN (UPDATE ...) ...` (also `UID SEARCH`, and `SORT`/`UID SORT`
 * for CONTEXT=SORT) answers as usual — with UPDATE and CONTEXT as the only
 * options, an ESEARCH response without result data, as Dovecot answers —
 * and then keeps the result: whenever the selected mailbox changes, by
 * this session, another one, the control API or REST, the session is sent
 * `* ESEARCH (TAG "t") [UID] REMOVEFROM (pos set)` and `ADDTO (pos set)`
 * with the changes of the full result list, at the points other untagged
 * updates go out (after a command, at once while idling) and after the
 * EXISTS that makes the numbers valid (./diff.ts: position 0 for SEARCH,
 * places in sort order for SORT). Expunged messages are removed right
 * before their EXPUNGE (or VANISHED), with the numbers the client still
 * has, as Dovecot does. A second UPDATE under a live tag is BAD. `CONTEXT` (the hint
 * that PARTIAL windows will follow) is accepted and changes nothing.
 * `CANCELUPDATE "tag" ...` ends updates; a tag without updates is NO.
 * Updates end with the selection. `sort: false` offers CONTEXT=SEARCH only
 * (UPDATE on SORT is BAD), as Dovecot. Beyond `maxContexts` live results per
 * session (default 16) the search is answered without updates and with
 * `* NO [NOUPDATE "tag"]`; so is a result that can no longer be kept
 * (access to the mailbox lost).
 *
 * A result is searched again only after its mailbox changed, and, when its
 * criteria use keys whose answer changes with the clock alone (WITHIN's
 * OLDER/YOUNGER, RFC 5032's persistent searches), every `clockCheckMs`
 * (default 1000): messages growing older leave or join it.
 */
import { SELECTED, failBad, no, ok, type CommandContext } from '../../imap/command.js';
import { imapProtocol } from '../../imap/protocol.js';
import type { SelectedMailbox } from '../../imap/selected.js';
import type { ImapSession } from '../../imap/session.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import type { Mailbox } from '../../store/mailbox.js';
import { defineExtension, type SearchMatch } from '../extension.js';
import { contextChanges, searchChanges } from './diff.js';
import { NO_RESPONSES } from '../shared.js';

/** One result kept up to date for a session. */
interface LiveResult {
  readonly tag: string;
  readonly uid: boolean;
  /** A SORT result (positions in sort order), else SEARCH (position 0). */
  readonly sorted: boolean;
  readonly selected: SelectedMailbox;
  readonly rerun: () => readonly SearchMatch[] | null;
  /** The client's list: UIDs in result order. */
  uids: number[];
  /** The mailbox's change count when `uids` was made; -1: search again at the next chance. */
  seen: number;
  readonly session: ImapSession;
}

export interface ContextState {
  readonly maxContexts: number;
  /** How often results with time-dependent keys (OLDER/YOUNGER) are searched again, ms. */
  readonly clockCheckMs: number;
  /** CONTEXT=SORT is offered (while SORT is loaded); false: UPDATE is for SEARCH only, as in Dovecot. */
  readonly sort: boolean;
  /** The live results whose criteria depend on the clock, and the timer that revisits them while there are any. */
  readonly ticking: Set<LiveResult>;
  timer: NodeJS.Timeout | null;
  readonly sessions: WeakMap<ImapSession, Map<string, LiveResult>>;
  /** Changes per mailbox, to search again only when something changed. */
  readonly changes: WeakMap<Mailbox, number>;
}

/** Options that ask for no result data: with UPDATE or CONTEXT among them, ESEARCH still answers (empty), as Dovecot does. */
const NOT_RESULTS = new Set(['UPDATE', 'CONTEXT', 'SAVE']);

function noUpdate(tag: string, text: string): ImapValue[] {
  return [atom('NO'), atom(`[NOUPDATE ${JSON.stringify(tag)}]`), atom(text)];
}

function liveOf(state: ContextState, session: ImapSession): Map<string, LiveResult> {
  let map = state.sessions.get(session);
  if (!map) {
    map = new Map();
    state.sessions.set(session, map);
  }
  return map;
}

function cancelUpdate(ctx: CommandContext, state: ContextState) {
  const { args, session } = ctx;
  if (args.atEnd()) failBad('CANCELUPDATE needs a tag');
  const tags = [args.string().toString('utf8')];
  while (args.trySp()) tags.push(args.string().toString('utf8'));
  args.end();
  const live = state.sessions.get(session);
  const unknown = tags.find((t) => !live?.has(t));
  if (unknown !== undefined) return no(`No updates for tag ${JSON.stringify(unknown.slice(0, 40))}`);
  for (const t of tags) live!.delete(t);
  return ok('Updates cancelled');
}

/**
 * Marks every clock-dependent result for another search; an idling session
 * is sent its updates at once, the others with their next command.
 */
function tick(state: ContextState): void {
  const idle = new Set<ImapSession>();
  for (const result of state.ticking) {
    const live = state.sessions.get(result.session);
    if (result.session.selected !== result.selected || live?.get(result.tag) !== result) {
      state.ticking.delete(result);
      continue;
    }
    result.seen = -1;
    if (result.session.idling) idle.add(result.session);
  }
  for (const session of idle) session.flushUpdates(true);
  if (state.ticking.size === 0 && state.timer) {
    clearInterval(state.timer);
    state.timer = null;
  }
}

function startTicking(state: ContextState, result: LiveResult): void {
  state.ticking.add(result);
  if (state.timer) return;
  state.timer = setInterval(() => tick(state), state.clockCheckMs);
  // A test's process may end while results are live.
  state.timer.unref();
}

/** The updates owed to one session: each changed result searched again and compared. */
function updatesFor(session: ImapSession, settled: boolean, state: ContextState): readonly (readonly ImapValue[])[] {
  const live = state.sessions.get(session);
  if (!live || live.size === 0) return NO_RESPONSES;
  const selected = session.selected;
  const out: ImapValue[][] = [];
  for (const [tag, result] of live) {
    if (result.selected !== selected) {
      live.delete(tag);
      continue;
    }
    const count = state.changes.get(selected.mailbox) ?? 0;
    if (!settled || result.seen === count) continue;
    const found = result.rerun();
    result.seen = count;
    if (found === null) {
      live.delete(tag);
      out.push(noUpdate(tag, 'The result can no longer be updated'));
      continue;
    }
    const after = found.map((f) => f.message.uid);
    // Expunged messages left the list before their EXPUNGE (beforeExpunges); none can remain, but a number must exist.
    const before = result.uids.filter((uid) => selected.seqOfUid(uid) !== 0);
    const number = result.uid ? (uid: number) => uid : (uid: number) => selected.seqOfUid(uid);
    const items = result.sorted ? contextChanges(before, after, number) : searchChanges(before, after, number);
    result.uids = after;
    if (items.length === 0) continue;
    const line: ImapValue[] = [atom('ESEARCH'), [atom('TAG'), tag]];
    if (result.uid) line.push(atom('UID'));
    out.push([...line, ...items]);
  }
  return out;
}

/** REMOVEFROM of expunged messages, before their EXPUNGE, with the numbers the client still has. */
function beforeExpunges(session: ImapSession, gone: ReadonlySet<number>, state: ContextState): readonly (readonly ImapValue[])[] {
  const live = state.sessions.get(session);
  if (!live || live.size === 0) return NO_RESPONSES;
  const selected = session.selected;
  const out: ImapValue[][] = [];
  for (const result of live.values()) {
    if (result.selected !== selected || !result.uids.some((uid) => gone.has(uid))) continue;
    const after = result.uids.filter((uid) => !gone.has(uid));
    const number = result.uid ? (uid: number) => uid : (uid: number) => selected.seqOfUid(uid);
    const items = result.sorted ? contextChanges(result.uids, after, number) : searchChanges(result.uids, after, number);
    result.uids = after;
    const line: ImapValue[] = [atom('ESEARCH'), [atom('TAG'), result.tag]];
    if (result.uid) line.push(atom('UID'));
    out.push([...line, ...items]);
  }
  return out;
}

export const extension = defineExtension<ContextState>({
  name: 'CONTEXT',
  aliases: ['CONTEXT=SEARCH', 'CONTEXT=SORT'],
  requires: ['ESEARCH'],
  options: {
    type: 'object',
    properties: {
      maxContexts: { type: 'integer', minimum: 0 },
      clockCheckMs: { type: 'integer', minimum: 10 },
      sort: { type: 'boolean' },
    },
  },
  setup: ({ options }) => ({
    maxContexts: (options.maxContexts as number | undefined) ?? 16,
    clockCheckMs: (options.clockCheckMs as number | undefined) ?? 1000,
    sort: (options.sort as boolean | undefined) ?? true,
    ticking: new Set(),
    timer: null,
    sessions: new WeakMap(),
    changes: new WeakMap(),
  }),
  capabilities: (session, state) => (state.sort && imapProtocol(session.server).has('SORT') ? ['CONTEXT=SEARCH', 'CONTEXT=SORT'] : ['CONTEXT=SEARCH']),
  onChange: (change, state) => {
    if (change.kind === 'append' || change.kind === 'expunge' || change.kind === 'flags') {
      state.changes.set(change.mailbox, (state.changes.get(change.mailbox) ?? 0) + 1);
    }
  },
  commands: [{ name: 'CANCELUPDATE', states: SELECTED, run: (ctx) => cancelUpdate(ctx, imapProtocol(ctx.session.server).api('CONTEXT') as ContextState) }],
  updates: { after: updatesFor, beforeExpunges },
  search: {
    returnOptions: ['UPDATE', 'CONTEXT'],
    // The tag names the live result (CANCELUPDATE, ESEARCH TAG): a second one under a live tag is refused, as Dovecot does.
    refuseReturnOptions: (options, { session, tag, command }, state) => {
      if (!options.has('UPDATE')) return undefined;
      if (!state.sort && /SORT$/.test(command)) return 'UPDATE needs CONTEXT=SORT';
      return state.sessions.get(session)?.get(tag)?.selected === session.selected ? `Tag ${tag.slice(0, 40)} already names a result being updated` : undefined;
    },
    // With UPDATE or CONTEXT alone the ESEARCH response is still sent, with no result data (as Dovecot does).
    resultItems: (ctx) => {
      const ours = ctx.options.has('UPDATE') || ctx.options.has('CONTEXT');
      if (ctx.found === null || !ours || [...ctx.options].some((o) => !NOT_RESULTS.has(o))) return undefined;
      return { items: [], returned: [] };
    },
    results: (ctx, state) => {
      if (!ctx.options.has('UPDATE') || ctx.found === null) return;
      const live = liveOf(state, ctx.session);
      if (live.size >= state.maxContexts) {
        ctx.session.untaggedList(noUpdate(ctx.tag, 'Too many contexts'));
        return;
      }
      const sorted = /^(UID )?SORT$/.test(ctx.command);
      const result: LiveResult = { tag: ctx.tag, uid: ctx.uid, sorted, selected: ctx.selected, rerun: ctx.rerun, uids: ctx.found.map((f) => f.message.uid), seen: -1, session: ctx.session };
      live.set(ctx.tag, result);
      if (imapProtocol(ctx.session.server).searchDependsOnTime(ctx.criteria)) startTicking(state, result);
    },
  },
});

/**
 * What each NOTIFY session asked for and is owed: which events it wants
 * for which mailbox, the bounded queue of notifications waiting to go out
 * (§5.8 when it overflows), and the store and metadata changes that fill
 * it.
 */
import type { ImapSession, SelectedUpdatePolicy } from '../../imap/session.js';
import type { FetchAttribute } from '../../imap/syntax.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import type { StoreChange } from '../../store/changes.js';
import type { Mailbox } from '../../store/mailbox.js';
import { entryValue } from '../metadata-server/commands.js';
import type { MetadataChange } from '../metadata-server/state.js';
import { MESSAGE_EVENTS, type EventGroup, type EventName } from './grammar.js';
import { allowed, listLine, statusLine } from './responses.js';
import { NO_RESPONSES } from '../shared.js';

/**
 * One waiting notification: a STATUS or a LIST worked out when it leaves
 * (a created mailbox shows the `\Subscribed` its creation gave it), or a
 * ready response (a rename's or a delete's LIST, METADATA).
 */
type Pending = { kind: 'status'; mailbox: Mailbox } | { kind: 'list'; path: string } | { kind: 'line'; values: ImapValue[] };

/** What one session asked for with NOTIFY SET, and what it is owed. */
export interface Watch {
  session: ImapSession;
  /** The groups for mailboxes other than the selected one, in the order given. */
  groups: EventGroup[];
  /** MessageNew's FETCH attributes for the selected mailbox, or null. */
  fetch: FetchAttribute[] | null;
  /** FlagChange is on for the selected mailbox: its flag FETCHes carry UID (§5.1). */
  selectedFlags: boolean;
  /** Keyed `S<path>` for a STATUS (one per mailbox), `L<n>` for a LIST. */
  pending: Map<string, Pending>;
  serial: number;
  /** UIDs the session added to its selected mailbox itself: no MessageNew FETCH for them (§5.2). */
  own: Set<number>;
  /** Set when the queue overflowed: the next delivery is `OK [NOTIFICATIONOVERFLOW]`, then nothing. */
  overflowed: boolean;
}

/** The sessions with NOTIFY SET in force and the bound on what each may have waiting. */
export interface Watches {
  limit: number;
  watches: Map<number, Watch>;
}

/** Held: what NOTIFY NONE, `selected NONE` or no selected filter mean for the selected mailbox. */
export const HELD: SelectedUpdatePolicy = { timing: 'held', flags: false };

/**
 * Whether the session wants `event` for the mailbox at `path`: the groups
 * (other than the selected one) are looked at in the order given; a
 * matching group with the event says yes, a matching group with NONE says
 * no, a matching group without the event leaves it to the next ones.
 */
export function wants(watch: Watch, path: string, event: EventName): boolean {
  const store = watch.session.mailboxes;
  for (const group of watch.groups) {
    const f = group.filter;
    let match = false;
    switch (f.kind) {
      case 'inboxes':
      case 'personal':
        match = store.namespaceOf(path).type === 'personal';
        break;
      case 'subscribed':
        match = store.isSubscribed(path);
        break;
      case 'mailboxes':
        match = f.names.includes(path);
        break;
      case 'subtree':
        match = f.names.some((name) => path === name || path.startsWith(name + store.delimiterFor(name)));
        break;
      default:
        break;
    }
    if (!match) continue;
    if (group.events.size === 0) return false;
    if (group.events.has(event)) return true;
  }
  return false;
}

function enqueue(state: Watches, watch: Watch, key: string, item: Pending): void {
  if (watch.overflowed) return;
  watch.pending.set(key, item);
  if (watch.pending.size > state.limit) {
    // §5.8: too much to deliver; say so once and behave as after NOTIFY NONE.
    watch.pending.clear();
    watch.overflowed = true;
    watch.groups = [];
    watch.fetch = null;
    watch.selectedFlags = false;
    watch.session.setSelectedUpdates(HELD);
  }
  watch.session.wakeUnsolicited();
}

function queueStatus(state: Watches, watch: Watch, mailbox: Mailbox, name: string): void {
  enqueue(state, watch, `S${name}`, { kind: 'status', mailbox });
}

function queueLine(state: Watches, watch: Watch, values: ImapValue[]): void {
  enqueue(state, watch, `L${watch.serial++}`, { kind: 'line', values });
}

const MESSAGE_EVENT_NAMES = [...MESSAGE_EVENTS];

const EVENT_OF: Partial<Record<StoreChange['kind'], EventName>> = {
  append: 'MessageNew',
  expunge: 'MessageExpunge',
  flags: 'FlagChange',
};

export function onStoreChange(change: StoreChange, state: Watches): void {
  if (change.kind === 'reset') {
    state.watches.clear();
    return;
  }
  if (state.watches.size === 0) return;
  for (const watch of state.watches.values()) {
    const session = watch.session;
    if (change.kind === 'append' && change.origin === session.id && watch.fetch && session.selected?.mailbox === change.mailbox) {
      for (const m of change.messages) watch.own.add(m.uid);
    }
    // §5: what the session did itself it already knows.
    if (change.origin === session.id || session.user === null || watch.overflowed) continue;
    switch (change.kind) {
      case 'append':
      case 'expunge':
      case 'flags':
      case 'uidvalidity': {
        const mailbox = change.mailbox;
        // The selected mailbox's updates are the session's own (its update policy).
        if (session.selected?.mailbox === mailbox) break;
        // Names are the session user's (userMailboxes): a mailbox of a tree they cannot see is none of theirs.
        const view = session.mailboxes;
        const name = view.nameOf(mailbox);
        if (view.get(name) !== mailbox) break;
        // §5.1: a UIDVALIDITY change is owed to a FlagChange watch; it renumbers every message, so any
        // message event stands for it.
        if (change.kind === 'uidvalidity' ? !MESSAGE_EVENT_NAMES.some((e) => wants(watch, name, e)) : !wants(watch, name, EVENT_OF[change.kind]!)) break;
        if (!allowed(session, 'l', mailbox, name) || !allowed(session, 'r', mailbox, name)) break;
        queueStatus(state, watch, mailbox, name);
        break;
      }
      case 'mailbox': {
        const subscription = change.type === 'subscribe' || change.type === 'unsubscribe';
        const wanted: EventName = subscription ? 'SubscriptionChange' : 'MailboxName';
        // Change records carry paths of the tree that changed; the session knows them by its own names.
        const owner = subscription ? (change.user ?? null) : (session.server.trees?.userOf(change) ?? null);
        // Subscriptions are each user's own.
        if (subscription && owner !== null && owner !== session.user) break;
        const path = subscription ? change.path : session.mailboxes.nameAt(owner, change.path);
        if (path === null) break;
        const oldPath = change.oldPath === null ? null : session.mailboxes.nameAt(owner, change.oldPath);
        const matches = wants(watch, path, wanted) || (oldPath !== null && wants(watch, oldPath, wanted));
        if (!matches) break;
        if (change.mailbox && !allowed(session, 'l', change.mailbox, path)) break;
        if (change.type === 'delete') queueLine(state, watch, listLine(session, path, null, null));
        else if (change.type === 'rename') queueLine(state, watch, listLine(session, path, change.mailbox, oldPath));
        else enqueue(state, watch, `L${watch.serial++}`, { kind: 'list', path });
        break;
      }
      default:
        break;
    }
  }
}

/** §5.6, §5.7: `* METADATA mailbox entry ...` (RFC 5464 §4.4.2, names without values) for changed entries. */
export function onMetadataChange(change: MetadataChange, state: Watches): void {
  for (const watch of state.watches.values()) {
    const session = watch.session;
    if (change.origin === session.id || session.user === null || watch.overflowed) continue;
    if (change.path === '') {
      if (!watch.groups.some((g) => g.events.has('ServerMetadataChange'))) continue;
    } else {
      // The changed mailbox by this session's name for it (userMailboxes: another user's tree has others).
      const view = session.mailboxes;
      const mailbox = change.mailbox ?? view.get(change.path);
      const name = mailbox ? view.nameOf(mailbox) : change.path;
      if (!mailbox || view.get(name) !== mailbox || !wants(watch, name, 'MailboxMetadataChange')) continue;
      if (!allowed(session, 'l', mailbox, name) || !allowed(session, 'r', mailbox, name)) continue;
      queueLine(state, watch, [atom('METADATA'), session.mailboxName(name), ...change.entries.map(entryValue)]);
      continue;
    }
    queueLine(state, watch, [atom('METADATA'), session.mailboxName(change.path), ...change.entries.map(entryValue)]);
  }
}

/** The responses owed to a session now; the queue empties. */
export function deliver(session: ImapSession, state: Watches): readonly (readonly ImapValue[])[] {
  const watch = state.watches.get(session.id);
  if (!watch || watch.session !== session) return NO_RESPONSES;
  if (watch.overflowed) {
    state.watches.delete(session.id);
    return [[atom('OK'), atom('[NOTIFICATIONOVERFLOW]'), atom('Too many notifications waiting; NOTIFY is off')]];
  }
  if (watch.pending.size === 0) return NO_RESPONSES;
  const out: ImapValue[][] = [];
  const store = session.mailboxes;
  for (const item of watch.pending.values()) {
    if (item.kind === 'line') out.push(item.values);
    else if (item.kind === 'list') out.push(listLine(session, item.path, store.get(item.path) ?? null, null));
    // A mailbox deleted since (its LIST said so) has no status.
    else if (store.get(store.nameOf(item.mailbox)) === item.mailbox) out.push(statusLine(session, item.mailbox));
  }
  watch.pending.clear();
  return out;
}

/**
 * NOTIFY (RFC 5465): a client says which events it wants for which
 * mailboxes, and gets them as unsolicited responses whenever the server is
 * not in the middle of an answer, between commands too (not only inside
 * IDLE).
 *
 * - Other mailboxes: `* STATUS` (MESSAGES UIDNEXT UIDVALIDITY UNSEEN, and
 *   HIGHESTMODSEQ once CONDSTORE is on) for MessageNew, MessageExpunge and
 *   FlagChange; `* LIST` for MailboxName (`\NonExistent` after a delete,
 *   `("OLDNAME" (old))` after a rename) and SubscriptionChange
 *   (`\Subscribed` when subscribed). A STATUS waiting to go out is sent
 *   once per mailbox, with the values at the time it leaves.
 * - The selected mailbox: `selected` sends EXISTS/EXPUNGE/FETCH at once
 *   (EXPUNGE at any time, §5.3), `selected-delayed` at once except EXPUNGE,
 *   which waits for a command that may carry it; without either (or with
 *   NONE, or after NOTIFY NONE) changes made by others are held back.
 *   MessageNew's FETCH attributes follow each new message's EXISTS.
 * - Events caused by the session itself are not reported (§5), nor those
 *   of mailboxes the user may not list (`l`) or, for message events, read
 *   (`r`) (§5, §3.1). A changed ACL counts from the next event (§5.9).
 * - `inboxes` is `personal`: any mailbox may receive mail here (the
 *   control API delivers anywhere), and §6.3 says so then. Where several
 *   event groups match a mailbox, they are looked at in the order given
 *   until one has the event (yes) or NONE (no).
 * - `pluginOptions.NOTIFY.queueLimit` (default 1000): notifications a
 *   session may have waiting (while a command runs, or while the client
 *   does not read) before the server gives up on it with
 *   `* OK [NOTIFICATIONOVERFLOW]` and behaves as after NOTIFY NONE (§5.8).
 * - MailboxMetadataChange / ServerMetadataChange (`* METADATA mailbox
 *   entry ...`, names only, §5.6-5.7) are accepted only while METADATA /
 *   METADATA-SERVER are loaded; AnnotationChange (no ANNOTATE
 *   here) and the quota events never: `NO [BADEVENT (...)]` lists those
 *   this server supports (§3.1).
 */
import { ServiceError } from '../../errors.js';
import { AUTHENTICATED, no, ok, type CommandSpec } from '../../imap/command.js';
import { childAttributes } from '../../imap/commands/list.js';
import { itemValue } from '../../imap/commands/fetch.js';
import { statusValues } from '../../imap/commands/status.js';
import { imapProtocol } from '../../imap/protocol.js';
import type { Numbered } from '../../imap/sequence.js';
import type { ImapSession, SelectedUpdatePolicy } from '../../imap/session.js';
import type { FetchAttribute } from '../../imap/syntax.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import type { Server } from '../../server.js';
import type { StoreChange } from '../../store/changes.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { Extension } from '../extension.js';
import { entryValue } from '../metadata-server/commands.js';
import type { MetadataApi, MetadataChange } from '../metadata-server/state.js';
import { always } from '../shared.js';
import { MESSAGE_EVENTS, parseNotify, type EventGroup, type EventName, type NotifyRequest } from './grammar.js';

/** The control API of NOTIFY: `server.extension('NOTIFY')`. */
export interface NotifyApi {
  /** Notifications a session may have waiting before it gets `OK [NOTIFICATIONOVERFLOW]`. */
  readonly queueLimit: number;
  /** Changes the limit (at least 1) for every session. */
  setQueueLimit(limit: number): void;
  /** Sessions with NOTIFY SET in force, by session number. */
  sessions(): number[];
}

declare module '../extension.js' {
  interface ExtensionApis {
    NOTIFY: NotifyApi;
  }
}

const DEFAULT_QUEUE_LIMIT = 1000;

/**
 * One waiting notification: a STATUS or a LIST worked out when it leaves
 * (a created mailbox shows the `\Subscribed` its creation gave it), or a
 * ready response (a rename's or a delete's LIST, METADATA).
 */
type Pending = { kind: 'status'; mailbox: Mailbox } | { kind: 'list'; path: string } | { kind: 'line'; values: ImapValue[] };

/** What one session asked for with NOTIFY SET, and what it is owed. */
interface Watch {
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

interface State extends NotifyApi {
  server: Server;
  limit: number;
  watches: Map<number, Watch>;
  /** True once NOTIFY follows METADATA-SERVER's changes (at the first NOTIFY SET: setup order is not relied on). */
  metadataFollowed: boolean;
}

/** Held: what NOTIFY NONE, `selected NONE` or no selected filter mean for the selected mailbox. */
const HELD: SelectedUpdatePolicy = { timing: 'held', flags: false };

/** The events this server can deliver: the metadata ones only while their plugins are loaded. */
function supportedEvents(server: Server): Set<EventName> {
  const out = new Set<EventName>(['MessageNew', 'MessageExpunge', 'FlagChange', 'MailboxName', 'SubscriptionChange']);
  const protocol = imapProtocol(server);
  if (protocol.has('METADATA')) out.add('MailboxMetadataChange');
  if (protocol.has('METADATA-SERVER')) out.add('ServerMetadataChange');
  return out;
}

function allowed(session: ImapSession, right: 'l' | 'r', mailbox: Mailbox | null, path: string): boolean {
  return imapProtocol(session.server).access(session, right, mailbox, path, 'NOTIFY').allow;
}

/**
 * Whether the session wants `event` for the mailbox at `path`: the groups
 * (other than the selected one) are looked at in the order given; a
 * matching group with the event says yes, a matching group with NONE says
 * no, a matching group without the event leaves it to the next ones.
 */
function wants(watch: Watch, path: string, event: EventName): boolean {
  const store = watch.session.server.store;
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

/** The STATUS items of a notification (§3.1, §5.1-5.3). */
function statusItems(session: ImapSession): string[] {
  const items = ['MESSAGES', 'UIDNEXT', 'UIDVALIDITY', 'UNSEEN'];
  const protocol = imapProtocol(session.server);
  if (protocol.has('CONDSTORE') && (session.enabled.has('CONDSTORE') || session.enabled.has('QRESYNC'))) items.push('HIGHESTMODSEQ');
  return items;
}

function statusLine(session: ImapSession, mailbox: Mailbox): ImapValue[] {
  return [atom('STATUS'), mailbox.path, statusValues(session, mailbox, statusItems(session))];
}

/** `LIST (attributes) delimiter name` as a notification sees the mailbox now. */
function listLine(session: ImapSession, path: string, mailbox: Mailbox | null, oldName: string | null): ImapValue[] {
  const store = session.server.store;
  const attrs = mailbox ? [...mailbox.attributes, ...childAttributes(store, { path, mailbox })] : ['\\NonExistent'];
  if (store.isSubscribed(path)) attrs.push('\\Subscribed');
  const line: ImapValue[] = [atom('LIST'), attrs.map(atom), store.delimiterFor(path), path];
  if (oldName !== null) line.push(['OLDNAME', [oldName]]);
  return line;
}

function enqueue(state: State, watch: Watch, key: string, item: Pending): void {
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

function queueStatus(state: State, watch: Watch, mailbox: Mailbox): void {
  enqueue(state, watch, `S${mailbox.path}`, { kind: 'status', mailbox });
}

function queueLine(state: State, watch: Watch, values: ImapValue[]): void {
  enqueue(state, watch, `L${watch.serial++}`, { kind: 'line', values });
}

const EVENT_OF: Partial<Record<StoreChange['kind'], EventName>> = {
  append: 'MessageNew',
  expunge: 'MessageExpunge',
  flags: 'FlagChange',
};

function onStoreChange(change: StoreChange, state: State): void {
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
      case 'flags': {
        const mailbox = change.mailbox;
        // The selected mailbox's updates are the session's own (its update policy).
        if (session.selected?.mailbox === mailbox) break;
        if (!wants(watch, mailbox.path, EVENT_OF[change.kind]!)) break;
        if (!allowed(session, 'l', mailbox, mailbox.path) || !allowed(session, 'r', mailbox, mailbox.path)) break;
        queueStatus(state, watch, mailbox);
        break;
      }
      case 'uidvalidity': {
        const mailbox = change.mailbox;
        if (session.selected?.mailbox === mailbox) break;
        if (!wants(watch, mailbox.path, 'MessageNew')) break;
        if (!allowed(session, 'l', mailbox, mailbox.path) || !allowed(session, 'r', mailbox, mailbox.path)) break;
        queueStatus(state, watch, mailbox);
        break;
      }
      case 'mailbox': {
        const subscription = change.type === 'subscribe' || change.type === 'unsubscribe';
        const wanted: EventName = subscription ? 'SubscriptionChange' : 'MailboxName';
        const matches = wants(watch, change.path, wanted) || (change.oldPath !== null && wants(watch, change.oldPath, wanted));
        if (!matches) break;
        if (change.mailbox && !allowed(session, 'l', change.mailbox, change.path)) break;
        if (change.type === 'delete') queueLine(state, watch, listLine(session, change.path, null, null));
        else if (change.type === 'rename') queueLine(state, watch, listLine(session, change.path, change.mailbox, change.oldPath));
        else enqueue(state, watch, `L${watch.serial++}`, { kind: 'list', path: change.path });
        break;
      }
      default:
        break;
    }
  }
}

/** §5.6, §5.7: `* METADATA mailbox entry ...` (RFC 5464 §4.4.2, names without values) for changed entries. */
function onMetadataChange(change: MetadataChange, state: State): void {
  for (const watch of state.watches.values()) {
    const session = watch.session;
    if (change.origin === session.id || session.user === null || watch.overflowed) continue;
    if (change.path === '') {
      if (!watch.groups.some((g) => g.events.has('ServerMetadataChange'))) continue;
    } else {
      const mailbox = session.server.store.get(change.path);
      if (!mailbox || !wants(watch, mailbox.path, 'MailboxMetadataChange')) continue;
      if (!allowed(session, 'l', mailbox, mailbox.path) || !allowed(session, 'r', mailbox, mailbox.path)) continue;
    }
    queueLine(state, watch, [atom('METADATA'), change.path, ...change.entries.map(entryValue)]);
  }
}

/** The responses owed to a session now; the queue empties. */
function deliver(session: ImapSession, state: State): (readonly ImapValue[])[] {
  const watch = state.watches.get(session.id);
  if (!watch || watch.session !== session) return [];
  if (watch.overflowed) {
    state.watches.delete(session.id);
    return [[atom('OK'), atom('[NOTIFICATIONOVERFLOW]'), atom('Too many notifications waiting; NOTIFY is off')]];
  }
  if (watch.pending.size === 0) return [];
  const out: ImapValue[][] = [];
  const store = session.server.store;
  for (const item of watch.pending.values()) {
    if (item.kind === 'line') out.push(item.values);
    else if (item.kind === 'list') out.push(listLine(session, item.path, store.get(item.path) ?? null, null));
    // A mailbox deleted since (its LIST said so) has no status.
    else if (store.get(item.mailbox.path) === item.mailbox) out.push(statusLine(session, item.mailbox));
  }
  watch.pending.clear();
  return out;
}

/** The update policy of the selected mailbox that a NOTIFY SET asks for. */
function policyOf(request: Extract<NotifyRequest, { kind: 'set' }>): SelectedUpdatePolicy {
  const group = request.groups.find((g) => g.filter.kind === 'selected' || g.filter.kind === 'selected-delayed');
  if (!group || group.events.size === 0) return HELD;
  return { timing: group.filter.kind === 'selected' ? 'immediate' : 'delayed', flags: group.events.has('FlagChange') };
}

const notifyCommand: CommandSpec = {
  name: 'NOTIFY',
  states: AUTHENTICATED,
  run({ session, args }) {
    const server = session.server;
    const state = imapProtocol(server).api('NOTIFY') as State;
    const supported = supportedEvents(server);
    const request = parseNotify(args, supported, [...imapProtocol(server).fetchItems.keys()]);
    if (request.kind === 'none') {
      state.watches.delete(session.id);
      session.setSelectedUpdates(HELD);
      return ok('NOTIFY completed');
    }
    if (request.unsupported.length) {
      // §3.1: NO (not BAD), with every event this server supports.
      const list = [...supported].join(' ');
      return no(`Unsupported event: ${request.unsupported.join(' ')}`, `BADEVENT (${list})`);
    }
    const selectedGroup = request.groups.find((g) => g.filter.kind === 'selected' || g.filter.kind === 'selected-delayed');
    const watch: Watch = {
      session,
      groups: request.groups.filter((g) => g !== selectedGroup),
      fetch: selectedGroup?.events.has('MessageNew') ? selectedGroup.fetch : null,
      selectedFlags: selectedGroup?.events.has('FlagChange') ?? false,
      pending: new Map(),
      serial: 0,
      own: new Set(),
      overflowed: false,
    };
    const store = server.store;
    // §3.1: a named mailbox the user may list but not read gets `\NoAccess`; one it may not list is ignored.
    for (const group of watch.groups) {
      if (group.filter.kind !== 'mailboxes' && group.filter.kind !== 'subtree') continue;
      if (![...group.events].some((e) => MESSAGE_EVENTS.has(e))) continue;
      for (const name of group.filter.names) {
        const mailbox = store.get(name);
        if (!mailbox || !allowed(session, 'l', mailbox, mailbox.path) || allowed(session, 'r', mailbox, mailbox.path)) continue;
        session.untagged(atom('LIST'), [atom('\\NoAccess')], store.delimiterFor(mailbox.path), mailbox.path);
      }
    }
    state.watches.set(session.id, watch);
    if (!state.metadataFollowed) {
      state.metadataFollowed = true;
      const metadata = imapProtocol(server).api('METADATA-SERVER') as MetadataApi | undefined;
      metadata?.onMetadataChange((change) => onMetadataChange(change, state));
    }
    // The accumulated changes of the selected mailbox go out with this command's answer (§3.1: an implicit NOOP).
    session.setSelectedUpdates(policyOf(request));
    if (request.status) {
      // §3.1: a STATUS for each mailbox (other than the selected one) whose message events are now on.
      for (const mailbox of store.list()) {
        if (session.selected?.mailbox === mailbox || !mailbox.selectable) continue;
        // MessageNew goes with MessageExpunge, and FlagChange needs both (§5): one stands for all.
        if (!wants(watch, mailbox.path, 'MessageNew')) continue;
        if (!allowed(session, 'l', mailbox, mailbox.path) || !allowed(session, 'r', mailbox, mailbox.path)) continue;
        session.untaggedList(statusLine(session, mailbox));
      }
    }
    return ok('NOTIFY completed');
  },
};

export const extension: Extension<State> = {
  name: 'NOTIFY',
  options: {
    type: 'object',
    properties: {
      queueLimit: {
        type: 'integer',
        minimum: 1,
        description: 'Notifications a session may have waiting before it gets OK [NOTIFICATIONOVERFLOW] and NOTIFY is off for it',
      },
    },
    additionalProperties: false,
  },
  setup: ({ server, options }) => {
    const state: State = {
      server,
      limit: (options.queueLimit as number | undefined) ?? DEFAULT_QUEUE_LIMIT,
      watches: new Map(),
      metadataFollowed: false,
      get queueLimit() {
        return state.limit;
      },
      setQueueLimit(limit: number) {
        if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
          throw new ServiceError('INVALID', `queueLimit: expected a positive integer, got ${String(limit)}`);
        }
        state.limit = limit;
      },
      sessions: () => [...state.watches.keys()],
    };
    // A session that ends, or logs out with UNAUTHENTICATE, asks for nothing any more.
    server.on('session', (event) => {
      if (event.type === 'close' || event.type === 'unauthenticate') state.watches.delete(event.session.session);
    });
    return state;
  },
  capabilities: always('NOTIFY'),
  commands: [notifyCommand],
  onChange: onStoreChange,
  unsolicited: deliver,
  updates: {
    flagFetch(session, _message, state) {
      const watch = state.watches.get(session.id);
      return watch?.selectedFlags && watch.session === session ? { uid: true, items: [] } : undefined;
    },
    newMessages(session, added: readonly Numbered[], state) {
      const watch = state.watches.get(session.id);
      const selected = session.selected;
      if (!watch?.fetch || !selected || watch.session !== session) return [];
      const items = watch.fetch;
      // §5.2: the FETCH of each new message right after its EXISTS; none for the session's own APPEND/COPY.
      const fresh = added.filter(({ message }) => !watch.own.delete(message.uid));
      return fresh.map(({ seq, message }) => {
        const values: ImapValue[] = [];
        for (const att of items) values.push(atom(att.label), itemValue(att, message, selected, session));
        return [seq, atom('FETCH'), values];
      });
    },
  },
};

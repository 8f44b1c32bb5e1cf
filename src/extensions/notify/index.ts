/**
 * NOTIFY (RFC 5465): a client says which events it wants for which
 * mailboxes, and gets them as unsolicited responses whenever the server is
 * not in the middle of an answer, between commands too (not only inside
 * IDLE).
 *
 * - Other mailboxes: `* STATUS` (MESSAGES UIDNEXT UIDVALIDITY UNSEEN, and
 *   HIGHESTMODSEQ once CONDSTORE is on) for MessageNew, MessageExpunge and
 *   FlagChange, each of which may be watched alone there (the pairing rules
 *   of §5 are the selected mailbox's: grammar.ts); a UIDVALIDITY change for
 *   any of them; `* LIST` for MailboxName (`\NonExistent` after a delete,
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
import { itemValue } from '../../imap/commands/fetch.js';
import { imapProtocol } from '../../imap/protocol.js';
import type { SelectedMailbox } from '../../imap/selected.js';
import type { ImapSession, SelectedUpdatePolicy } from '../../imap/session.js';
import type { FetchAttribute } from '../../imap/syntax.js';
import { Atom, atom, type ImapValue } from '../../imap/wire/values.js';
import type { Server } from '../../server.js';
import type { Message } from '../../store/message.js';
import type { Extension } from '../extension.js';
import type { MetadataApi } from '../metadata-server/state.js';
import { always, NO_RESPONSES } from '../shared.js';
import { MESSAGE_EVENTS, parseNotify, type EventName, type NotifyRequest } from './grammar.js';
import { allowed, statusLine } from './responses.js';
import { deliver, HELD, onMetadataChange, onStoreChange, wants, type Watch, type Watches } from './watches.js';

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
const MESSAGE_EVENT_NAMES = [...MESSAGE_EVENTS];

interface State extends NotifyApi, Watches {
  server: Server;
  /** True once NOTIFY follows METADATA-SERVER's changes (at the first NOTIFY SET: setup order is not relied on). */
  metadataFollowed: boolean;
}

/** The events this server can deliver: the metadata ones only while their plugins are loaded. */
function supportedEvents(server: Server): Set<EventName> {
  const out = new Set<EventName>(['MessageNew', 'MessageExpunge', 'FlagChange', 'MailboxName', 'SubscriptionChange']);
  const protocol = imapProtocol(server);
  if (protocol.has('METADATA')) out.add('MailboxMetadataChange');
  if (protocol.has('METADATA-SERVER')) out.add('ServerMetadataChange');
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
    const protocol = imapProtocol(server);
    const request = parseNotify(args, supported, protocol.fetchItems.size > 0 ? { items: protocol.fetchItemParsers } : {});
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
    const store = session.mailboxes;
    // §3.1: a named mailbox the user may list but not read gets `\NoAccess`; one it may not list is ignored.
    for (const group of watch.groups) {
      if (group.filter.kind !== 'mailboxes' && group.filter.kind !== 'subtree') continue;
      if (![...group.events].some((e) => MESSAGE_EVENTS.has(e))) continue;
      for (const name of group.filter.names) {
        const mailbox = store.get(name);
        if (!mailbox || !allowed(session, 'l', mailbox, name) || allowed(session, 'r', mailbox, name)) continue;
        session.untagged(atom('LIST'), [atom('\\NoAccess')], store.delimiterFor(name), store.nameOf(mailbox));
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
      // §3.1: a STATUS for each mailbox (other than the selected one) for which any message event is now
      // on: MESSAGES, UIDNEXT, UIDVALIDITY (what MessageNew and MessageExpunge need) always, and
      // HIGHESTMODSEQ with FlagChange or AnnotationChange where CONDSTORE is supported, enabled or not.
      for (const mailbox of store.list()) {
        if (session.selected?.mailbox === mailbox || !mailbox.selectable) continue;
        const name = store.nameOf(mailbox);
        if (!MESSAGE_EVENT_NAMES.some((e) => wants(watch, name, e))) continue;
        if (!allowed(session, 'l', mailbox, name) || !allowed(session, 'r', mailbox, name)) continue;
        const modseq = wants(watch, name, 'FlagChange') || wants(watch, name, 'AnnotationChange');
        session.untaggedList(statusLine(session, mailbox, modseq));
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
    newMessages(session, first, added, state) {
      const watch = state.watches.get(session.id);
      const selected = session.selected;
      if (!watch?.fetch || !selected || watch.session !== session) return NO_RESPONSES;
      return newMessageFetches(session, selected, watch, watch.fetch, first, added);
    },
  },
};

/**
 * MessageNew's FETCH of each new message (RFC 5465 §5.2), the message
 * numbered `first` on. Apart from the point so that what it allocates is
 * made only for a session that asked for it, not for every idler of a
 * mailbox that gains a message.
 */
function newMessageFetches(session: ImapSession, selected: SelectedMailbox, watch: Watch, items: readonly FetchAttribute[], first: number, added: readonly Message[]): (readonly ImapValue[])[] {
  const asked = new Set(items.map((att) => att.label.toUpperCase()));
  const out: (readonly ImapValue[])[] = [];
  for (let k = 0; k < added.length; k++) {
    const message = added[k]!;
    // §5.2: the FETCH of each new message right after its EXISTS; none for the session's own APPEND/COPY.
    if (watch.own.delete(message.uid)) continue;
    const values: ImapValue[] = [];
    // What every untagged FETCH of this session must carry (CONDSTORE's UID and MODSEQ, RFC 7162 section 3.1),
    // as the loaded extensions word it for flag updates, unless the client's list has it already.
    const owed = selected.shape?.flagFetch(message);
    if (owed?.uid && !asked.has('UID')) values.push(atom('UID'), message.uid);
    for (const att of items) values.push(atom(att.label), itemValue(att, message, selected, session));
    if (owed) {
      for (let i = 0; i + 1 < owed.items.length; i += 2) {
        const name = owed.items[i];
        if (!(name instanceof Atom) || !asked.has(name.value.toUpperCase())) values.push(owed.items[i]!, owed.items[i + 1]!);
      }
    }
    out.push([first + k, atom('FETCH'), values]);
  }
  return out;
}

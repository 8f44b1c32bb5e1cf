/**
 * OBJECTID (RFC 8474): MAILBOXID (CREATE's tagged OK, an untagged OK on
 * SELECT/EXAMINE, the STATUS item), the FETCH items EMAILID and THREADID
 * and the SEARCH keys of the same names. How the IDs are made and kept:
 * ./ids.ts.
 *
 * A RENAME moves the Mailbox object with its fields, so the MAILBOXID stays
 * (§4); renaming INBOX creates a new mailbox for INBOX's messages, which
 * gets a new MAILBOXID while INBOX keeps its own (§4, RFC 3501 §6.3.5).
 * DELETE then CREATE of one name gives a new MAILBOXID. A new UIDVALIDITY
 * (control API) gives a new MAILBOXID too: the mailbox no longer keeps the
 * invariants of one name and UIDVALIDITY (§4). COPY and MOVE copy the
 * message's fields, so the copy keeps its EMAILID (§5.1); an APPEND is
 * new content with a new EMAILID, even of the same bytes.
 */
import { ParseError, type ArgParser } from '../../imap/parser.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import type { Schema } from '../../rest/schema.js';
import { defineExtension } from '../extension.js';
import { always } from '../shared.js';
import {
  COUNTER_KEY,
  EMAIL_ID_KEY,
  MAILBOX_ID_KEY,
  ObjectIds,
  THREAD_ID_KEY,
  isObjectId,
  validateCounter,
  validateObjectId,
} from './ids.js';

export { ObjectIds } from './ids.js';

declare module '../extension.js' {
  interface ExtensionApis {
    OBJECTID: ObjectIds;
  }
}

/** `SP objectid` of a SEARCH key (sent as an atom; a quoted form is accepted too). */
function objectIdArgument(args: ArgParser): string {
  args.sp();
  const id = args.astring().toString('latin1');
  if (!isObjectId(id)) throw new ParseError('Invalid object ID');
  return id;
}

const idSchema = (description: string): Schema => ({ type: 'string', description });

export const extension = defineExtension<ObjectIds>({
  name: 'OBJECTID',
  setup: ({ server }) => {
    const ids = new ObjectIds(server);
    server.store.seedLoadListeners.add((mailbox, messages) => ids.seedLoaded(mailbox, messages));
    ids.assignAll();
    return ids;
  },
  capabilities: always('OBJECTID'),
  codes: {
    create: (mailbox, state) => `MAILBOXID (${state.mailboxId(mailbox)})`,
  },
  select: {
    responses: (_session, selected, _params, state) => [[atom('OK'), atom(`[MAILBOXID (${state.mailboxId(selected.mailbox)})]`), atom('Ok')]],
  },
  statusItems: [{ name: 'MAILBOXID', value: (mailbox, _session, state): ImapValue => [atom(state.mailboxId(mailbox))] }],
  fetchItems: [
    { name: 'EMAILID', value: (message, _ctx, state) => [atom(state.emailId(message))] },
    {
      name: 'THREADID',
      value: (message, _ctx, state) => {
        const id = state.threadId(message);
        return id === null ? null : [atom(id)];
      },
    },
  ],
  searchKeys: [
    { name: 'EMAILID', parse: objectIdArgument, matches: (message, data, _ctx, state) => state.emailId(message) === data },
    { name: 'THREADID', parse: objectIdArgument, matches: (message, data, _ctx, state) => state.threadId(message) === data },
  ],
  onChange: (change, state) => {
    switch (change.kind) {
      case 'mailbox':
        if (change.type === 'create' && change.mailbox) state.giveMailboxId(change.mailbox);
        return;
      case 'append':
        // Copies and moves carry the source's fields (same EMAILID); new content gets a new one.
        for (const message of change.messages) state.emailId(message);
        return;
      case 'uidvalidity':
        state.giveMailboxId(change.mailbox);
        return;
      case 'reset':
        state.assignAll();
        return;
      case 'user':
        // userMailboxes: a new user's tree (made from its seed) has objects without IDs yet.
        if (change.type === 'add' && state.server.trees) state.assignAll();
        return;
      default:
        return;
    }
  },
  storage: {
    mailbox: [{ key: MAILBOX_ID_KEY, schema: idSchema('MAILBOXID (RFC 8474); given by the server when absent'), validate: validateObjectId, shown: true }],
    message: [
      { key: EMAIL_ID_KEY, schema: idSchema('EMAILID (RFC 8474); given by the server when absent'), validate: validateObjectId, shown: true },
      { key: THREAD_ID_KEY, schema: idSchema('THREADID (RFC 8474); computed from References/In-Reply-To/Message-ID when absent'), validate: validateObjectId, shown: true },
    ],
    server: [{ key: COUNTER_KEY, schema: { type: 'integer', minimum: 1, description: 'The next number OBJECTID gives out (F<n>, M<n>)' }, validate: validateCounter }],
  },
});

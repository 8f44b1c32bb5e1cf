/**
 * X-GM-EXT-1 (Gmail's IMAP extensions, https://developers.google.com/gmail/imap/imap-extensions):
 * FETCH X-GM-MSGID, X-GM-THRID and X-GM-LABELS; STORE [+-]X-GM-LABELS[.SILENT];
 * SEARCH X-GM-MSGID, X-GM-THRID, X-GM-LABELS and X-GM-RAW (a subset of
 * Gmail's query language, see ./raw-query.ts).
 *
 * Opt-in (not in `plugins: "all"`): it makes mailboxes labels over one
 * message (./state.ts has the model and its limits), which a fixture that
 * asks for every standard extension must not get by surprise. It loads
 * SPECIAL-USE, as Gmail always shows the special-use attributes.
 *
 * X-GM-LABELS lists the message's labels except the one of the mailbox it is
 * viewed in (as Gmail does), system labels quoted (`"\\Inbox"`), user labels
 * as atoms when they can be. X-GM-MSGID and X-GM-THRID are 64-bit decimal
 * numbers; a thread's id is the msgid of its first message (./threads.ts has
 * the rule). Control API: `server.extension('X-GM-EXT-1')` (GmailApi), REST:
 * `GET`/`PUT /v1/mailboxes/{path}/messages/{uid}/labels`, `POST /v1/gmail/layout`.
 */
import { no } from '../../imap/command.js';
import { accessRefusal, imapProtocol } from '../../imap/protocol.js';
import type { ArgParser } from '../../imap/parser.js';
import { ParseError } from '../../imap/parser.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import { isServiceError } from '../../errors.js';
import type { Route } from '../../rest/route.js';
import { arrayOf, int, obj, str, type Schema } from '../../rest/schema.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { Message } from '../../store/message.js';
import type { FlagMode } from '../../store/store.js';
import { defineExtension, type StoreField } from '../extension.js';
import { always } from '../shared.js';
import { canonicalLabel, looseLabel } from './labels.js';
import { matchRaw, parseRawQuery, RawQueryError, type RawQuery } from './raw-query.js';
import { GmailState, msgidOf, MSGID_KEY, parseId, THRID_KEY, thridOf, type GmailApi } from './state.js';

export type { GmailApi, GmailMessageInfo } from './state.js';
export { GMAIL_LAYOUT } from './state.js';

declare module '../extension.js' {
  interface ExtensionApis {
    'X-GM-EXT-1': GmailApi;
  }
}

/** A label as the wire shows it: system labels quoted (`"\\Inbox"`), user labels atoms when they can be. */
function labelValue(label: string): ImapValue {
  return !label.startsWith('\\') && /^[^\x00-\x20\x7f-\uffff(){%*"\\\]]+$/.test(label) ? atom(label) : label;
}

/** One label argument: `\Name` (a system label written as a flag) or an astring. */
function labelArg(args: ArgParser): string {
  if (args.peekChar() === '\\') return canonicalLabel(args.flag({ allowExtension: true }));
  const value = args.astring().toString('utf8');
  if (value === '') throw new ParseError('A label is empty');
  return canonicalLabel(value);
}

/** STORE's labels: a parenthesized list, or one label. */
function labelList(args: ArgParser): string[] {
  if (args.peekChar() === '(') return args.list(() => labelArg(args));
  return [labelArg(args)];
}

/** A 64-bit id argument of SEARCH (after its space). */
function idArg(args: ArgParser): string {
  args.sp();
  const text = args.atom();
  const id = parseId(text);
  if (id === null) throw new ParseError(`Expected a 64-bit id, got ${text.slice(0, 30)}`);
  return id;
}

const idField = (key: string, what: string): StoreField => ({
  key,
  schema: { type: 'string', description: `${what} (a decimal 64-bit number); given when the server first sees the message` },
  validate: (value, report) => {
    const id = parseId(value);
    if (id === null) report('expected a decimal number from 1 to 18446744073709551615 (as a string)');
    return id ?? undefined;
  },
});

const infoSchema: Schema = obj(
  {
    msgid: str('X-GM-MSGID (decimal)'),
    thrid: str('X-GM-THRID (decimal)'),
    labels: arrayOf(str('A label: `\\Inbox`, `\\Sent`, `\\Starred`, ... or a user label (a mailbox path)')),
    copies: arrayOf(obj({ path: str(), uid: int(1) }, ['path', 'uid'])),
  },
  ['msgid', 'thrid', 'labels', 'copies'],
);

const P_PATH = { name: 'path', type: 'string' as const, description: 'Mailbox storage name, URL encoded as one segment (`/` is `%2F`)' };
const P_UID = { name: 'uid', type: 'integer' as const, description: 'Message UID' };

const routes: Route[] = [
  {
    method: 'GET',
    path: '/v1/mailboxes/{path}/messages/{uid}/labels',
    summary: 'Gmail labels, X-GM-MSGID and X-GM-THRID of a message (X-GM-EXT-1 plugin)',
    operation: 'getMessage',
    params: [P_PATH, P_UID],
    status: 200,
    response: infoSchema,
    handle: (ctx) => ctx.server.extension('X-GM-EXT-1')!.getMessage(ctx.params.path as string, ctx.params.uid as number),
  },
  {
    method: 'PUT',
    path: '/v1/mailboxes/{path}/messages/{uid}/labels',
    summary: 'Set, add or remove Gmail labels of a message, as STORE X-GM-LABELS (X-GM-EXT-1 plugin)',
    operation: 'setLabels',
    params: [P_PATH, P_UID],
    body: {
      ...obj(
        {
          labels: arrayOf(str('A label: `\\Inbox`, `\\Starred`, ... or a user label (created when missing)')),
          mode: { type: 'string', enum: ['set', 'add', 'remove'], default: 'set' },
        },
        ['labels'],
      ),
      additionalProperties: false,
    },
    status: 200,
    response: infoSchema,
    handle: (ctx) =>
      ctx.server.extension('X-GM-EXT-1')!.setLabels(ctx.params.path as string, ctx.params.uid as number, ctx.body as { labels: string[]; mode?: FlagMode }),
  },
  {
    method: 'POST',
    path: '/v1/gmail/layout',
    summary: 'Create the missing [Gmail]/... mailboxes and fill All Mail and Starred (X-GM-EXT-1 plugin)',
    operation: 'gmailLayout',
    status: 200,
    response: obj({ created: arrayOf(str()) }, ['created']),
    handle: (ctx) => ctx.server.extension('X-GM-EXT-1')!.gmailLayout(),
  },
];

/** Parsed X-GM-RAW: the query and the decoded text of messages, kept for one SEARCH. */
interface RawSearch {
  query: RawQuery;
  cache: Map<Message, string>;
}

export const extension = defineExtension<GmailState>({
  name: 'X-GM-EXT-1',
  requires: ['SPECIAL-USE'],
  optIn: true,
  setup: ({ server }) => new GmailState(server),
  capabilities: always('X-GM-EXT-1'),
  storage: { message: [idField(MSGID_KEY, 'X-GM-MSGID'), idField(THRID_KEY, 'X-GM-THRID')] },
  onChange: (change, state) => state.onChange(change),
  fetchItems: [
    { name: 'X-GM-MSGID', value: (m) => atom(msgidOf(m) ?? '0') },
    { name: 'X-GM-THRID', value: (m) => atom(thridOf(m) ?? '0') },
    { name: 'X-GM-LABELS', value: (m, { selected }, state) => state.labels(m, selected.mailbox).map(labelValue) },
  ],
  store: {
    items: [
      {
        name: 'X-GM-LABELS',
        parse: labelList,
        apply: (ctx, state) => {
          const { session, selected } = ctx;
          // Labels are message state like keywords: the `w` right of the mailbox it is viewed in.
          const refused = accessRefusal(session, 'w', selected.mailbox, selected.mailbox.path, ctx.command);
          if (refused) return refused;
          const protocol = imapProtocol(session.server);
          const may = (mailbox: Mailbox, right: 'i' | 'e'): boolean => protocol.access(session, right, mailbox, mailbox.path, ctx.command).allow;
          try {
            for (const { message } of ctx.targets) {
              state.changeLabels(message, selected.mailbox, ctx.value as string[], ctx.mode, session.id, may);
            }
          } catch (err) {
            if (isServiceError(err)) return no(err.message, err.code === 'INVALID' ? 'CANNOT' : err.code);
            throw err;
          }
          return undefined;
        },
      },
    ],
  },
  searchKeys: [
    { name: 'X-GM-MSGID', parse: idArg, matches: (m, data) => msgidOf(m) === data },
    { name: 'X-GM-THRID', parse: idArg, matches: (m, data) => thridOf(m) === data },
    {
      name: 'X-GM-LABELS',
      parse: (args) => {
        args.sp();
        return labelArg(args);
      },
      // Every label counts here, the viewed mailbox's own included.
      matches: (m, data, _ctx, state) => {
        const wanted = looseLabel(data as string);
        return state.labels(m, null).some((l) => looseLabel(l) === wanted);
      },
    },
    {
      name: 'X-GM-RAW',
      parse: (args): RawSearch => {
        args.sp();
        const text = args.astring().toString('utf8');
        try {
          return { query: parseRawQuery(text), cache: new Map() };
        } catch (err) {
          if (err instanceof RawQueryError) throw new ParseError(err.message);
          throw err;
        }
      },
      matches: (m, data, _ctx, state) => {
        const raw = data as RawSearch;
        return matchRaw(raw.query, m, { labels: (message) => state.labels(message, null).map(looseLabel) }, raw.cache);
      },
    },
  ],
  routes,
});

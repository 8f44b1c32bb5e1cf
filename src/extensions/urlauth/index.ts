/**
 * URLAUTH (RFC 4467): IMAP URLs that carry their own authorization, so a
 * client can hand a message part to another party (a submission server,
 * RFC 4468 BURL) without giving away its password.
 *
 * - `GENURLAUTH url INTERNAL ...` signs rump URLs
 *   (`imap://joe@host/INBOX/;uid=20/;section=1.2;urlauth=submit+fred`, with
 *   an optional `;EXPIRE=` before `;URLAUTH=`) of the session's own user and
 *   of a mailbox it may read (`r`), answering
 *   `* GENURLAUTH "<url>:INTERNAL:<40 hex digits>"`. A URL that is not a rump
 *   URL is BAD; another user's URL, an unknown mechanism or a mailbox the
 *   user may not read is NO.
 * - `URLFETCH url ...` answers `* URLFETCH url {n}` with the bytes
 *   (`BODY.PEEK[section]<partial>`) of each URL that verifies, and NIL for
 *   the others: not a URLAUTH-ed absolute URL, a wrong token, no key, an
 *   access identifier that does not admit this session, `;EXPIRE=` not in
 *   the future of the server clock (`now`), a mailbox, UIDVALIDITY, message
 *   or part that no longer exists. Failing URLs are not errors (RFC 4467 §6.3).
 * - CATENATE (RFC 4469 §3) with this plugin loaded verifies a URL that
 *   carries `;URLAUTH=` as URLFETCH does (`UrlAuthApi.fetch`), instead of
 *   reading it as the session's own.
 * - URLAUTH=BINARY (RFC 5524, ./extended.ts): a URLFETCH argument may be
 *   `(url [BODYPARTSTRUCTURE] [BINARY | BODY])`, answered
 *   `url (BODYPARTSTRUCTURE (...)) (BINARY ~{n}...)` or NIL.
 * - `RESETKEY [mailbox [mechanism ...]]` drops the user's key of a mailbox
 *   (or all of them), invalidating every URL signed with it.
 *
 * Access identifiers (§3): `anonymous` and `authuser` admit any logged-in
 * session, `user+name` the user `name`, `submit+name` a user listed in the
 * `submitUsers` option (the accounts a submission server logs in as). Keys
 * are per server, random, and dropped by reset, by RESETKEY, and when their
 * mailbox is deleted or renamed.
 */
import { AUTHENTICATED, CommandFailure, bad, no, ok, type CommandContext, type CommandSpec } from '../../imap/command.js';
import { accessRefusal } from '../../imap/protocol.js';
import type { ImapSession } from '../../imap/session.js';
import { atom, literal, type ImapValue } from '../../imap/wire/values.js';
import { ImapUrlError, parseImapUrl, type ImapUrl } from '../catenate/imap-url.js';
import { applyPartial, findUrlMailbox, urlTarget, type UrlTarget } from '../catenate/url-data.js';
import { getMime, section as sectionOf } from '../../mime/index.js';
import { defineExtension } from '../extension.js';
import { always } from '../shared.js';
import { extendedAnswer, readFetchRequest, type FetchRequest } from './extended.js';
import { AccessKeys } from './keys.js';

/** The control API, `server.extension('URLAUTH')`; CATENATE verifies URLAUTH-ed URLs with `fetch`. */
export interface UrlAuthApi {
  /** The bytes of a URLAUTH-ed URL as URLFETCH would give them to `session`, or null (NIL). */
  fetch(session: ImapSession, url: string): Buffer | null;
}

interface State extends UrlAuthApi {
  readonly keys: AccessKeys;
  readonly submitUsers: ReadonlySet<string>;
}

const MECHANISM = 'INTERNAL';

/** RFC 3339 `date-time`, as `;EXPIRE=` holds it. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

/** `[;EXPIRE=t];URLAUTH=access[:mech:token]` taken apart. */
interface UrlAuth {
  expire: number | null;
  access: string;
}

function splitUrlAuth(urlauth: string): UrlAuth | null {
  const m = /^(?:;EXPIRE=([^;]*))?;URLAUTH=([^:]+)/.exec(urlauth);
  if (!m) return null;
  let expire: number | null = null;
  if (m[1] !== undefined) {
    if (!DATE_TIME.test(m[1])) return null;
    expire = Date.parse(m[1].toUpperCase());
    if (Number.isNaN(expire)) return null;
  }
  return { expire, access: m[2]! };
}

/** RFC 4467 §3 `access`: `authuser`, `anonymous`, `user+name`, `submit+name` (name percent-encoded). */
function parseAccess(text: string): { kind: 'anonymous' | 'authuser' } | { kind: 'user' | 'submit'; name: string } | null {
  const lower = text.toLowerCase();
  if (lower === 'anonymous' || lower === 'authuser') return { kind: lower };
  const m = /^(user|submit)\+(.+)$/i.exec(text);
  if (!m) return null;
  try {
    return { kind: m[1]!.toLowerCase() as 'user' | 'submit', name: decodeURIComponent(m[2]!) };
  } catch {
    return null;
  }
}

function admits(access: string, session: ImapSession, state: State): boolean {
  const a = parseAccess(access);
  if (!a || session.user === null) return false;
  if (a.kind === 'anonymous' || a.kind === 'authuser') return true;
  if (a.kind === 'user') return session.user === a.name;
  return state.submitUsers.has(session.user);
}

type MessageUrl = ImapUrl & { uid: number; server: { user: string }; urlauth: string };

function isMessageUrl(url: ImapUrl): url is MessageUrl {
  return url.uid !== null && url.server !== null && url.server.user !== null && url.urlauth !== null;
}

/** The URL and what it names when it verifies, or null (NIL) when it does not or names nothing. */
function verifiedTarget(session: ImapSession, text: string, state: State): { url: MessageUrl; target: UrlTarget } | null {
  let url;
  try {
    url = parseImapUrl(text);
  } catch (err) {
    if (err instanceof ImapUrlError) return null;
    throw err;
  }
  if (!isMessageUrl(url)) return null;
  const auth = splitUrlAuth(url.urlauth);
  if (!auth || !admits(auth.access, session, state)) return null;
  if (auth.expire !== null && auth.expire <= session.server.now()) return null;
  // The URL ends in `:mech:token` and neither holds a colon: the rump is what came before.
  const tokenColon = text.lastIndexOf(':');
  const mechColon = text.lastIndexOf(':', tokenColon - 1);
  if (text.slice(mechColon + 1, tokenColon).toUpperCase() !== MECHANISM) return null;
  // The mailbox name is in the URL user's namespace (RFC 4467 §3: the URL is that user's), which
  // with userMailboxes is their own tree, not the fetching session's.
  const trees = session.server.trees;
  // No tree is made for a name that is no user (a peer could name any).
  if (trees && !trees.hasUser(url.server.user)) return null;
  const mailbox = findUrlMailbox(session, url.mailbox, session.server.viewOf(url.server.user));
  if (!mailbox || !mailbox.selectable) return null;
  if (!state.keys.verify(url.server.user, mailbox.path, text.slice(0, mechColon), text.slice(tokenColon + 1))) return null;
  const target = urlTarget(url, mailbox);
  return 'error' in target ? null : { url, target };
}

/** The bytes a URLFETCH URL gives, or null (NIL) when it does not verify or names nothing. */
function fetchUrl(session: ImapSession, text: string, state: State): Buffer | null {
  const found = verifiedTarget(session, text, state);
  if (!found) return null;
  const { source, section } = found.target;
  const data = section === null ? source : sectionOf(source, getMime(source), section);
  return data === null ? null : applyPartial(found.url, data);
}

/** One URLFETCH argument's answer: `url data` in the form the argument asked for. */
function answer(session: ImapSession, request: FetchRequest, state: State): ImapValue[] {
  if (request.extended === null) {
    const data = fetchUrl(session, request.url, state);
    return [request.url, data === null ? null : literal(data)];
  }
  const found = verifiedTarget(session, request.url, state);
  const elements = found ? extendedAnswer(request.extended, found.url, found.target) : null;
  return elements === null ? [request.url, null] : [request.url, ...elements];
}

/** `url SP mechanism *(SP url SP mechanism)` of GENURLAUTH, read whole before anything is signed. */
function readPairs(ctx: CommandContext): { url: string; mechanism: string }[] {
  const pairs: { url: string; mechanism: string }[] = [];
  do {
    if (pairs.length > 0) ctx.args.sp();
    const url = ctx.args.astring().toString('latin1');
    ctx.args.sp();
    pairs.push({ url, mechanism: ctx.args.atom().toUpperCase() });
  } while (!ctx.args.atEnd());
  return pairs;
}

function generate(ctx: CommandContext, state: State): string[] {
  const { session } = ctx;
  const pairs = readPairs(ctx);
  const signed: string[] = [];
  for (const { url: text, mechanism } of pairs) {
    let url;
    try {
      url = parseImapUrl(text, { rump: true });
    } catch (err) {
      if (err instanceof ImapUrlError) throw new CommandFailure(bad(`Invalid URL: ${err.message}`));
      throw err;
    }
    if (!isMessageUrl(url)) throw new CommandFailure(bad('Not a rump URL: imap://user@host/mailbox/;UID=n[...];URLAUTH=access expected'));
    const auth = splitUrlAuth(url.urlauth);
    if (!auth) throw new CommandFailure(bad('Invalid ;EXPIRE= date-time'));
    if (!parseAccess(auth.access)) throw new CommandFailure(bad(`Invalid access identifier ${JSON.stringify(auth.access.slice(0, 40))}`));
    if (mechanism !== MECHANISM) throw new CommandFailure(no(`Unknown URLAUTH mechanism ${mechanism.slice(0, 40)}`));
    if (url.server.user !== session.user) throw new CommandFailure(no('The URL is for another user'));
    const mailbox = findUrlMailbox(session, url.mailbox);
    if (!mailbox || !mailbox.selectable) throw new CommandFailure(no('No such mailbox', 'NONEXISTENT'));
    const refused = accessRefusal(session, 'r', mailbox, mailbox.path, 'GENURLAUTH');
    if (refused) throw new CommandFailure(refused);
    signed.push(`${text}:${MECHANISM}:${state.keys.sign(url.server.user, mailbox.path, text)}`);
  }
  return signed;
}

/** `CommandSpec.run` gets no state: the server's, as `setup` made it. */
function stateOf(session: ImapSession): State {
  return session.server.extension<State>('URLAUTH')!;
}

const genurlauth: CommandSpec = {
  name: 'GENURLAUTH',
  states: AUTHENTICATED,
  run(ctx) {
    ctx.session.untagged(atom('GENURLAUTH'), ...generate(ctx, stateOf(ctx.session)));
    return ok('GENURLAUTH completed');
  },
};

const urlfetch: CommandSpec = {
  name: 'URLFETCH',
  states: AUTHENTICATED,
  run(ctx) {
    const state = stateOf(ctx.session);
    // Every argument is read before anything is fetched, so a BAD one sends no data.
    const requests: FetchRequest[] = [];
    do {
      if (requests.length > 0) ctx.args.sp();
      requests.push(readFetchRequest(ctx.args));
    } while (!ctx.args.atEnd());
    const values: ImapValue[] = [atom('URLFETCH')];
    for (const request of requests) values.push(...answer(ctx.session, request, state));
    ctx.session.untagged(...values);
    return ok('URLFETCH completed');
  },
};

const resetkey: CommandSpec = {
  name: 'RESETKEY',
  states: AUTHENTICATED,
  run(ctx) {
    const { session, args } = ctx;
    const state = stateOf(session);
    const user = session.user!;
    if (args.atEnd()) {
      state.keys.reset(user);
      return ok('All keys reset');
    }
    const path = args.mailbox();
    const mechanisms: string[] = [];
    while (!args.atEnd()) {
      args.sp();
      mechanisms.push(args.atom().toUpperCase());
    }
    const unknown = mechanisms.find((m) => m !== MECHANISM);
    if (unknown !== undefined) return no(`Unknown URLAUTH mechanism ${unknown.slice(0, 40)}`);
    const mailbox = session.mailboxes.get(path);
    if (!mailbox) return no(`Mailbox doesn't exist: ${path}`, 'NONEXISTENT');
    const refused = accessRefusal(session, 'l', mailbox, mailbox.path, 'RESETKEY');
    if (refused?.code === 'NONEXISTENT') return refused;
    state.keys.reset(user, mailbox.path);
    return ok('Key reset', `URLMECH ${MECHANISM}`);
  },
};

export const extension = defineExtension<State>({
  name: 'URLAUTH',
  options: {
    type: 'object',
    properties: {
      submitUsers: {
        type: 'array',
        items: { type: 'string' },
        description: 'Users that may fetch submit+name URLs (the accounts a submission server logs in as)',
      },
    },
    additionalProperties: false,
  },
  setup: ({ options }) => {
    const state: State = {
      keys: new AccessKeys(),
      submitUsers: new Set((options.submitUsers as string[] | undefined) ?? []),
      fetch: (session, url) => fetchUrl(session, url, state),
    };
    return state;
  },
  capabilities: always('URLAUTH', 'URLAUTH=BINARY'),
  commands: [genurlauth, urlfetch, resetkey],
  onChange(change, state) {
    if (change.kind === 'reset') state.keys.clear();
    else if (change.kind === 'mailbox' && (change.type === 'delete' || change.type === 'rename')) state.keys.dropMailbox(change.oldPath ?? change.path);
  },
});

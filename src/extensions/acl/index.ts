/**
 * ACL (RFC 4314): access control lists on mailboxes, kept in the storage key
 * `acl` (identifier -> rights string, e.g. `{ "alice": "lr", "anyone": "l" }`).
 *
 * - The model (design §3, "ACL model"): all users share one tree. A mailbox
 *   without an `acl` grants every user every right, which is the ACL
 *   `{ anyone: "lrswipkxtea" }`: GETACL and GET show it so, and the first
 *   change starts from it. A mailbox created over IMAP starts with its
 *   creator's full rights (plus the entries of its parent's ACL, RFC 4314
 *   §4 "SHOULD inherit", when the parent has one); one created by the
 *   control API or REST has none (open).
 * - A user's rights are the union of `anyone` and the user's name, less the
 *   negative entries `-anyone` and `-name` (RFC 4314 §2).
 * - The core asks `access` before every mailbox operation (see
 *   docs/extensions.md); a user without `l` is told the mailbox does not
 *   exist (`NO [NONEXISTENT]`), a user with `l` but without the right gets
 *   `NO [NOPERM]`. A SELECT without any of `i e s w t` is read-only.
 * - Commands SETACL, DELETEACL, GETACL, LISTRIGHTS (need `a`) and MYRIGHTS
 *   (needs one of `l r i k x a`); capabilities `ACL` and `RIGHTS=texk`.
 * - Identifiers and rights are astrings in responses: atoms where they are
 *   atoms, as §3.6 writes them (`* ACL INBOX Fred rwipslxetad`), quoted or
 *   a literal otherwise (`astring()` of the serializer).
 * - The obsolete `c` and `d` rights are accepted as `kx` and `et` and
 *   returned in IMAP answers when a member is granted (RFC 4314 §2.1.1);
 *   the REST API and the storage key use the standard letters only.
 * - Control API `getAcl`/`setAcl`/`deleteAcl`/`myRights`, REST routes
 *   under `/v1/mailboxes/{path}/acl`, an `acl` event `{ path }` for every
 *   change, IMAP or REST.
 */
import { ServiceError } from '../../errors.js';
import { AUTHENTICATED, bad, no, ok, type CommandContext, type CommandResult, type CommandSpec } from '../../imap/command.js';
import { InvalidName, mailboxArg } from '../../imap/commands/mailboxes.js';
import { accessRefusal } from '../../imap/protocol.js';
import type { ImapSession } from '../../imap/session.js';
import { astring, atom, type ImapValue } from '../../imap/wire/values.js';
import type { Route } from '../../rest/route.js';
import { obj, str, type Schema } from '../../rest/schema.js';
import type { Server } from '../../server.js';
import type { MailboxScope } from '../../control/control.js';
import { scopeOf, userQuery } from '../../rest/scope.js';
import { getField, setField } from '../../store/fields.js';
import type { Mailbox } from '../../store/mailbox.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';
import {
  ALL_RIGHTS,
  ANYONE,
  RIGHTS,
  RightsError,
  aclFromField,
  aclToObject,
  applyChange,
  checkIdentifier,
  effectiveRights,
  formatImapRights,
  formatRights,
  hasRight,
  parseRights,
  parseRightsChange,
  sameAcl,
  type Acl,
} from './rights.js';

/** The storage key of the ACL. */
export const ACL_KEY = 'acl';

/** An ACL as the control API and REST show it: identifier -> rights (`{ "alice": "lr" }`). */
export type AclObject = Record<string, string>;

/** The control API of ACL: `server.extension('ACL')`. */
export interface AclApi {
  /**
   * The ACL of a mailbox; a mailbox without one shows `{ anyone: "lrswipkxtea" }`
   * (with `userMailboxes`, one of a user's own tree shows `{ <owner>: "lrswipkxtea" }`).
   * NONEXISTENT for an unknown mailbox. `scope.user`: whose tree (userMailboxes), as for
   * every mailbox operation of the control API.
   */
  getAcl(path: string, scope?: MailboxScope): AclObject;
  /**
   * Sets an identifier's rights: `"lr"` replaces them, `"+w"` adds, `"-w"`
   * removes (`c` and `d` stand for `kx` and `et`); an entry left without
   * rights is removed. Answers the new ACL; emits `acl` when it changed.
   * INVALID for an unknown right or an empty identifier.
   */
  setAcl(path: string, identifier: string, rights: string, scope?: MailboxScope): AclObject;
  /** Removes an identifier's entry; NONEXISTENT when it has none. Answers the new ACL and emits `acl`. */
  deleteAcl(path: string, identifier: string, scope?: MailboxScope): AclObject;
  /** The rights `user` has on the mailbox, in standard letters (`lrs`). */
  myRights(path: string, user: string, scope?: MailboxScope): string;
}

declare module '../extension.js' {
  interface ExtensionApis {
    ACL: AclApi;
  }
}

interface State extends AclApi {
  readonly server: Server;
  /**
   * Mailboxes the current command created from a session, in order (an IMAP
   * CREATE makes missing parents first; `create.created` gets the named one
   * only). Any other change clears it.
   */
  created: { mailbox: Mailbox; origin: number }[];
  /** The ACL of a mailbox as the rules read it (null: none, every right for everyone). Read-only: copy before changing. */
  aclOf(mailbox: Mailbox): Acl | null;
  /** The rights `user` has on `mailbox`. */
  rightsOf(mailbox: Mailbox, user: string): Set<string>;
  /** Changes a mailbox's ACL with `edit` (on a copy); stores it and emits `acl` when it differs. */
  change(mailbox: Mailbox, edit: (acl: Acl) => void): Acl;
}

/** A mailbox without an ACL, as an ACL: everyone has every right. */
function openAcl(): Acl {
  return new Map([[ANYONE, new Set(ALL_RIGHTS)]]);
}

/** Rights that make a SELECT read-write (RFC 4314 §5.2: `i`, `e` and the shared flag rights; all flags are shared here). */
const WRITE_RIGHTS = ['i', 'e', 's', 'w', 't'] as const;
/** Rights one of which MYRIGHTS needs (RFC 4314 §4). */
const MYRIGHTS_RIGHTS = ['l', 'r', 'i', 'k', 'x', 'a'] as const;

function setup(server: Server): State {
  const invalid = (err: unknown): never => {
    if (err instanceof RightsError) throw new ServiceError('INVALID', err.message);
    throw err;
  };
  const mailboxAt = (path: string, scope: MailboxScope | undefined): Mailbox => {
    if (typeof path !== 'string') throw new ServiceError('INVALID', 'path: expected a string');
    return server.control.treeOf(scope, path).require(path);
  };
  // userMailboxes: a mailbox of a user's own tree without an ACL is its owner's alone (RFC 4314 §2: the
  // owner holds the rights an implementation ties to ownership; here all of them), not everyone's.
  const ownerAcls = new Map<string, Acl>();
  const ownerAcl = (owner: string): Acl => {
    let acl = ownerAcls.get(owner);
    if (!acl) ownerAcls.set(owner, (acl = new Map([[owner, new Set(ALL_RIGHTS)]])));
    return acl;
  };
  const identifierOf = (identifier: unknown): string => {
    if (typeof identifier !== 'string') throw new ServiceError('INVALID', 'identifier: expected a string');
    try {
      return checkIdentifier(identifier);
    } catch (err) {
      return invalid(err);
    }
  };
  // Parsed ACLs by stored object (never mutated: changes store a new object).
  const parsed = new WeakMap<object, Acl | null>();
  const state: State = {
    server,
    created: [],
    aclOf(mailbox) {
      // Parsed once per stored value: every command asks, the value changes only when replaced.
      const field = getField(mailbox, ACL_KEY);
      if (field === undefined) {
        const owner = server.ownerOf(mailbox);
        if (owner !== null) return ownerAcl(owner);
      }
      if (field === null || typeof field !== 'object') return aclFromField(field);
      let acl = parsed.get(field);
      if (acl === undefined) parsed.set(field, (acl = aclFromField(field)));
      return acl;
    },
    rightsOf: (mailbox, user) => effectiveRights(state.aclOf(mailbox), user),
    change(mailbox, edit) {
      const before = state.aclOf(mailbox) ?? openAcl();
      const owner = server.ownerOf(mailbox);
      const after: Acl = new Map([...before].map(([id, rights]) => [id, new Set(rights)]));
      edit(after);
      // Nothing changed: no write and no event (an open mailbox stays without the key).
      if (sameAcl(before, after)) return after;
      setField(mailbox, ACL_KEY, aclToObject(after));
      server.emit('acl', server.trees ? { path: mailbox.path, user: owner } : { path: mailbox.path });
      return after;
    },
    getAcl: (path, scope) => aclToObject(state.aclOf(mailboxAt(path, scope)) ?? openAcl()),
    setAcl(path, identifier, rights, scope) {
      const mailbox = mailboxAt(path, scope);
      const id = identifierOf(identifier);
      if (typeof rights !== 'string') throw new ServiceError('INVALID', 'rights: expected a string');
      let parsed;
      try {
        parsed = parseRightsChange(rights);
      } catch (err) {
        return invalid(err);
      }
      return aclToObject(state.change(mailbox, (acl) => applyChange(acl, id, parsed)));
    },
    deleteAcl(path, identifier, scope) {
      const mailbox = mailboxAt(path, scope);
      const id = identifierOf(identifier);
      if (!(state.aclOf(mailbox) ?? openAcl()).has(id)) {
        throw new ServiceError('NONEXISTENT', `The ACL of ${JSON.stringify(mailbox.path)} has no entry for ${JSON.stringify(id)}`);
      }
      return aclToObject(state.change(mailbox, (acl) => acl.delete(id)));
    },
    myRights(path, user, scope) {
      const mailbox = mailboxAt(path, scope);
      if (typeof user !== 'string') throw new ServiceError('INVALID', 'user: expected a string');
      return formatRights(state.rightsOf(mailbox, user));
    },
  };
  return state;
}

// ------------------------------------------------------------------ IMAP commands

/** Reads an identifier argument (astring, UTF-8). */
function identifierArg(ctx: CommandContext): string {
  return ctx.args.astring().toString('utf8');
}

/** The mailbox of an ACL command, or the NO that answers it. */
function target(ctx: CommandContext, path: string | InvalidName): Mailbox | CommandResult {
  if (path instanceof InvalidName) return path.no('NONEXISTENT');
  const mailbox = ctx.session.mailboxes.get(path);
  return mailbox ?? no(`Mailbox doesn't exist: ${path}`, 'NONEXISTENT');
}

function isMailbox(value: Mailbox | CommandResult): value is Mailbox {
  return !('status' in value);
}

function stateOf(ctx: CommandContext): State {
  return ctx.session.server.extension('ACL') as State;
}

/** Runs an ACL command on a mailbox the user has `a` on. */
function administer(ctx: CommandContext, path: string | InvalidName, run: (mailbox: Mailbox, state: State) => CommandResult): CommandResult {
  const mailbox = target(ctx, path);
  if (!isMailbox(mailbox)) return mailbox;
  const refused = accessRefusal(ctx.session, 'a', mailbox, mailbox.path, ctx.name);
  if (refused) return refused;
  return run(mailbox, stateOf(ctx));
}

/** The identifier checked (BAD when empty, RFC 4314 §3), or the BAD answer. */
function checkedIdentifier(identifier: string): string | CommandResult {
  try {
    return checkIdentifier(identifier);
  } catch (err) {
    if (err instanceof RightsError) return bad(err.message);
    throw err;
  }
}

const setacl: CommandSpec = {
  name: 'SETACL',
  states: AUTHENTICATED,
  run(ctx) {
    const { args } = ctx;
    const path = mailboxArg(args);
    args.sp();
    const identifier = identifierArg(ctx);
    args.sp();
    const text = args.astring().toString('utf8');
    args.end();
    const id = checkedIdentifier(identifier);
    if (typeof id !== 'string') return id;
    let change;
    try {
      change = parseRightsChange(text);
    } catch (err) {
      // An unrecognized right is BAD, never silently ignored (RFC 4314 §3.1).
      if (err instanceof RightsError) return bad(err.message);
      throw err;
    }
    return administer(ctx, path, (mailbox, state) => {
      state.change(mailbox, (acl) => applyChange(acl, id, change));
      return ok('Setacl completed');
    });
  },
};

const deleteacl: CommandSpec = {
  name: 'DELETEACL',
  states: AUTHENTICATED,
  run(ctx) {
    const { args } = ctx;
    const path = mailboxArg(args);
    args.sp();
    const identifier = identifierArg(ctx);
    args.end();
    const id = checkedIdentifier(identifier);
    if (typeof id !== 'string') return id;
    // Removing an identifier that has no entry changes nothing and is no error (RFC 4314 §3.2 "removes any").
    return administer(ctx, path, (mailbox, state) => {
      state.change(mailbox, (acl) => acl.delete(id));
      return ok('Deleteacl completed');
    });
  },
};

const getacl: CommandSpec = {
  name: 'GETACL',
  states: AUTHENTICATED,
  run(ctx) {
    const path = mailboxArg(ctx.args);
    ctx.args.end();
    return administer(ctx, path, (mailbox, state) => {
      const line: ImapValue[] = [atom('ACL'), ctx.session.nameOf(mailbox)];
      for (const [identifier, rights] of state.aclOf(mailbox) ?? openAcl()) line.push(astring(identifier), astring(formatImapRights(rights)));
      ctx.session.untaggedList(line);
      return ok('Getacl completed');
    });
  },
};

const listrights: CommandSpec = {
  name: 'LISTRIGHTS',
  states: AUTHENTICATED,
  run(ctx) {
    const { args } = ctx;
    const path = mailboxArg(args);
    args.sp();
    const identifier = identifierArg(ctx);
    args.end();
    const id = checkedIdentifier(identifier);
    if (typeof id !== 'string') return id;
    return administer(ctx, path, (mailbox) => {
      // No right is always granted and none are tied: each can be granted alone, the virtual
      // c and d by themselves too (RFC 4314 §2.1.1). The identifier comes back as given (§3.4).
      const optional = [...RIGHTS.slice(0, -1), 'c', 'd', 'a'].map(atom);
      ctx.session.untaggedList([atom('LISTRIGHTS'), ctx.session.nameOf(mailbox), astring(identifier), '', ...optional]);
      return ok('Listrights completed');
    });
  },
};

const myrights: CommandSpec = {
  name: 'MYRIGHTS',
  states: AUTHENTICATED,
  run(ctx) {
    const path = mailboxArg(ctx.args);
    ctx.args.end();
    const mailbox = target(ctx, path);
    if (!isMailbox(mailbox)) return mailbox;
    const state = stateOf(ctx);
    const rights = state.rightsOf(mailbox, ctx.session.user!);
    // Any of l r i k x a (RFC 4314 §4); without them the user has no `l` either, so the
    // mailbox does not exist for them.
    if (!MYRIGHTS_RIGHTS.some((r) => rights.has(r))) return no(`Mailbox doesn't exist: ${mailbox.path}`, 'NONEXISTENT');
    ctx.session.untaggedList(myRightsResponse(ctx.session, mailbox, rights));
    return ok('Myrights completed');
  },
};

/** `MYRIGHTS mailbox rights` (without `*`), for MYRIGHTS and LIST-MYRIGHTS. */
export function myRightsResponse(session: ImapSession, mailbox: Mailbox, rights: ReadonlySet<string>): ImapValue[] {
  return [atom('MYRIGHTS'), session.nameOf(mailbox), astring(formatImapRights(rights))];
}

/** The rights the logged-in user of a session has on a mailbox (every right without ACL plugin state or user). */
export function sessionRights(server: Server, mailbox: Mailbox, user: string | null): Set<string> {
  const state = server.extension('ACL') as State | undefined;
  if (!state || user === null) return new Set(ALL_RIGHTS);
  return state.rightsOf(mailbox, user);
}

// ------------------------------------------------------------------ REST

const aclSchema: Schema = {
  type: 'object',
  description: 'Identifier -> rights (letters of lrswipkxtea), e.g. { "alice": "lr", "anyone": "l" }',
  additionalProperties: str(),
};
const pathParam = { name: 'path', type: 'string' as const, description: 'Mailbox storage name, URL encoded as one segment (`/` is `%2F`)' };
const identifierParam = {
  name: 'identifier',
  type: 'string' as const,
  description: 'ACL identifier: a user name, `anyone`, or a negative identifier `-name`; URL encoded as one segment',
};

const routes: Route[] = [
  {
    method: 'GET',
    path: '/v1/mailboxes/{path}/acl',
    summary: 'The ACL of a mailbox (ACL plugin); a mailbox without one shows { "anyone": "lrswipkxtea" }',
    operation: 'getAcl',
    params: [pathParam],
    status: 200,
    response: aclSchema,
    query: [userQuery],
    handle: ({ server, params, query }) => server.extension('ACL')!.getAcl(params.path as string, scopeOf(query)),
  },
  {
    method: 'PUT',
    path: '/v1/mailboxes/{path}/acl/{identifier}',
    summary: "Set an identifier's rights (ACL plugin): a leading + or - adds or removes them, otherwise they replace; answers the new ACL",
    operation: 'setAcl',
    params: [pathParam, identifierParam],
    body: { ...obj({ rights: str('Rights, e.g. "lr", "+w" or "-w" (c and d stand for kx and et)') }, ['rights']), additionalProperties: false },
    status: 200,
    response: aclSchema,
    query: [userQuery],
    handle: ({ server, params, body, query }) =>
      server.extension('ACL')!.setAcl(params.path as string, params.identifier as string, (body as { rights: string }).rights, scopeOf(query)),
  },
  {
    method: 'DELETE',
    path: '/v1/mailboxes/{path}/acl/{identifier}',
    summary: "Remove an identifier's entry from the ACL (ACL plugin); answers the new ACL",
    operation: 'deleteAcl',
    params: [pathParam, identifierParam],
    status: 200,
    response: aclSchema,
    query: [userQuery],
    handle: ({ server, params, query }) => server.extension('ACL')!.deleteAcl(params.path as string, params.identifier as string, scopeOf(query)),
  },
];

// ------------------------------------------------------------------ storage

/** Checks the `acl` key of the storage option: an object of identifier -> rights string. */
function validateStored(value: unknown, report: (message: string) => void): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    report('expected an object of identifier -> rights string, e.g. { "alice": "lr" }');
    return value;
  }
  const acl: Acl = new Map();
  for (const identifier of Object.keys(value)) {
    const rights = (value as Record<string, unknown>)[identifier];
    if (identifier === '' || identifier === '-') {
      report(`identifier ${JSON.stringify(identifier)}: names nobody`);
      continue;
    }
    if (typeof rights !== 'string') {
      report(`${JSON.stringify(identifier)}: expected a rights string, e.g. "lr"`);
      continue;
    }
    try {
      acl.set(identifier, parseRights(rights));
    } catch (err) {
      if (!(err instanceof RightsError)) throw err;
      report(`${JSON.stringify(identifier)}: ${err.message}`);
    }
  }
  return aclToObject(acl);
}

export const extension: Extension<State> = {
  name: 'ACL',
  setup: ({ server }) => setup(server),
  // RFC 4314 §2, §5.1.1: RIGHTS= lists the rights beyond RFC 2086's.
  capabilities: always('ACL', 'RIGHTS=texk'),
  commands: [setacl, deleteacl, getacl, listrights, myrights],
  access: (request, state) => {
    if (request.mailbox === null) return undefined;
    const acl = state.aclOf(request.mailbox);
    if (hasRight(acl, request.user, request.right)) return undefined;
    return {
      allow: false,
      reveal: hasRight(acl, request.user, 'l'),
      text: `Permission denied: ${request.user} lacks the ${request.right} right on ${request.session.mailboxes.nameOf(request.mailbox)}`,
    };
  },
  select: {
    readOnly: (session, mailbox, state) => {
      const user = session.user;
      if (user === null) return false;
      // Every SELECT asks: the rights are looked up one by one, no set built (a mailbox without an ACL answers at once).
      const acl = state.aclOf(mailbox);
      if (acl === null) return false;
      for (const r of WRITE_RIGHTS) if (hasRight(acl, user, r)) return false;
      return true;
    },
  },
  create: {
    // The creator gets every right on the mailbox and the missing parents the CREATE made,
    // on top of the parent's ACL when the parent has one.
    created: (mailbox, _params, session, state) => {
      const made = state.created.filter((c) => c.origin === session.id && (c.mailbox === mailbox || mailbox.path.startsWith(c.mailbox.path + c.mailbox.delimiter)));
      state.created = [];
      if (!made.some((c) => c.mailbox === mailbox)) made.push({ mailbox, origin: session.id });
      const user = session.user;
      if (user === null) return;
      for (const { mailbox: m } of made) {
        // Paths of the tree the mailbox is in (userMailboxes: possibly another user's).
        const store = session.server.trees?.treeOf(m) ?? session.server.store;
        const parentPath = store.parentOf(m.path);
        const parent = parentPath === null ? undefined : store.get(parentPath);
        const inherited = parent ? state.aclOf(parent) : null;
        const acl: Acl = new Map([...(inherited ?? [])].map(([id, rights]) => [id, new Set(rights)]));
        acl.set(user, new Set(ALL_RIGHTS));
        setField(m, ACL_KEY, aclToObject(acl));
        session.server.emit('acl', session.server.trees ? { path: m.path, user: session.server.ownerOf(m) } : { path: m.path });
      }
    },
  },
  onChange: (change, state) => {
    if (change.kind === 'mailbox' && change.type === 'create' && change.origin !== null && change.mailbox) {
      state.created.push({ mailbox: change.mailbox, origin: change.origin });
    } else if (state.created.length > 0) state.created = [];
    // Renaming INBOX moves its messages to a new mailbox; the ACL goes along (RFC 4314 §4: a
    // RENAME keeps the ACLs), and INBOX keeps its own. Other renames move the Mailbox object
    // with its fields; a delete drops the object and its ACL.
    if (change.kind === 'mailbox' && change.type === 'rename' && change.oldPath === 'INBOX' && change.mailbox) {
      const source = (state.server.trees?.treeOf(change.mailbox) ?? state.server.store).get('INBOX');
      const acl = source ? state.aclOf(source) : null;
      if (acl) setField(change.mailbox, ACL_KEY, aclToObject(acl));
    }
  },
  storage: {
    mailbox: [
      {
        key: ACL_KEY,
        schema: { type: 'object', description: 'ACL (RFC 4314): identifier -> rights, e.g. { "alice": "lr", "anyone": "l" }', additionalProperties: str() },
        validate: validateStored,
      },
    ],
  },
  events: ['acl'],
  routes,
};

/**
 * CREATE, DELETE, RENAME, SUBSCRIBE, UNSUBSCRIBE (RFC 3501 §6.3.3-7).
 * Extension points: CREATE parameters (RFC 4466), access (`k` on the
 * parent for CREATE and a RENAME target, `x` for DELETE and a RENAME
 * source), checks before CREATE and RENAME, the `created` hook.
 */
import type { Mailbox } from '../../store/mailbox.js';
import { isValidMutf7 } from '../../store/mutf7.js';
import type { MailboxView } from '../../store/view.js';
import { AUTHENTICATED, no, ok, readParameters, type CommandResult, type CommandSpec } from '../command.js';
import type { ArgParser } from '../parser.js';
import { accessRefusal, checkResult, imapProtocol } from '../protocol.js';
import type { ImapSession } from '../session.js';

/**
 * A mailbox argument that names no possible mailbox: well-formed (any
 * astring is), so the command fails with NO and the given RFC 5530 code,
 * never BAD. The name is not echoed: it may hold any byte a literal can.
 */
export class InvalidName {
  constructor(readonly raw: string) {}

  /** The tagged NO for this name. */
  no(code: 'NONEXISTENT' | 'CANNOT', what = 'Mailbox'): CommandResult {
    return code === 'CANNOT'
      ? no(`Invalid mailbox name: not modified UTF-7`, code)
      : no(`${what} doesn't exist (the name is not valid modified UTF-7)`, code);
  }
}

/**
 * Reads a mailbox argument (astring). A name that is not valid modified
 * UTF-7 (RFC 3501 §5.1.3) is still a well-formed argument: it comes back as
 * an `InvalidName` for the command to answer NO, where the parser's own
 * check would make the whole command BAD.
 */
export function mailboxArg(args: ArgParser): string | InvalidName {
  const name = args.mailbox({ validate: false });
  return isValidMutf7(name) ? name : new InvalidName(name);
}

/** The nearest existing mailbox above `path` (the one whose `k` right a CREATE needs), or null at the top. */
function existingParent(store: MailboxView, path: string): Mailbox | null {
  for (let parent = store.parentOf(path); parent !== null; parent = store.parentOf(parent)) {
    const found = store.get(parent);
    if (found) return found;
  }
  return null;
}

/** `k` on the parent of a name about to be created. */
function createRefusal(session: ImapSession, path: string, command: string): CommandResult | null {
  const parent = existingParent(session.mailboxes, path);
  // The top of another user's tree (RFC 2342 Other Users) has no mailbox to grant `k`: only its owner creates there.
  if (parent === null && session.server.trees !== null && session.mailboxes.namespaceOf(path).type === 'user') return no('Permission denied', 'NOPERM');
  const refused = accessRefusal(session, 'k', parent, parent?.path ?? '', command);
  // Creating below a hidden mailbox is refused without saying it exists.
  return refused && refused.code === 'NONEXISTENT' ? no('Permission denied', 'NOPERM') : refused;
}

export const create: CommandSpec = {
  name: 'CREATE',
  states: AUTHENTICATED,
  run({ session, args, name }) {
    let path = mailboxArg(args);
    const protocol = imapProtocol(session.server);
    let params: ReadonlyMap<string, unknown> = new Map();
    if (!args.atEnd()) {
      args.sp();
      params = readParameters(args, protocol.createParameters, 'CREATE');
    }
    args.end();
    if (path instanceof InvalidName) return path.no('CANNOT');
    const store = session.mailboxes;
    // A trailing delimiter only says the client wants to create inferiors (RFC 3501 §6.3.3).
    const delimiter = store.delimiterFor(path);
    if (path.endsWith(delimiter) && path.length > delimiter.length) path = path.slice(0, -delimiter.length);
    if (store.has(path)) return no('Mailbox already exists', 'ALREADYEXISTS');
    const target = path;
    const refused = createRefusal(session, target, name);
    if (refused) return refused;
    const failed = checkResult(() => protocol.checkCreate({ path: target, params, session }));
    if (failed) return failed;
    const mailbox = store.createMailbox(target, session.id);
    protocol.created(mailbox, params, session);
    return ok('Create completed', protocol.createCode(mailbox));
  },
};

export const del: CommandSpec = {
  name: 'DELETE',
  states: AUTHENTICATED,
  run({ session, args, name }) {
    const path = mailboxArg(args);
    args.end();
    if (path instanceof InvalidName) return path.no('NONEXISTENT');
    const store = session.mailboxes;
    const mailbox = store.get(path);
    if (!mailbox) return no(`Mailbox doesn't exist: ${path}`, 'NONEXISTENT');
    const refused = accessRefusal(session, 'x', mailbox, mailbox.path, name);
    if (refused) return refused;
    // Deleting one's own selected mailbox is allowed; the session leaves it first.
    if (session.selected?.mailbox === mailbox && mailbox.path !== 'INBOX' && !store.hasChildren(mailbox)) session.unselect();
    store.deleteMailbox(path, session.id);
    return ok('Delete completed');
  },
};

export const rename: CommandSpec = {
  name: 'RENAME',
  states: AUTHENTICATED,
  run({ session, args, name }) {
    const from = mailboxArg(args);
    args.sp();
    const to = mailboxArg(args);
    args.end();
    if (from instanceof InvalidName) return from.no('NONEXISTENT');
    const store = session.mailboxes;
    const source = store.get(from);
    if (!source) return no(`Mailbox doesn't exist: ${from}`, 'NONEXISTENT');
    const refused = accessRefusal(session, 'x', source, source.path, name);
    if (refused) return refused;
    if (to instanceof InvalidName) return to.no('CANNOT');
    if (store.has(to)) return no('Target mailbox already exists', 'ALREADYEXISTS');
    const denied = createRefusal(session, store.normalizePath(to), name);
    if (denied) return denied;
    const failed = checkResult(() => imapProtocol(session.server).checkRename({ source, newPath: store.normalizePath(to), session }));
    if (failed) return failed;
    store.renameMailbox(from, to, session.id);
    return ok('Rename completed');
  },
};

export const subscribe: CommandSpec = {
  name: 'SUBSCRIBE',
  states: AUTHENTICATED,
  run({ session, args }) {
    const path = mailboxArg(args);
    args.end();
    // Such a name can never be a mailbox, so it can never be subscribed.
    if (path instanceof InvalidName) return path.no('CANNOT');
    session.mailboxes.subscribe(path, session.id);
    return ok('Subscribe completed');
  },
};

export const unsubscribe: CommandSpec = {
  name: 'UNSUBSCRIBE',
  states: AUTHENTICATED,
  run({ session, args }) {
    const path = mailboxArg(args);
    args.end();
    // Nothing by that name can be subscribed (SUBSCRIBE refuses it).
    if (path instanceof InvalidName) return path.no('NONEXISTENT', 'Subscription');
    session.mailboxes.unsubscribe(path, session.id);
    return ok('Unsubscribe completed');
  },
};

/** CREATE, DELETE, RENAME, SUBSCRIBE, UNSUBSCRIBE (RFC 3501 §6.3.3-7). */
import { isValidMutf7 } from '../../store/mutf7.js';
import { AUTHENTICATED, no, ok, type CommandResult, type CommandSpec } from '../command.js';
import type { ArgParser } from '../parser.js';

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

export const create: CommandSpec = {
  name: 'CREATE',
  states: AUTHENTICATED,
  run({ session, args }) {
    let path = mailboxArg(args);
    args.end();
    if (path instanceof InvalidName) return path.no('CANNOT');
    const store = session.server.store;
    // A trailing delimiter only says the client wants to create inferiors (RFC 3501 §6.3.3).
    const delimiter = store.delimiterFor(path);
    if (path.endsWith(delimiter) && path.length > delimiter.length) path = path.slice(0, -delimiter.length);
    if (store.has(path)) return no('Mailbox already exists', 'ALREADYEXISTS');
    store.createMailbox(path, session.id);
    return ok('Create completed');
  },
};

export const del: CommandSpec = {
  name: 'DELETE',
  states: AUTHENTICATED,
  run({ session, args }) {
    const path = mailboxArg(args);
    args.end();
    if (path instanceof InvalidName) return path.no('NONEXISTENT');
    const store = session.server.store;
    const mailbox = store.get(path);
    if (!mailbox) return no(`Mailbox doesn't exist: ${path}`, 'NONEXISTENT');
    // Deleting one's own selected mailbox is allowed; the session leaves it first.
    if (session.selected?.mailbox === mailbox && mailbox.path !== 'INBOX' && !store.hasChildren(mailbox)) session.unselect();
    store.deleteMailbox(path, session.id);
    return ok('Delete completed');
  },
};

export const rename: CommandSpec = {
  name: 'RENAME',
  states: AUTHENTICATED,
  run({ session, args }) {
    const from = mailboxArg(args);
    args.sp();
    const to = mailboxArg(args);
    args.end();
    if (from instanceof InvalidName) return from.no('NONEXISTENT');
    const store = session.server.store;
    if (!store.has(from)) return no(`Mailbox doesn't exist: ${from}`, 'NONEXISTENT');
    if (to instanceof InvalidName) return to.no('CANNOT');
    if (store.has(to)) return no('Target mailbox already exists', 'ALREADYEXISTS');
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
    session.server.store.subscribe(path, session.id);
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
    session.server.store.unsubscribe(path, session.id);
    return ok('Unsubscribe completed');
  },
};

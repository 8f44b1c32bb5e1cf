/** CREATE, DELETE, RENAME, SUBSCRIBE, UNSUBSCRIBE (RFC 3501 §6.3.3-7). */
import { AUTHENTICATED, no, ok, type CommandSpec } from '../command.js';

export const create: CommandSpec = {
  name: 'CREATE',
  states: AUTHENTICATED,
  run({ session, args }) {
    let path = args.mailbox();
    args.end();
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
    const path = args.mailbox();
    args.end();
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
    const from = args.mailbox();
    args.sp();
    const to = args.mailbox();
    args.end();
    const store = session.server.store;
    if (!store.has(from)) return no(`Mailbox doesn't exist: ${from}`, 'NONEXISTENT');
    if (store.has(to)) return no('Target mailbox already exists', 'ALREADYEXISTS');
    store.renameMailbox(from, to, session.id);
    return ok('Rename completed');
  },
};

export const subscribe: CommandSpec = {
  name: 'SUBSCRIBE',
  states: AUTHENTICATED,
  run({ session, args }) {
    const path = args.mailbox();
    args.end();
    session.server.store.subscribe(path, session.id);
    return ok('Subscribe completed');
  },
};

export const unsubscribe: CommandSpec = {
  name: 'UNSUBSCRIBE',
  states: AUTHENTICATED,
  run({ session, args }) {
    const path = args.mailbox();
    args.end();
    session.server.store.unsubscribe(path, session.id);
    return ok('Unsubscribe completed');
  },
};

/**
 * GETQUOTA, GETQUOTAROOT and SETQUOTA (RFC 9208 §4.1). One quota root, `""`,
 * holds every mailbox. A QUOTA response lists the resources that have a
 * limit (its grammar needs at least one), so while no limit is set the root
 * is not reported: GETQUOTAROOT names no root and GETQUOTA "" is
 * `NO [NONEXISTENT]`, as servers answer for a user without quota.
 */
import { AUTHENTICATED, bad, no, ok, type CommandSpec } from '../../imap/command.js';
import type { ImapSession } from '../../imap/session.js';
import { accessRefusal } from '../../imap/protocol.js';
import { InvalidName, mailboxArg } from '../../imap/commands/mailboxes.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import type { Server } from '../../server.js';
import { RESOURCES, ROOT, type QuotaLimits, type QuotaState } from './state.js';

function state(server: Server): QuotaState {
  // The commands are registered only while QUOTA is loaded, so its state exists.
  return server.extension('QUOTA') as QuotaState;
}

/** Sends `* QUOTA "" (STORAGE u l ...)`; false when no resource has a limit (nothing to send). */
function sendQuota(session: ImapSession, quota: QuotaState, owner: string | null): boolean {
  const list = quota.quotaList(owner);
  if (list.length === 0) return false;
  const values: ImapValue[] = [];
  for (const { resource, usage, limit } of list) values.push(atom(resource), usage, limit);
  session.untagged(atom('QUOTA'), ROOT, values);
  return true;
}

/** The root `""` of a session: its user's own tree with userMailboxes, else the one tree. */
const ownRoot = (session: ImapSession): string | null => (session.server.trees ? session.user : null);

const noRoot = (root: string): ReturnType<typeof no> =>
  root === ROOT
    ? no('Quota root "" has no limits set (SETQUOTA "" (STORAGE n) sets one)', 'NONEXISTENT')
    : no(`No such quota root: ${JSON.stringify(root)}; the only one is ""`, 'NONEXISTENT');

export const getQuota: CommandSpec = {
  name: 'GETQUOTA',
  states: AUTHENTICATED,
  run({ session, args }) {
    const root = args.astring().toString('utf8');
    args.end();
    const quota = state(session.server);
    if (root !== ROOT || !sendQuota(session, quota, ownRoot(session))) return noRoot(root);
    return ok('Getquota completed');
  },
};

export const getQuotaRoot: CommandSpec = {
  name: 'GETQUOTAROOT',
  states: AUTHENTICATED,
  run({ session, args, name }) {
    const path = mailboxArg(args);
    args.end();
    if (path instanceof InvalidName) return path.no('NONEXISTENT');
    const mailbox = session.mailboxes.get(path);
    if (!mailbox) return no(`Mailbox doesn't exist: ${path}`, 'NONEXISTENT');
    const refused = accessRefusal(session, 'r', mailbox, mailbox.path, name);
    if (refused) return refused;
    const quota = state(session.server);
    // With userMailboxes the root "" is the session user's own tree: another tree's mailbox has no root the user can name.
    const owner = quota.ownerOf(mailbox);
    const limited = owner === ownRoot(session) && quota.quotaList(owner).length > 0;
    session.untagged(atom('QUOTAROOT'), session.nameOf(mailbox), ...(limited ? [ROOT] : []));
    if (limited) sendQuota(session, quota, owner);
    return ok('Getquotaroot completed');
  },
};

export const setQuota: CommandSpec = {
  name: 'SETQUOTA',
  states: AUTHENTICATED,
  run({ session, args }) {
    const root = args.astring().toString('utf8');
    args.sp();
    // setquota-list = "(" [setquota-resource *(SP setquota-resource)] ")"
    const pairs = args.list((p) => {
      const resource = p.atom().toUpperCase();
      p.sp();
      return { resource, limit: p.number64() };
    });
    args.end();
    const limits: QuotaLimits = {};
    for (const { resource, limit } of pairs) {
      const known = RESOURCES.find((r) => r === resource);
      if (!known) return no(`Unsupported quota resource ${resource}; this server has ${RESOURCES.join(', ')}`, 'CANNOT');
      if (limits[known] !== undefined) return bad(`${known} given twice`);
      limits[known] = limit;
    }
    // This is a test server: any logged-in user may set the limits (RFC 9208 leaves who may to the server).
    if (root !== ROOT) return noRoot(root);
    const quota = state(session.server);
    quota.setQuota(limits);
    sendQuota(session, quota, ownRoot(session));
    return ok('Setquota completed');
  },
};

export const commands: readonly CommandSpec[] = [getQuota, getQuotaRoot, setQuota];

/** NAMESPACE (RFC 2342): personal, other users' and shared namespaces of the storage option. */
import { AUTHENTICATED, ok, type CommandSpec } from '../../imap/command.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const namespaceCommand: CommandSpec = {
  name: 'NAMESPACE',
  states: AUTHENTICATED,
  run({ session, args }) {
    args.end();
    const groups: ImapValue[] = (['personal', 'user', 'shared'] as const).map((type) => {
      const list = session.mailboxes.namespaces.filter((ns) => ns.type === type).map((ns) => [session.mailboxName(ns.prefix), ns.separator]);
      return list.length ? list : null;
    });
    session.untagged(atom('NAMESPACE'), ...groups);
    return ok('Namespace completed');
  },
};

export const extension: Extension = { name: 'NAMESPACE', capabilities: always('NAMESPACE'), commands: [namespaceCommand] };

/** UNSELECT (RFC 3691): leave the mailbox without expunging. */
import { SELECTED, ok, type CommandSpec } from '../../imap/command.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const unselectCommand: CommandSpec = {
  name: 'UNSELECT',
  states: SELECTED,
  run({ session, args }) {
    args.end();
    session.unselect();
    return ok('Unselect completed');
  },
};

export const extension: Extension = { name: 'UNSELECT', capabilities: always('UNSELECT'), commands: [unselectCommand] };

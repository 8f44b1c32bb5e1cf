/** ID (RFC 2971): the server's identity; the client's is accepted and ignored. */
import { ANY_STATE, ok, type CommandSpec } from '../../imap/command.js';
import { atom } from '../../imap/wire/values.js';
import { VERSION } from '../../version.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const idCommand: CommandSpec = {
  name: 'ID',
  states: ANY_STATE,
  run({ session, args }) {
    if (args.peekChar() === '(') args.list(() => args.nstring());
    else args.keyword('NIL');
    args.end();
    session.untagged(atom('ID'), ['name', 'Rookery', 'vendor', 'Rookery', 'version', VERSION]);
    return ok('ID completed');
  },
};

export const extension: Extension = { name: 'ID', capabilities: always('ID'), commands: [idCommand] };

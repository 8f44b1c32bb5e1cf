/** MOVE (RFC 6851): MOVE and UID MOVE; the command code is the core's COPY with expunge. */
import { move, uidMove } from '../../imap/commands/copy.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const extension: Extension = { name: 'MOVE', capabilities: always('MOVE'), commands: [move, uidMove] };

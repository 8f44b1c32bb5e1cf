/**
 * LIST-EXTENDED (RFC 5258): advertises the capability. The extended LIST
 * syntax itself (selection options SUBSCRIBED, REMOTE and RECURSIVEMATCH,
 * several patterns, RETURN (SUBSCRIBED CHILDREN), `\NonExistent`,
 * `\Subscribed`, CHILDINFO) is served by the core for every server
 * (src/imap/commands/list.ts), because the return options of other
 * extensions (LIST-STATUS, SPECIAL-USE, LIST-MYRIGHTS) ride on it and
 * clients that send it to a server not advertising it have always been
 * answered; nothing else of RFC 5258 changes with the capability. There are
 * no remote mailboxes, so REMOTE lists what LIST lists and `\Remote` never
 * appears.
 */
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const extension: Extension = { name: 'LIST-EXTENDED', capabilities: always('LIST-EXTENDED') };

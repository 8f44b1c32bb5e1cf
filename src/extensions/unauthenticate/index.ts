/**
 * UNAUTHENTICATE (RFC 8437): in the authenticated or selected state,
 * `UNAUTHENTICATE` returns the session to the not authenticated state on
 * the same connection, so a client can log in again (as another user)
 * without reconnecting. A selected mailbox is closed without expunging;
 * the user, ENABLEd extensions and the login's timers are dropped; TLS and
 * COMPRESS stay. The tagged OK carries the capabilities as they are before
 * login (STARTTLS, AUTH=..., LOGINDISABLED where they apply), and session
 * events `unselect` (when a mailbox was selected) and `unauthenticate`
 * follow.
 */
import { AUTHENTICATED, ok, type CommandSpec } from '../../imap/command.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const unauthenticateCommand: CommandSpec = {
  name: 'UNAUTHENTICATE',
  states: AUTHENTICATED,
  run({ session, args }) {
    args.end();
    session.unauthenticate();
    return ok('Unauthenticate completed', `CAPABILITY ${session.announceCapabilities().join(' ')}`);
  },
};

export const extension: Extension = { name: 'UNAUTHENTICATE', capabilities: always('UNAUTHENTICATE'), commands: [unauthenticateCommand] };

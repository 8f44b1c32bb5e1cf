import type { CommandSpec } from '../imap/command.js';
import type { ImapSession } from '../imap/session.js';

/**
 * An IMAP extension: a name, what it requires, the capabilities it
 * advertises (a function of the session, so they can depend on its state),
 * and the commands it adds. Loading order never changes behaviour.
 */
export interface Extension {
  name: string;
  capabilities?(session: ImapSession): string[];
  commands?: CommandSpec[];
}

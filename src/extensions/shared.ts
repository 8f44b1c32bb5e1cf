/** Small helpers the built-in extensions share. */
import { loginDisabled } from '../imap/commands/login.js';
import type { ImapSession } from '../imap/session.js';

/** The empty answer of a point that returns responses (src/imap/wire/values.ts), for the extensions' points. */
export { NO_RESPONSES } from '../imap/wire/values.js';

/** A capability list advertised in every state. */
export const always =
  (...caps: string[]) =>
  (): readonly string[] =>
    caps;

/** A capability advertised only before login (and not while login is disabled), as servers do with SASL mechanisms. */
export const beforeLogin =
  (cap: string) =>
  (session: ImapSession): readonly string[] =>
    session.state === 'notAuthenticated' && !loginDisabled(session) ? [cap] : [];

import type { CommandSpec } from '../imap/command.js';
import type { ImapSession } from '../imap/session.js';
import type { Route } from '../rest/route.js';

/**
 * An extension (plugin): a name, the built-in plugins it requires, the
 * capabilities it advertises (a function of the session, so they can depend
 * on its state), the IMAP commands it adds and the REST routes it serves.
 * Built-in extensions and users' plugin objects share this one shape.
 * Loading order never changes behaviour.
 */
export interface Extension {
  /** Plugin name; a user plugin may not reuse a built-in name. */
  name: string;
  /** Built-in plugins loaded with this one. */
  requires?: readonly string[];
  capabilities?(session: ImapSession): string[];
  /** IMAP commands; one with the name of a core command replaces it. */
  commands?: readonly CommandSpec[];
  /**
   * REST routes, served after the built-in ones (a built-in route wins when
   * both match a request) and listed in the OpenAPI document, only while the
   * plugin is loaded.
   */
  routes?: readonly Route[];
}

/** What users pass in `plugins` next to built-in names. */
export type Plugin = Extension;

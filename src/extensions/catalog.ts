/**
 * Names that are not extensions: the removed IMAP-port test-control
 * plugin, whose loading is an error pointing to its successors. The catalog
 * of built-in extensions is ./builtins.ts.
 */
import { builtinPluginNames } from './builtins.js';

/** The old IMAP-port test-control plugin; loading it is an error that points to its successors. */
export const REMOVED_PLUGINS: Record<string, string> = {
  XTOYBIRD:
    'the XTOYBIRD plugin was removed in version 5; its functions (snapshot, list mailboxes and users, list sessions, add/update/delete users, shutdown) are in the control API (server.control) and the REST API (/v1)',
};

/** Names of the built-in plugins in catalog order. */
export const BUILTIN_PLUGINS: readonly string[] = builtinPluginNames();

/**
 * The names of the built-in extensions, the ones each requires, and the
 * aliases older fixtures use. Option validation reads this table; the
 * extensions themselves live beside it, one folder each.
 */
export const BUILTIN_PLUGINS = [
  'IDLE',
  'NAMESPACE',
  'UIDPLUS',
  'MOVE',
  'UNSELECT',
  'ENABLE',
  'ID',
  'LITERAL+',
  'SASL-IR',
  'AUTH=PLAIN',
  'AUTH=XOAUTH2',
  'AUTH=OAUTHBEARER',
  'CHILDREN',
] as const;

export type BuiltinPlugin = (typeof BUILTIN_PLUGINS)[number];

/** Plugins that another plugin loads with it. */
export const PLUGIN_REQUIRES: Partial<Record<BuiltinPlugin, readonly BuiltinPlugin[]>> = {
  'SASL-IR': ['AUTH=PLAIN'],
};

/** Names used by earlier servers for the same thing. */
export const PLUGIN_ALIASES: Record<string, BuiltinPlugin> = {
  LITERALPLUS: 'LITERAL+',
  'AUTH-PLAIN': 'AUTH=PLAIN',
  XOAUTH2: 'AUTH=XOAUTH2',
  'AUTH-XOAUTH2': 'AUTH=XOAUTH2',
  OAUTHBEARER: 'AUTH=OAUTHBEARER',
  'AUTH-OAUTHBEARER': 'AUTH=OAUTHBEARER',
};

/** The old IMAP-port test-control plugin; loading it is an error that points to its successors. */
export const REMOVED_PLUGINS: Record<string, string> = {
  XTOYBIRD:
    'the XTOYBIRD plugin was removed in version 5; its functions (snapshot, list mailboxes and users, list sessions, add/update/delete users, shutdown) are in the control API (server.control) and the REST API (/v1)',
};

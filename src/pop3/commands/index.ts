/** The POP3 command table, by upper-case keyword. */
import { apop, auth, pass, user } from './authorization.js';
import { capa, lang, quit, stls, utf8 } from './session-commands.js';
import { dele, list, noop, retr, rset, stat, top, uidl } from './transaction.js';
import type { Pop3CommandSpec } from './types.js';

let table: ReadonlyMap<string, Pop3CommandSpec> | null = null;

/** Made on first use: no work at import time. */
export function pop3Commands(): ReadonlyMap<string, Pop3CommandSpec> {
  table ??= new Map([user, pass, apop, auth, stat, list, retr, dele, noop, rset, top, uidl, quit, capa, stls, utf8, lang].map((c) => [c.name, c]));
  return table;
}

import { idle, enable, id, namespace, unselect } from '../imap/commands/extensions.js';
import { uidExpunge } from '../imap/commands/expunge.js';
import { move, uidMove } from '../imap/commands/copy.js';
import type { BuiltinPlugin } from './catalog.js';
import type { ImapSession } from '../imap/session.js';
import type { Extension } from './extension.js';

/** A capability that is advertised in every state. */
const always =
  (...caps: string[]) =>
  (): string[] =>
    caps;

/** A capability advertised only before login, as servers do with SASL mechanisms. */
const beforeLogin =
  (cap: string) =>
  (session: ImapSession): string[] =>
    session.state === 'notAuthenticated' && !loginDisabled(session) ? [cap] : [];

/** The `loginDisabled` option on a connection without TLS: no login of any kind until STARTTLS. */
export function loginDisabled(session: ImapSession): boolean {
  return session.server.options.loginDisabled && !session.secure;
}

/** The built-in extensions by plugin name. Built on first use, not at import. */
export function builtinExtensions(): Map<string, Extension> {
  const list: (Extension & { name: BuiltinPlugin })[] = [
    { name: 'IDLE', capabilities: always('IDLE'), commands: [idle] },
    { name: 'NAMESPACE', capabilities: always('NAMESPACE'), commands: [namespace] },
    { name: 'UIDPLUS', capabilities: always('UIDPLUS'), commands: [uidExpunge] },
    { name: 'MOVE', capabilities: always('MOVE'), commands: [move, uidMove] },
    { name: 'UNSELECT', capabilities: always('UNSELECT'), commands: [unselect] },
    { name: 'ENABLE', capabilities: always('ENABLE'), commands: [enable] },
    { name: 'ID', capabilities: always('ID'), commands: [id] },
    { name: 'LITERAL+', capabilities: always('LITERAL+') },
    { name: 'SASL-IR', capabilities: always('SASL-IR') },
    { name: 'AUTH=PLAIN', capabilities: beforeLogin('AUTH=PLAIN') },
    { name: 'AUTH=XOAUTH2', capabilities: beforeLogin('AUTH=XOAUTH2') },
    { name: 'AUTH=OAUTHBEARER', capabilities: beforeLogin('AUTH=OAUTHBEARER') },
    { name: 'CHILDREN', capabilities: always('CHILDREN') },
  ];
  return new Map(list.map((e) => [e.name, e]));
}

import { builtinExtensions } from '../extensions/index.js';
import type { Extension } from '../extensions/extension.js';
import type { Server } from '../server.js';
import type { CommandSpec } from './command.js';
import { coreCommands } from './commands/index.js';
import { starttls } from './commands/starttls.js';
import type { ImapSession } from './session.js';

/** The IMAP protocol one server speaks: core commands plus those of its loaded extensions. */
export interface ImapProtocol {
  readonly commands: ReadonlyMap<string, CommandSpec>;
  readonly extensions: readonly Extension[];
  has(extension: string): boolean;
  capabilities(session: ImapSession): string[];
}

const protocols = new WeakMap<Server, ImapProtocol>();

/** Builds (once per server) the command table and capability list. */
export function imapProtocol(server: Server): ImapProtocol {
  let protocol = protocols.get(server);
  if (protocol) return protocol;
  const all = builtinExtensions();
  const extensions = [
    ...server.options.plugins.map((name) => all.get(name)).filter((e): e is Extension => e !== undefined),
    ...server.options.customPlugins,
  ];
  const names = new Set(extensions.map((e) => e.name));
  const commands = new Map<string, CommandSpec>();
  for (const spec of coreCommands()) commands.set(spec.name, spec);
  if (server.options.starttls) commands.set(starttls.name, starttls);
  for (const e of extensions) for (const spec of e.commands ?? []) commands.set(spec.name, spec);
  protocol = {
    commands,
    extensions,
    has: (name) => names.has(name),
    capabilities(session) {
      const caps = ['IMAP4rev1'];
      // STARTTLS and LOGINDISABLED are offered only where they apply: before login, without TLS.
      if (session.state === 'notAuthenticated' && !session.secure) {
        if (session.server.options.starttls) caps.push('STARTTLS');
        if (session.server.options.loginDisabled) caps.push('LOGINDISABLED');
      }
      for (const e of extensions) if (e.capabilities) caps.push(...e.capabilities(session));
      return caps;
    },
  };
  protocols.set(server, protocol);
  return protocol;
}

/**
 * ENABLE (RFC 5161). What may be enabled comes from the loaded extensions'
 * `enable` points, and only while the capability is advertised.
 */
import { AUTHENTICATED, bad, ok, type CommandSpec } from '../../imap/command.js';
import { imapProtocol } from '../../imap/protocol.js';
import { atom } from '../../imap/wire/values.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const enableCommand: CommandSpec = {
  name: 'ENABLE',
  states: AUTHENTICATED,
  run({ session, args }) {
    const wanted: string[] = [];
    while (!args.atEnd()) {
      wanted.push(args.atom().toUpperCase());
      if (!args.atEnd()) args.sp();
    }
    if (wanted.length === 0) return bad('ENABLE needs at least one capability');
    const protocol = imapProtocol(session.server);
    const enableable = protocol.enableable;
    // Capability names compare case-insensitively (RFC 3501 §7.2.1); ENABLED names them as advertised (`IMAP4rev2`).
    const caps = new Map(session.capabilities().map((c) => [c.toUpperCase(), c]));
    const enabled: string[] = [];
    for (const cap of wanted) {
      const advertised = caps.get(cap);
      if (enableable.has(cap) && advertised !== undefined && !session.enabled.has(cap) && protocol.mayEnable(session, cap)) {
        session.enabled.add(cap);
        enabled.push(advertised);
      }
    }
    session.untagged(atom('ENABLED'), ...enabled.map(atom));
    return ok('Enabled');
  },
};

export const extension: Extension = { name: 'ENABLE', capabilities: always('ENABLE'), commands: [enableCommand] };

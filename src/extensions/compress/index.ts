/**
 * COMPRESS=DEFLATE (RFC 4978): after the tagged OK of `COMPRESS DEFLATE`,
 * both directions of the connection are raw DEFLATE streams. The answer
 * itself goes out plain; the transport (src/imap/wire/deflate.ts) inflates
 * what the client sends before the command reader sees it and sync-flushes
 * every response batch it deflates.
 *
 * Valid in the authenticated and selected states (RFC 4978 §5: command-auth),
 * so STARTTLS can never follow it; over TLS (implicit or STARTTLS) it is
 * fine. A second COMPRESS is `NO [COMPRESSIONACTIVE]`; a mechanism other
 * than DEFLATE is BAD (an invalid argument).
 */
import { AUTHENTICATED, bad, no, ok, type CommandSpec } from '../../imap/command.js';
import type { TransportLayer } from '../../connection/connection.js';
import { DeflateTransport } from '../../imap/wire/deflate.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

const deflateLayer: TransportLayer = {
  compresses: true,
  wrap: (connection) => new DeflateTransport(connection),
};

export const compressCommand: CommandSpec = {
  name: 'COMPRESS',
  states: AUTHENTICATED,
  run({ session, args }) {
    const mechanism = args.atom().toUpperCase();
    args.end();
    if (session.compressed) return no('DEFLATE is already active', 'COMPRESSIONACTIVE');
    if (mechanism !== 'DEFLATE') return bad(`Unknown compression mechanism ${mechanism.slice(0, 40)}; this server has DEFLATE`);
    session.upgradeTransport(deflateLayer);
    return ok('DEFLATE active');
  },
};

export const extension: Extension = {
  name: 'COMPRESS',
  aliases: ['COMPRESS=DEFLATE'],
  capabilities: always('COMPRESS=DEFLATE'),
  commands: [compressCommand],
};

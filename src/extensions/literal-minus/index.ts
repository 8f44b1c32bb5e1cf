/**
 * LITERAL- (RFC 7888 §3 and §4): non-synchronizing literals (`{n+}`,
 * `~{n+}`) of at most 4096 octets. A larger one is refused with a tagged
 * `BAD [TOOBIG]` (RFC 7888 §4); the reader reads its bytes and drops them,
 * so the connection goes on with the next command. Synchronizing literals
 * keep the server's usual limits (maxLiteral).
 *
 * With LITERAL+ loaded too, LITERAL+ wins: it is the superset (any size),
 * so LITERAL- is not advertised and refuses nothing. A server advertises
 * one of the two, never both.
 */
import { imapProtocol } from '../../imap/protocol.js';
import { defineExtension } from '../extension.js';

/** RFC 7888 §4: the largest non-synchronizing literal a LITERAL- server accepts. */
export const LITERAL_MINUS_MAX = 4096;

export const extension = defineExtension<undefined>({
  name: 'LITERAL-',
  aliases: ['LITERALMINUS'],
  capabilities: (session) => (imapProtocol(session.server).has('LITERAL+') ? [] : ['LITERAL-']),
  literal: (info) => {
    if (info.sync || info.size <= LITERAL_MINUS_MAX) return undefined;
    if (imapProtocol(info.session.server).has('LITERAL+')) return undefined;
    return {
      response: 'BAD',
      code: 'TOOBIG',
      text: `Non-synchronizing literal larger than ${LITERAL_MINUS_MAX} octets (LITERAL-): send it as {${info.size}}`,
    };
  },
});

/**
 * AUTH=EXTERNAL (RFC 4422 Appendix A): the client certificate of the TLS
 * layer (`tls.requestCert`, signed by the test CA) authenticates; the
 * user is the one its subject CN names. Offered only on a connection that
 * presented such a certificate, before login.
 */
import { no, ok, type CommandResult } from '../../imap/command.js';
import type { ImapSession } from '../../imap/session.js';
import type { Extension } from '../extension.js';

function checkExternal(session: ImapSession, response: Buffer): CommandResult {
  const user = session.certificateUser;
  if (user === null) return no('No client certificate signed by the test CA on this connection', 'AUTHENTICATIONFAILED');
  // RFC 4422 Appendix A.1: the message is the authorization identity; empty means "as authenticated".
  const authz = response.toString('utf8');
  if (authz !== '' && authz !== user) return no(`The certificate names ${user}; acting as another user is not supported`, 'AUTHORIZATIONFAILED');
  if (!session.server.store.users.has(user)) return no(`The certificate names ${user}, who is no user of this server`, 'AUTHENTICATIONFAILED');
  session.login(user);
  return ok('Logged in', `CAPABILITY ${session.announceCapabilities().join(' ')}`);
}

export const extension: Extension = {
  name: 'AUTH=EXTERNAL',
  aliases: ['EXTERNAL', 'AUTH-EXTERNAL'],
  capabilities: (session) => (session.state === 'notAuthenticated' && session.certificateUser !== null ? ['AUTH=EXTERNAL'] : []),
  sasl: [{ name: 'EXTERNAL', check: checkExternal }],
};

/** AUTH=OAUTHBEARER (RFC 7628): AUTHENTICATE OAUTHBEARER with a user's access token. */
import { checkOAuthBearer } from '../../imap/commands/login.js';
import type { Extension } from '../extension.js';
import { beforeLogin } from '../shared.js';

export const extension: Extension = {
  name: 'AUTH=OAUTHBEARER',
  aliases: ['OAUTHBEARER', 'AUTH-OAUTHBEARER'],
  // Providers that offer OAuth logins offer SASL-IR too, and clients (imapflow) send the
  // token as an initial response: without SASL-IR they fail with a BAD.
  requires: ['SASL-IR'],
  capabilities: beforeLogin('AUTH=OAUTHBEARER'),
  sasl: [{ name: 'OAUTHBEARER', check: checkOAuthBearer }],
};

/** AUTH=OAUTHBEARER (RFC 7628): AUTHENTICATE OAUTHBEARER with a user's access token. */
import { checkOAuthBearer } from '../../imap/commands/login.js';
import type { Extension } from '../extension.js';
import { beforeLogin } from '../shared.js';

export const extension: Extension = {
  name: 'AUTH=OAUTHBEARER',
  aliases: ['OAUTHBEARER', 'AUTH-OAUTHBEARER'],
  capabilities: beforeLogin('AUTH=OAUTHBEARER'),
  sasl: [{ name: 'OAUTHBEARER', check: checkOAuthBearer }],
};

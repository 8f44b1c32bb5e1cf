/** AUTH=XOAUTH2 (Google): AUTHENTICATE XOAUTH2 with a user's access token and its sessionTimeout. */
import { checkXOAuth2 } from '../../imap/commands/login.js';
import type { Extension } from '../extension.js';
import { beforeLogin } from '../shared.js';

export const extension: Extension = {
  name: 'AUTH=XOAUTH2',
  aliases: ['XOAUTH2', 'AUTH-XOAUTH2'],
  capabilities: beforeLogin('AUTH=XOAUTH2'),
  sasl: [{ name: 'XOAUTH2', check: checkXOAuth2 }],
};

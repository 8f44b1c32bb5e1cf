/** AUTH=XOAUTH2 (Google): AUTHENTICATE XOAUTH2 with a user's access token and its sessionTimeout. */
import { checkXOAuth2 } from '../../imap/commands/login.js';
import type { Extension } from '../extension.js';
import { beforeLogin } from '../shared.js';

export const extension: Extension = {
  name: 'AUTH=XOAUTH2',
  aliases: ['XOAUTH2', 'AUTH-XOAUTH2'],
  // Providers that offer OAuth logins offer SASL-IR too, and clients (imapflow) send the
  // token as an initial response: without SASL-IR they fail with a BAD.
  requires: ['SASL-IR'],
  capabilities: beforeLogin('AUTH=XOAUTH2'),
  sasl: [{ name: 'XOAUTH2', check: checkXOAuth2 }],
};

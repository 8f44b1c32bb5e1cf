/** AUTH=PLAIN (RFC 4616): AUTHENTICATE PLAIN with a user's password. */
import { checkPlain } from '../../imap/commands/login.js';
import type { Extension } from '../extension.js';
import { beforeLogin } from '../shared.js';

export const extension: Extension = {
  name: 'AUTH=PLAIN',
  aliases: ['AUTH-PLAIN'],
  capabilities: beforeLogin('AUTH=PLAIN'),
  sasl: [{ name: 'PLAIN', check: checkPlain }],
};

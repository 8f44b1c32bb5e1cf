/** CHILDREN (RFC 3348): `\HasChildren` / `\HasNoChildren` on every LIST line. */
import { childAttributes } from '../../imap/commands/list.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

export const extension: Extension = {
  name: 'CHILDREN',
  capabilities: always('CHILDREN'),
  list: { attributes: (entry, ctx) => (ctx.lsub ? [] : childAttributes(ctx.session.mailboxes, entry, ctx)) },
};

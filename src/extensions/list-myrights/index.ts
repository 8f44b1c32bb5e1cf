/**
 * LIST-MYRIGHTS (RFC 8440): the LIST return option `MYRIGHTS` sends, after
 * each listed mailbox's LIST line, `* MYRIGHTS mailbox rights` with the
 * logged-in user's rights (as the MYRIGHTS command of RFC 4314 gives them).
 * Levels that are no mailbox (`\NonExistent`, `\Noselect` without a
 * mailbox) get none, as RFC 8440 §4's example shows. Requires ACL.
 */
import type { Extension } from '../extension.js';
import { myRightsResponse, sessionRights } from '../acl/index.js';
import { always } from '../shared.js';

export const extension: Extension = {
  name: 'LIST-MYRIGHTS',
  requires: ['ACL'],
  capabilities: always('LIST-MYRIGHTS'),
  list: {
    returnOptions: ['MYRIGHTS'],
    responses: (entry, ctx) => {
      if (ctx.lsub || !ctx.returns.has('MYRIGHTS') || entry.mailbox === null) return [];
      return [myRightsResponse(ctx.session, entry.mailbox, sessionRights(ctx.session.server, entry.mailbox, ctx.session.user))];
    },
  },
};

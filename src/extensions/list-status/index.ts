/**
 * LIST-STATUS (RFC 5819): the LIST return option `STATUS (items)`. After the
 * LIST line of each mailbox that can be selected, a `* STATUS` response
 * with the items asked for, exactly as the STATUS command would answer
 * (extension items such as STATUS=SIZE's SIZE included). Levels that are
 * no mailbox (`\NonExistent`), `\Noselect` mailboxes and mailboxes the
 * user may not read (access right `r`) get no STATUS response (§2: the
 * server omits what it cannot give; LIST itself does not fail).
 */
import { statusValues } from '../../imap/commands/status.js';
import { accessRefusal, imapProtocol } from '../../imap/protocol.js';
import { atom, type ImapValue } from '../../imap/wire/values.js';
import type { Server } from '../../server.js';
import { defineExtension, type ListContext, type ListEntry } from '../extension.js';
import { always } from '../shared.js';

interface ListStatusState {
  server: Server;
}

function statusResponse(entry: ListEntry, ctx: ListContext): readonly (readonly ImapValue[])[] {
  const items = ctx.returnArguments?.get('STATUS') as readonly string[] | undefined;
  const mailbox = entry.mailbox;
  if (ctx.lsub || items === undefined || mailbox === null || !mailbox.selectable) return [];
  if (accessRefusal(ctx.session, 'r', mailbox, mailbox.path, 'LIST') !== null) return [];
  return [[atom('STATUS'), ctx.session.nameOf(mailbox), statusValues(ctx.session, mailbox, items)]];
}

export const extension = defineExtension<ListStatusState>({
  name: 'LIST-STATUS',
  setup: ({ server }) => ({ server }),
  capabilities: always('LIST-STATUS'),
  list: {
    returnOptions: ['STATUS'],
    // `STATUS SP "(" status-att *(SP status-att) ")"`, the items STATUS accepts.
    parseReturnOption: (_option, args, state) => {
      args.sp();
      return args.statusAttributes(imapProtocol(state.server).statusItems);
    },
    responses: (entry, ctx) => statusResponse(entry, ctx),
  },
});

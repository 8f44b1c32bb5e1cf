/**
 * WITHIN (RFC 5032): the SEARCH keys `OLDER n` and `YOUNGER n`, an interval
 * in seconds (nz-number) counted back from the server's clock (the `now`
 * option, so tests can pin it) and compared with INTERNALDATE as an
 * instant, whatever its zone. A message exactly n seconds old is both
 * OLDER n and YOUNGER n: the RFC names no side for the boundary; Dovecot
 * keeps it in both, and so `OLDER n` / `YOUNGER n` cover every message.
 * Without this plugin the keys are unknown (BAD), as on a server without
 * the capability. SORT, THREAD and the CONTEXT updates read the same keys;
 * the keys are marked time-dependent, so a live CONTEXT result follows
 * messages growing older (RFC 5032's persistent searches).
 */
import type { ArgParser } from '../../imap/parser.js';
import type { Message } from '../../store/message.js';
import { defineExtension, type SelectedContext } from '../extension.js';
import { always } from '../shared.js';

function interval(args: ArgParser): number {
  args.sp();
  return args.nzNumber();
}

/**
 * Age of the message's INTERNALDATE in whole seconds on the server's clock:
 * INTERNALDATE has no fractions, and the clock's are dropped too, so a
 * message n seconds old is both OLDER n and YOUNGER n for the whole second
 * (Dovecot answers so).
 */
function age(message: Message, ctx: SelectedContext): number {
  return Math.floor(ctx.session.server.now() / 1000) - Math.floor(message.internaldate.ms / 1000);
}

export const extension = defineExtension<undefined>({
  name: 'WITHIN',
  capabilities: always('WITHIN'),
  searchKeys: [
    { name: 'OLDER', parse: interval, timeDependent: true, matches: (m, data, ctx) => age(m, ctx) >= (data as number) },
    { name: 'YOUNGER', parse: interval, timeDependent: true, matches: (m, data, ctx) => age(m, ctx) <= (data as number) },
  ],
});

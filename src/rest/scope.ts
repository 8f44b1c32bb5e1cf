/** The `user` query parameter of mailbox and message routes (userMailboxes). */
import type { MailboxScope } from '../control/control.js';
import { ServiceError } from '../errors.js';
import type { QueryParam } from './route.js';

export const userQuery: QueryParam = {
  name: 'user',
  description: 'With userMailboxes: the user whose own mailbox tree the path is in (leave out for a shared namespace). Refused without userMailboxes.',
  schema: { type: 'string' },
};

/** The scope of a request: `?user=name`, given once. */
export function scopeOf(query: URLSearchParams): MailboxScope {
  const all = query.getAll('user');
  if (all.length === 0) return {};
  if (all.length > 1) throw new ServiceError('INVALID', 'user: give it once');
  return { user: all[0]! };
}

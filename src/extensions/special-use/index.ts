/**
 * SPECIAL-USE (RFC 6154): the mailboxes' special-use attributes (storage
 * key `special-use`) on LIST lines, the `SPECIAL-USE` selection option (only
 * mailboxes that have one) and return option, and the control operation
 * `setSpecialUse` with its REST route, whose change LIST shows at once.
 */
import type { MailboxInfo } from '../../control/resources.js';
import type { MailboxScope } from '../../control/control.js';
import { scopeOf, userQuery } from '../../rest/scope.js';
import { mailboxInfo } from '../../control/resources.js';
import { checkObject, checkStringArray, invalid } from '../../control/check.js';
import { SPECIAL_USE } from '../../options/storage.js';
import type { Route } from '../../rest/route.js';
import { arrayOf, obj, ref, str } from '../../rest/schema.js';
import type { Server } from '../../server.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';

/** The control API of SPECIAL-USE: `server.extension('SPECIAL-USE')`. */
export interface SpecialUseApi {
  /** Replaces a mailbox's special-use attributes (`[]` removes them); answers its MailboxInfo. */
  setSpecialUse(path: string, input: { specialUse: string[] }, scope?: MailboxScope): MailboxInfo;
}

declare module '../extension.js' {
  interface ExtensionApis {
    'SPECIAL-USE': SpecialUseApi;
  }
}

/** The canonical spelling of a special-use attribute, or undefined when it is none RFC 6154 / RFC 8457 define. */
export function specialUseAttribute(name: string): string | undefined {
  return SPECIAL_USE.get(name.toLowerCase());
}

function api(server: Server): SpecialUseApi {
  return {
    setSpecialUse(path, input, scope) {
      if (typeof path !== 'string') throw invalid('path: expected a string');
      const tree = server.control.treeOf(scope, path);
      const mailbox = tree.require(path);
      const o = checkObject(input, 'input');
      if (o.specialUse === undefined) throw invalid('specialUse: required');
      const wanted = checkStringArray(o.specialUse, 'specialUse');
      const out: string[] = [];
      wanted.forEach((name, i) => {
        const canonical = specialUseAttribute(name);
        if (canonical === undefined) {
          throw invalid(`specialUse[${i}]: ${JSON.stringify(name)} is not a special-use attribute; valid: ${[...SPECIAL_USE.values()].join(', ')}`);
        }
        if (!out.includes(canonical)) out.push(canonical);
      });
      mailbox.specialUse = out;
      return mailboxInfo(tree, mailbox);
    },
  };
}

const routes: Route[] = [
  {
    method: 'PUT',
    path: '/v1/mailboxes/{path}/special-use',
    summary: 'Replace the special-use attributes of a mailbox (SPECIAL-USE plugin)',
    operation: 'setSpecialUse',
    params: [{ name: 'path', type: 'string', description: 'Mailbox storage name, URL encoded as one segment (`/` is `%2F`)' }],
    body: { ...obj({ specialUse: arrayOf(str('A special-use attribute such as \\Sent')) }, ['specialUse']), additionalProperties: false },
    status: 200,
    response: ref('MailboxInfo'),
    query: [userQuery],
    handle: ({ server, params, body, query }) =>
      server.extension('SPECIAL-USE')!.setSpecialUse(params.path as string, body as { specialUse: string[] }, scopeOf(query)),
  },
];

export const extension: Extension<SpecialUseApi> = {
  name: 'SPECIAL-USE',
  setup: ({ server }) => api(server),
  capabilities: always('SPECIAL-USE'),
  list: {
    selectionOptions: ['SPECIAL-USE'],
    returnOptions: ['SPECIAL-USE'],
    // RFC 6154 §2: with the selection option, only mailboxes that have a special use are listed.
    select: (entry) => (entry.mailbox?.specialUse.length ?? 0) > 0,
    // Listed on every LIST line (the RFC allows it without the return option; clients that
    // do not ask, such as those without LIST-EXTENDED, still learn them). LSUB shows none.
    attributes: (entry, ctx) => (ctx.lsub || !entry.mailbox ? [] : entry.mailbox.specialUse),
  },
  routes,
};

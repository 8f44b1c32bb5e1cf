/**
 * CREATE-SPECIAL-USE (RFC 6154 §3): `CREATE name (USE (\Sent \Archive))`
 * creates the mailbox with those attributes; an attribute that is not a
 * special-use one is `NO [USEATTR]` and nothing is created. Loads
 * SPECIAL-USE, which shows them.
 */
import { ServiceError } from '../../errors.js';
import type { ArgParser } from '../../imap/parser.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';
import { specialUseAttribute } from '../special-use/index.js';

/** `"USE" SP "(" [use-attr *(SP use-attr)] ")"`: the attributes as sent. */
function parseUse(args: ArgParser): string[] {
  return args.list(() => args.flag({ allowExtension: true }));
}

function useOf(params: ReadonlyMap<string, unknown>): string[] {
  const value = params.get('USE');
  return Array.isArray(value) ? (value as string[]) : [];
}

export const extension: Extension = {
  name: 'CREATE-SPECIAL-USE',
  requires: ['SPECIAL-USE'],
  capabilities: always('CREATE-SPECIAL-USE'),
  create: {
    parameters: [{ name: 'USE', parse: parseUse }],
    created(mailbox, params) {
      const out: string[] = [];
      for (const name of useOf(params)) {
        const canonical = specialUseAttribute(name)!;
        if (!out.includes(canonical)) out.push(canonical);
      }
      if (out.length) mailbox.specialUse = out;
    },
  },
  checks: {
    create({ params }) {
      for (const name of useOf(params)) {
        if (specialUseAttribute(name) === undefined) {
          throw new ServiceError('USEATTR', `Mailbox not created; ${name} is not a special-use attribute this server supports`);
        }
      }
    },
  },
};

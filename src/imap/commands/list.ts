/** LIST and LSUB (RFC 3501 §6.3.8-9) with `*` and `%` wildcards. */
import type { Store } from '../../store/store.js';
import { AUTHENTICATED, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { imapProtocol } from '../protocol.js';
import { atom, type ImapValue } from '../wire/values.js';

/** A matcher for a LIST pattern: `*` matches anything, `%` anything but the delimiter. */
export function patternMatcher(pattern: string, delimiter: string): (name: string) => boolean {
  // INBOX is case-insensitive, so a pattern that starts with it in any case means INBOX.
  if (/^inbox/i.test(pattern)) pattern = 'INBOX' + pattern.slice(5);
  let source = '';
  for (const c of pattern) {
    if (c === '*') source += '.*';
    else if (c === '%') source += `[^${escape(delimiter)}]*`;
    else source += escape(c);
  }
  const re = new RegExp(`^${source}$`, 's');
  return (name) => re.test(name);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** The full pattern of `LIST reference pattern`. */
function joinReference(reference: string, pattern: string, delimiter: string): string {
  if (reference === '' || pattern.startsWith(delimiter)) return pattern;
  return reference + pattern;
}

function listAttributes(store: Store, path: string, withChildren: boolean): string[] {
  const mailbox = store.get(path);
  if (!mailbox) return ['\\NonExistent'];
  const attrs = [...mailbox.attributes];
  if (withChildren) attrs.push(store.hasChildren(mailbox) ? '\\HasChildren' : '\\HasNoChildren');
  return attrs;
}

function run(ctx: CommandContext, lsub: boolean): CommandResult {
  const { session, args } = ctx;
  const reference = args.mailbox({ pattern: true });
  args.sp();
  const pattern = args.listMailbox();
  args.end();
  const store = session.server.store;
  const protocol = imapProtocol(session.server);
  const name = lsub ? 'LSUB' : 'LIST';
  const delimiter = store.delimiterFor(reference || pattern);
  if (pattern === '') {
    // The hierarchy delimiter and root of the reference (RFC 3501 §6.3.8).
    const root = reference === '' ? '' : reference.split(delimiter)[0] + (reference.includes(delimiter) ? delimiter : '');
    session.untagged(atom(name), [atom('\\Noselect')], delimiter, root);
    return ok(`${name} completed`);
  }
  const matches = patternMatcher(joinReference(reference, pattern, delimiter), delimiter);
  const names = lsub ? store.subscribedNames() : store.list().map((m) => m.path);
  const withChildren = protocol.has('CHILDREN');
  for (const path of names) {
    if (!matches(path)) continue;
    const attrs: ImapValue[] = lsub
      ? store.has(path)
        ? store.get(path)!.attributes.map(atom)
        : []
      : listAttributes(store, path, withChildren).map(atom);
    session.untagged(atom(name), attrs, store.delimiterFor(path), path);
  }
  return ok(`${name} completed`);
}

export const list: CommandSpec = { name: 'LIST', states: AUTHENTICATED, run: (ctx) => run(ctx, false) };
export const lsub: CommandSpec = { name: 'LSUB', states: AUTHENTICATED, run: (ctx) => run(ctx, true) };

/** LIST and LSUB (RFC 3501 §6.3.8-9) with `*` and `%` wildcards. */
import { isValidMutf7 } from '../../store/mutf7.js';
import type { Store } from '../../store/store.js';
import { AUTHENTICATED, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import { imapProtocol } from '../protocol.js';
import { atom, type ImapValue } from '../wire/values.js';

/** "INBOX" in every mix of case, for matching INBOX case-insensitively. */
const INBOX_CASES: string[] = [];
for (let bits = 0; bits < 32; bits++) {
  INBOX_CASES.push([...'INBOX'].map((c, i) => (bits & (1 << i) ? c.toLowerCase() : c)).join(''));
}

/**
 * A matcher for a LIST pattern: `*` matches anything, `%` anything but the
 * delimiter. Names match case-sensitively, except INBOX (the name and the
 * first level of its children), which matches in any case (RFC 3501
 * §5.1): `inbox*` and `in%` list INBOX, while `inboxes` lists only a
 * mailbox called "inboxes", never "INBOXES".
 */
export function patternMatcher(pattern: string, delimiter: string): (name: string) => boolean {
  let source = '';
  for (const c of pattern) {
    if (c === '*') source += '.*';
    else if (c === '%') source += `[^${escape(delimiter)}]*`;
    else source += escape(c);
  }
  const re = new RegExp(`^${source}$`, 's');
  return (name) => {
    if (re.test(name)) return true;
    if (!name.startsWith('INBOX') || (name.length > 5 && !name.startsWith(delimiter, 5))) return false;
    const rest = name.slice(5);
    return INBOX_CASES.some((inbox) => re.test(inbox + rest));
  };
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

/**
 * The hierarchy levels above `path` (`a/b/c` → `a`, `a/b`), the levels a
 * `%` can stop at when the name itself is deeper than the pattern reaches.
 */
function levelsAbove(path: string, delimiter: string): string[] {
  const out: string[] = [];
  if (delimiter === '') return out;
  for (let at = path.indexOf(delimiter, 1); at > 0 && at < path.length - delimiter.length; at = path.indexOf(delimiter, at + delimiter.length)) {
    out.push(path.slice(0, at));
  }
  return out;
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
  // Mailbox names are modified UTF-7, so a reference or pattern that is not
  // (wildcards aside) names nothing: no match, and no error (it is a
  // well-formed list-mailbox).
  if (!isValidMutf7(reference) || !isValidMutf7(pattern)) return ok(`${name} completed`);
  // `%` stops at the delimiter of the namespace each name lives in.
  const full = joinReference(reference, pattern, delimiter);
  const matchers = new Map<string, (name: string) => boolean>();
  const matchesWith = (path: string, sep: string): boolean => {
    let m = matchers.get(sep);
    if (!m) matchers.set(sep, (m = patternMatcher(full, sep)));
    return m(path);
  };
  const matches = (path: string): boolean => matchesWith(path, store.delimiterFor(path));
  const names = lsub ? store.subscribedNames() : store.list().map((m) => m.path);
  const withChildren = protocol.has('CHILDREN');
  const found = new Map<string, { attrs: ImapValue[]; delimiter: string }>();
  for (const path of names) {
    if (matches(path)) {
      const attrs: ImapValue[] = lsub
        ? store.has(path)
          ? store.get(path)!.attributes.map(atom)
          : []
        : listAttributes(store, path, withChildren).map(atom);
      found.set(path, { attrs, delimiter: store.delimiterFor(path) });
    }
  }
  // A `%` stops at hierarchy levels that are not themselves listed: LIST
  // returns such a level as \Noselect (RFC 3501 §6.3.8), and so does LSUB
  // for an unsubscribed parent of a subscribed child (§6.3.9: "foo", not
  // "foo/bar", flagged \Noselect).
  if (pattern.includes('%')) {
    const listed = new Set(names);
    for (const path of names) {
      const sep = store.delimiterFor(path);
      for (const level of levelsAbove(path, sep)) {
        if (listed.has(level) || found.has(level) || !matchesWith(level, sep)) continue;
        const attrs = [atom('\\Noselect')];
        if (!lsub && withChildren) attrs.push(atom('\\HasChildren'));
        found.set(level, { attrs, delimiter: sep });
      }
    }
  }
  const ordered = [...found.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const path of ordered) {
    const entry = found.get(path)!;
    session.untagged(atom(name), entry.attrs, entry.delimiter, path);
  }
  return ok(`${name} completed`);
}

export const list: CommandSpec = { name: 'LIST', states: AUTHENTICATED, run: (ctx) => run(ctx, false) };
export const lsub: CommandSpec = { name: 'LSUB', states: AUTHENTICATED, run: (ctx) => run(ctx, true) };

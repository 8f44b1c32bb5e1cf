/**
 * LIST and LSUB (RFC 3501 §6.3.8-9) with `*` and `%` wildcards, and the
 * LIST-EXTENDED syntax (RFC 5258): selection options, several patterns,
 * RETURN options. The core serves the SUBSCRIBED, REMOTE and RECURSIVEMATCH
 * selection options and the SUBSCRIBED and CHILDREN return options;
 * extensions add others, attributes and responses after each line.
 * Mailboxes the access point hides (`l`) are not listed.
 */
import type { ListContext, ListEntry } from '../../extensions/extension.js';
import type { Mailbox } from '../../store/mailbox.js';
import { decodeMutf7, isValidMutf7 } from '../../store/mutf7.js';
import type { MailboxView } from '../../store/view.js';
import { AUTHENTICATED, failBad, ok, type CommandContext, type CommandResult, type CommandSpec } from '../command.js';
import type { ArgParser } from '../parser.js';
import { accessRefusal, imapProtocol } from '../protocol.js';
import { atom, utf8Text, type ImapValue } from '../wire/values.js';

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

/**
 * `\HasChildren` or `\HasNoChildren` for a LIST entry (RFC 3348, RFC 5258
 * CHILDREN return option). `ctx.hasChildren`, where the LIST gives it,
 * counts only children the user may list (RFC 4314: a hidden mailbox must
 * not show, not even as a `\HasChildren`) and answers in O(1).
 */
export function childAttributes(store: MailboxView, entry: ListEntry, ctx?: Pick<ListContext, 'hasChildren'>): string[] {
  if (ctx?.hasChildren && entry.mailbox !== null) return [ctx.hasChildren(entry.path) ? '\\HasChildren' : '\\HasNoChildren'];
  if (entry.mailbox === null) {
    // A level that is no mailbox: children below it under any namespace's separator.
    const prefixes = [...new Set(store.namespaces.map((ns) => entry.path + ns.separator))];
    return [store.list().some((m) => prefixes.some((p) => store.nameOf(m).startsWith(p))) ? '\\HasChildren' : '\\HasNoChildren'];
  }
  return [store.hasChildren(entry.mailbox) ? '\\HasChildren' : '\\HasNoChildren'];
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

/** LIST-EXTENDED (RFC 5258) parts of a LIST command; all empty for the basic form. */
interface ListRequest {
  reference: string;
  patterns: string[];
  selection: Set<string>;
  returns: Set<string>;
  /** Arguments of return options that take some (LIST-STATUS's `STATUS (...)`). */
  returnArguments: Map<string, unknown>;
  extended: boolean;
}

function readOptions(args: ArgParser, known: ReadonlySet<string>, what: string, readArguments?: (option: string) => void): Set<string> {
  const out = new Set<string>();
  args.list(() => {
    const option = args.atom().toUpperCase();
    if (!known.has(option)) failBad(`Unknown LIST ${what} option ${option.slice(0, 40)}`);
    out.add(option);
    readArguments?.(option);
  });
  return out;
}

function readList(ctx: CommandContext, lsub: boolean): ListRequest {
  const { args, session } = ctx;
  const protocol = imapProtocol(session.server);
  let selection = new Set<string>();
  let extended = false;
  if (!lsub && args.peekChar() === '(') {
    selection = readOptions(args, protocol.listSelection, 'selection');
    extended = true;
    args.sp();
  }
  const reference = args.mailbox({ pattern: true });
  args.sp();
  let patterns: string[];
  if (!lsub && args.peekChar() === '(') {
    patterns = args.list(() => args.listMailbox(), { allowEmpty: false });
    extended = true;
  } else patterns = [args.listMailbox()];
  let returns = new Set<string>();
  const returnArguments = new Map<string, unknown>();
  if (!lsub && !args.atEnd()) {
    args.sp();
    args.keyword('RETURN');
    args.sp();
    returns = readOptions(args, protocol.listReturn, 'return', (option) => {
      const value = protocol.listReturnArguments(option, args);
      if (value !== undefined) returnArguments.set(option, value);
    });
    extended = true;
  }
  args.end();
  // RFC 5258 §3.1: RECURSIVEMATCH modifies a base option (SUBSCRIBED, SPECIAL-USE); REMOTE is independent and is none.
  if (selection.has('RECURSIVEMATCH') && ![...selection].some((o) => o !== 'RECURSIVEMATCH' && o !== 'REMOTE')) {
    failBad('RECURSIVEMATCH needs a base selection option such as SUBSCRIBED');
  }
  // RFC 5258 §3: the SUBSCRIBED selection option implies the SUBSCRIBED return option.
  if (selection.has('SUBSCRIBED')) returns.add('SUBSCRIBED');
  return { reference, patterns, selection, returns, returnArguments, extended };
}

function run(ctx: CommandContext, lsub: boolean): CommandResult {
  const { session } = ctx;
  const request = readList(ctx, lsub);
  const { reference, selection, returns } = request;
  const store = session.mailboxes;
  const protocol = imapProtocol(session.server);
  const name = lsub ? 'LSUB' : 'LIST';
  // Paths with at least one child the user may list, found once per LIST (not once per line).
  let parents: Set<string> | null = null;
  const hasChildren = (path: string): boolean => {
    if (parents === null) {
      parents = new Set();
      for (const m of store.list()) {
        const name = store.nameOf(m);
        if (accessRefusal(session, 'l', m, name, ctx.name) !== null) continue;
        for (let up = store.parentOf(name); up !== null && !parents.has(up); up = store.parentOf(up)) parents.add(up);
      }
    }
    return parents.has(path);
  };
  const listCtx: ListContext = { session, lsub, selection, returns, returnArguments: request.returnArguments, hasChildren };
  if (request.patterns.length === 1 && request.patterns[0] === '' && !request.extended) {
    // The hierarchy delimiter and root of the reference (RFC 3501 §6.3.8).
    const delimiter = store.delimiterFor(reference);
    const root = reference === '' ? '' : reference.split(delimiter)[0] + (reference.includes(delimiter) ? delimiter : '');
    session.untagged(atom(name), [atom('\\Noselect')], delimiter, protocol.utf8(session) ? utf8Text(root) : root);
    return ok(`${name} completed`);
  }
  // Mailbox names are modified UTF-7, so a reference or pattern that is not
  // (wildcards aside) names nothing: no match, and no error (it is a
  // well-formed list-mailbox).
  // A session that speaks UTF-8 (RFC 6855) gives UTF-8 patterns: they match the names' UTF-8 form.
  const utf8 = protocol.utf8(session);
  const shown = (path: string): string => (utf8 ? (decodeMutf7(path) ?? path) : path);
  const patterns = request.patterns.filter((p) => p !== '' && (utf8 || isValidMutf7(p)));
  if ((!utf8 && !isValidMutf7(reference)) || patterns.length === 0) return ok(`${name} completed`);
  // `%` stops at the delimiter of the namespace each name lives in.
  const matchers = new Map<string, ((name: string) => boolean)[]>();
  const matchesWith = (path: string, sep: string): boolean => {
    let m = matchers.get(sep);
    if (!m) matchers.set(sep, (m = patterns.map((p) => patternMatcher(joinReference(reference, p, store.delimiterFor(reference || p)), sep))));
    const wire = shown(path);
    return m.some((f) => f(wire));
  };
  const matches = (path: string): boolean => matchesWith(path, store.delimiterFor(path));
  const bySubscription = lsub || selection.has('SUBSCRIBED');
  const names = bySubscription ? store.subscribedNames() : store.list().map((m) => store.nameOf(m));
  const visible = (mailbox: Mailbox | null, path: string): boolean => mailbox === null || accessRefusal(session, 'l', mailbox, path, ctx.name) === null;
  const withChildren = returns.has('CHILDREN');
  const found = new Map<string, { entry: ListEntry; attrs: string[]; delimiter: string; childInfo: boolean }>();
  for (const path of names) {
    if (!matches(path)) continue;
    const mailbox = store.get(path) ?? null;
    if (!visible(mailbox, path)) continue;
    const entry: ListEntry = { path, mailbox };
    let attrs: string[];
    if (lsub) attrs = mailbox ? [...mailbox.attributes] : [];
    else {
      attrs = mailbox ? [...mailbox.attributes] : ['\\NonExistent'];
      if (withChildren) attrs.push(...childAttributes(store, entry, listCtx));
      if (returns.has('SUBSCRIBED') && store.isSubscribed(path)) attrs.push('\\Subscribed');
    }
    found.set(path, { entry, attrs, delimiter: store.delimiterFor(path), childInfo: false });
  }
  // A `%` stops at hierarchy levels that are not themselves listed: LIST
  // returns such a level as \Noselect (RFC 3501 §6.3.8), and so does LSUB
  // for an unsubscribed parent of a subscribed child (§6.3.9: "foo", not
  // "foo/bar", flagged \Noselect).
  const listed = new Set(names);
  // With the SUBSCRIBED selection option a parent that is not itself subscribed is listed only
  // under RECURSIVEMATCH, with CHILDINFO (RFC 5258 §3, below).
  if (patterns.some((p) => p.includes('%')) && !selection.has('SUBSCRIBED')) {
    for (const path of names) {
      // Only a name the user may list makes its levels appear.
      if (!visible(store.get(path) ?? null, path)) continue;
      const sep = store.delimiterFor(path);
      for (const level of levelsAbove(path, sep)) {
        if (found.has(level) || !matchesWith(level, sep)) continue;
        // A mailbox the user may not list is, for this user, a level that does not exist (RFC 4314 §4).
        const existing = store.get(level) ?? null;
        if (listed.has(level) && (existing === null || visible(existing, level))) continue;
        const mailbox = existing !== null && visible(existing, level) ? existing : null;
        const entry: ListEntry = { path: level, mailbox };
        const attrs = ['\\Noselect'];
        if (!lsub && withChildren) attrs.push('\\HasChildren');
        found.set(level, { entry, attrs, delimiter: sep, childInfo: false });
      }
    }
  }
  // RECURSIVEMATCH with SUBSCRIBED (RFC 5258 §3.5): CHILDINFO ("SUBSCRIBED") says a listed
  // mailbox has a subscribed descendant. A level that is not itself subscribed is listed for
  // it only when such a descendant is not listed itself (it does not match the pattern): a
  // line there would be redundant (§3.5 SHOULD, Example 9's Baz2).
  if (selection.has('RECURSIVEMATCH') && selection.has('SUBSCRIBED')) {
    const listedItself = new Set(found.keys());
    for (const path of names) {
      if (!visible(store.get(path) ?? null, path)) continue;
      const sep = store.delimiterFor(path);
      for (const level of levelsAbove(path, sep)) {
        if (!matchesWith(level, sep)) continue;
        const existing = found.get(level);
        if (existing) {
          existing.childInfo = true;
          continue;
        }
        if (listedItself.has(path)) continue;
        const mailbox = store.get(level) ?? null;
        if (!visible(mailbox, level)) continue;
        const attrs = mailbox ? [...mailbox.attributes] : ['\\NonExistent'];
        if (withChildren) attrs.push('\\HasChildren');
        found.set(level, { entry: { path: level, mailbox }, attrs, delimiter: sep, childInfo: true });
      }
    }
  }
  const ordered = [...found.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const path of ordered) {
    const item = found.get(path)!;
    if (!protocol.listFilter(item.entry, listCtx)) continue;
    const attrs = withoutRedundantChildFlag(mergeAttributes(item.attrs, protocol.listAttributes(item.entry, listCtx)));
    const line: ImapValue[] = [atom(name), attrs.map(atom), item.delimiter, session.mailboxName(path)];
    if (item.childInfo) line.push(['CHILDINFO', ['SUBSCRIBED']]);
    session.untaggedList(line);
    for (const response of protocol.listResponses(item.entry, listCtx)) session.untaggedList(response);
  }
  return ok(`${name} completed`);
}

/** `\Noinferiors` implies `\HasNoChildren`, which is then left out (RFC 5258 §4, Example 3). */
export function withoutRedundantChildFlag(attrs: string[]): string[] {
  if (!attrs.some((a) => a.toLowerCase() === '\\noinferiors')) return attrs;
  return attrs.filter((a) => a.toLowerCase() !== '\\hasnochildren');
}

/** Attributes without duplicates (case-insensitive), first spelling kept. */
function mergeAttributes(core: readonly string[], more: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const a of [...core, ...more]) {
    const key = a.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(a);
  }
  return out;
}

export const list: CommandSpec = { name: 'LIST', states: AUTHENTICATED, run: (ctx) => run(ctx, false) };
export const lsub: CommandSpec = { name: 'LSUB', states: AUTHENTICATED, run: (ctx) => run(ctx, true) };

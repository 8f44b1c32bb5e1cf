/**
 * The extension interface: one object per extension, each point a plain
 * typed field. Built-in extensions (one folder each under
 * `src/extensions/<name>/`) and users' plugin objects use the same shape.
 * The core (`src/imap/commands`, `src/store`, `src/control`) calls the points
 * through the server's protocol (`src/imap/protocol.ts`) and never names an
 * extension. See docs/extensions.md for a walk-through and an example.
 *
 * Rules every point follows:
 * - Loading order never changes behaviour. Extensions are applied in one
 *   canonical order (built-ins in catalog order, then plugin objects by
 *   name); where several extensions answer one question the combination is
 *   order-free (access: any deny wins; checks: every check runs, the first
 *   failure in canonical order is reported; attributes and capabilities are
 *   merged without duplicates). Two extensions adding the same command,
 *   FETCH item, SEARCH key, STATUS item, LIST option, APPEND data form or
 *   REST route is a construction error.
 * - Per-server state lives in what `setup` returns, never in module
 *   globals: two servers in one process never share it.
 * - `state` is the value `setup` returned for this server (undefined without
 *   `setup`). Methods get it as their last argument.
 */
import type { CommandContext, CommandResult, CommandSpec } from '../imap/command.js';
import type { ArgParser, FetchItemArguments } from '../imap/parser.js';
import type { SelectedMailbox } from '../imap/selected.js';
import type { Numbered } from '../imap/sequence.js';
import type { FetchAttribute, SearchKey, SequenceSet } from '../imap/syntax.js';
import type { ImapSession } from '../imap/session.js';
import type { ImapValue } from '../imap/wire/values.js';
import type { Route } from '../rest/route.js';
import type { Schema } from '../rest/schema.js';
import type { Server } from '../server.js';
import type { StoreChange } from '../store/changes.js';
import type { Mailbox } from '../store/mailbox.js';
import type { Message } from '../store/message.js';
import type { FlagMode } from '../store/store.js';

/** RFC 4314 rights, as the core asks for them (see `Extension.access`). */
export type Right = 'l' | 'r' | 's' | 'w' | 'i' | 'p' | 'k' | 'x' | 't' | 'e' | 'a';

/** What `setup` gets: the server being built and this plugin's validated `pluginOptions` entry. */
export interface SetupContext<Options = Record<string, unknown>> {
  readonly server: Server;
  /** `pluginOptions[name]` after validation against `Extension.options` (a deep copy; `{}` when not given). */
  readonly options: Options;
}

/**
 * Wraps a command (core or another extension's): `next()` runs the wrapped
 * command with the same context (its arguments not yet read). Wrappers of one
 * command nest in canonical order, the first extension outermost.
 */
export interface CommandWrapper<S = unknown> {
  /** Command name as registered: `SELECT`, `UID FETCH`, ... */
  command: string;
  /**
   * True: wrap the command only when a loaded extension provides it (QRESYNC
   * wraps UID EXPUNGE, which exists only with UIDPLUS). Otherwise wrapping a
   * command nobody provides is a construction error.
   */
  ifLoaded?: boolean;
  run(ctx: CommandContext, next: () => Promise<CommandResult>, state: S): CommandResult | Promise<CommandResult>;
}

/** Where FETCH items, SEARCH keys and flag changes happen: the selected mailbox of a session. */
export interface SelectedContext {
  readonly session: ImapSession;
  readonly selected: SelectedMailbox;
}

/** Where a FETCH item is answered: the selected mailbox, and what the item's `parse` read. */
export interface FetchItemContext extends SelectedContext {
  /** `FetchItemRequest.data` of this occurrence of the item (undefined for an item without `parse`). */
  readonly data: unknown;
}

/**
 * A FETCH data item (`FETCH 1 (X-ITEM)`), answered as `X-ITEM <value>`.
 * With `parse` it takes arguments (`BINARY[1.2]<0.100>`, `PREVIEW (LAZY)`):
 * each occurrence in a FETCH is parsed once, before any message is read.
 */
export interface FetchItem<S = unknown> {
  /** Upper-case item name: the characters before any `[`, `<` or space (`BINARY.PEEK`). */
  name: string;
  /**
   * Reads the item's arguments; the cursor is right after the name (at `[`,
   * `<`, or the space before a parenthesized list). Throw a `ParseError`
   * (e.g. via the parser's own methods) for a BAD. Without `parse` the item
   * takes no arguments and `[`/`<` after it is BAD.
   */
  parse?(args: ArgParser, state: S): FetchItemRequest;
  /**
   * The value for one message. It may throw a `CommandFailure`
   * (`src/imap/command.ts`): the FETCH then ends with that result (BINARY's
   * `NO [UNKNOWN-CTE]`); responses already sent for earlier messages stay
   * sent, the failing message gets none.
   */
  value(message: Message, ctx: FetchItemContext, state: S): ImapValue;
}

/**
 * What `FetchItem.parse` read: `data` (handed to `value` as `ctx.data`),
 * `label` (the item's name in the response, `BINARY[1]<0>` for
 * `BINARY.PEEK[1]<0.10>`; default the name) and `setsSeen` (reading the item
 * sets `\Seen` as `BODY[...]` does: only in a read-write selection and with
 * the ACL `s` right; the new flags are reported).
 */
export type FetchItemRequest = FetchItemArguments;

/** A SEARCH key. */
export interface SearchKeySpec<S = unknown> {
  /** Upper-case key name. */
  name: string;
  /** Reads the key's arguments; the cursor is right after the name. Default: no arguments. */
  parse?(args: ArgParser): unknown;
  /** `data` is what `parse` returned. */
  matches(message: Message, data: unknown, ctx: SelectedContext, state: S): boolean;
  /**
   * The answer changes with the server clock alone (WITHIN's OLDER/YOUNGER):
   * results kept live (CONTEXT) are searched again as time passes, not
   * only when the mailbox changes.
   */
  timeDependent?: boolean;
}

/** A SEARCH being answered with result options (`SEARCH RETURN (MIN COUNT) ...`, RFC 4466 §2.6). */
export interface SearchResultContext {
  readonly session: ImapSession;
  readonly selected: SelectedMailbox;
  readonly tag: string;
  /** The command's name, upper case: `SEARCH`, `UID SEARCH`, `SORT`, `UID SORT`. */
  readonly command: string;
  /** True for UID SEARCH. */
  readonly uid: boolean;
  /** The result options given, upper case; empty for `RETURN ()`. */
  readonly options: ReadonlySet<string>;
  /** What `SearchPoint.parseReturnOption` read for options with arguments (PARTIAL's range), by option. */
  readonly returnArguments: ReadonlyMap<string, unknown>;
  /** The parsed criteria. */
  readonly criteria: SearchKey;
  /**
   * Runs the same command's search again over the session's current view:
   * the matches in the command's order (sort order for SORT), null when it
   * can no longer run (access lost). For results kept up to date (CONTEXT,
   * RFC 5267 §4); it costs what the command cost.
   */
  readonly rerun: () => readonly SearchMatch[] | null;
  /**
   * The matching messages of the session's view, in the command's order:
   * ascending for SEARCH, the sort order for SORT (ESORT, RFC 5267 §3: MIN
   * and MAX are the first and last of that order, ALL lists it). Null when
   * the command fails with NO (BADCHARSET, access) after its options were read.
   */
  readonly found: readonly SearchMatch[] | null;
}

/** A matching message of a SEARCH with its sequence number in the session's view. */
export interface SearchMatch {
  readonly seq: number;
  readonly message: Message;
}

/** ESEARCH data items an extension adds for its result options (`PARTIAL (1:10 4,9)`), for `SearchPoint.resultItems`. */
export interface SearchResultItems {
  /** `name value` pairs, in order. */
  readonly items: readonly ImapValue[];
  /** The messages these items return (CONDSTORE's MODSEQ counts them). */
  readonly returned: readonly SearchMatch[];
}

/** SEARCH result options (ESEARCH, SEARCHRES). */
export interface SearchPoint<S = unknown> {
  /**
   * Result options this extension adds. While any extension adds some, SEARCH
   * and UID SEARCH accept `RETURN (options)` before the criteria; a SEARCH
   * with it sends no `* SEARCH` line: the extensions answer.
   */
  returnOptions?: readonly string[];
  /**
   * Reads the arguments of one of this extension's result options right
   * after its name (`PARTIAL 1:10`); the value lands in
   * `SearchResultContext.returnArguments`. Without it the options take none.
   * Throw `failBad` for bad ones.
   */
  parseReturnOption?(option: string, args: ArgParser, state: S): unknown;
  /** BAD text when the result options given cannot go together (PARTIAL with ALL), checked before the search runs. */
  refuseReturnOptions?(options: ReadonlySet<string>, ctx: { readonly session: ImapSession; readonly tag: string; readonly command: string }, state: S): string | undefined;
  /**
   * ESEARCH data items for this extension's result options, put by ESEARCH
   * into its one `* ESEARCH` response after MIN/MAX/ALL/COUNT; undefined
   * adds none. An ESEARCH response is sent when any extension gives items.
   */
  resultItems?(ctx: SearchResultContext, state: S): SearchResultItems | undefined;
  /** Called for each SEARCH that had `RETURN (...)` (every such extension, canonical order). */
  results?(ctx: SearchResultContext, state: S): void;
  /** The `$` sequence set (RFC 5182) may be used in SEARCH; without it `$` in a SEARCH is BAD. */
  resultVariable?: boolean;
  /**
   * Items appended to a `* SEARCH` line (CONDSTORE's `(MODSEQ n)` when the
   * criteria used MODSEQ), as values; undefined adds none. Called for every
   * SEARCH answered with `* SEARCH`.
   */
  responseItems?(ctx: SearchAnswerContext, state: S): readonly ImapValue[] | undefined;
}

/** A SEARCH answered with a `* SEARCH` line, for `SearchPoint.responseItems`. */
export interface SearchAnswerContext {
  readonly session: ImapSession;
  readonly selected: SelectedMailbox;
  /** The parsed criteria. */
  readonly criteria: SearchKey;
  /** The matching messages, ascending. */
  readonly found: readonly { seq: number; message: Message }[];
}

/** A STATUS item (`STATUS box (X-ITEM)`). */
export interface StatusItem<S = unknown> {
  /** Upper-case item name. */
  name: string;
  /**
   * The value (a number, null for NIL, or any other value such as OBJECTID's
   * `(id)` list), or undefined to leave the item out of the answer.
   */
  /**
   * `asked`: the client named the item (STATUS, LIST-STATUS); false when the
   * server sends it on its own (NOTIFY's STATUS of a watched mailbox), so an
   * item whose request changes the session (CONDSTORE's HIGHESTMODSEQ turns
   * CONDSTORE on, RFC 7162 §3.1) changes it only when asked.
   */
  value(mailbox: Mailbox, session: ImapSession, state: S, asked: boolean): ImapValue | undefined;
}

/** One LIST/LSUB answer line being built. */
export interface ListEntry {
  path: string;
  /** Null for a hierarchy level that is no mailbox (listed as `\Noselect` or `\NonExistent`). */
  mailbox: Mailbox | null;
}

/** The LIST command being answered (RFC 5258 LIST-EXTENDED syntax is always parsed). */
export interface ListContext {
  readonly session: ImapSession;
  readonly lsub: boolean;
  /** Selection options, upper case (`SPECIAL-USE`, `SUBSCRIBED`). */
  readonly selection: ReadonlySet<string>;
  /** Return options, upper case (`SPECIAL-USE`, `MYRIGHTS`, `CHILDREN`). */
  readonly returns: ReadonlySet<string>;
  /** What `ListPoint.parseReturnOption` read for a return option with arguments (`STATUS (MESSAGES)`), by option. */
  readonly returnArguments?: ReadonlyMap<string, unknown>;
  /** Whether a path has a child this user may list (access `l`); computed once per LIST. */
  readonly hasChildren?: (path: string) => boolean;
}

/** LIST and LSUB points. */
export interface ListPoint<S = unknown> {
  /** Selection options (`LIST (SPECIAL-USE) "" *`) this extension adds; others are BAD. */
  selectionOptions?: readonly string[];
  /** Return options (`LIST "" * RETURN (SPECIAL-USE)`) this extension adds. */
  returnOptions?: readonly string[];
  /**
   * Reads the arguments of one of this extension's return options (RFC 5258
   * `return-option = option-extension`, e.g. LIST-STATUS's `STATUS (MESSAGES)`);
   * the cursor is right after the option name. Without it the options take
   * none. The result is in `ListContext.returnArguments`.
   */
  parseReturnOption?(option: string, args: ArgParser, state: S): unknown;
  /**
   * Filter for this extension's selection options: called only when one of
   * them was given; false drops the entry.
   */
  select?(entry: ListEntry, ctx: ListContext, state: S): boolean;
  /** Mailbox attributes added to the entry's line (merged case-insensitively, core ones first). */
  attributes?(entry: ListEntry, ctx: ListContext, state: S): readonly string[];
  /** Untagged responses sent right after the entry's line (e.g. `MYRIGHTS`), as value lists without `*`. */
  responses?(entry: ListEntry, ctx: ListContext, state: S): readonly (readonly ImapValue[])[];
}

/** A command parameter (RFC 4466): `SELECT box (CONDSTORE)`, `CREATE box (USE (\\Sent))`. */
export interface CommandParameter {
  /** Upper-case name. */
  name: string;
  /** Reads the parameter's value after `name SP`; without it the parameter takes none. */
  parse?(args: ArgParser): unknown;
}

/** SELECT and EXAMINE points. */
export interface SelectPoint<S = unknown> {
  parameters?: readonly CommandParameter[];
  /** True makes a SELECT read-only (`[READ-ONLY]`), e.g. for a user without write rights. */
  readOnly?(session: ImapSession, mailbox: Mailbox, state: S): boolean;
  /** Untagged responses sent when a SELECT/EXAMINE ends the session's previous selection (`OK [CLOSED]`), before anything else. */
  closing?(session: ImapSession, state: S): readonly (readonly ImapValue[])[];
  /** A reason to answer BAD before anything is selected (QRESYNC given without ENABLE QRESYNC), or undefined. */
  refuse?(session: ImapSession, params: ReadonlyMap<string, unknown>, state: S): string | undefined;
  /**
   * Untagged responses after the core ones (`OK [HIGHESTMODSEQ n]`), as value
   * lists without `*`. `params` holds the given parameters by upper-case name.
   */
  responses?(session: ImapSession, selected: SelectedMailbox, params: ReadonlyMap<string, unknown>, state: S): readonly (readonly ImapValue[])[];
}

/** A FETCH being run, for the `fetch` point (after its arguments and modifiers were read). */
export interface FetchContext {
  readonly session: ImapSession;
  readonly selected: SelectedMailbox;
  /** True for UID FETCH. */
  readonly uid: boolean;
  readonly set: SequenceSet;
  /** The items asked for (UID first for UID FETCH). */
  readonly items: readonly FetchAttribute[];
  /** Modifiers given (`(CHANGEDSINCE 7)`) by upper-case name, as their `parse` returned them. */
  readonly params: ReadonlyMap<string, unknown>;
  /** The core's resolution of `set` against the view (O(set)); a plan may use it or choose its own targets. */
  resolve(): Numbered[];
}

/** What a `fetch` point changes about one FETCH; every field optional. */
export interface FetchPlan {
  /** The messages to answer for, in ascending order (instead of the whole set). */
  targets?: Numbered[];
  /** Items to answer with (instead of those asked for), e.g. with MODSEQ added. */
  items?: FetchAttribute[];
  /** Untagged responses before the FETCH responses (`VANISHED (EARLIER) 3:5`), as value lists without `*`. */
  responses?: readonly (readonly ImapValue[])[];
}

/** FETCH points: modifiers after the item list (RFC 4466 `fetch-modifiers`). */
export interface FetchPoint<S = unknown> {
  modifiers?: readonly CommandParameter[];
  /** Called for every FETCH (modifiers given or not); undefined changes nothing. */
  plan?(ctx: FetchContext, state: S): FetchPlan | undefined;
}

/** A STORE being run, for the `store` point. */
export interface StoreContext {
  readonly session: ImapSession;
  readonly selected: SelectedMailbox;
  readonly uid: boolean;
  /** The messages the STORE names (those expunged elsewhere left out). */
  readonly targets: readonly Numbered[];
  /** Modifiers given (`(UNCHANGEDSINCE 7)`) by upper-case name. */
  readonly params: ReadonlyMap<string, unknown>;
}

/** A STORE with an extension's data item (`STORE 1 +X-GM-LABELS (foo)`), after the core resolved its messages. */
export interface StoreItemContext {
  readonly session: ImapSession;
  readonly selected: SelectedMailbox;
  /** Command name (`UID STORE`). */
  readonly command: string;
  readonly uid: boolean;
  /** The messages to change (those expunged elsewhere and those a `store` filter kept back left out). */
  readonly targets: readonly Numbered[];
  /** `+NAME` adds, `-NAME` removes, `NAME` replaces. */
  readonly mode: FlagMode;
  /** `NAME.SILENT`: the core sends no FETCH answer. */
  readonly silent: boolean;
  /** What `StoreItem.parse` read. */
  readonly value: unknown;
}

/**
 * A STORE data item besides FLAGS (`[+-]NAME[.SILENT] value`). The core
 * reads the modifiers, the set and the item name, refuses it in a read-only
 * selection, runs the `store` filters, then calls `apply`. Unless `.SILENT`
 * it answers each target with `FETCH (NAME value)` (with UID for UID STORE)
 * from the FETCH item of the same name, which the extension must add.
 */
export interface StoreItem<S = unknown> {
  /** Upper-case item name without `+`/`-` and `.SILENT`. */
  name: string;
  /** Reads the value after `NAME SP` (the cursor is there); the core checks the end of the line. */
  parse(args: ArgParser): unknown;
  /** Changes the messages; a result (NO) ends the command with it, undefined answers OK. */
  apply(ctx: StoreItemContext, state: S): CommandResult | undefined;
}

/** STORE points: modifiers before the item (RFC 4466 `store-modifiers`). */
export interface StorePoint<S = unknown> {
  modifiers?: readonly CommandParameter[];
  /** STORE data items besides FLAGS (X-GM-LABELS). */
  items?: readonly StoreItem<S>[];
  /**
   * Leaves some messages unchanged: returns those the STORE may change; the
   * others are reported in the tagged OK as `[MODIFIED set]` (UIDs for UID
   * STORE). Undefined changes nothing. After a filter ran, even a `.SILENT`
   * STORE answers each changed message with `FETCH (UID n <update items>)`
   * when the `updates` points add items (CONDSTORE's MODSEQ).
   */
  filter?(ctx: StoreContext, state: S): readonly Numbered[] | undefined;
}

/**
 * How a session's untagged updates are worded (unsolicited and those
 * answering its own STORE): extra FETCH items after FLAGS (`MODSEQ (12)`),
 * UID in them, and another form for expunges (`VANISHED`).
 */
export interface UpdatePoint<S = unknown> {
  /** Extra items of a flag FETCH, and whether it carries UID (undefined: none). */
  flagFetch?(session: ImapSession, message: Message, state: S): { uid: boolean; items: readonly ImapValue[] } | undefined;
  /**
   * Words expunges of the session's view (UIDs ascending, sequence numbers
   * of the view before the expunge) as ready response text, or undefined
   * for the core's `* n EXPUNGE` lines. One loaded extension may have it.
   */
  expunges?(session: ImapSession, uids: readonly number[], state: S): string | undefined;
  /**
   * Untagged lines to send once the session's pending updates are out and
   * its view is current (CONTEXT's `* ESEARCH ... ADDTO`): after every
   * command and on every change while it idles, also when no update was
   * pending (the session's own STORE). `settled` is false while expunges
   * are held back (during FETCH, STORE, SEARCH): the view still holds
   * messages that are gone. Keep it O(1) for sessions it has nothing for.
   */
  after?(session: ImapSession, settled: boolean, state: S): readonly (readonly ImapValue[])[];
  /**
   * Untagged lines to send right before the session is told of expunges
   * (`uids`, in its view), while sequence numbers are still those of the
   * view before them (CONTEXT's REMOVEFROM of expunged messages, as
   * Dovecot sends it before the EXPUNGE).
   */
  beforeExpunges?(session: ImapSession, uids: ReadonlySet<number>, state: S): readonly (readonly ImapValue[])[];
  /**
   * Untagged responses right after the `EXISTS` that announces messages new
   * to the session's view (NOTIFY's MessageNew fetch attributes: `* 7 FETCH
   * (UID 42 ...)`), as value lists without `*`. `added` holds the new
   * messages in view order; the first has sequence number `first`, the
   * next `first + 1`, and so on (no numbered object per message: this runs
   * for every idling session of a mailbox that gains mail). Return
   * `NO_RESPONSES` (../shared.ts) rather than a new empty list.
   */
  newMessages?(session: ImapSession, first: number, added: readonly Message[], state: S): readonly (readonly ImapValue[])[];
}

/**
 * Protocol rules of one session that differ from IMAP4rev1, switched on by
 * an extension for the sessions that asked (IMAP4rev2 after `ENABLE
 * IMAP4rev2`). Every rule left out keeps the IMAP4rev1 behaviour, so a
 * session no extension answers for sees RFC 3501 exactly. The rules of
 * several extensions are OR-ed (order-free). UTF-8 names are not a rule:
 * they are the `utf8` point, shared with UTF8=ACCEPT.
 */
export interface SessionRules {
  /**
   * No `\Recent` (RFC 9051): FETCH FLAGS and SELECT/EXAMINE/unsolicited
   * `* n RECENT` leave it out; STATUS RECENT and SEARCH RECENT/NEW/OLD are BAD.
   */
  noRecent?: boolean;
  /** SELECT/EXAMINE send no `OK [UNSEEN n]` (RFC 9051 §6.3.2). */
  noUnseenCode?: boolean;
  /**
   * A SEARCH without `RETURN` is answered as `RETURN ()` (one ESEARCH with
   * ALL, no `* SEARCH`; RFC 9051 §6.4.4), while SEARCH result options exist.
   */
  searchReturnsByDefault?: boolean;
  /**
   * SEARCH may name a CHARSET while the session speaks UTF-8: RFC 9051
   * §6.4.4 keeps `CHARSET UTF-8` a MUST, where RFC 6855 alone makes any
   * CHARSET BAD after ENABLE UTF8=ACCEPT.
   */
  searchCharsetWithUtf8?: boolean;
}

/** Who asks: a session (IMAP) or null (control API and REST). */
export type Actor = ImapSession | null;

/** A message about to be added (APPEND, or the control API's addMessage with `checks: true`). */
export interface AppendCheckInput {
  mailbox: Mailbox;
  size: number;
  session: Actor;
  /** The message bytes, when the caller has them (IMAP APPEND); undefined for the control API. */
  raw?: Buffer;
  /**
   * The messages of the same APPEND checked before this one (RFC 3502
   * MULTIAPPEND): not stored yet, and stored together with this one or not
   * at all. A quota-like check counts them with this one; `{ messages: 0,
   * size: 0 }` for a single message.
   */
  before: { messages: number; size: number };
}

/** Messages about to be copied or moved. */
export interface TransferCheckInput {
  source: Mailbox;
  messages: readonly Message[];
  target: Mailbox;
  session: Actor;
}

/** A mailbox about to be created (`path` does not exist yet). */
export interface CreateCheckInput {
  path: string;
  /** CREATE parameters by upper-case name, as the owning extension's `parse` returned them (empty for the control API). */
  params: ReadonlyMap<string, unknown>;
  session: Actor;
}

/**
 * A mailbox about to be renamed over IMAP (`path` exists, `newPath` does
 * not). The store will create the missing superior levels of `newPath`;
 * renaming INBOX creates `newPath` and moves INBOX's messages into it.
 */
export interface RenameCheckInput {
  source: Mailbox;
  newPath: string;
  session: Actor;
}

/** CREATE points. */
export interface CreatePoint<S = unknown> {
  /** CREATE parameters this extension accepts (`USE` of RFC 6154); others are BAD. */
  parameters?: readonly CommandParameter[];
  /** Called after an IMAP CREATE made the mailbox (missing parents included in `created`, the named one last). */
  created?(mailbox: Mailbox, params: ReadonlyMap<string, unknown>, session: ImapSession, state: S): void;
}

/**
 * Checks before a change. Throw a ServiceError to refuse it: IMAP answers
 * `NO [<code>]` (OVERQUOTA, TOOBIG, USEATTR, ...), REST the spec's status.
 */
export interface MutationChecks<S = unknown> {
  append?(input: AppendCheckInput, state: S): void;
  copy?(input: TransferCheckInput, state: S): void;
  move?(input: TransferCheckInput, state: S): void;
  create?(input: CreateCheckInput, state: S): void;
  /** IMAP RENAME (e.g. a MAILBOX quota: the missing superior levels, or INBOX's new mailbox). */
  rename?(input: RenameCheckInput, state: S): void;
}

/** A literal announced by the client, before any of its bytes are read. */
export interface LiteralInfo {
  session: ImapSession;
  /** Upper-case command name (`APPEND`), or null when unknown. */
  command: string | null;
  size: number;
  /** 0 for the first literal of the command. */
  index: number;
  /** False for a non-synchronizing literal (`{n+}`, RFC 7888): its bytes follow without a continuation. */
  sync: boolean;
}

/** A refusal of a literal: `NO [code] text` unless `response` is `BAD` (LITERAL-'s RFC 7888 §4 `BAD [TOOBIG]`). */
export interface LiteralRefusal {
  code: string;
  text: string;
  response?: 'NO' | 'BAD';
}

/**
 * An access question. The core asks it before every mailbox operation with
 * the RFC 4314 right it needs: `l` LIST/LSUB visibility, `r`
 * SELECT/EXAMINE/STATUS/FETCH, `s` `\Seen`, `t` `\Deleted`, `w` other flags,
 * `i` APPEND/COPY/MOVE target (and `s`/`t`/`w` there for the flags the new
 * messages keep), `k` CREATE (and a RENAME target; asked of
 * the parent: `mailbox` is the parent or null at the top, `path` the parent
 * path or ""), `x` DELETE/RENAME source, `e` EXPUNGE/CLOSE/MOVE source.
 * `p` and `a` are never asked by the core (the ACL extension's own commands
 * use them).
 */
export interface AccessRequest {
  session: ImapSession;
  /** The logged-in user. */
  user: string;
  right: Right;
  mailbox: Mailbox | null;
  path: string;
  /** Command name (`UID STORE`). */
  command: string;
}

/**
 * The answer to an access question. `reveal: false` hides the mailbox:
 * the command answers as if it did not exist (`NO [NONEXISTENT]`), else
 * `NO [NOPERM]`.
 */
export type AccessVerdict = { allow: true } | { allow: false; reveal: boolean; text?: string };

/**
 * A key the extension owns in the storage option, on mailbox objects,
 * message objects or server-wide (server fields live on the personal
 * namespace object `storage[""]`). The value is kept in the store as given
 * (after `validate`), written back by snapshots and restored by reset. Read
 * and write it with `getField`/`setField` of `src/store/fields.ts`.
 */
export interface StoreField {
  /** The storage key, e.g. `acl`. Known keys take part in typo detection even when the plugin is not loaded. */
  key: string;
  /** JSON Schema of the value, for documentation. */
  schema?: Schema;
  /**
   * Checks a value from the storage option (only while the plugin is
   * loaded); `report(message)` records a problem at the key's option path.
   * Returns the value to keep (default: the value as given).
   */
  validate?(value: unknown, report: (message: string) => void): unknown;
  /**
   * Shown by the control API and REST in MailboxInfo/MessageInfo `fields`
   * (mailbox and message fields only), while the plugin is loaded: small
   * values a test wants to read back (OBJECTID's IDs, SAVEDATE's date).
   */
  shown?: boolean;
}

export interface StoreFields {
  mailbox?: readonly StoreField[];
  message?: readonly StoreField[];
  server?: readonly StoreField[];
}

/** A SASL mechanism for AUTHENTICATE (`name` without `AUTH=`). */
export interface SaslMechanism {
  name: string;
  /** Checks the decoded client response and logs the session in (session.login) or fails. */
  check(session: ImapSession, response: Buffer): CommandResult | Promise<CommandResult>;
}

/**
 * The bytes of one APPEND message given in another form than a literal,
 * made when the APPEND runs: after the whole command was read and the target
 * mailbox checked, before the checks. `build` may refuse: a ServiceError
 * answers `NO [code]`, a `CommandFailure` (src/imap/command.ts) its own
 * result (CATENATE's `NO [BADURL url]`); nothing of the APPEND is stored then.
 */
export interface AppendSource {
  build(target: Mailbox): Buffer;
}

/** Response codes the core adds to results when an extension asks (UIDPLUS). */
export interface ResultCodes<S = unknown> {
  /** `APPENDUID`-style code for an APPEND, or undefined. */
  append?(mailbox: Mailbox, uids: readonly number[], state: S): string | undefined;
  /** `COPYUID`-style code for a COPY/MOVE (a MOVE sends it in an untagged OK before the EXPUNGEs). */
  copy?(target: Mailbox, pairs: readonly { uid: number; targetUid: number }[], state: S): string | undefined;
  /** A code for the tagged OK of an IMAP CREATE (`MAILBOXID (id)`, RFC 8474), or undefined. */
  create?(mailbox: Mailbox, state: S): string | undefined;
}

/**
 * A form of APPEND message data other than a plain literal (RFC 4466
 * `append-data`), introduced by an atom: RFC 6855's `UTF8 (literal8)`,
 * RFC 4469's `CATENATE (...)`.
 */
export interface AppendDataForm<S = unknown> {
  /** Upper-case atom that starts the form (`UTF8`). */
  name: string;
  /**
   * Reads the form; the cursor is right after `name`; syntax errors throw
   * (BAD). Returns the message bytes, or an `AppendSource` when they depend
   * on the store (CATENATE's URLs): it is built when the APPEND runs.
   */
  parse(args: ArgParser, session: ImapSession, state: S): Buffer | AppendSource;
}

/**
 * An extension (plugin). `S` is its per-server state, the value of `setup`.
 * Every field but `name` is optional.
 */
export interface Extension<S = unknown> {
  /** Plugin name (upper case for built-ins: `APPENDLIMIT`); a user plugin may not reuse a built-in name. */
  name: string;
  /** Other names accepted in `plugins` for this one (older fixtures' spellings). */
  aliases?: readonly string[];
  /** Built-in plugins loaded with this one. */
  requires?: readonly string[];
  /**
   * A built-in that `plugins: "all"` leaves out: it must be named. For
   * extensions that change how mailboxes behave (X-GM-EXT-1 makes mailboxes
   * labels over one message), which a fixture asking for every standard
   * extension must not get by surprise.
   */
  optIn?: boolean;
  /**
   * JSON Schema (the subset of src/rest/schema.ts) of `pluginOptions[name]`;
   * keys not in `properties` that look like typos of one are errors
   * (`pluginOptions.APPENDLIMIT.limt: unknown key; did you mean "limit"?`).
   * Without it, `pluginOptions[name]` is refused.
   */
  options?: Schema;
  /**
   * Builds the per-server state when the server is built; the result is the
   * extension's control API, `server.extension(name)`. Keep state here, not
   * in module globals. React to `reset()` in `onChange` (`kind: 'reset'`).
   */
  setup?(ctx: SetupContext): S;
  /** Capabilities advertised, a function of the session (its state, TLS). */
  capabilities?(session: ImapSession, state: S): readonly string[];
  /**
   * Session states a `server.waitUntil` condition can wait for that only
   * this extension's commands produce (`idling`: IDLE). A wait for one that
   * no loaded extension produces fails at once, naming the built-ins that
   * would, instead of timing out in silence.
   */
  produces?: readonly SessionCondition[];
  /** Capabilities a client may turn on with ENABLE (RFC 5161). */
  enable?: readonly string[];
  /**
   * Whether a session may ENABLE one of this extension's `enable`
   * capabilities now (RFC 6855: `UTF8=ACCEPT` only in the authenticated
   * state); false leaves it out of `* ENABLED`. Default: always.
   */
  mayEnable?(session: ImapSession, capability: string, state: S): boolean;
  /**
   * True when the session speaks UTF-8 (RFC 6855 UTF8=ACCEPT, once
   * enabled): quoted strings may carry UTF-8 (checked, invalid is BAD),
   * mailbox names come and go as UTF-8 instead of modified UTF-7
   * (`session.mailboxName`), SEARCH CHARSET is BAD (unless a `rules` point
   * says `searchCharsetWithUtf8`). Any extension saying so turns it on
   * (UTF8=ACCEPT, IMAP4rev2).
   */
  utf8?(session: ImapSession, state: S): boolean;
  /** Forms of APPEND message data besides a literal (`UTF8 (literal8)`, `CATENATE (...)`). */
  appendForms?: readonly AppendDataForm<S>[];
  /**
   * APPEND takes several messages, each with its own flags and date (RFC
   * 3502 MULTIAPPEND): they are all stored in one change (one EXISTS) or
   * none is, and a zero-length message literal is a NO (how a client
   * cancels). Without it a second message is BAD.
   */
  appendMultiple?: boolean;
  /**
   * Rules of this session that differ from IMAP4rev1 (see SessionRules),
   * usually from what the session enabled. Asked again whenever the
   * session's ENABLEd set changed; undefined changes nothing.
   */
  rules?(session: ImapSession, state: S): SessionRules | undefined;
  /** IMAP commands; one with the name of a core command replaces it. */
  commands?: readonly CommandSpec[];
  /** Wrappers around existing commands. */
  wrap?: readonly CommandWrapper<S>[];
  fetchItems?: readonly FetchItem<S>[];
  /**
   * The grammar of this extension allows a literal8 (`~{n}`, RFC 3516) for
   * APPEND's message data and wherever a command reads `ArgParser.literal()`
   * (CATENATE's `TEXT`); without any loaded extension saying so, a literal8
   * there is BAD.
   */
  literal8?: boolean;
  searchKeys?: readonly SearchKeySpec<S>[];
  /** SEARCH result options (`RETURN (...)`, RFC 4731/5182). */
  search?: SearchPoint<S>;
  statusItems?: readonly StatusItem<S>[];
  list?: ListPoint<S>;
  select?: SelectPoint<S>;
  /** FETCH modifiers and a plan per FETCH (CHANGEDSINCE). */
  fetch?: FetchPoint<S>;
  /** STORE modifiers and a filter (UNCHANGEDSINCE). */
  store?: StorePoint<S>;
  /** The wording of a session's untagged updates (MODSEQ in flag FETCHes, VANISHED, FETCH after EXISTS). */
  updates?: UpdatePoint<S>;
  /**
   * Untagged responses this extension owes a session outside any command
   * (NOTIFY's STATUS and LIST notifications), as value lists without `*`.
   * The core asks whenever it may send unsolicited responses: right after
   * each tagged answer, inside IDLE, and between commands once the
   * extension called `session.wakeUnsolicited()` (a microtask later, so
   * every listener of a store change has run). It does not ask while the
   * client has not read its earlier output (backpressure): keep what is
   * owed bounded until then. Return [] when nothing is owed.
   */
  unsolicited?(session: ImapSession, state: S): readonly (readonly ImapValue[])[];
  create?: CreatePoint<S>;
  /** Checks before APPEND/COPY/MOVE/CREATE/RENAME (and addMessage with `checks: true`). */
  checks?: MutationChecks<S>;
  /**
   * Rewrites the message data of an IMAP APPEND before the checks and the
   * store see it (BINARY: a NUL-holding part gets base64, RFC 3516 §4.4;
   * such a change must lose no data). Undefined keeps it; extensions apply
   * one after the other in canonical order.
   */
  appendData?(data: Buffer, session: ImapSession, state: S): Buffer | undefined;
  /**
   * Decides on a literal before its bytes are read: a refusal ends the
   * command with `NO [code] text` (APPENDLIMIT's TOOBIG), or BAD when the
   * refusal says so (LITERAL-). The bytes of a refused non-synchronizing
   * literal are read and dropped. Return undefined to accept.
   */
  literal?(info: LiteralInfo, state: S): LiteralRefusal | undefined;
  /** Access control: undefined means no opinion; any deny wins. */
  access?(request: AccessRequest, state: S): AccessVerdict | undefined;
  /** Response codes added to core results. */
  codes?: ResultCodes<S>;
  /** SASL mechanisms for AUTHENTICATE. */
  sasl?: readonly SaslMechanism[];
  /** AUTHENTICATE accepts an initial response (RFC 4959 SASL-IR). */
  saslInitialResponse?: boolean;
  /** Storage keys this extension owns, kept in snapshots and restored by reset. */
  storage?: StoreFields;
  /**
   * Every change of the store, after it happened and before sessions and
   * events see it (create with its origin session, rename with oldPath,
   * delete, append, expunge, flags, reset, ...).
   */
  onChange?(change: StoreChange, state: S): void;
  /**
   * Event types this extension emits with `server.emit(type, payload)`;
   * they are valid in the REST event stream's `types` filter. Declare the
   * payload type by augmenting `ServerEvents` in src/events.ts.
   */
  events?: readonly string[];
  /**
   * REST routes, served after the built-in ones (a built-in route wins when
   * both match a request), listed in the OpenAPI document, and present only
   * while the plugin is loaded (404 NOTFOUND otherwise).
   */
  routes?: readonly Route[];
}

/** What users pass in `plugins` next to built-in names. */
export type Plugin<S = unknown> = Extension<S>;

/**
 * The control APIs of extensions by plugin name, for `server.extension(name)`.
 * Each built-in extension that has one adds itself by declaration merging:
 *
 * ```ts
 * declare module '../extension.js' {
 *   interface ExtensionApis { APPENDLIMIT: AppendLimitApi }
 * }
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface ExtensionApis {}

/** A session state a waitUntil condition names (`{ session, idling: true }`). */
export type SessionCondition = 'idling';

/**
 * Declares an extension with its state type checked, and returns it as a
 * plain Extension for the catalog.
 */
export function defineExtension<S>(extension: Extension<S>): Extension {
  return extension as Extension;
}

/**
 * The protocol one server speaks: the core commands plus every point of its
 * loaded extensions, put together once per server in one canonical order
 * (built-ins in catalog order, then plugin objects by name), so the order of
 * the `plugins` option never changes behaviour. The core calls the points
 * through this object and never names an extension.
 */
import { ServiceError, isServiceError } from '../errors.js';
import type {
  AccessVerdict,
  AppendDataForm,
  Actor,
  AppendCheckInput,
  AppendSource,
  CreateCheckInput,
  Extension,
  FetchItem,
  ListContext,
  ListEntry,
  LiteralInfo,
  LiteralRefusal,
  RenameCheckInput,
  Right,
  SaslMechanism,
  SearchKeySpec,
  SearchResultContext,
  SearchResultItems,
  SessionRules,
  CommandParameter,
  FetchContext,
  SearchAnswerContext,
  FetchPlan,
  StatusItem,
  StoreContext,
  StoreItem,
  StoreItemContext,
  TransferCheckInput,
} from '../extensions/extension.js';
import type { Route } from '../rest/route.js';
import type { ResolvedOptions } from '../options/types.js';
import type { Server } from '../server.js';
import type { StoreChange } from '../store/changes.js';
import type { Mailbox } from '../store/mailbox.js';
import type { Message } from '../store/message.js';
import { no, type CommandContext, type CommandResult, type CommandSpec } from './command.js';
import { coreCommands } from './commands/index.js';
import { starttls } from './commands/starttls.js';
import type { ArgParser, ArgParserOptions, FetchItemParser, SearchKeyParser } from './parser.js';
import type { SearchKey } from './syntax.js';
import type { Numbered } from './sequence.js';
import type { SelectedMailbox } from './selected.js';
import type { ImapSession } from './session.js';
import { Atom, NO_RESPONSES, type ImapValue } from './wire/values.js';

/** LIST-EXTENDED options the core itself serves (RFC 5258). */
export const CORE_LIST_SELECTION = ['SUBSCRIBED', 'REMOTE', 'RECURSIVEMATCH'] as const;
export const CORE_LIST_RETURN = ['SUBSCRIBED', 'CHILDREN'] as const;

interface Loaded {
  extension: Extension;
  state: unknown;
}

/** The IMAP protocol one server speaks: core commands plus those of its loaded extensions. */
export interface ImapProtocol {
  readonly commands: ReadonlyMap<string, CommandSpec>;
  /** Loaded extensions in canonical order. */
  readonly extensions: readonly Extension[];
  /** True when the plugin of this name is loaded. */
  has(extension: string): boolean;
  /** The per-server state (control API) of a loaded extension, or undefined. */
  api(extension: string): unknown;
  /** This server's state of a loaded extension (what its `setup` returned). */
  stateOf(extension: Extension): unknown;
  capabilities(session: ImapSession): string[];
  /** Capabilities a client may ENABLE. */
  readonly enableable: ReadonlySet<string>;
  /** Whether the session may ENABLE this (enableable) capability now (`mayEnable` of its extension). */
  mayEnable(session: ImapSession, capability: string): boolean;
  /** True when the session speaks UTF-8 (RFC 6855): some extension's `utf8` point says so. */
  utf8(session: ImapSession): boolean;
  /**
   * Reads APPEND message data: an extension's form (`UTF8 (...)`, `CATENATE (...)`) when its atom is
   * next, else a literal. A form whose bytes depend on the store gives a source built when the APPEND runs.
   */
  readAppendData(args: ArgParser, session: ImapSession): Buffer | AppendSource;
  /** The session's rules that differ from IMAP4rev1, from the `rules` points (all false for a plain session). */
  rules(session: ImapSession): Readonly<Required<SessionRules>>;
  readonly parserOptions: ArgParserOptions;
  readonly fetchItems: ReadonlyMap<string, FetchItem>;
  /** The extension FETCH items with their argument parsers, for `ArgParser.fetchAttributes`. */
  readonly fetchItemParsers: ReadonlyMap<string, FetchItemParser | null>;
  /** `data` is what the item's `parse` read. May throw a CommandFailure (the FETCH ends with its result). */
  fetchValue(item: string, message: Message, session: ImapSession, selected: SelectedMailbox, data?: unknown): ImapValue;
  searchMatches(name: string, message: Message, data: unknown, session: ImapSession, selected: SelectedMailbox): boolean;
  /** True when the criteria use a key whose answer changes with the clock alone (`SearchKeySpec.timeDependent`). */
  searchDependsOnTime(key: SearchKey): boolean;
  /** SEARCH result options (`RETURN (...)`) of loaded extensions, upper case; empty: SEARCH takes no RETURN. */
  readonly searchReturn: ReadonlySet<string>;
  /** True when the `$` variable (RFC 5182) may be used in SEARCH. */
  readonly searchResultVariable: boolean;
  /** Hands the result of a SEARCH with `RETURN (...)` to the extensions. */
  searchResults(ctx: SearchResultContext): void;
  /** Reads the arguments of a result option (`SearchPoint.parseReturnOption`); undefined when it takes none. */
  searchReturnArguments(option: string, args: ArgParser): unknown;
  /** The first refusal of a set of result options (BAD text), or undefined. */
  searchReturnRefusal(options: ReadonlySet<string>, ctx: { readonly session: ImapSession; readonly tag: string; readonly command: string }): string | undefined;
  /** The `search.resultItems` of every extension, in canonical order. */
  searchResultItems(ctx: SearchResultContext): SearchResultItems[];
  readonly statusItems: ReadonlyMap<string, StatusItem>;
  statusValue(item: string, mailbox: Mailbox, session: ImapSession, asked: boolean): ImapValue | undefined;
  readonly listSelection: ReadonlySet<string>;
  readonly listReturn: ReadonlySet<string>;
  /** Reads a return option's arguments when its extension takes some (`undefined` when it takes none). */
  listReturnArguments(option: string, args: ArgParser): unknown;
  listFilter(entry: ListEntry, ctx: ListContext): boolean;
  listAttributes(entry: ListEntry, ctx: ListContext): string[];
  listResponses(entry: ListEntry, ctx: ListContext): (readonly ImapValue[])[];
  readonly selectParameters: ReadonlyMap<string, CommandParameter>;
  readonly createParameters: ReadonlyMap<string, CommandParameter>;
  created(mailbox: Mailbox, params: ReadonlyMap<string, unknown>, session: ImapSession): void;
  selectReadOnly(session: ImapSession, mailbox: Mailbox): boolean;
  selectResponses(session: ImapSession, selected: SelectedMailbox, params: ReadonlyMap<string, unknown>): (readonly ImapValue[])[];
  selectClosing(session: ImapSession): (readonly ImapValue[])[];
  /** The first refusal of a SELECT's parameters (BAD text), or undefined. */
  selectRefusal(session: ImapSession, params: ReadonlyMap<string, unknown>): string | undefined;
  readonly fetchModifiers: ReadonlyMap<string, CommandParameter>;
  /** The plans of the `fetch` points, merged (targets filtered by each, items and responses from each). */
  fetchPlan(ctx: FetchContext): FetchPlan;
  /** Items the `search.responseItems` points append to a `* SEARCH` line. */
  searchResponseItems(ctx: SearchAnswerContext): ImapValue[];
  readonly storeModifiers: ReadonlyMap<string, CommandParameter>;
  /** STORE data items of extensions (besides FLAGS), by upper-case name. */
  readonly storeItems: ReadonlyMap<string, StoreItem>;
  /** Runs an extension's STORE item (`storeItems` has it). */
  storeItemApply(name: string, ctx: StoreItemContext): CommandResult | undefined;
  /** The messages a STORE may change after every `store` filter (undefined when none narrowed them). */
  storeFilter(ctx: StoreContext): readonly Numbered[] | undefined;
  /** How this session's untagged updates are worded, from the `updates` points. */
  updateShape(session: ImapSession): UpdateShape;
  /** The `updates.after` lines of every extension, in canonical order (see `UpdatePoint.after`). */
  updatesAfter(session: ImapSession, settled: boolean): (readonly ImapValue[])[];
  /** The `updates.beforeExpunges` lines of every extension (see `UpdatePoint.beforeExpunges`). */
  updatesBeforeExpunges(session: ImapSession, uids: ReadonlySet<number>): (readonly ImapValue[])[];
  /** True when APPEND takes several messages (an `appendMultiple` extension is loaded). */
  readonly appendMultiple: boolean;
  /** Runs the checks (throws the first ServiceError in canonical order). */
  checkAppend(input: AppendCheckInput): void;
  checkCopy(input: TransferCheckInput): void;
  checkMove(input: TransferCheckInput): void;
  checkCreate(input: CreateCheckInput): void;
  checkRename(input: RenameCheckInput): void;
  checkLiteral(info: LiteralInfo): LiteralRefusal | undefined;
  /** The message data of an APPEND after every `appendData` point. */
  appendData(data: Buffer, session: ImapSession): Buffer;
  /**
   * True when an extension answers the `access` point (ACL). With
   * `userMailboxes`, other users' mailboxes show only then: without access
   * control a user's tree is theirs alone.
   */
  readonly controlsAccess: boolean;
  /** Combined access verdict; allow when no extension has an opinion or the session has no user. */
  access(session: ImapSession, right: Right, mailbox: Mailbox | null, path: string, command: string): AccessVerdict;
  appendCode(mailbox: Mailbox, uids: readonly number[]): string | undefined;
  createCode(mailbox: Mailbox): string | undefined;
  copyCode(target: Mailbox, pairs: readonly { uid: number; targetUid: number }[]): string | undefined;
  readonly sasl: ReadonlyMap<string, SaslMechanism>;
  readonly saslInitialResponse: boolean;
  readonly eventTypes: readonly string[];
  /** Storage keys of mailbox and message fields the control API and REST show (`StoreField.shown`). */
  readonly shownFields: ShownFields;
  onChange(change: StoreChange): void;
  /** What the `unsolicited` points owe the session now, in canonical order. */
  unsolicited(session: ImapSession): (readonly ImapValue[])[];
  /**
   * The capabilities that offer a point (upper-case name) to this session,
   * hidden ones included: those its extension advertises now, `STARTTLS`
   * for the STARTTLS command. Null when the core offers it (no capability
   * needed) or no loaded part knows the name.
   */
  offeredBy(kind: PointKind, name: string, session: ImapSession): readonly string[] | null;
  /** True when the command is offered only by capabilities hidden from the session (it is then unknown). */
  commandHidden(name: string, session: ImapSession): boolean;
}

/**
 * The kinds of protocol points an extension adds, for `offeredBy`: what the
 * client checker asks about a command, modifier, item, key or mechanism.
 */
export type PointKind = 'command' | 'fetchItem' | 'fetchModifier' | 'searchKey' | 'searchReturn' | 'storeModifier' | 'selectParameter' | 'statusItem' | 'sasl';

/** Keys of the store fields shown in MailboxInfo/MessageInfo `fields`. */
export interface ShownFields {
  readonly mailbox: readonly string[];
  readonly message: readonly string[];
}

/** The wording of one session's untagged updates (see `UpdatePoint`). */
export interface UpdateShape {
  /** False when the session has no \\Recent (IMAP4rev2): no `\\Recent` in FLAGS, no `* n RECENT`. */
  readonly recent: boolean;
  flagFetch(message: Message): { uid: boolean; items: ImapValue[] };
  expunges(uids: readonly number[]): string | undefined;
  /** Responses after the EXISTS that announced `added` (empty when no extension adds any). */
  newMessages(first: number, added: readonly Message[]): (readonly ImapValue[])[];
}

const protocols = new WeakMap<Server, ImapProtocol>();

const REV1_RULES: Readonly<Required<SessionRules>> = Object.freeze({
  noRecent: false,
  noUnseenCode: false,
  searchReturnsByDefault: false,
  searchCharsetWithUtf8: false,
});

const RULE_NAMES = Object.keys(REV1_RULES) as (keyof SessionRules)[];
/**
 * Each combination of rules as one frozen object, shared by every session
 * (and server) with that combination: most sessions hold the same one,
 * which stays in the cache while a change reaches thousands of them.
 */
const RULE_SETS: (Readonly<Required<SessionRules>> | undefined)[] = [];

function internRules(session: ImapSession, rulers: readonly Extension[], state: (e: Extension) => unknown): Readonly<Required<SessionRules>> {
  let mask = 0;
  for (const e of rulers) {
    const r = e.rules!(session, state(e));
    if (!r) continue;
    for (let k = 0; k < RULE_NAMES.length; k++) if (r[RULE_NAMES[k]!] === true) mask |= 1 << k;
  }
  let rules = RULE_SETS[mask];
  if (rules === undefined) {
    const merged = { ...REV1_RULES };
    for (let k = 0; k < RULE_NAMES.length; k++) if ((mask & (1 << k)) !== 0) merged[RULE_NAMES[k]!] = true;
    rules = RULE_SETS[mask] = Object.freeze(merged);
  }
  return rules;
}

/**
 * What the points that return lines give when none has any: shared, so
 * that a change reaching 10,000 idle sessions makes no empty list per
 * session and point (the IDLE fan-out). Read only: callers iterate it.
 */
const NO_LINES = NO_RESPONSES as (readonly ImapValue[])[];

/** Builds (once per server) the command table, capability list and every extension point. */
export function imapProtocol(server: Server): ImapProtocol {
  let protocol = protocols.get(server);
  if (protocol) return protocol;
  protocol = buildProtocol(server);
  protocols.set(server, protocol);
  return protocol;
}

/** A name registered twice by extensions: construction error (order would decide otherwise). */
function unique<T>(kind: string, map: Map<string, T>, name: string, value: T, owner: Extension, owners: Map<string, Extension>): void {
  const key = name.toUpperCase();
  const previous = owners.get(key);
  if (previous !== undefined) {
    throw new ServiceError('INVALID', `plugins: ${previous.name} and ${owner.name} both add the ${kind} ${key}`);
  }
  owners.set(key, owner);
  map.set(key, value);
}

function buildTable(extensions: readonly Extension[], starttlsOn: boolean) {
  const commands = new Map<string, CommandSpec>();
  for (const spec of coreCommands()) commands.set(spec.name, spec);
  if (starttlsOn) commands.set(starttls.name, starttls);
  const commandOwners = new Map<string, Extension>();
  const fetchItems = new Map<string, FetchItem>();
  const fetchOwners = new Map<string, Extension>();
  const searchKeys = new Map<string, SearchKeySpec>();
  const searchOwners = new Map<string, Extension>();
  const statusItems = new Map<string, StatusItem>();
  const statusOwners = new Map<string, Extension>();
  const searchReturnOwners = new Map<string, Extension>();
  const searchReturnOwnersCheck = new Map<string, Extension>();
  let searchResultVariable = false;
  const listSelection = new Set<string>(CORE_LIST_SELECTION);
  const listReturn = new Set<string>(CORE_LIST_RETURN);
  const listOwners = new Map<string, Extension>();
  const selectParameters = new Map<string, CommandParameter>();
  const selectOwners = new Map<string, Extension>();
  const fetchModifiers = new Map<string, CommandParameter>();
  const fetchModifierOwners = new Map<string, Extension>();
  const storeModifiers = new Map<string, CommandParameter>();
  const storeModifierOwners = new Map<string, Extension>();
  const storeItems = new Map<string, StoreItem>();
  const storeItemOwners = new Map<string, Extension>();
  let expungeWorder: Extension | null = null;
  const createParameters = new Map<string, CommandParameter>();
  const createOwners = new Map<string, Extension>();
  let appendMultiple = false;
  const routes = new Map<string, Route>();
  const routeOwners = new Map<string, Extension>();
  const sasl = new Map<string, SaslMechanism>();
  const saslOwners = new Map<string, Extension>();
  const enableable = new Set<string>();
  const enableOwners = new Map<string, Extension>();
  const appendForms = new Map<string, AppendDataForm>();
  const appendFormOwners = new Map<string, Extension>();
  const eventTypes: string[] = [];
  let saslInitialResponse = false;
  /** LIST options by the extension that serves them. */
  const selectionOwner = new Map<string, Extension>();
  const returnOwner = new Map<string, Extension>();
  const returnOwners = new Map<string, Extension>();

  for (const e of extensions) {
    const owner = e;
    for (const spec of e.commands ?? []) unique('command', commands, spec.name, spec, owner, commandOwners);
    for (const item of e.fetchItems ?? []) unique('FETCH item', fetchItems, item.name, item, owner, fetchOwners);
    for (const key of e.searchKeys ?? []) unique('SEARCH key', searchKeys, key.name, key, owner, searchOwners);
    for (const item of e.statusItems ?? []) unique('STATUS item', statusItems, item.name, item, owner, statusOwners);
    for (const opt of e.search?.returnOptions ?? []) unique('SEARCH result option', searchReturnOwners, opt, e, owner, searchReturnOwnersCheck);
    if (e.search?.resultVariable) searchResultVariable = true;
    for (const opt of e.list?.selectionOptions ?? []) {
      const key = opt.toUpperCase();
      if ((CORE_LIST_SELECTION as readonly string[]).includes(key)) throw new ServiceError('INVALID', `plugins: ${e.name} adds the LIST selection option ${key}, which the core serves`);
      unique('LIST selection option', selectionOwner, key, e, owner, listOwners);
      listSelection.add(key);
    }
    for (const opt of e.list?.returnOptions ?? []) {
      const key = opt.toUpperCase();
      if ((CORE_LIST_RETURN as readonly string[]).includes(key)) throw new ServiceError('INVALID', `plugins: ${e.name} adds the LIST return option ${key}, which the core serves`);
      unique('LIST return option', returnOwner, key, e, owner, returnOwners);
      listReturn.add(key);
    }
    for (const p of e.select?.parameters ?? []) unique('SELECT parameter', selectParameters, p.name, p, owner, selectOwners);
    for (const p of e.fetch?.modifiers ?? []) unique('FETCH modifier', fetchModifiers, p.name, p, owner, fetchModifierOwners);
    for (const p of e.store?.modifiers ?? []) unique('STORE modifier', storeModifiers, p.name, p, owner, storeModifierOwners);
    for (const item of e.store?.items ?? []) {
      if (/^[+-]|^FLAGS$|\.SILENT$/i.test(item.name)) throw new ServiceError('INVALID', `plugins: ${e.name} adds the STORE item ${item.name}; name it without +/-, .SILENT, and not FLAGS`);
      unique('STORE item', storeItems, item.name, item, owner, storeItemOwners);
    }
    if (e.updates?.expunges) {
      if (expungeWorder) throw new ServiceError('INVALID', `plugins: ${expungeWorder.name} and ${e.name} both word expunges`);
      expungeWorder = e;
    }
    for (const p of e.create?.parameters ?? []) unique('CREATE parameter', createParameters, p.name, p, owner, createOwners);
    if (e.appendMultiple) appendMultiple = true;
    // The router takes the first match, so two plugins serving one route would make order matter.
    for (const r of e.routes ?? []) unique('REST route', routes, `${r.method} ${r.path.replace(/\{\w+\}/g, '{}')}`, r, owner, routeOwners);
    for (const m of e.sasl ?? []) unique('SASL mechanism', sasl, m.name, m, owner, saslOwners);
    for (const cap of e.enable ?? []) {
      enableable.add(cap.toUpperCase());
      if (e.mayEnable) enableOwners.set(cap.toUpperCase(), e);
    }
    for (const form of e.appendForms ?? []) unique('APPEND data form', appendForms, form.name, form, owner, appendFormOwners);
    for (const type of e.events ?? []) if (!eventTypes.includes(type)) eventTypes.push(type);
    if (e.saslInitialResponse) saslInitialResponse = true;
  }

  // Wrappers nest in canonical order: the first extension's wrapper is outermost.
  for (let i = extensions.length - 1; i >= 0; i--) {
    const e = extensions[i]!;
    for (const w of e.wrap ?? []) {
      const name = w.command.toUpperCase();
      const inner = commands.get(name);
      if (!inner && w.ifLoaded) continue;
      if (!inner) throw new ServiceError('INVALID', `plugins: ${e.name} wraps the command ${name}, which no loaded part of the server has`);
      commands.set(name, {
        ...inner,
        // The table is shared by servers: the wrapper finds its server's state through the session.
        run: (ctx: CommandContext) => w.run(ctx, async () => inner.run(ctx), imapProtocol(ctx.session.server).stateOf(e)),
      });
    }
  }

  const searchParsers = new Map<string, SearchKeyParser>();
  for (const [name, spec] of searchKeys) {
    searchParsers.set(name, (args) => ({ type: 'extension', name, data: spec.parse ? spec.parse(args) : null }));
  }
  const parserOptions: ArgParserOptions = {};
  if (searchParsers.size > 0) parserOptions.searchKeys = searchParsers;
  if (extensions.some((e) => e.literal8 === true)) parserOptions.literal8 = true;
  const names = new Set(extensions.map((e) => e.name));
  const withPoint = <K extends keyof Extension>(key: K): Extension[] => extensions.filter((e) => e[key] !== undefined);
  const capsOf = withPoint('capabilities');
  const checkers = withPoint('checks');
  const accessors = withPoint('access');
  const literalCheckers = withPoint('literal');
  const appendRewriters = withPoint('appendData');
  const listers = withPoint('list');
  const selectors = withPoint('select');
  const coders = withPoint('codes');
  const creators = withPoint('create');
  const watchers = withPoint('onChange');
  const searchers = extensions.filter((e) => e.search?.results !== undefined);
  const fetchers = withPoint('fetch');
  const storers = withPoint('store');
  const updaters = withPoint('updates');
  const afterUpdaters = updaters.filter((e) => e.updates!.after !== undefined);
  const utf8Deciders = withPoint('utf8');
  const notifiers = withPoint('unsolicited');
  const rulers = withPoint('rules');

  const coreNames = new Set(coreCommands().map((c) => c.name));
  const pointOwners: Readonly<Record<PointKind, ReadonlyMap<string, Extension>>> = {
    command: commandOwners,
    fetchItem: fetchOwners,
    fetchModifier: fetchModifierOwners,
    searchKey: searchOwners,
    searchReturn: searchReturnOwnersCheck,
    storeModifier: storeModifierOwners,
    selectParameter: selectOwners,
    statusItem: statusOwners,
    sasl: saslOwners,
  };
  return {
    coreNames, pointOwners,
    commands, commandOwners, fetchItems, fetchOwners, searchKeys, searchOwners, statusItems, statusOwners,
    searchReturnOwners, searchResultVariable, listSelection, listReturn, selectParameters, fetchModifiers,
    storeModifiers, storeItems, storeItemOwners, expungeWorder, createParameters, appendMultiple, sasl,
    enableable, enableOwners, appendForms, appendFormOwners, eventTypes, saslInitialResponse, selectionOwner,
    returnOwner, parserOptions, names, capsOf, checkers, accessors, literalCheckers, appendRewriters, listers,
    selectors, coders, creators, watchers, searchers, fetchers, storers, updaters, afterUpdaters, utf8Deciders,
    notifiers, rulers,
    searchReturn: new Set(searchReturnOwners.keys()),
    flagWorders: updaters.filter((e) => e.updates!.flagFetch),
    newWorders: updaters.filter((e) => e.updates!.newMessages),
    shownFields: {
      mailbox: extensions.flatMap((e) => (e.storage?.mailbox ?? []).filter((f) => f.shown).map((f) => f.key)),
      message: extensions.flatMap((e) => (e.storage?.message ?? []).filter((f) => f.shown).map((f) => f.key)),
    },
  };
}

type ProtocolTable = ReturnType<typeof buildTable>;

/**
 * Tables by plugin set: a test suite starts thousands of servers with the
 * same plugins, and the tables depend on nothing else (per-server state
 * reaches the points as an argument). Keyed by the extension names; a hit
 * must hold the same extension objects, so two plugin objects of one name
 * never share a table. Bounded: the oldest set goes first.
 */
const tables = new Map<string, { extensions: readonly Extension[]; table: ProtocolTable }[]>();
const TABLE_SETS = 32;
let tableCount = 0;

function tableFor(extensions: readonly Extension[], starttlsOn: boolean): ProtocolTable {
  const key = `${starttlsOn ? 1 : 0}${extensions.map((e) => e.name).join('\n')}`;
  const same = (list: readonly Extension[]): boolean => list.length === extensions.length && list.every((e, i) => e === extensions[i]);
  const bucket = tables.get(key);
  const hit = bucket?.find((entry) => same(entry.extensions));
  if (hit) return hit.table;
  // A duplicate name throws here, before anything is cached.
  const table = buildTable(extensions, starttlsOn);
  if (tableCount >= TABLE_SETS) {
    const oldest = tables.keys().next().value!;
    tableCount -= tables.get(oldest)!.length;
    tables.delete(oldest);
  }
  if (bucket) bucket.push({ extensions: [...extensions], table });
  else tables.set(key, [{ extensions: [...extensions], table }]);
  tableCount++;
  return table;
}

/** The parser options of a server: the extensions' grammar and the `leniency` option's flags that are on. */
function withLeniency(base: ArgParserOptions, leniency: ResolvedOptions['leniency']): ArgParserOptions {
  if (!leniency.eightBitQuoted && !leniency.anyEscape && !leniency.extraSpaces && !leniency.trailingComma) return base;
  return { ...base, ...leniency };
}

function buildProtocol(server: Server): ImapProtocol {
  const extensions = server.options.extensions;
  const loaded: Loaded[] = [];
  const byName = new Map<string, Loaded>();
  // The protocol is registered before setup runs, so a setup may look at other extensions' points.
  const states = new Map<Extension, unknown>();
  const state = (e: Extension): unknown => states.get(e);
  const {
    commands, fetchItems, fetchOwners, searchKeys, searchOwners, statusItems, statusOwners,
    searchReturnOwners, searchResultVariable, listSelection, listReturn, selectParameters, fetchModifiers,
    storeModifiers, storeItems, storeItemOwners, expungeWorder, createParameters, appendMultiple, sasl,
    enableable, enableOwners, appendForms, appendFormOwners, eventTypes, saslInitialResponse, selectionOwner,
    returnOwner, parserOptions, names, capsOf, checkers, accessors, literalCheckers, appendRewriters, listers,
    selectors, coders, creators, watchers, searchers, fetchers, storers, updaters, afterUpdaters, utf8Deciders,
    notifiers, rulers, searchReturn, flagWorders, newWorders, shownFields, coreNames, pointOwners,
  } = tableFor(extensions, server.options.starttls);
  const fetchItemParsers = new Map<string, FetchItemParser | null>();
  for (const [name, item] of fetchItems) {
    const parse = item.parse;
    fetchItemParsers.set(name, parse ? (args) => parse.call(item, args, states.get(fetchOwners.get(name)!)) : null);
  }

  const runChecks = (pick: (e: Extension) => ((input: never, state: unknown) => void) | undefined, input: unknown): void => {
    for (const e of checkers) {
      const check = pick(e) as ((input: unknown, state: unknown) => void) | undefined;
      if (check) check.call(e.checks, input, state(e));
    }
  };

  const offeredBy = (kind: PointKind, name: string, session: ImapSession): readonly string[] | null => {
    if (kind === 'command') {
      if (name === 'STARTTLS') return ['STARTTLS'];
      // An extension's command that replaces a core one is offered by the core too.
      if (coreNames.has(name)) return null;
    }
    const owner = pointOwners[kind].get(name);
    if (!owner?.capabilities) return null;
    return owner.capabilities(session, state(owner));
  };

  /**
   * A session's update wording: a class, so that what each selected session
   * holds is one small object, its methods shared (idle sessions are many:
   * issue 20's budget per session).
   */
  class Shape implements UpdateShape {
    constructor(private readonly session: ImapSession) {}

    // Asked each time: an ENABLE may come while the mailbox is selected.
    get recent(): boolean {
      return !protocol.rules(this.session).noRecent;
    }

    flagFetch(message: Message): { uid: boolean; items: ImapValue[] } {
      let uid = false;
      const items: ImapValue[] = [];
      for (const e of flagWorders) {
        const extra = e.updates!.flagFetch!(this.session, message, state(e));
        if (!extra) continue;
        uid ||= extra.uid;
        items.push(...extra.items);
      }
      return { uid, items };
    }

    expunges(uids: readonly number[]): string | undefined {
      const worder = expungeWorder;
      return worder ? worder.updates!.expunges!(this.session, uids, state(worder)) : undefined;
    }

    newMessages(first: number, added: readonly Message[]): (readonly ImapValue[])[] {
      let out: (readonly ImapValue[])[] | null = null;
      for (let i = 0; i < newWorders.length; i++) {
        const e = newWorders[i]!;
        const lines = e.updates!.newMessages!(this.session, first, added, state(e));
        if (lines.length > 0) (out ??= []).push(...lines);
      }
      return out ?? NO_LINES;
    }
  }

  const protocol: ImapProtocol = {
    commands,
    extensions,
    has: (name) => names.has(name),
    stateOf: state,
    api: (name) => {
      const found = byName.get(name) ?? byName.get(name.toUpperCase());
      return found?.state;
    },
    capabilities(session) {
      const caps = ['IMAP4rev1'];
      // STARTTLS and LOGINDISABLED are offered only where they apply: before login, without TLS.
      if (session.state === 'notAuthenticated' && !session.secure) {
        if (session.server.options.starttls) caps.push('STARTTLS');
        if (session.server.options.loginDisabled) caps.push('LOGINDISABLED');
      }
      // A set beside the list: with every plugin loaded the list is ~80 long, asked at each greeting and login.
      const listed = new Set(caps);
      for (const e of capsOf) {
        for (const cap of e.capabilities!(session, state(e))) {
          if (listed.has(cap)) continue;
          listed.add(cap);
          caps.push(cap);
        }
      }
      const hidden = session.hiddenCapabilities;
      return hidden.size === 0 ? caps : caps.filter((c) => !hidden.has(c.toUpperCase()));
    },
    enableable,
    mayEnable(session, capability) {
      const e = enableOwners.get(capability);
      return e === undefined || e.mayEnable!(session, capability, state(e));
    },
    utf8(session) {
      for (const e of utf8Deciders) if (e.utf8!(session, state(e))) return true;
      return false;
    },
    readAppendData(args, session) {
      if (appendForms.size > 0) {
        const next = args.peekAtom();
        const form = next === null ? undefined : appendForms.get(next);
        if (form) {
          args.keyword(form.name);
          return form.parse(args, session, state(appendFormOwners.get(form.name.toUpperCase())!));
        }
      }
      return args.literal();
    },
    rules(session) {
      if (rulers.length === 0) return REV1_RULES;
      // Rules follow what the session enabled; worked out again only when that changed (the session drops
      // its memo then: src/imap/enabled.ts). Asked for on every message of a FETCH.
      return (session.rulesMemo ??= internRules(session, rulers, state));
    },
    // The table is shared by servers; the leniency is this server's.
    parserOptions: withLeniency(parserOptions, server.options.leniency),
    fetchItems,
    fetchItemParsers,
    fetchValue(item, message, session, selected, data) {
      const spec = fetchItems.get(item.toUpperCase());
      if (!spec) return null;
      return spec.value(message, { session, selected, data }, state(fetchOwners.get(item.toUpperCase())!));
    },
    searchMatches(name, message, data, session, selected) {
      const spec = searchKeys.get(name);
      if (!spec) return false;
      return spec.matches(message, data, { session, selected }, state(searchOwners.get(name)!));
    },
    searchDependsOnTime(key) {
      const walk = (k: SearchKey): boolean => {
        switch (k.type) {
          case 'extension':
            return searchKeys.get(k.name)?.timeDependent === true;
          case 'not':
            return walk(k.key);
          case 'or':
            return walk(k.left) || walk(k.right);
          case 'and':
            return k.keys.some(walk);
          default:
            return false;
        }
      };
      return walk(key);
    },
    searchReturn,
    searchResultVariable,
    searchResults(ctx) {
      for (const e of searchers) e.search!.results!(ctx, state(e));
    },
    searchReturnArguments(option, args) {
      const owner = searchReturnOwners.get(option);
      const parse = owner?.search?.parseReturnOption;
      return parse ? parse.call(owner!.search, option, args, state(owner!)) : undefined;
    },
    searchReturnRefusal(options, ctx) {
      for (const e of extensions) {
        const reason = e.search?.refuseReturnOptions?.(options, ctx, state(e));
        if (reason !== undefined) return reason;
      }
      return undefined;
    },
    searchResultItems(ctx) {
      const out: SearchResultItems[] = [];
      for (const e of extensions) {
        const items = e.search?.resultItems?.(ctx, state(e));
        if (items) out.push(items);
      }
      return out;
    },
    statusItems,
    statusValue(item, mailbox, session, asked) {
      const spec = statusItems.get(item.toUpperCase());
      if (!spec) return undefined;
      return spec.value(mailbox, session, state(statusOwners.get(item.toUpperCase())!), asked);
    },
    listSelection,
    listReturn,
    listReturnArguments(option, args) {
      const e = returnOwner.get(option.toUpperCase());
      return e?.list?.parseReturnOption ? e.list.parseReturnOption(option.toUpperCase(), args, state(e)) : undefined;
    },
    listFilter(entry, ctx) {
      for (const [option, e] of selectionOwner) {
        if (!ctx.selection.has(option) || !e.list!.select) continue;
        if (!e.list!.select(entry, ctx, state(e))) return false;
      }
      return true;
    },
    listAttributes(entry, ctx) {
      const out: string[] = [];
      for (const e of listers) {
        for (const a of e.list!.attributes?.(entry, ctx, state(e)) ?? []) out.push(a);
      }
      return out;
    },
    listResponses(entry, ctx) {
      const out: (readonly ImapValue[])[] = [];
      for (const e of listers) out.push(...(e.list!.responses?.(entry, ctx, state(e)) ?? []));
      return out;
    },
    selectParameters,
    selectReadOnly(session, mailbox) {
      return selectors.some((e) => e.select!.readOnly?.(session, mailbox, state(e)) === true);
    },
    selectResponses(session, selected, params) {
      const out: (readonly ImapValue[])[] = [];
      for (const e of selectors) out.push(...(e.select!.responses?.(session, selected, params, state(e)) ?? []));
      return out;
    },
    selectClosing(session) {
      const out: (readonly ImapValue[])[] = [];
      // Two extensions may owe the same line (QRESYNC and IMAP4rev2 both send OK [CLOSED]): sent once.
      const seen = new Set<string>();
      for (const e of selectors) {
        for (const line of e.select!.closing?.(session, state(e)) ?? []) {
          const key = closingKey(line);
          if (seen.has(key)) continue;
          seen.add(key);
          out.push(line);
        }
      }
      return out;
    },
    selectRefusal(session, params) {
      for (const e of selectors) {
        const reason = e.select!.refuse?.(session, params, state(e));
        if (reason !== undefined) return reason;
      }
      return undefined;
    },
    searchResponseItems(ctx) {
      const out: ImapValue[] = [];
      for (const e of extensions) {
        const items = e.search?.responseItems?.(ctx, state(e));
        if (items) out.push(...items);
      }
      return out;
    },
    fetchModifiers,
    fetchPlan(ctx) {
      const plan: FetchPlan = {};
      for (const e of fetchers) {
        const p = e.fetch!.plan?.({ ...ctx, items: plan.items ?? ctx.items }, state(e));
        if (!p) continue;
        if (p.targets) {
          if (plan.targets) {
            const keep = new Set(p.targets.map((n) => n.message.uid));
            plan.targets = plan.targets.filter((n) => keep.has(n.message.uid));
          } else plan.targets = p.targets;
        }
        if (p.items) plan.items = p.items;
        if (p.responses) plan.responses = [...(plan.responses ?? []), ...p.responses];
      }
      return plan;
    },
    storeModifiers,
    storeItems,
    storeItemApply(name, ctx) {
      const key = name.toUpperCase();
      const item = storeItems.get(key);
      return item ? item.apply(ctx, state(storeItemOwners.get(key)!)) : undefined;
    },
    storeFilter(ctx) {
      let targets: readonly Numbered[] | undefined;
      for (const e of storers) {
        const kept = e.store!.filter?.({ ...ctx, targets: targets ?? ctx.targets }, state(e));
        if (kept) targets = kept;
      }
      return targets;
    },
    updateShape: (session) => new Shape(session),
    updatesBeforeExpunges(session, uids) {
      const out: (readonly ImapValue[])[] = [];
      for (const e of updaters) if (e.updates!.beforeExpunges) out.push(...e.updates!.beforeExpunges(session, uids, state(e)));
      return out;
    },
    updatesAfter(session, settled) {
      let out: (readonly ImapValue[])[] | null = null;
      for (let i = 0; i < afterUpdaters.length; i++) {
        const e = afterUpdaters[i]!;
        const lines = e.updates!.after!(session, settled, state(e));
        if (lines.length > 0) (out ??= []).push(...lines);
      }
      return out ?? NO_LINES;
    },
    createParameters,
    created(mailbox, params, session) {
      for (const e of creators) e.create!.created?.(mailbox, params, session, state(e));
    },
    appendMultiple,
    checkAppend: (input) => runChecks((e) => e.checks?.append, input),
    checkCopy: (input) => runChecks((e) => e.checks?.copy, input),
    checkMove: (input) => runChecks((e) => e.checks?.move, input),
    checkCreate: (input) => runChecks((e) => e.checks?.create, input),
    checkRename: (input) => runChecks((e) => e.checks?.rename, input),
    checkLiteral(info) {
      for (const e of literalCheckers) {
        const verdict = e.literal!(info, state(e));
        if (verdict) return verdict;
      }
      return undefined;
    },
    appendData(data, session) {
      let out = data;
      for (const e of appendRewriters) out = e.appendData!(out, session, state(e)) ?? out;
      return out;
    },
    controlsAccess: accessors.length > 0,
    access(session, right, mailbox, path, command) {
      const user = session.user;
      if (user === null || accessors.length === 0) return ALLOWED;
      let denied: AccessVerdict | null = null;
      for (const e of accessors) {
        const verdict = e.access!({ session, user, right, mailbox, path, command }, state(e));
        if (verdict && !verdict.allow) {
          // Any deny wins; a deny that reveals the mailbox wins over one that hides it, whatever the order.
          if (denied === null || (denied.allow === false && !denied.reveal && verdict.reveal)) denied = verdict;
        }
      }
      return denied ?? ALLOWED;
    },
    appendCode(mailbox, uids) {
      for (const e of coders) {
        const code = e.codes!.append?.(mailbox, uids, state(e));
        if (code) return code;
      }
      return undefined;
    },
    createCode(mailbox) {
      for (const e of coders) {
        const code = e.codes!.create?.(mailbox, state(e));
        if (code) return code;
      }
      return undefined;
    },
    copyCode(target, pairs) {
      for (const e of coders) {
        const code = e.codes!.copy?.(target, pairs, state(e));
        if (code) return code;
      }
      return undefined;
    },
    sasl,
    saslInitialResponse,
    eventTypes,
    shownFields,
    onChange(change) {
      for (const e of watchers) e.onChange!(change, state(e));
    },
    unsolicited(session) {
      let out: (readonly ImapValue[])[] | null = null;
      for (const e of notifiers) {
        const lines = e.unsolicited!(session, state(e));
        if (lines.length > 0) (out ??= []).push(...lines);
      }
      return out ?? NO_LINES;
    },
    offeredBy,
    commandHidden(name, session) {
      const hidden = session.hiddenCapabilities;
      if (hidden.size === 0) return false;
      const caps = offeredBy('command', name, session);
      return caps !== null && caps.length > 0 && caps.every((c) => hidden.has(c.toUpperCase()));
    },
  };
  protocols.set(server, protocol);
  for (const e of extensions) {
    const s = e.setup ? e.setup({ server, options: server.options.pluginOptions.get(e.name) ?? {} }) : undefined;
    states.set(e, s);
    const entry = { extension: e, state: s };
    loaded.push(entry);
    byName.set(e.name, entry);
    for (const alias of e.aliases ?? []) byName.set(alias, entry);
  }
  return protocol;
}

/** What identifies an untagged line of `closing`: its leading atoms (`OK [CLOSED]`), not its text. */
function closingKey(line: readonly ImapValue[]): string {
  const parts: string[] = [];
  for (const v of line.slice(0, 2)) parts.push(v instanceof Atom ? v.value : JSON.stringify(v));
  return parts.join(' ');
}

/**
 * The access verdict as a command result: null when allowed, else NO
 * [NOPERM] or, when the mailbox must stay hidden, NO [NONEXISTENT] as if it
 * did not exist.
 */
export function accessRefusal(
  session: ImapSession,
  right: Right,
  mailbox: Mailbox | null,
  path: string,
  command: string,
): CommandResult | null {
  const verdict = imapProtocol(session.server).access(session, right, mailbox, path, command);
  if (verdict.allow) return null;
  if (!verdict.reveal) return no(`Mailbox doesn't exist: ${path}`, 'NONEXISTENT');
  return no(verdict.text ?? `Permission denied (right ${right} is missing)`, 'NOPERM');
}

/** The verdict of an access nobody denied: one shared object, asked for by most commands. */
const ALLOWED: AccessVerdict = Object.freeze({ allow: true });

/** The RFC 4314 right needed to set or clear a flag: `s` for \\Seen, `t` for \\Deleted, `w` for the others. */
export function flagRight(flag: string): Right {
  if (flag === '\\Seen') return 's';
  if (flag === '\\Deleted') return 't';
  return 'w';
}

/**
 * The flags of an APPEND or COPY/MOVE the session may set on messages new in
 * `mailbox` (RFC 4314 §4: a flag whose right is missing is dropped, the
 * command does not fail). Null when every flag may be set.
 */
export function flagFilter(session: ImapSession, mailbox: Mailbox, command: string): ((flag: string) => boolean) | null {
  const protocol = imapProtocol(session.server);
  // Every SELECT asks: three answers, no collection built for them.
  const seen = protocol.access(session, 's', mailbox, mailbox.path, command).allow;
  const deleted = protocol.access(session, 't', mailbox, mailbox.path, command).allow;
  const other = protocol.access(session, 'w', mailbox, mailbox.path, command).allow;
  if (seen && deleted && other) return null;
  return (flag) => {
    const right = flagRight(flag);
    return right === 's' ? seen : right === 't' ? deleted : other;
  };
}

/** Runs a check and turns a ServiceError into the command's NO with its response code. */
export function checkResult(run: () => void): CommandResult | null {
  try {
    run();
    return null;
  } catch (err) {
    if (isServiceError(err)) return no(err.message, err.code === 'INVALID' ? 'CANNOT' : err.code);
    throw err;
  }
}

export type { Actor };

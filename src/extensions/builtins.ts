/**
 * The catalog of built-in extensions: one row per folder, in catalog order
 * (`plugins: "all"`, capability order). A row holds what resolving the
 * options needs before any extension runs: the plugin's names, what it
 * requires, whether "all" loads it, and the storage keys it declares (typo
 * detection knows them even when the plugin is not loaded). A server then
 * loads only the folders of the plugins it is given: the `rookery` command
 * without plugins starts without reading the 86 modules of the 49 folders.
 *
 * Each row repeats fields of its folder's `extension` object; the folder
 * stays the one source, and test/extensions/interface.test.ts fails (naming
 * the row to write) when a row and its object differ. To add a built-in: its
 * folder, its import line in ./index.ts and its row here.
 */
import { createRequire } from 'node:module';
import type { Extension, SessionCondition } from './extension.js';

/** One built-in: the fields of its `extension` object that option resolution reads, and its folder. */
export interface BuiltinRow {
  readonly name: string;
  readonly aliases?: readonly string[];
  readonly requires?: readonly string[];
  readonly optIn?: true;
  /** The waitUntil session states only it produces (`produces`): named when a wait for one cannot end. */
  readonly produces?: readonly SessionCondition[];
  /** The keys of its `storage` fields, per level. */
  readonly storage?: { readonly mailbox?: readonly string[]; readonly message?: readonly string[]; readonly server?: readonly string[] };
  /** Its folder under src/extensions/. */
  readonly folder: string;
}

export const BUILTIN_ROWS: readonly BuiltinRow[] = [
  { name: 'IMAP4REV2', requires: ['ENABLE', 'NAMESPACE', 'UNSELECT', 'UIDPLUS', 'ESEARCH', 'SEARCHRES', 'IDLE', 'SASL-IR', 'AUTH=PLAIN', 'LIST-EXTENDED', 'LIST-STATUS', 'MOVE', 'LITERAL-', 'SPECIAL-USE', 'STATUS=SIZE', 'CHILDREN', 'BINARY'], folder: 'imap4rev2' },
  { name: 'IDLE', produces: ['idling'], folder: 'idle' },
  { name: 'NAMESPACE', folder: 'namespace' },
  { name: 'UIDPLUS', folder: 'uidplus' },
  { name: 'MOVE', folder: 'move' },
  { name: 'UNSELECT', folder: 'unselect' },
  { name: 'ENABLE', folder: 'enable' },
  { name: 'ID', folder: 'id' },
  { name: 'LITERAL+', aliases: ['LITERALPLUS'], folder: 'literal-plus' },
  { name: 'SASL-IR', requires: ['AUTH=PLAIN'], folder: 'sasl-ir' },
  { name: 'AUTH=PLAIN', aliases: ['AUTH-PLAIN'], folder: 'auth-plain' },
  { name: 'AUTH=XOAUTH2', aliases: ['XOAUTH2', 'AUTH-XOAUTH2'], requires: ['SASL-IR'], folder: 'auth-xoauth2' },
  { name: 'AUTH=OAUTHBEARER', aliases: ['OAUTHBEARER', 'AUTH-OAUTHBEARER'], requires: ['SASL-IR'], folder: 'auth-oauthbearer' },
  { name: 'AUTH=EXTERNAL', aliases: ['EXTERNAL', 'AUTH-EXTERNAL'], folder: 'auth-external' },
  { name: 'CHILDREN', folder: 'children' },
  { name: 'SPECIAL-USE', folder: 'special-use' },
  { name: 'CREATE-SPECIAL-USE', requires: ['SPECIAL-USE'], folder: 'create-special-use' },
  { name: 'APPENDLIMIT', folder: 'appendlimit' },
  { name: 'MULTIAPPEND', folder: 'multiappend' },
  { name: 'CATENATE', folder: 'catenate' },
  { name: 'URL-PARTIAL', requires: ['CATENATE'], folder: 'url-partial' },
  { name: 'URLAUTH', folder: 'urlauth' },
  { name: 'METADATA-SERVER', storage: { mailbox: ['metadata'], server: ['metadata'] }, folder: 'metadata-server' },
  { name: 'METADATA', requires: ['METADATA-SERVER'], folder: 'metadata' },
  { name: 'ACL', storage: { mailbox: ['acl'] }, folder: 'acl' },
  { name: 'LIST-MYRIGHTS', requires: ['ACL'], folder: 'list-myrights' },
  { name: 'QUOTA', storage: { server: ['quota'] }, folder: 'quota' },
  { name: 'CONDSTORE', folder: 'condstore' },
  { name: 'QRESYNC', requires: ['CONDSTORE'], folder: 'qresync' },
  { name: 'COMPRESS', aliases: ['COMPRESS=DEFLATE'], folder: 'compress' },
  { name: 'STATUS=SIZE', aliases: ['STATUS-SIZE'], folder: 'status-size' },
  { name: 'LIST-STATUS', folder: 'list-status' },
  { name: 'LITERAL-', aliases: ['LITERALMINUS'], folder: 'literal-minus' },
  { name: 'ESEARCH', folder: 'esearch' },
  { name: 'SEARCHRES', requires: ['ESEARCH'], folder: 'searchres' },
  { name: 'SORT', folder: 'sort' },
  { name: 'THREAD', folder: 'thread' },
  { name: 'I18NLEVEL=1', folder: 'i18nlevel' },
  { name: 'WITHIN', folder: 'within' },
  { name: 'PARTIAL', requires: ['ESEARCH'], folder: 'partial' },
  { name: 'CONTEXT', aliases: ['CONTEXT=SEARCH', 'CONTEXT=SORT'], requires: ['ESEARCH'], folder: 'context' },
  { name: 'UNAUTHENTICATE', folder: 'unauthenticate' },
  { name: 'BINARY', folder: 'binary' },
  { name: 'PREVIEW', folder: 'preview' },
  { name: 'OBJECTID', storage: { mailbox: ['mailboxId'], message: ['emailId', 'threadId'], server: ['objectIdNext'] }, folder: 'objectid' },
  { name: 'SAVEDATE', storage: { message: ['saveDate'] }, folder: 'savedate' },
  { name: 'UTF8=ACCEPT', aliases: ['UTF8-ACCEPT'], requires: ['ENABLE'], folder: 'utf8-accept' },
  { name: 'NOTIFY', folder: 'notify' },
  { name: 'LIST-EXTENDED', folder: 'list-extended' },
  { name: 'X-GM-EXT-1', requires: ['SPECIAL-USE'], optIn: true, storage: { message: ['xGmMsgid', 'xGmThrid'] }, folder: 'x-gm-ext-1' },
];

const rowsByName = new Map(BUILTIN_ROWS.map((r) => [r.name, r]));
const loaded = new Map<string, Extension>();
let eager: (() => Iterable<Extension>) | null = null;
let aliases: ReadonlyMap<string, string> | null = null;

/**
 * Hands over every built-in object, already imported (./index.ts does this
 * for the package entry): they are taken from here and never loaded again.
 * Only the function is kept; it is called on the first lookup.
 */
export function provideBuiltins(all: () => Iterable<Extension>): void {
  eager = all;
}

/** The row of the built-in named `name` (canonical upper-case name), or undefined. */
export function builtinRow(name: string): BuiltinRow | undefined {
  return rowsByName.get(name);
}

/**
 * The extension object of the built-in `name` (canonical name). Loaded on
 * first use when no entry module imported it already: a synchronous
 * require of the ES module (Node ^20.19 and >=22.12, the package's engines),
 * so `createServer` stays synchronous.
 */
export function builtinExtension(name: string): Extension {
  const hit = loaded.get(name);
  if (hit) return hit;
  if (eager) {
    for (const e of eager()) loaded.set(e.name, e);
    eager = null;
    const again = loaded.get(name);
    if (again) return again;
  }
  const row = rowsByName.get(name);
  if (!row) throw new Error(`no built-in plugin ${name}`);
  requireHere ??= createRequire(import.meta.url);
  const { extension } = requireHere(`./${row.folder}/index.js`) as { extension: Extension };
  if (extension.name !== row.name) throw new Error(`src/extensions/${row.folder} holds ${extension.name}, its catalog row says ${row.name}`);
  loaded.set(name, extension);
  return extension;
}
let requireHere: NodeJS.Require | null = null;

/** Names of the built-in plugins, in catalog order. */
export function builtinPluginNames(): string[] {
  return BUILTIN_ROWS.map((r) => r.name);
}

/** The built-ins `plugins: "all"` loads: every one but the opt-in ones, in catalog order. */
export function allPluginNames(): string[] {
  return BUILTIN_ROWS.filter((r) => !r.optIn).map((r) => r.name);
}

/** Aliases (upper case) to canonical built-in names. */
export function builtinAliases(): ReadonlyMap<string, string> {
  if (!aliases) {
    const out = new Map<string, string>();
    for (const r of BUILTIN_ROWS) for (const a of r.aliases ?? []) out.set(a.toUpperCase(), r.name);
    aliases = out;
  }
  return aliases;
}

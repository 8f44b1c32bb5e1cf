/**
 * Every built-in extension, imported: each folder exports `extension`, and
 * everything about it (name, aliases, requires, options, points) comes from
 * that object. The package entry (src/index.ts) imports this module, so a
 * program that imports the package has every built-in at hand as before; the
 * `rookery` command does not, and loads only the folders of its plugins
 * (./builtins.ts, whose rows give the catalog order and must match this list).
 * To add a built-in: its folder, one import line here and its row in
 * ./builtins.ts.
 */
import { provideBuiltins } from './builtins.js';
import type { Extension } from './extension.js';
import * as imap4rev2 from './imap4rev2/index.js';
import * as idle from './idle/index.js';
import * as namespace from './namespace/index.js';
import * as uidplus from './uidplus/index.js';
import * as move from './move/index.js';
import * as unselect from './unselect/index.js';
import * as enable from './enable/index.js';
import * as id from './id/index.js';
import * as literalPlus from './literal-plus/index.js';
import * as saslIr from './sasl-ir/index.js';
import * as authPlain from './auth-plain/index.js';
import * as authXoauth2 from './auth-xoauth2/index.js';
import * as authOauthbearer from './auth-oauthbearer/index.js';
import * as authExternal from './auth-external/index.js';
import * as children from './children/index.js';
import * as specialUse from './special-use/index.js';
import * as createSpecialUse from './create-special-use/index.js';
import * as appendlimit from './appendlimit/index.js';
import * as multiappend from './multiappend/index.js';
import * as catenate from './catenate/index.js';
import * as urlPartial from './url-partial/index.js';
import * as urlauth from './urlauth/index.js';
import * as metadataServer from './metadata-server/index.js';
import * as metadata from './metadata/index.js';
import * as acl from './acl/index.js';
import * as listMyrights from './list-myrights/index.js';
import * as quota from './quota/index.js';
import * as condstore from './condstore/index.js';
import * as qresync from './qresync/index.js';
import * as compress from './compress/index.js';
import * as statusSize from './status-size/index.js';
import * as listStatus from './list-status/index.js';
import * as literalMinus from './literal-minus/index.js';
import * as esearch from './esearch/index.js';
import * as searchres from './searchres/index.js';
import * as sort from './sort/index.js';
import * as thread from './thread/index.js';
import * as i18nlevel from './i18nlevel/index.js';
import * as within from './within/index.js';
import * as partial from './partial/index.js';
import * as context from './context/index.js';
import * as unauthenticate from './unauthenticate/index.js';
import * as binary from './binary/index.js';
import * as preview from './preview/index.js';
import * as objectid from './objectid/index.js';
import * as savedate from './savedate/index.js';
import * as utf8Accept from './utf8-accept/index.js';
import * as notify from './notify/index.js';
import * as listExtended from './list-extended/index.js';
import * as xGmExt1 from './x-gm-ext-1/index.js';

const FOLDERS: readonly { extension: Extension }[] = [
  imap4rev2,
  idle,
  namespace,
  uidplus,
  move,
  unselect,
  enable,
  id,
  literalPlus,
  saslIr,
  authPlain,
  authXoauth2,
  authOauthbearer,
  authExternal,
  children,
  specialUse,
  createSpecialUse,
  appendlimit,
  multiappend,
  catenate,
  urlPartial,
  urlauth,
  metadataServer,
  metadata,
  acl,
  listMyrights,
  quota,
  condstore,
  qresync,
  compress,
  statusSize,
  listStatus,
  literalMinus,
  esearch,
  searchres,
  sort,
  thread,
  i18nlevel,
  within,
  partial,
  context,
  unauthenticate,
  binary,
  preview,
  objectid,
  savedate,
  utf8Accept,
  notify,
  listExtended,
  xGmExt1,
];

let catalog: Map<string, Extension> | null = null;

/** The built-in extensions by plugin name, in catalog order. */
export function builtinExtensions(): ReadonlyMap<string, Extension> {
  catalog ??= new Map(FOLDERS.map((f) => [f.extension.name, f.extension]));
  return catalog;
}

// Only a function is handed over: nothing is built until a server looks a built-in up.
provideBuiltins(() => FOLDERS.map((f) => f.extension));

export { allPluginNames, builtinAliases, builtinPluginNames } from './builtins.js';

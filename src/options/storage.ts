/**
 * Validation of the storage option (design §3) into a flat StorageSeed.
 *
 * Shape: top-level `INBOX` (matched in any case) is a mailbox; every other
 * top-level key is a namespace prefix whose value is `{type, separator,
 * folders}`. Mailbox paths are the namespace prefix followed by the folder
 * names joined with the namespace separator (a separator is inserted after a
 * non-empty prefix that does not already end with it). INBOX's own `folders`
 * become `INBOX<sep><name>`, with the separator of the first personal
 * namespace. Without any personal namespace a `""` one (separator `/`) is
 * added; INBOX always exists.
 */
import { internalDateFromMs, parseInternalDate, type InternalDate } from '../store/internal-date.js';
import { encodeMutf7, isValidMutf7 } from '../store/mutf7.js';
import { sourceOctets, utf8Bytes } from '../store/raw-bytes.js';
import { loadOnUse } from '../util/load-on-use.js';
import { deepCopy } from './copy.js';
import { checkTypos, childPath, describeValue, indexPath, isPlainObject, Problems, setOwn } from './problems.js';
import type { SeedMailbox, SeedMessage, SeedNamespace, StorageSeed } from './types.js';

// Read with the first `import` key: most storages have none (six modules of mbox, Maildir and date parsing).
const fixtureImport = loadOnUse<typeof import('../fixtures/import.js')>(import.meta.url, '../fixtures/import.js');
// Read with the first `generate` key (docs/generator.md).
const generator = loadOnUse<typeof import('../generator/storage.js')>(import.meta.url, '../generator/storage.js');

/** Keys a mailbox object may hold that the core reads. */
export const MAILBOX_KEYS = [
  'messages',
  'folders',
  'flags',
  'subscribed',
  'uidvalidity',
  'uidnext',
  'HIGHESTMODSEQ',
  'special-use',
  'permanentFlags',
  'import',
  'generate',
] as const;

/** Mailbox keys owned by built-in extensions; kept in `extra` but typo-checked. */
export const EXTENSION_MAILBOX_KEYS = ['acl', 'metadata'] as const;

/** Keys a message object may hold that the core reads. */
export const MESSAGE_KEYS = ['raw', 'encoding', 'flags', 'internaldate', 'uid', 'modseq'] as const;

/** Keys of a namespace object. */
export const NAMESPACE_KEYS = ['type', 'separator', 'folders'] as const;

/** Keys that only make sense on a mailbox: a namespace holding one is a misplaced mailbox. */
const MAILBOX_ONLY_KEYS = new Set<string>(MAILBOX_KEYS.filter((k) => k !== 'folders'));

const NAMESPACE_KEY_SET = new Set<string>(NAMESPACE_KEYS);

const SYSTEM_FLAGS = new Map(
  ['\\Seen', '\\Answered', '\\Flagged', '\\Deleted', '\\Draft', '\\Recent'].map((f) => [f.toLowerCase(), f]),
);

const MAILBOX_ATTRIBUTES = new Map(
  ['\\Noselect', '\\Noinferiors', '\\Marked', '\\Unmarked', '\\NonExistent', '\\Subscribed', '\\Remote'].map((f) => [
    f.toLowerCase(),
    f,
  ]),
);
/** Attributes the server derives itself; old snapshots may hold them. Dropped. */
const DERIVED_ATTRIBUTES = new Set(['\\haschildren', '\\hasnochildren']);

/** RFC 6154 special-use attributes (and RFC 8457 \Important) by lower-case name, canonical spelling as value. */
export const SPECIAL_USE = new Map(
  ['\\All', '\\Archive', '\\Drafts', '\\Flagged', '\\Junk', '\\Sent', '\\Trash', '\\Important'].map((f) => [
    f.toLowerCase(),
    f,
  ]),
);

/** A flag: an atom, optionally after one backslash (RFC 3501 `flag`). */
const FLAG = /^\\?[^\x00-\x20\x7f-\uffff(){%*"\\\]]+$/;
const BASE64 = /^[A-Za-z0-9+/\s]*(?:=\s*){0,2}$/;
const NON_LATIN1 = /[^\x00-\xff]/;
const SEPARATOR = /^[!-~]$/;
const ALNUM_OR_AMP = /^[A-Za-z0-9&]$/;

const MAX_UID = 0xffffffff;

/** Checks an extension-owned value; returns the value to keep. `report` records a problem at the key's path. */
export type FieldValidator = (value: unknown, report: (message: string) => void) => unknown;

export interface StorageContext {
  /** Mailbox keys owned by extensions, beyond the built-in ones. */
  mailboxKeys?: readonly string[];
  /** Message keys owned by extensions. */
  messageKeys?: readonly string[];
  /** Namespace keys owned by extensions (server-wide fields live on `storage[""]`). */
  namespaceKeys?: readonly string[];
  /** Validators of loaded extensions' keys, by key. */
  mailboxFields?: ReadonlyMap<string, FieldValidator>;
  messageFields?: ReadonlyMap<string, FieldValidator>;
  namespaceFields?: ReadonlyMap<string, FieldValidator>;
}

/** The value to keep for an extension-owned key: validated when its extension is loaded. */
function fieldValue(problems: Problems, validators: ReadonlyMap<string, FieldValidator> | undefined, key: string, value: unknown, path: string): unknown {
  const copy = deepCopy(value);
  const validate = validators?.get(key);
  return validate ? validate(copy, (message) => problems.add(path, message)) : copy;
}

interface KnownKeys {
  set: ReadonlySet<string>;
  list: readonly string[];
}

interface Walk {
  problems: Problems;
  context: StorageContext;
  mailboxKeys: KnownKeys;
  messageKeys: KnownKeys;
  /** The internal date of messages without one (the clock's now, read once). */
  defaultDate: () => InternalDate;
  mailboxes: SeedMailbox[];
  /** Paths seen so far, INBOX in upper case, for duplicate detection. */
  paths: Map<string, string>;
  lastDateText: string | undefined;
  lastDate: InternalDate | undefined;
}

function known(base: readonly string[], more: readonly string[] | undefined): KnownKeys {
  const list = more && more.length > 0 ? [...base, ...more] : base;
  return { set: new Set(list), list };
}

/** Key sets by context: a shared context (the plugin set's) gets its sets made once. */
const knownByContext = new WeakMap<StorageContext, { mailboxKeys: KnownKeys; messageKeys: KnownKeys }>();

function knownKeys(context: StorageContext): { mailboxKeys: KnownKeys; messageKeys: KnownKeys } {
  let keys = knownByContext.get(context);
  if (!keys) {
    keys = {
      mailboxKeys: known([...MAILBOX_KEYS, ...EXTENSION_MAILBOX_KEYS], context.mailboxKeys),
      messageKeys: known(MESSAGE_KEYS, context.messageKeys),
    };
    knownByContext.set(context, keys);
  }
  return keys;
}

/** Validates the storage option. Problems go to `problems`; the result is only meaningful when none were added. */
export function resolveStorage(
  input: unknown,
  problems: Problems,
  now: () => number,
  context: StorageContext = {},
  /** Where the value sits in the options, for messages (`storage.users.alice` with userMailboxes). */
  base = 'storage',
): StorageSeed {
  let date: InternalDate | undefined;
  const walk: Walk = {
    problems,
    context,
    ...knownKeys(context),
    // One object for every message without a date: seeds are never changed, and 100,000 copies cost 3 MB.
    defaultDate: () => (date ??= internalDateFromMs(now())),
    mailboxes: [],
    paths: new Map(),
    lastDateText: undefined,
    lastDate: undefined,
  };
  const storage: Record<string, unknown> = input === undefined ? { INBOX: {}, '': {} } : (input as Record<string, unknown>);
  if (input !== undefined && !isPlainObject(input)) {
    problems.expected(base, 'an object', input);
    return { namespaces: [], mailboxes: [] };
  }

  let inboxKey: string | undefined;
  const namespaceKeys: string[] = [];
  for (const key of Object.keys(storage)) {
    if (storage[key] === undefined) continue;
    if (key.toUpperCase() === 'INBOX') {
      if (inboxKey !== undefined) {
        problems.add(childPath(base, key), `duplicates ${childPath(base, inboxKey)} (INBOX is case-insensitive)`);
        continue;
      }
      inboxKey = key;
    } else {
      namespaceKeys.push(key);
    }
  }

  const namespaces: SeedNamespace[] = [];
  const namespaceFolders: unknown[] = [];
  for (const prefix of namespaceKeys) {
    const resolved = resolveNamespace(prefix, storage[prefix], problems, context, base);
    if (resolved) {
      namespaces.push(resolved.namespace);
      namespaceFolders.push(resolved.folders);
    }
  }
  if (!namespaces.some((ns) => ns.type === 'personal') && !namespaceKeys.includes('')) {
    namespaces.unshift({ prefix: '', type: 'personal', separator: '/', extra: {} });
    namespaceFolders.unshift(undefined);
  }
  const reference = namespaces.find((ns) => ns.prefix === '' && ns.type === 'personal') ??
    namespaces.find((ns) => ns.type === 'personal');
  const inboxDelimiter = reference?.separator ?? '/';

  const inboxPath = inboxKey === undefined ? `${base}.INBOX` : childPath(base, inboxKey);
  const inboxValue = inboxKey === undefined ? undefined : storage[inboxKey];
  walk.paths.set('INBOX', inboxPath);
  walkMailbox(walk, inboxValue ?? {}, inboxPath, 'INBOX', inboxDelimiter);

  namespaces.forEach((ns, i) => {
    const folders = namespaceFolders[i];
    if (folders === undefined) return;
    const nsPath = childPath(childPath(base, ns.prefix), 'folders');
    let root = ns.prefix;
    if (root !== '' && !root.endsWith(ns.separator)) root += ns.separator;
    walkFolders(walk, folders, nsPath, root, ns.separator, ns.prefix === '');
  });

  return { namespaces, mailboxes: walk.mailboxes };
}

function resolveNamespace(
  prefix: string,
  value: unknown,
  problems: Problems,
  context: StorageContext,
  base: string,
): { namespace: SeedNamespace; folders: unknown } | null {
  const path = childPath(base, prefix);
  if (!isPlainObject(value)) {
    problems.expected(path, 'a namespace object ({type, separator, folders})', value);
    return null;
  }
  if (!isValidMutf7(prefix)) {
    problems.add(path, `namespace prefix is not valid modified UTF-7; write ${JSON.stringify(encodeMutf7(prefix))}`);
  }
  const extra: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (NAMESPACE_KEY_SET.has(key) || value[key] === undefined) continue;
    if (MAILBOX_ONLY_KEYS.has(key)) {
      problems.add(
        childPath(path, key),
        `a namespace has no ${key}; top-level storage keys other than INBOX are namespace prefixes, ` +
          `so a mailbox ${JSON.stringify(prefix)} belongs under storage[""].folders`,
      );
    }
  }
  const nsKeys = context.namespaceKeys?.length ? known(NAMESPACE_KEYS, context.namespaceKeys) : { set: NAMESPACE_KEY_SET, list: NAMESPACE_KEYS };
  checkTypos(value, nsKeys.set, nsKeys.list, path, problems);
  for (const key of Object.keys(value)) {
    if (!NAMESPACE_KEY_SET.has(key) && value[key] !== undefined) {
      setOwn(extra, key, fieldValue(problems, context.namespaceFields, key, value[key], childPath(path, key)));
    }
  }

  let type: SeedNamespace['type'] = prefix === '' ? 'personal' : 'shared';
  if (value.type !== undefined) {
    if (value.type === 'personal' || value.type === 'user' || value.type === 'shared') type = value.type;
    else problems.expected(childPath(path, 'type'), '"personal", "user" or "shared"', value.type);
  }

  let separator = defaultSeparator(prefix);
  if (value.separator !== undefined) {
    if (typeof value.separator === 'string' && SEPARATOR.test(value.separator) && !ALNUM_OR_AMP.test(value.separator)) {
      separator = value.separator;
    } else {
      problems.expected(
        childPath(path, 'separator'),
        'one printable ASCII character other than a letter, digit or "&"',
        value.separator,
      );
    }
  }

  if (value.folders !== undefined && !isPlainObject(value.folders)) {
    problems.expected(childPath(path, 'folders'), 'an object of mailboxes by name', value.folders);
    return { namespace: { prefix, type, separator, extra }, folders: undefined };
  }
  return { namespace: { prefix, type, separator, extra }, folders: value.folders };
}

/** `/`, or the last character of a prefix such as `#news.` when it is punctuation. */
function defaultSeparator(prefix: string): string {
  const last = prefix.slice(-1);
  return last !== '' && SEPARATOR.test(last) && !ALNUM_OR_AMP.test(last) ? last : '/';
}

/** Walks a `folders` object: `base` is the path prefix of its children (ending in the delimiter, or empty). */
function walkFolders(walk: Walk, folders: unknown, path: string, base: string, delimiter: string, personalRoot: boolean): void {
  if (folders === undefined) return;
  if (!isPlainObject(folders)) {
    walk.problems.expected(path, 'an object of mailboxes by name', folders);
    return;
  }
  for (const name of Object.keys(folders)) {
    const value = folders[name];
    if (value === undefined) continue;
    const namePath = childPath(path, name);
    if (!checkName(walk.problems, name, namePath, delimiter)) continue;
    if (personalRoot && name.toUpperCase() === 'INBOX') {
      walk.problems.add(namePath, 'duplicates INBOX; give INBOX as the top-level storage key "INBOX"');
      continue;
    }
    const full = base + name;
    const dupKey = full.toUpperCase() === 'INBOX' ? 'INBOX' : full;
    const previous = walk.paths.get(dupKey);
    if (previous !== undefined) {
      walk.problems.add(namePath, `mailbox ${JSON.stringify(full)} is also given at ${previous}`);
      continue;
    }
    walk.paths.set(dupKey, namePath);
    walkMailbox(walk, value, namePath, full, delimiter);
  }
}

function checkName(problems: Problems, name: string, path: string, delimiter: string): boolean {
  if (name === '') {
    problems.add(path, 'a mailbox name must not be empty');
    return false;
  }
  if (name.includes(delimiter)) {
    problems.add(
      path,
      `a mailbox name must not contain the separator ${JSON.stringify(delimiter)}; nest it under "folders" instead`,
    );
    return false;
  }
  if (!isValidMutf7(name)) {
    problems.add(path, `not valid modified UTF-7; write ${JSON.stringify(encodeMutf7(name))}`);
    return false;
  }
  return true;
}

function walkMailbox(walk: Walk, value: unknown, path: string, full: string, delimiter: string): void {
  const { problems } = walk;
  if (!isPlainObject(value)) {
    problems.expected(path, 'a mailbox object', value);
    return;
  }
  checkTypos(value, walk.mailboxKeys.set, walk.mailboxKeys.list, path, problems);

  const mailbox: SeedMailbox = {
    path: full,
    delimiter,
    messages: [],
    flags: [],
    subscribed: true,
    specialUse: [],
    extra: {},
  };
  let folders: unknown;
  let imported: SeedMessage[] = [];
  let generated: SeedMessage[] = [];
  let uidnextPath = '';
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (v === undefined) continue;
    const keyPath = key === 'special-use' ? `${path}["special-use"]` : `${path}.${key}`;
    switch (key) {
      case 'messages':
        resolveMessages(walk, v, keyPath, mailbox.messages);
        break;
      case 'folders':
        folders = v;
        break;
      case 'flags':
        mailbox.flags = resolveFlagList(problems, v, keyPath, 'attribute');
        break;
      case 'subscribed':
        if (typeof v === 'boolean') mailbox.subscribed = v;
        else problems.expected(keyPath, 'a boolean', v);
        break;
      case 'uidvalidity':
        mailbox.uidvalidity = positiveInteger(problems, v, keyPath, MAX_UID);
        break;
      case 'uidnext':
        mailbox.uidnext = positiveInteger(problems, v, keyPath, MAX_UID + 1);
        uidnextPath = keyPath;
        break;
      case 'HIGHESTMODSEQ':
        mailbox.highestModseq = positiveInteger(problems, v, keyPath, Number.MAX_SAFE_INTEGER);
        break;
      case 'special-use':
        mailbox.specialUse = resolveSpecialUse(problems, v, keyPath);
        break;
      case 'permanentFlags':
        mailbox.permanentFlags = resolveFlagList(problems, v, keyPath, 'permanent');
        break;
      case 'import':
        imported = resolveImport(problems, v, keyPath);
        break;
      case 'generate':
        generated = generator().generatedSeed(v, problems, keyPath);
        break;
      default:
        setOwn(mailbox.extra, key, fieldValue(problems, walk.context.mailboxFields, key, v, childPath(path, key)));
    }
  }
  // Imported, then generated mail follows the listed messages, whatever the key order.
  for (const m of imported) mailbox.messages.push(m);
  for (const m of generated) mailbox.messages.push(m);
  if (mailbox.uidnext !== undefined) {
    let highest = 0;
    for (const m of mailbox.messages) if (m.uid !== undefined && m.uid > highest) highest = m.uid;
    if (mailbox.uidnext <= highest) {
      problems.add(uidnextPath, `must be greater than the highest message uid (${highest}), got ${mailbox.uidnext}`);
    }
  }
  walk.mailboxes.push(mailbox);
  if (folders !== undefined) {
    walkFolders(walk, folders, childPath(path, 'folders'), full + delimiter, delimiter, false);
  }
}

/** `import`: a path or an array of paths to mail files (src/fixtures/import.ts), read now. */
function resolveImport(problems: Problems, value: unknown, path: string): SeedMessage[] {
  const paths = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(paths) || paths.length === 0) {
    problems.expected(path, 'a path (a directory of .eml files, an mbox file or a Maildir) or an array of them', value);
    return [];
  }
  const out: SeedMessage[] = [];
  paths.forEach((item: unknown, i) => {
    const itemPath = typeof value === 'string' ? path : indexPath(path, i);
    if (typeof item !== 'string' || item === '') {
      problems.expected(itemPath, 'a path to a directory of .eml files, an mbox file or a Maildir', item);
      return;
    }
    try {
      for (const m of fixtureImport().importMessages(item)) {
        const flags = resolveFlagList(problems, m.flags, itemPath, 'message');
        out.push({ raw: m.raw, flags, internaldate: m.internaldate, extra: {} });
      }
    } catch (err) {
      problems.add(itemPath, (err as Error).message);
    }
  });
  return out;
}

function positiveInteger(problems: Problems, value: unknown, path: string, max: number): number | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    problems.expected(path, 'a positive integer', value);
    return undefined;
  }
  if (value > max) {
    problems.expected(path, `a positive integer up to ${max}`, value);
    return undefined;
  }
  return value;
}

function resolveSpecialUse(problems: Problems, value: unknown, path: string): string[] {
  const items = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(items)) {
    problems.expected(path, 'a special-use attribute or an array of them', value);
    return [];
  }
  const out: string[] = [];
  items.forEach((item: unknown, i) => {
    const itemPath = typeof value === 'string' ? path : indexPath(path, i);
    if (typeof item !== 'string' || !item.startsWith('\\') || !FLAG.test(item)) {
      problems.expected(itemPath, 'a special-use attribute such as "\\Sent"', item);
      return;
    }
    const canonical = SPECIAL_USE.get(item.toLowerCase()) ?? item;
    if (!out.includes(canonical)) out.push(canonical);
  });
  return out;
}

/**
 * A list of flags (`message`: system flags in canonical case, `\Recent`
 * dropped), mailbox attributes (`attribute`: derived `\HasChildren` /
 * `\HasNoChildren` dropped), or permanent flags (`permanent`: also `\*`).
 * Deduplicated case-insensitively, first spelling kept.
 */
function resolveFlagList(
  problems: Problems,
  value: unknown,
  path: string,
  kind: 'message' | 'attribute' | 'permanent',
): string[] {
  if (!Array.isArray(value)) {
    problems.expected(path, 'an array of strings', value);
    return [];
  }
  const out: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (typeof item !== 'string') {
      problems.expected(indexPath(path, i), 'a string', item);
      continue;
    }
    const lower = item.toLowerCase();
    let canonical: string;
    const system = kind === 'attribute' ? undefined : SYSTEM_FLAGS.get(lower);
    if (system !== undefined) {
      if (kind === 'message' && system === '\\Recent') continue;
      canonical = system;
    } else if (kind === 'permanent' && item === '\\*') {
      canonical = item;
    } else if (!FLAG.test(item)) {
      problems.add(indexPath(path, i), `not a valid ${kind === 'attribute' ? 'mailbox attribute' : 'flag'}: ${describeValue(item)}`);
      continue;
    } else if (kind === 'attribute') {
      if (DERIVED_ATTRIBUTES.has(lower)) continue;
      canonical = MAILBOX_ATTRIBUTES.get(lower) ?? item;
    } else {
      canonical = item;
    }
    if (seen.has(lower)) continue;
    seen.add(lower);
    out.push(canonical);
  }
  return out;
}

function resolveMessages(walk: Walk, value: unknown, path: string, out: SeedMessage[]): void {
  if (!Array.isArray(value)) {
    walk.problems.expected(path, 'an array of messages', value);
    return;
  }
  let lastUid = 0;
  let lastUidIndex = -1;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    // A bare source has nothing to report a problem about: no path string is made for it.
    if (typeof item === 'string') {
      out.push(new TextSeedMessage(item, walk.defaultDate()));
      continue;
    }
    const messagePath = indexPath(path, i);
    const message = resolveMessage(walk, item, messagePath);
    if (!message) continue;
    if (message.uid !== undefined) {
      if (message.uid <= lastUid) {
        walk.problems.add(
          `${messagePath}.uid`,
          `uid ${message.uid} is not greater than the uid ${lastUid} of messages[${lastUidIndex}]; list messages in ascending uid order`,
        );
      }
      lastUid = message.uid;
      lastUidIndex = i;
    }
    out.push(message);
  }
}

/**
 * A seed message given as a bare string. Its bytes are made when first
 * read (when its mailbox is first read): a server a test starts and stops
 * without touching the mailbox never encodes it, and the string is dropped
 * once it has been.
 */
class TextSeedMessage implements SeedMessage {
  readonly flags = NO_FLAGS;
  readonly extra = NO_EXTRA;
  private bytes: Buffer | null = null;

  constructor(
    private text: string,
    readonly internaldate: InternalDate,
  ) {}

  get raw(): Buffer {
    if (this.bytes === null) {
      this.bytes = utf8Bytes(this.text);
      this.text = '';
    }
    return this.bytes;
  }

  /** The store's byte count, from the text while it is not encoded yet (counting is cheaper than encoding). */
  get rawLength(): number {
    return sourceOctets(this.bytes ?? this.text);
  }
}

const NO_FLAGS = Object.freeze([]) as unknown as string[];
const NO_EXTRA = Object.freeze({}) as Record<string, unknown>;

function resolveMessage(walk: Walk, value: unknown, path: string): SeedMessage | null {
  const { problems } = walk;
  // A bare source shares the empty flag list and field object with every other (seeds are never changed).
  if (typeof value === 'string') return new TextSeedMessage(value, walk.defaultDate());
  if (value instanceof Uint8Array) {
    return { raw: Buffer.from(value), flags: NO_FLAGS, internaldate: walk.defaultDate(), extra: NO_EXTRA };
  }
  if (!isPlainObject(value)) {
    problems.expected(path, 'a message (a string, or an object with "raw")', value);
    return null;
  }
  checkTypos(value, walk.messageKeys.set, walk.messageKeys.list, path, problems);

  const raw = resolveRaw(problems, value.raw, value.encoding, path);
  let flags: string[] = [];
  let internaldate: InternalDate | null = null;
  let uid: number | undefined;
  let modseq: number | undefined;
  const extra: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (v === undefined) continue;
    // Known keys are identifiers: `path.key` (built only when needed by V8's lazy concatenation).
    const keyPath = `${path}.${key}`;
    switch (key) {
      case 'raw':
      case 'encoding':
        break;
      case 'flags':
        flags = resolveFlagList(problems, v, keyPath, 'message');
        break;
      case 'internaldate':
        internaldate = resolveInternalDate(walk, v, keyPath);
        break;
      case 'uid':
        uid = positiveInteger(problems, v, keyPath, MAX_UID);
        break;
      case 'modseq':
        modseq = positiveInteger(problems, v, keyPath, Number.MAX_SAFE_INTEGER);
        break;
      default:
        setOwn(extra, key, fieldValue(problems, walk.context.messageFields, key, v, childPath(path, key)));
    }
  }
  if (!raw) return null;
  const message: SeedMessage = { raw, flags, internaldate: internaldate ?? walk.defaultDate(), extra };
  if (uid !== undefined) message.uid = uid;
  if (modseq !== undefined) message.modseq = modseq;
  return message;
}

function resolveRaw(problems: Problems, raw: unknown, encoding: unknown, path: string): Buffer | null {
  const rawPath = `${path}.raw`;
  let enc: 'utf8' | 'latin1' | 'base64' = 'utf8';
  if (encoding !== undefined) {
    const e = typeof encoding === 'string' ? encoding.toLowerCase() : '';
    if (e === 'utf-8' || e === 'utf8') enc = 'utf8';
    else if (e === 'binary' || e === 'latin1') enc = 'latin1';
    else if (e === 'base64') enc = 'base64';
    else {
      problems.expected(`${path}.encoding`, '"utf-8", "binary" or "base64"', encoding);
      return null;
    }
  }
  if (raw instanceof Uint8Array) return Buffer.from(raw);
  if (typeof raw !== 'string') {
    if (raw === undefined) problems.add(rawPath, 'missing; a message object needs the message source in "raw"');
    else problems.expected(rawPath, 'a string or a Uint8Array', raw);
    return null;
  }
  if (enc === 'latin1') {
    const bad = NON_LATIN1.exec(raw);
    if (bad) {
      problems.add(
        rawPath,
        `encoding "binary" takes one character per byte, but offset ${bad.index} holds U+${bad[0]
          .charCodeAt(0)
          .toString(16)
          .toUpperCase()
          .padStart(4, '0')}`,
      );
      return null;
    }
  } else if (enc === 'base64' && !BASE64.test(raw)) {
    problems.add(rawPath, 'not valid base64');
    return null;
  }
  return enc === 'utf8' ? utf8Bytes(raw) : Buffer.from(raw, enc);
}

function resolveInternalDate(walk: Walk, value: unknown, path: string): InternalDate | null {
  const { problems } = walk;
  if (typeof value === 'string') {
    // Fixtures often give many messages the same date: remember the last one parsed.
    if (value === walk.lastDateText && walk.lastDate) return { ms: walk.lastDate.ms, tz: walk.lastDate.tz };
    const parsed = parseInternalDate(value);
    if (!parsed) {
      problems.add(path, `not an RFC 3501 date-time ("dd-Mon-yyyy hh:mm:ss +zzzz"): ${describeValue(value)}`);
      return null;
    }
    walk.lastDateText = value;
    walk.lastDate = parsed;
    return { ms: parsed.ms, tz: parsed.tz };
  }
  if (value instanceof Date) {
    const ms = value.getTime();
    if (Number.isNaN(ms)) {
      problems.add(path, 'expected a valid Date, got an invalid Date');
      return null;
    }
    return internalDateFromMs(ms);
  }
  problems.expected(path, 'an RFC 3501 date-time string or a Date', value);
  return null;
}

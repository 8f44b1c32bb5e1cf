/**
 * The per-server state and control API shared by METADATA-SERVER and
 * METADATA (RFC 5464): entry sets of the server (storage key `metadata`
 * on `storage[""]`) and of mailboxes (storage key `metadata` on the
 * mailbox), and the limits.
 *
 * `/private` entries: Rookery's users share one mailbox tree (design §3),
 * the way they share flags and subscriptions, so a `/private` entry belongs
 * to that one tree: every user sees and sets the same `/private` entries.
 * `/private/x` and `/shared/x` stay two different entries.
 */
import type { MailboxScope } from '../../control/control.js';
import { invalid } from '../../control/check.js';
import type { Server } from '../../server.js';
import type { Mailbox } from '../../store/mailbox.js';
import { getField, serverFields, setField, type FieldHolder } from '../../store/fields.js';
import { entryNameProblem, fold, readEntries, textEntries, writeEntries, type Entries, type StoredEntries } from './entries.js';

/** The storage key of entry sets, on mailboxes and on `storage[""]` (server entries). */
export const METADATA_KEY = 'metadata';

export interface MetadataLimits {
  /** Largest value SETMETADATA accepts, in octets (`NO [METADATA MAXSIZE n]` above it). */
  maxSize: number;
  /** Most entries one mailbox (or the server) may hold (`NO [METADATA TOOMANY]` beyond it). */
  maxEntries: number;
  /** False refuses `/private` entries over IMAP with `NO [METADATA NOPRIVATE]`. */
  private: boolean;
}

export const DEFAULT_LIMITS: MetadataLimits = { maxSize: 65536, maxEntries: 1000, private: true };

/** The control API of METADATA-SERVER and METADATA: `server.extension('METADATA')`. */
export interface MetadataApi {
  /** The entries of a mailbox, or of the server for `""` (the default): entry name to text. */
  getMetadata(path?: string, scope?: MailboxScope): Record<string, string>;
  /**
   * Sets entries (string values) and removes them (`null`); answers all
   * entries afterwards. `path` `""` is the server. Entry names are checked
   * (INVALID); the limits are IMAP's and do not apply here.
   */
  setMetadata(path: string, entries: Record<string, string | null>, scope?: MailboxScope): Record<string, string>;
  /** The current limits. */
  readonly limits: Readonly<MetadataLimits>;
  /** Changes limits for every later SETMETADATA. */
  setLimits(limits: Partial<MetadataLimits>): Readonly<MetadataLimits>;
  /** True when mailbox entries are served (the METADATA plugin is loaded, not only METADATA-SERVER). */
  readonly mailboxEntries: boolean;
  /**
   * Calls `listener` after every change of entries, by IMAP SETMETADATA or
   * `setMetadata` (NOTIFY's MailboxMetadataChange and ServerMetadataChange
   * follow it). Returns the function that stops it.
   */
  onMetadataChange(listener: (change: MetadataChange) => void): () => void;
}

/** Entries that changed: of a mailbox, or of the server (`path` `""`). */
export interface MetadataChange {
  path: string;
  /**
   * The mailbox whose entries changed (absent for the server's): with
   * `userMailboxes` each session names it by its own view (`path` is the
   * name the changer used).
   */
  mailbox?: Mailbox;
  /** The entry names as given (set or removed). */
  entries: string[];
  /** The session that made the change, or null for the control API and REST. */
  origin: number | null;
}

declare module '../extension.js' {
  interface ExtensionApis {
    'METADATA-SERVER': MetadataApi;
    METADATA: MetadataApi;
  }
}

/** Internal state: the API plus what the IMAP commands use. */
export interface MetadataState extends MetadataApi {
  readonly server: Server;
  /** The holder of a path's entries (`""`: the server); NONEXISTENT for a missing mailbox. */
  /** The entries' holder: the server for `""`, else the mailbox (`scope.user`: whose tree, with userMailboxes). */
  holder(path: string, scope?: MailboxScope): FieldHolder;
  read(holder: FieldHolder): Entries;
  write(holder: FieldHolder, entries: Entries): void;
  /** Tells the `onMetadataChange` listeners. */
  changed(change: MetadataChange): void;
}

function checkLimits(input: unknown, base: MetadataLimits): MetadataLimits {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw invalid('limits: expected an object');
  const o = input as Record<string, unknown>;
  const out = { ...base };
  for (const key of Object.keys(o)) {
    const v = o[key];
    if (key === 'maxSize' || key === 'maxEntries') {
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < (key === 'maxSize' ? 0 : 1)) {
        throw invalid(`${key}: expected an integer >= ${key === 'maxSize' ? 0 : 1}, got ${JSON.stringify(v)}`);
      }
      out[key] = v;
    } else if (key === 'private') {
      if (typeof v !== 'boolean') throw invalid(`private: expected a boolean, got ${JSON.stringify(v)}`);
      out.private = v;
    } else {
      throw invalid(`${JSON.stringify(key)}: unknown limit; known: maxSize, maxEntries, private`);
    }
  }
  return out;
}

/**
 * Builds the state. `options` are METADATA-SERVER's options, overridden key
 * by key by METADATA's (`pluginOptions.METADATA`) when that plugin is loaded.
 */
export function createState(server: Server, options: Record<string, unknown>): MetadataState {
  const fromMetadata = (server.options.pluginOptions.get('METADATA') ?? {}) as Record<string, unknown>;
  let limits = checkLimits({ ...options, ...fromMetadata }, DEFAULT_LIMITS);
  // Parsed entry sets by the stored object they were read from: a snapshot, reset or
  // rename never confuses them (reset gives new objects, a rename keeps the Mailbox's).
  const cache = new WeakMap<object, Entries>();
  const listeners = new Set<(change: MetadataChange) => void>();

  const state: MetadataState = {
    server,
    get limits() {
      return limits;
    },
    setLimits(input) {
      limits = checkLimits(input, limits);
      return limits;
    },
    get mailboxEntries() {
      return server.extension('METADATA') !== undefined;
    },
    holder(path, scope) {
      if (path === '') return serverFields(server.store);
      if (!state.mailboxEntries) {
        throw invalid('mailbox metadata needs the METADATA plugin (only METADATA-SERVER is loaded: server entries only)');
      }
      return server.control.treeOf(scope, path).require(path);
    },
    read(holder) {
      const stored = getField(holder, METADATA_KEY);
      if (stored === null || typeof stored !== 'object') return new Map();
      let entries = cache.get(stored);
      if (!entries) {
        entries = readEntries(stored);
        cache.set(stored, entries);
      }
      return new Map(entries);
    },
    write(holder, entries) {
      const stored = writeEntries(entries);
      setField(holder, METADATA_KEY, stored);
      if (stored) cache.set(stored, new Map(entries));
    },
    onMetadataChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    changed(change) {
      for (const listener of [...listeners]) listener(change);
    },
    getMetadata(path = '', scope) {
      if (typeof path !== 'string') throw invalid('path: expected a string');
      return textEntries(state.read(state.holder(path, scope)));
    },
    setMetadata(path, input, scope) {
      if (typeof path !== 'string') throw invalid('path: expected a string');
      const holder = state.holder(path, scope);
      if (input === null || typeof input !== 'object' || Array.isArray(input)) {
        throw invalid('body: expected an object of entry name to string value (null removes the entry)');
      }
      const entries = state.read(holder);
      const seen = new Map<string, string>();
      const changes: [string, string, Buffer | null][] = [];
      for (const name of Object.keys(input)) {
        const problem = entryNameProblem(name);
        if (problem) throw invalid(`${JSON.stringify(name)}: ${problem}`);
        const key = fold(name);
        if (seen.has(key)) throw invalid(`${JSON.stringify(name)}: the same entry as ${JSON.stringify(seen.get(key))} (entry names are case-insensitive)`);
        seen.set(key, name);
        const v = (input as Record<string, unknown>)[name];
        if (v !== null && typeof v !== 'string') throw invalid(`${JSON.stringify(name)}: expected a string or null, got ${Array.isArray(v) ? 'an array' : typeof v}`);
        changes.push([key, name, v === null ? null : Buffer.from(v, 'utf8')]);
      }
      for (const [key, name, value] of changes) {
        if (value === null) entries.delete(key);
        else entries.set(key, { name, value });
      }
      state.write(holder, entries);
      const names = changes.map(([, name]) => name);
      state.changed(path === '' ? { path: '', entries: names, origin: null } : { path: (holder as Mailbox).path, mailbox: holder as Mailbox, entries: names, origin: null });
      return textEntries(entries);
    },
  };
  return state;
}

/** Validates a storage value of the `metadata` key (`report` names the problem). */
export function validateStored(value: unknown, report: (message: string) => void): unknown {
  readEntries(value, (name, message) => report(name === null ? message : `${JSON.stringify(name)}: ${message}`));
  return value as StoredEntries;
}

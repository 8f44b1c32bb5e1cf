import { deepCopy } from '../options/copy.js';
import { setOwn } from '../options/problems.js';
import type { Storage, StorageMailbox, StorageNamespace } from '../options/types.js';
import { formatInternalDate } from './internal-date.js';
import type { Mailbox } from './mailbox.js';
import type { Message } from './message.js';
import type { Store } from './store.js';

/** A message object of a snapshot: the raw source as a binary string (one char per byte). */
export interface SnapshotMessage {
  raw: string;
  /** Present (`binary`) when the source has bytes above 0x7F, so loading it back is unambiguous. */
  encoding?: 'binary';
  flags: string[];
  internaldate: string;
  uid: number;
  modseq: number;
  [key: string]: unknown;
}

function hasHighBytes(raw: Buffer): boolean {
  for (let i = 0; i < raw.length; i++) if (raw[i]! > 0x7f) return true;
  return false;
}

function snapshotMessage(m: Message): SnapshotMessage {
  const out: SnapshotMessage = {
    ...(m.extra ? deepCopy(m.extra) : {}),
    raw: m.raw.toString('latin1'),
    flags: [...m.flags],
    internaldate: formatInternalDate(m.internaldate),
    uid: m.uid,
    modseq: m.modseq,
  };
  if (hasHighBytes(m.raw)) out.encoding = 'binary';
  return out;
}

function snapshotMailbox(store: Store, m: Mailbox): StorageMailbox {
  const out: StorageMailbox = {
    ...deepCopy(m.extra),
    messages: m.messages.map(snapshotMessage),
    subscribed: store.isSubscribed(m.path),
    uidvalidity: m.uidvalidity,
    uidnext: m.uidnext,
    HIGHESTMODSEQ: m.highestModseq,
  };
  if (m.attributes.length) out.flags = [...m.attributes];
  if (m.specialUse.length) out['special-use'] = [...m.specialUse];
  if (m.permanentFlags) out.permanentFlags = [...m.permanentFlags];
  return out;
}

/**
 * The whole store in the shape of the storage option; passing it as
 * `storage` to a new server rebuilds the same state byte for byte.
 * Credentials are never part of it.
 */
export function snapshotStore(store: Store): Storage {
  const storage: Storage = {};
  const byPath = new Map<string, StorageMailbox>();
  const roots = new Map<string, StorageNamespace>();
  for (const ns of store.namespaces) {
    const entry: StorageNamespace = { ...deepCopy(ns.extra), separator: ns.separator, folders: {} };
    if (ns.prefix !== '') entry.type = ns.type;
    roots.set(ns.prefix, entry);
    setOwn(storage, ns.prefix, entry);
  }
  // Parents sort before their children, so each parent exists when a child is placed.
  for (const m of store.list()) {
    const node = snapshotMailbox(store, m);
    byPath.set(m.path, node);
    if (m.path === 'INBOX') {
      storage.INBOX = node;
      continue;
    }
    const parentPath = store.parentOf(m.path);
    const ns = store.namespaceOf(m.path);
    const name = parentPath === null ? m.path.slice(ns.prefix.length) : m.path.slice(parentPath.length + ns.separator.length);
    const parent = parentPath === null ? roots.get(ns.prefix) : byPath.get(parentPath);
    if (!parent) continue;
    const folders = (parent.folders ??= {}) as Record<string, StorageMailbox>;
    // Mailbox names are user input: `__proto__` must become an own key, not the object's prototype.
    setOwn(folders, name, node);
  }
  return storage;
}

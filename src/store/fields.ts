/**
 * Extension-owned values in the store: keys of the storage option on
 * mailbox objects, message objects and the personal namespace (server-wide
 * fields). They live in the objects' `extra` records, so snapshots write
 * them back and reset restores them from the options. Keys are the
 * extensions' own constants; user-given names never become keys here.
 */
import { setOwn } from '../options/problems.js';
import type { Mailbox } from './mailbox.js';
import type { Message } from './message.js';
import type { Store } from './store.js';

/** Something that holds extension fields. */
export type FieldHolder = Mailbox | Message | { extra: Record<string, unknown> | null };

/** The value of `key`, or undefined. */
export function getField(holder: FieldHolder, key: string): unknown {
  const extra = holder.extra;
  return extra !== null && Object.hasOwn(extra, key) ? extra[key] : undefined;
}

/** Sets `key` (undefined removes it). Values must be JSON data: snapshots copy them. */
export function setField(holder: FieldHolder, key: string, value: unknown): void {
  if (value === undefined) {
    if (holder.extra !== null && Object.hasOwn(holder.extra, key)) delete holder.extra[key];
    return;
  }
  if (holder.extra === null) holder.extra = {};
  setOwn(holder.extra, key, value);
}

/** The holder of server-wide fields: the personal namespace (`storage[""]`). */
export function serverFields(store: Store): { extra: Record<string, unknown> } {
  const ns = store.namespaces.find((n) => n.prefix === '');
  if (ns) return ns;
  // The store always has a personal namespace; this is only a fallback for type safety.
  const created = { prefix: '', type: 'personal' as const, separator: '/', extra: {} };
  store.namespaces.unshift(created);
  return created;
}

/**
 * Conditions on the server's state that a test can wait for
 * (`server.waitUntil`, GET /v1/events/wait?mailbox=...): true now, or as
 * soon as an event or a store change makes them true.
 */
import { ServiceError } from './errors.js';
import { BUILTIN_ROWS } from './extensions/builtins.js';
import type { Extension } from './extensions/extension.js';
import type { SessionRegistry } from './session/registry.js';
import type { Store } from './store/store.js';

/**
 * `mailbox` has at least `messages` messages (with `userMailboxes`, of
 * `user`'s own tree; leave `user` out for a shared namespace); or session
 * `session` is (or is not) in IDLE.
 */
export type StateCondition = { mailbox: string; messages: number; user?: string } | { session: number; idling: boolean };

/** What a condition found when it held. */
export type StateReport = { mailbox: string; messages: number; user?: string } | { session: number; idling: boolean };

export function describeCondition(c: StateCondition): string {
  if ('mailbox' in c) return `mailbox ${JSON.stringify(c.mailbox)}${c.user !== undefined ? ` of ${JSON.stringify(c.user)}` : ''} has >= ${c.messages} messages`;
  return `session ${c.session} is ${c.idling ? '' : 'not '}idling`;
}

/** Throws INVALID unless `value` is one of the condition shapes. */
export function checkCondition(value: unknown): StateCondition {
  const shape = 'a condition { mailbox: string, messages: integer >= 0, user?: string } or { session: integer >= 1, idling: boolean }';
  if (typeof value !== 'object' || value === null) throw new ServiceError('INVALID', `waitUntil: expected ${shape}`);
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o).sort().join(',');
  if (keys === 'mailbox,messages' && typeof o.mailbox === 'string' && Number.isSafeInteger(o.messages) && (o.messages as number) >= 0) {
    return { mailbox: o.mailbox, messages: o.messages as number };
  }
  if (keys === 'mailbox,messages,user' && typeof o.mailbox === 'string' && Number.isSafeInteger(o.messages) && (o.messages as number) >= 0 && typeof o.user === 'string') {
    return { mailbox: o.mailbox, messages: o.messages as number, user: o.user };
  }
  if (keys === 'idling,session' && Number.isSafeInteger(o.session) && (o.session as number) >= 1 && typeof o.idling === 'boolean') {
    return { session: o.session as number, idling: o.idling };
  }
  throw new ServiceError('INVALID', `waitUntil: expected ${shape}, got ${JSON.stringify(value)}`);
}

/**
 * The report when `c` holds, else null. A mailbox that does not exist (yet)
 * has no messages; a session that does not exist is not idling.
 */
export function evaluate(c: StateCondition, store: Store, sessions: SessionRegistry): StateReport | null {
  if ('mailbox' in c) {
    const count = store.get(c.mailbox)?.messages.length ?? 0;
    if (count < c.messages) return null;
    return c.user !== undefined ? { mailbox: c.mailbox, messages: count, user: c.user } : { mailbox: c.mailbox, messages: count };
  }
  const s = sessions.get(c.session) as { idling?: boolean } | undefined;
  const idling = s?.idling === true;
  return idling === c.idling ? { session: c.session, idling } : null;
}

/**
 * Throws CANNOT when `c` waits for a session state that none of the loaded
 * extensions can put a session in (`idling` without IDLE), or whose
 * extensions are all hidden (`capabilities.hide`): such a wait could only
 * time out, and a test that expects the client to IDLE would learn nothing
 * from a TIMEOUT. The message names the built-ins that would produce it.
 */
export function checkProducible(c: StateCondition, extensions: readonly Extension[], hidden: readonly string[]): void {
  if ('mailbox' in c || !c.idling) return;
  const state = 'idling';
  const producers = extensions.filter((e) => e.produces?.includes(state));
  const hiddenSet = new Set(hidden.map((h) => h.toUpperCase()));
  if (producers.some((e) => !hiddenSet.has(e.name.toUpperCase()))) return;
  const names = BUILTIN_ROWS.filter((r) => r.produces?.includes(state)).map((r) => r.name);
  const wanted = names.join(' or ');
  const why =
    producers.length > 0
      ? `${producers.map((e) => e.name).join(', ')} is hidden (capabilities.hide), so no session is offered the ${wanted} capability`
      : `no loaded plugin offers the ${wanted} capability (plugins: [${extensions.map((e) => JSON.stringify(e.name)).join(', ')}])`;
  throw new ServiceError(
    'CANNOT',
    `waitUntil: session ${c.session} can never be idling: ${why}; a client falls back to polling (NOOP) without it. Load ${wanted} (leave plugins out for the default set, or add ${JSON.stringify(names[0] ?? 'IDLE')} to plugins)`,
  );
}

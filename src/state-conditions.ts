/**
 * Conditions on the server's state that a test can wait for
 * (`server.waitUntil`, GET /v1/events/wait?mailbox=...): true now, or as
 * soon as an event or a store change makes them true.
 */
import { ServiceError } from './errors.js';
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

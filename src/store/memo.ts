/**
 * Message memos: values derived from a message's raw bytes alone (never from
 * its flags, UID, mailbox or server), kept on the Message itself.
 *
 * An extension that computes such values for every message of a large
 * mailbox (SORT keys, THREAD links) would otherwise keep them in a Map keyed
 * by message: at 100,000 messages the lookups alone (a cache miss each in a
 * multi-megabyte table) cost more than the values. A memo is one array slot
 * per message, made on first use, freed with the message, and shared with
 * the message's copies (COPY, MOVE), whose raw bytes are the same Buffer.
 *
 * Slots are numbered when a memo is defined (once per module, a counter);
 * a message holds `null` until some memo is set on it.
 */
import type { Message } from './message.js';

export interface MessageMemo<T> {
  /** The value set for this message (or a copy of it), or undefined. */
  get(message: Message): T | undefined;
  set(message: Message, value: T): void;
}

let nextSlot = 0;

/** A new memo slot. Call once per kind of value (at module level), not per server or per message. */
export function messageMemo<T>(): MessageMemo<T> {
  const slot = nextSlot++;
  return {
    get: (message) => (message.memo === null ? undefined : (message.memo[slot] as T | undefined)),
    set: (message, value) => {
      // Sized for the slots defined so far: `[]` grown by one index would reserve room for 17.
      const memo = (message.memo ??= new Array<unknown>(nextSlot));
      memo[slot] = value;
    },
  };
}

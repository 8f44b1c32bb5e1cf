/**
 * RFC 4314 rights and access control lists as values: parsing a rights
 * string (with the virtual `c` and `d` rights of §2.1.1), formatting one for
 * IMAP (with `c`/`d` added) or REST (without), the effective rights of a
 * user, and the ACL as a Map (identifiers are user input: `__proto__` is an
 * identifier like any other, never a property lookup).
 */
import type { Right } from '../extension.js';

/** The standard rights (RFC 4314 §2.1) in the order responses list them. */
export const RIGHTS = 'lrswipkxtea';
/** Every right: what a mailbox without an ACL grants every user. */
export const ALL_RIGHTS: ReadonlySet<string> = new Set(RIGHTS);

/**
 * The obsolete rights of RFC 2086 as macros (RFC 4314 §2.1.1), like the
 * RFC's own examples: `c` ("create") is `k` and `x`, `d` ("delete") is `e`
 * and `t` (`+cda` on `lrswi` gives `lrswicdakxet`).
 */
const VIRTUAL: Readonly<Record<string, string>> = { c: 'kx', d: 'et' };

/** Order of the IMAP form: the standard rights with the virtual ones before `a` (as Cyrus and RFC 8440's example: `lrswipkxtecda`). */
const IMAP_ORDER = 'lrswipkxtecda';

/** The identifier every user matches (RFC 4314 §2). */
export const ANYONE = 'anyone';

/** A user-facing error in a rights string or identifier: IMAP answers BAD, the control API INVALID. */
export class RightsError extends Error {}

/** How a SETACL/PUT changes an identifier's rights. */
export interface RightsChange {
  mode: 'set' | 'add' | 'remove';
  rights: Set<string>;
}

/** Reads a rights string: an optional `+`/`-` prefix, then rights letters (`c`/`d` expanded). */
export function parseRightsChange(text: string): RightsChange {
  let mode: RightsChange['mode'] = 'set';
  let body = text;
  if (text.startsWith('+')) {
    mode = 'add';
    body = text.slice(1);
  } else if (text.startsWith('-')) {
    mode = 'remove';
    body = text.slice(1);
  }
  return { mode, rights: parseRights(body) };
}

/** A rights string as a set of standard rights; unknown rights are errors (RFC 4314 §3.1: never silently ignored). */
export function parseRights(text: string): Set<string> {
  const out = new Set<string>();
  for (const ch of text) {
    if (ALL_RIGHTS.has(ch)) out.add(ch);
    else if (Object.hasOwn(VIRTUAL, ch)) for (const r of VIRTUAL[ch]!) out.add(r);
    else if (ch >= 'A' && ch <= 'Z') throw new RightsError(`Uppercase rights are not allowed (${JSON.stringify(ch)})`);
    else throw new RightsError(`The ${JSON.stringify(ch)} right is not supported; rights are ${RIGHTS} (and c, d)`);
  }
  return out;
}

/** Rights in canonical order without the virtual ones (REST, storage): `lrs`. */
export function formatRights(rights: ReadonlySet<string>): string {
  let out = '';
  for (const r of RIGHTS) if (rights.has(r)) out += r;
  return out;
}

/** Rights as IMAP responses give them: `c` when `k` or `x` is there, `d` when `e` or `t` is (RFC 4314 §2.1.1). */
export function formatImapRights(rights: ReadonlySet<string>): string {
  let out = '';
  for (const r of IMAP_ORDER) {
    if (r === 'c' ? rights.has('k') || rights.has('x') : r === 'd' ? rights.has('e') || rights.has('t') : rights.has(r)) out += r;
  }
  return out;
}

/** Checks an identifier: non-empty, and a negative one names someone (`-` alone is nobody). */
export function checkIdentifier(identifier: string): string {
  if (identifier === '') throw new RightsError('The identifier is empty');
  if (identifier === '-') throw new RightsError('The identifier "-" names nobody (a negative identifier is "-" and a name)');
  return identifier;
}

/** An ACL: identifier → rights, in insertion order. */
export type Acl = Map<string, Set<string>>;

/**
 * The ACL kept in the store field (a plain object of identifier → rights
 * string, own properties only) as a Map; null for a mailbox without one.
 */
export function aclFromField(value: unknown): Acl | null {
  if (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const out: Acl = new Map();
  for (const key of Object.keys(value)) {
    const rights = (value as Record<string, unknown>)[key];
    if (typeof rights === 'string') out.set(key, parseRightsLenient(rights));
  }
  return out;
}

/** Stored rights were validated when loaded; anything else found there is left out rather than failing a command. */
function parseRightsLenient(text: string): Set<string> {
  try {
    return parseRights(text);
  } catch {
    return new Set([...text].filter((c) => ALL_RIGHTS.has(c)));
  }
}

/** An ACL as the store field and REST show it: a plain object with own properties (`__proto__` included). */
export function aclToObject(acl: Acl): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [identifier, rights] of acl) {
    Object.defineProperty(out, identifier, { value: formatRights(rights), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * A user's rights from an ACL (RFC 4314 §2): the union of the rights of
 * `anyone` and of the user's name, less the negative rights of `-anyone`
 * and `-name`. A mailbox without an ACL (null) grants every right.
 */
export function effectiveRights(acl: Acl | null, user: string): Set<string> {
  if (acl === null) return new Set(ALL_RIGHTS);
  const out = new Set<string>();
  for (const id of [ANYONE, user]) for (const r of acl.get(id) ?? []) out.add(r);
  for (const id of ['-' + ANYONE, '-' + user]) for (const r of acl.get(id) ?? []) out.delete(r);
  return out;
}

/**
 * Whether `user` has `right`: `effectiveRights(acl, user).has(right)`
 * without building the set. Every command asks, so this is the hot path
 * (an APPEND asks for `i`); a mailbox without an ACL answers at once.
 */
export function hasRight(acl: Acl | null, user: string, right: string): boolean {
  if (acl === null) return true;
  const granted = acl.get(ANYONE)?.has(right) || acl.get(user)?.has(right);
  return !!granted && !acl.get('-' + ANYONE)?.has(right) && !acl.get('-' + user)?.has(right);
}

/** Applies a change to one identifier's entry; an entry left without rights is removed. */
export function applyChange(acl: Acl, identifier: string, change: RightsChange): void {
  const current = acl.get(identifier) ?? new Set<string>();
  let next: Set<string>;
  if (change.mode === 'set') next = new Set(change.rights);
  else if (change.mode === 'add') next = new Set([...current, ...change.rights]);
  else next = new Set([...current].filter((r) => !change.rights.has(r)));
  if (next.size === 0) acl.delete(identifier);
  else acl.set(identifier, next);
}

/** Two ACLs with the same entries (order aside). */
export function sameAcl(a: Acl, b: Acl): boolean {
  if (a.size !== b.size) return false;
  for (const [id, rights] of a) {
    const other = b.get(id);
    if (!other || formatRights(other) !== formatRights(rights)) return false;
  }
  return true;
}

/** Whether a right is one of the RFC 4314 rights the core asks about. */
export function isRight(value: string): value is Right {
  return value.length === 1 && ALL_RIGHTS.has(value);
}

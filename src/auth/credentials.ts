/**
 * The checks behind every login, whatever the protocol (IMAP LOGIN and
 * AUTHENTICATE, POP3 USER/PASS, APOP and AUTH): the users of the store, with
 * their passwords and access tokens. Protocols word the answers themselves.
 */
import { nodeCrypto } from '../util/node-crypto.js';
import type { UserRecord } from '../options/types.js';

/** The users as the store keeps them (by name; a Map, never an object: names come from clients). */
export interface UserDirectory {
  get(name: string): UserRecord | undefined;
}

/** True when `user` exists, has a password, and it is `password`. */
export function passwordMatches(users: UserDirectory, user: string, password: string): boolean {
  const record = users.get(user);
  return record !== undefined && record.password !== null && record.password === password;
}

/**
 * The login of an access token (XOAUTH2, OAUTHBEARER): the token's session
 * time (null: none) when `token` is `user`'s, else null.
 */
export function tokenMatches(users: UserDirectory, user: string | undefined, token: string | undefined): { sessionTimeout: number | null } | null {
  if (user === undefined || token === undefined) return null;
  const expected = users.get(user)?.xoauth2;
  if (!expected || expected.accessToken !== token) return null;
  return { sessionTimeout: expected.sessionTimeout };
}

/**
 * APOP (RFC 1939 §7): the client sends the MD5 of the greeting's
 * timestamp followed by the shared secret, as 32 lower-case hex digits.
 * Compared in constant time; a user without a password cannot use it.
 */
export function apopMatches(users: UserDirectory, user: string, timestamp: string, digest: string): boolean {
  const record = users.get(user);
  if (record === undefined || record.password === null || !/^[0-9a-fA-F]{32}$/.test(digest)) return false;
  const expected = nodeCrypto().createHash('md5').update(timestamp + record.password, 'utf8').digest();
  return nodeCrypto().timingSafeEqual(expected, Buffer.from(digest, 'hex'));
}

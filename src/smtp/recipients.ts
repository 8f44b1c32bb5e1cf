/**
 * Which user a recipient address names. All users share one mailbox tree
 * (design §3), so the user decides only whether the address is accepted;
 * the message goes to INBOX once per transaction.
 */

export interface RecipientRules {
  /** Lower-case address → user name (`smtp.addresses`). */
  addresses: ReadonlyMap<string, string>;
  catchAll: boolean;
}

/**
 * The user an address names: the `addresses` map first, then the whole
 * address as a user name, then its local part. Null when none is a user;
 * with catch-all that still accepts (the result is then `""`).
 */
export function recipientUser(address: string, rules: RecipientRules, users: ReadonlyMap<string, unknown>): string | null {
  const mapped = rules.addresses.get(address.toLowerCase());
  if (mapped !== undefined && users.has(mapped)) return mapped;
  const at = address.lastIndexOf('@');
  const local = at > 0 ? address.slice(0, at) : address;
  const user = named(address, users) ?? named(local, users);
  if (user !== null) return user;
  return rules.catchAll ? '' : null;
}

/**
 * The user called `name`, or else the one user whose name differs only in
 * case: senders change the case of addresses freely (RFC 5321 §2.4 asks
 * hosts not to rely on it), user names are exact. The scan runs only
 * when the exact name misses.
 */
function named(name: string, users: ReadonlyMap<string, unknown>): string | null {
  if (users.has(name)) return name;
  const lower = name.toLowerCase();
  let found: string | null = null;
  for (const user of users.keys()) {
    if (user.toLowerCase() !== lower) continue;
    if (found !== null) return null;
    found = user;
  }
  return found;
}

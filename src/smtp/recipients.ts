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
  if (users.has(address)) return address;
  const at = address.lastIndexOf('@');
  const local = at > 0 ? address.slice(0, at) : address;
  if (users.has(local)) return local;
  return rules.catchAll ? '' : null;
}

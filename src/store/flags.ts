/** System flags in their canonical spelling, keyed by lower case. */
const SYSTEM_FLAGS = new Map(
  ['\\Seen', '\\Answered', '\\Flagged', '\\Deleted', '\\Draft', '\\Recent'].map((f) => [f.toLowerCase(), f]),
);

/** Canonical spelling of a flag: system flags in their RFC case, keywords as given. */
export function canonicalFlag(flag: string): string {
  return flag.startsWith('\\') ? (SYSTEM_FLAGS.get(flag.toLowerCase()) ?? flag) : flag;
}

/** The flags a mailbox lets clients store permanently unless the storage option says otherwise. */
export const DEFAULT_PERMANENT_FLAGS: readonly string[] = ['\\Answered', '\\Flagged', '\\Draft', '\\Deleted', '\\Seen'];

/** Flags a client or the control API may not set: session state, not message state. */
export function isSettableFlag(flag: string): boolean {
  return flag.toLowerCase() !== '\\recent' && flag !== '\\*';
}

/** A flag as RFC 3501 writes it: an atom, optionally after one backslash (`flag-keyword` / `flag-extension`). */
const FLAG_SYNTAX = /^\\?[^\x00-\x20\x7f-\uffff(){%*"\\\]]+$/;

/** True when `flag` can be sent over IMAP as a flag (no spaces, specials, 8-bit or control bytes). */
export function isFlagSyntax(flag: string): boolean {
  return FLAG_SYNTAX.test(flag);
}

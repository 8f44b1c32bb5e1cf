/**
 * Pieces for serializers that write a known response shape by hand, giving
 * exactly the text `JSON.stringify` gives. V8's generic stringify walks
 * every property through its general machinery and was over half of
 * Rookery's own work in a GET of a small resource; concatenating the known
 * keys costs about half as much.
 */
import type { MailboxInfo } from '../control/resources.js';

/**
 * Quoted forms of the strings serialized lately. The strings of a resource
 * (mailbox names, flags, attributes) are few and long-lived, so a lookup
 * (their hash is kept in the string) is cheaper than checking each for
 * characters to escape; flags all start with `\` and would need escaping
 * anyway. Bounded in entries and in string length, so a stream of odd
 * names cannot grow it; cleared when full.
 */
const quoted = new Map<string, string>();
const MAX_QUOTED = 256;
const MAX_QUOTED_LENGTH = 256;

/** `JSON.stringify(s)`. */
export function jsonString(s: string): string {
  let text = quoted.get(s);
  if (text === undefined) {
    text = JSON.stringify(s);
    if (s.length > MAX_QUOTED_LENGTH) return text;
    if (quoted.size >= MAX_QUOTED) quoted.clear();
    quoted.set(s, text);
  }
  return text;
}

/** `JSON.stringify(list)` for a list of strings. */
export function jsonStrings(list: readonly string[]): string {
  if (list.length === 0) return '[]';
  let out = `[${jsonString(list[0]!)}`;
  for (let i = 1; i < list.length; i++) out += `,${jsonString(list[i]!)}`;
  return `${out}]`;
}

/** `JSON.stringify(n)`: not-finite numbers are `null` in JSON. */
export function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/**
 * `JSON.stringify(info)` for a MailboxInfo as `mailboxInfo` builds it: its
 * keys in the order that function sets them, `fields` last and only when
 * present (its values, copies of extension store fields, go through
 * JSON.stringify as they are of no fixed shape).
 */
export function mailboxInfoJson(info: MailboxInfo): string {
  const fields = info.fields === undefined ? '' : `,"fields":${JSON.stringify(info.fields)}`;
  return (
    `{"path":${jsonString(info.path)},"delimiter":${jsonString(info.delimiter)},"flags":${jsonStrings(info.flags)}` +
    `,"selectable":${info.selectable},"subscribed":${info.subscribed},"messages":${jsonNumber(info.messages)}` +
    `,"unseen":${jsonNumber(info.unseen)},"uidnext":${jsonNumber(info.uidnext)},"uidvalidity":${jsonNumber(info.uidvalidity)}` +
    `,"permanentFlags":${jsonStrings(info.permanentFlags)},"specialUse":${jsonStrings(info.specialUse)}${fields}}`
  );
}

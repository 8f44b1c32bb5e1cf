/**
 * A message's flags as the octets of a FLAGS list's inside (`\Seen
 * $Label`), made once per flag set. Flag sets are never changed in place (a
 * change gives the message a new set, src/store/message.ts), so a set's
 * text never goes stale; it goes when the set does.
 */
const texts = new WeakMap<ReadonlySet<string>, Buffer>();

export function flagListOctets(flags: ReadonlySet<string>): Buffer {
  let text = texts.get(flags);
  if (text === undefined) {
    // Flags are atoms by grammar: latin1 is each character's octet.
    text = Buffer.from([...flags].join(' '), 'latin1');
    texts.set(flags, text);
  }
  return text;
}

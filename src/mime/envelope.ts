/**
 * RFC 3501 ENVELOPE, built as Dovecot builds it:
 * - when date, subject, in-reply-to or message-id occurs more than once,
 *   the last occurrence is used; the addresses of an address field that
 *   occurs more than once (two From: lines, ...) are all listed, in order;
 * - date, in-reply-to and message-id are the raw values with line breaks
 *   removed; the subject and address names are additionally
 *   whitespace-collapsed and trimmed, and go out as literals when that
 *   changed them or they hold `"` or `\` (Dovecot's "for humans" strings);
 *   a present but empty field is "" (only a missing one is NIL);
 * - sender and reply-to fall back to from when they hold no address;
 * - address lists are written with no SP between addresses
 *   (`env-from = "(" 1*address ")"`).
 * - address names keep the header bytes: RFC 2047 words are not decoded.
 */
import { adjoined } from '../imap/wire/serializer.js';
import { literal, type ImapValue } from '../imap/wire/values.js';
import { parseAddressList, type Address } from './address.js';
import { forHumans, fullValue, noLineBreaks } from './header.js';
import type { HeaderField, MimeNode } from './types.js';

const STRING_KEYS = new Set(['date', 'subject', 'in-reply-to', 'message-id']);
const ADDRESS_KEYS = new Set(['from', 'sender', 'reply-to', 'to', 'cc', 'bcc']);

interface Fields {
  /** Last occurrence of each string field. */
  last: Map<string, HeaderField>;
  /** Every occurrence of each address field, in order. */
  all: Map<string, HeaderField[]>;
}

function envelopeFields(node: MimeNode): Fields {
  const last = new Map<string, HeaderField>();
  const all = new Map<string, HeaderField[]>();
  for (const f of node.fields) {
    if (STRING_KEYS.has(f.key)) last.set(f.key, f);
    else if (ADDRESS_KEYS.has(f.key)) {
      const list = all.get(f.key);
      if (list === undefined) all.set(f.key, [f]);
      else list.push(f);
    }
  }
  return { last, all };
}

/**
 * A human-readable string (subject, address name) as Dovecot writes it:
 * cleaned by forHumans, and sent as a literal whenever the cleaning
 * changed something or the text holds `"` or `\` (Dovecot does not escape
 * these strings); an empty result is `""`.
 */
function human(value: Buffer): ImapValue {
  const cleaned = forHumans(value);
  if (cleaned.length === 0) return cleaned;
  const changed = !cleaned.equals(value) || value.indexOf(34) >= 0 || value.indexOf(92) >= 0;
  return changed ? literal(cleaned) : cleaned;
}

function addresses(fields: HeaderField[] | undefined): ImapValue[] | null {
  if (fields === undefined) return null;
  let list: Address[] = [];
  for (const field of fields) {
    const more = parseAddressList(fullValue(field));
    if (more !== null) list = list.length === 0 ? more : list.concat(more);
  }
  if (list.length === 0) return null;
  return adjoined(
    list.map((a): ImapValue[] => [
      a.name === null ? null : human(a.name),
      typeof a.route === 'string' || a.route === null ? a.route : noLineBreaks(a.route),
      typeof a.mailbox === 'string' || a.mailbox === null ? a.mailbox : noLineBreaks(a.mailbox),
      typeof a.domain === 'string' || a.domain === null ? a.domain : noLineBreaks(a.domain),
    ]),
  );
}

function nstring(field: HeaderField | undefined): Buffer | null {
  return field === undefined ? null : noLineBreaks(fullValue(field));
}

/**
 * The ENVELOPE of the message whose header is `node`'s header (the root,
 * or the `message` of a message/rfc822 part).
 * @returns `(date subject from sender reply-to to cc bcc in-reply-to message-id)`
 */
export function envelope(node: MimeNode, _raw: Buffer): ImapValue {
  const { last, all } = envelopeFields(node);
  const subject = last.get('subject');
  const from = addresses(all.get('from'));
  return [
    nstring(last.get('date')),
    subject === undefined ? null : human(fullValue(subject)),
    from,
    addresses(all.get('sender')) ?? from,
    addresses(all.get('reply-to')) ?? from,
    addresses(all.get('to')),
    addresses(all.get('cc')),
    addresses(all.get('bcc')),
    nstring(last.get('in-reply-to')),
    nstring(last.get('message-id')),
  ];
}

/**
 * RFC 3501 ENVELOPE, built as Dovecot builds it:
 * - when a field occurs more than once, the last occurrence is used;
 * - date, in-reply-to and message-id are the raw values with line breaks
 *   removed; the subject is additionally whitespace-collapsed and trimmed;
 *   a present but empty field is "" (only a missing one is NIL);
 * - sender and reply-to fall back to from when absent or empty;
 * - address names keep the header bytes: RFC 2047 words are not decoded.
 */
import type { ImapValue } from '../imap/wire/values.js';
import { parseAddressList } from './address.js';
import { forHumans, fullValue, noLineBreaks } from './header.js';
import type { HeaderField, MimeNode } from './types.js';

const ENVELOPE_KEYS = ['date', 'subject', 'from', 'sender', 'reply-to', 'to', 'cc', 'bcc', 'in-reply-to', 'message-id'] as const;
type EnvelopeKey = (typeof ENVELOPE_KEYS)[number];

function lastFields(node: MimeNode): Map<EnvelopeKey, HeaderField> {
  const wanted = new Set<string>(ENVELOPE_KEYS);
  const found = new Map<EnvelopeKey, HeaderField>();
  for (const f of node.fields) if (wanted.has(f.key)) found.set(f.key as EnvelopeKey, f);
  return found;
}

function addresses(field: HeaderField | undefined): ImapValue[] | null {
  if (field === undefined) return null;
  const list = parseAddressList(fullValue(field));
  if (list === null) return null;
  return list.map((a): ImapValue[] => [
    a.name === null ? null : forHumans(a.name),
    typeof a.route === 'string' || a.route === null ? a.route : noLineBreaks(a.route),
    typeof a.mailbox === 'string' || a.mailbox === null ? a.mailbox : noLineBreaks(a.mailbox),
    typeof a.domain === 'string' || a.domain === null ? a.domain : noLineBreaks(a.domain),
  ]);
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
  const f = lastFields(node);
  const subject = f.get('subject');
  const from = addresses(f.get('from'));
  return [
    nstring(f.get('date')),
    subject === undefined ? null : forHumans(fullValue(subject)),
    from,
    addresses(f.get('sender')) ?? from,
    addresses(f.get('reply-to')) ?? from,
    addresses(f.get('to')),
    addresses(f.get('cc')),
    addresses(f.get('bcc')),
    nstring(f.get('in-reply-to')),
    nstring(f.get('message-id')),
  ];
}

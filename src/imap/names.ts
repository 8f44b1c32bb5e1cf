/**
 * Mailbox names between the wire and the store. The store keeps names in
 * modified UTF-7 (RFC 3501 §5.1.3); a session whose rules say `utf8Names`
 * (IMAP4rev2, RFC 9051 §5.1; UTF8=ACCEPT, RFC 6855) sends and receives them
 * as UTF-8. This module is the one place that switch is read.
 */
import { decodeMutf7, encodeMutf7 } from '../store/mutf7.js';
import { imapProtocol } from './protocol.js';
import type { ImapSession } from './session.js';
import { Utf8Text, type ImapValue } from './wire/values.js';

/** True when the session's mailbox names are UTF-8 on the wire. */
export function utf8Names(session: ImapSession): boolean {
  return imapProtocol(session.server).rules(session).utf8Names;
}

/**
 * A store path as the session must see it: modified UTF-7 as stored, or
 * for a UTF-8 session the name in UTF-8, quoted as RFC 9051 allows.
 */
export function wireName(session: ImapSession, path: string): ImapValue {
  if (!utf8Names(session)) return path;
  return new Utf8Text(decodeMutf7(path) ?? path);
}

/**
 * The store path of a name a UTF-8 session sent (already decoded from
 * UTF-8): in Unicode Normalization Form C (RFC 9051 §5.1 lets a server
 * normalize, and then every command must find the same mailbox), then
 * modified UTF-7.
 */
export function storeNameFromUtf8(name: string): string {
  return encodeMutf7(name.normalize('NFC'));
}

/**
 * UTF8=ACCEPT (RFC 6855). After `ENABLE UTF8=ACCEPT` (authenticated state
 * only, §3: in the selected state it is not enabled) the session speaks
 * UTF-8 (the core's `utf8` mode): quoted strings may carry UTF-8 and
 * malformed UTF-8 is BAD, mailbox names come and go as UTF-8 instead of
 * modified UTF-7 (they are stored in modified UTF-7, so both kinds of
 * session see the same mailboxes), names with control characters are BAD,
 * and SEARCH with CHARSET is BAD (§3). A session that did not enable sees
 * modified UTF-7 exactly as before.
 *
 * APPEND takes the `UTF8 (literal8)` data form (§4; a plain literal inside
 * the parentheses is accepted too). Without ENABLE, an APPEND whose header
 * has 8-bit octets is refused with NO (§4), in either form.
 *
 * UTF8=ONLY (§6) is not advertised: it would refuse every client that does
 * not ENABLE, and a test server must serve both kinds.
 */
import { ServiceError } from '../../errors.js';
import type { ArgParser } from '../../imap/parser.js';
import type { ImapSession } from '../../imap/session.js';
import { defineExtension } from '../extension.js';
import { always } from '../shared.js';

export const UTF8_ACCEPT = 'UTF8=ACCEPT';

/** `"UTF8" SP "(" literal8 ")"`, the cursor right after `UTF8`. */
function utf8Literal(args: ArgParser): Buffer {
  args.sp();
  args.char('(');
  // The grammar always allows literal8 here (with BINARY loaded or not); a plain literal is taken too.
  const data = args.anyLiteral().data;
  args.char(')');
  return data;
}

/** True when the header of a message (up to the first empty line) has an octet above 0x7F. */
export function headerHas8bit(raw: Buffer): boolean {
  let lineStart = true;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c >= 0x80) return true;
    if (c === 0x0a) {
      if (lineStart) return false;
      lineStart = true;
    } else if (c !== 0x0d) lineStart = false;
  }
  return false;
}

const utf8On = (session: ImapSession): boolean => session.hasEnabled(UTF8_ACCEPT);

export const extension = defineExtension({
  name: 'UTF8=ACCEPT',
  aliases: ['UTF8-ACCEPT'],
  requires: ['ENABLE'],
  capabilities: always(UTF8_ACCEPT),
  enable: [UTF8_ACCEPT],
  mayEnable: (session) => session.state === 'authenticated',
  utf8: utf8On,
  appendForms: [{ name: 'UTF8', parse: utf8Literal }],
  checks: {
    append: ({ session, raw }) => {
      // Any UTF-8 session may send UTF-8 headers: IMAP4rev2 includes UTF8=ACCEPT (RFC 9755's abstract).
      if (session === null || raw === undefined || session.utf8) return;
      if (headerHas8bit(raw)) throw new ServiceError('CANNOT', 'The message header has 8-bit characters: ENABLE UTF8=ACCEPT first (RFC 6855 section 4)');
    },
  },
});

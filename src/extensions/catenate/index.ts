/**
 * CATENATE (RFC 4469): an APPEND message made of TEXT literals and IMAP
 * URLs of messages or parts on this server,
 * `APPEND box [flags] [date] CATENATE (TEXT {n} URL "/INBOX;UIDVALIDITY=7/;UID=3/;SECTION=1")`;
 * with MULTIAPPEND, several such messages in one APPEND. A relative URL is
 * resolved against `imap://user@server/` (RFC 4469 §3). A URL is read as
 * `BODY.PEEK[section]<partial>` of the message (no `\Seen` is set), with
 * the rights FETCH needs (`r`); `;PARTIAL=` is honoured (RFC 5550; the
 * URL-PARTIAL plugin advertises it). A URL that is not one (see imap-url.ts), names no message, another
 * user, a mailbox the user may not read, another UIDVALIDITY, a message or
 * a part that does not exist: `NO [BADURL url]`, nothing appended. A result
 * larger than `maxLiteral`: `NO [TOOBIG]`. The host of an absolute URL is
 * not compared (a server does not know every name it is reached by), and one
 * without a user is the session's. A URL with `;URLAUTH=` is verified by the
 * URLAUTH plugin when it is loaded (as URLFETCH would read it), and its
 * URLAUTH part is ignored otherwise.
 */
import { CommandFailure, no } from '../../imap/command.js';
import { ParseError, type ArgParser } from '../../imap/parser.js';
import { accessRefusal } from '../../imap/protocol.js';
import type { ImapSession } from '../../imap/session.js';
import type { Extension } from '../extension.js';
import { always } from '../shared.js';
import { ImapUrlError, parseImapUrl } from './imap-url.js';
import { findUrlMailbox, urlData } from './url-data.js';
import type { UrlAuthApi } from '../urlauth/index.js';

type CatPart = { text: Buffer } | { url: string };

/**
 * RFC 4469 §5 `url-resp-text` (errata 2002, 4046): the URL as given, bare;
 * a character it may not hold (CTL, `]`, 8-bit) is percent-encoded so the
 * code stays one token the client can read.
 */
function urlRespText(url: string): string {
  return url.replace(/[\x00-\x20\x5d\x7f-\uffff]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

function badUrl(url: string, reason: string): never {
  if (url.length === 0) throw new CommandFailure(no(`Empty URL: ${reason}`));
  throw new CommandFailure(no(`${reason}; CATENATE append has failed`, `BADURL ${urlRespText(url)}`));
}

/** The bytes a URL part stands for. */
function resolve(session: ImapSession, text: string): Buffer {
  let url;
  try {
    url = parseImapUrl(text);
  } catch (err) {
    if (err instanceof ImapUrlError) badUrl(text, err.message);
    throw err;
  }
  if (url.uid === null) badUrl(text, 'The URL names no message');
  // With URLAUTH loaded its token decides (the URL may be another user's, RFC 4467 §3); without it, it is ignored.
  const urlauth = url.urlauth === null ? undefined : session.server.extension<UrlAuthApi>('URLAUTH');
  if (urlauth) {
    const data = urlauth.fetch(session, text);
    if (data === null) badUrl(text, 'The URLAUTH-authorized URL does not verify');
    return data;
  }
  if (url.server?.user != null && url.server.user !== session.user) badUrl(text, 'The URL is for another user');
  const mailbox = findUrlMailbox(session, url.mailbox);
  if (!mailbox || !mailbox.selectable) badUrl(text, 'No such mailbox');
  // As FETCH asks; a hidden mailbox reads as a missing one.
  const refused = accessRefusal(session, 'r', mailbox, mailbox.path, 'APPEND');
  if (refused) badUrl(text, refused.code === 'NONEXISTENT' ? 'No such mailbox' : 'No read access to the mailbox');
  const data = urlData({ ...url, uid: url.uid }, mailbox);
  if (!Buffer.isBuffer(data)) badUrl(text, data.error);
  return data;
}

/** A TEXT part's data; literal8 (with BINARY) would plug in here. */
const textLiteral = (args: ArgParser): Buffer => args.literal();

export const extension: Extension = {
  name: 'CATENATE',
  capabilities: always('CATENATE'),
  appendForms: [
    {
      name: 'CATENATE',
      parse(args, session) {
        // RFC 4469 §5: "CATENATE" SP "(" cat-part *(SP cat-part) ")"
        args.sp();
        const parts = args.list<CatPart>(
          (a) => {
            if (a.tryKeyword('TEXT')) {
              a.sp();
              return { text: textLiteral(a) };
            }
            if (a.tryKeyword('URL')) {
              a.sp();
              return { url: a.astring().toString('latin1') };
            }
            throw new ParseError('Expected TEXT or URL in CATENATE');
          },
          { allowEmpty: false },
        );
        return {
          build() {
            const limit = session.server.options.maxLiteral;
            const chunks: Buffer[] = [];
            let total = 0;
            for (const part of parts) {
              const data = 'text' in part ? part.text : resolve(session, part.url);
              total += data.length;
              if (total > limit) throw new CommandFailure(no(`The catenated message is larger than ${limit} octets`, 'TOOBIG'));
              chunks.push(data);
            }
            return Buffer.concat(chunks, total);
          },
        };
      },
    },
  ],
};

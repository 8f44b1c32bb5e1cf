/**
 * The bytes an IMAP URL of a message or part names, read as
 * `BODY.PEEK[section]<partial>` (no `\Seen`): shared by CATENATE (which
 * turns a failure into `NO [BADURL]`) and URLAUTH's URLFETCH (which answers
 * NIL). Rights are the caller's business.
 */
import type { ImapSession } from '../../imap/session.js';
import { ArgParser, ParseError } from '../../imap/parser.js';
import { findPart, getMime, section as sectionOf, servedSource, type SectionSpec } from '../../mime/index.js';
import type { Mailbox } from '../../store/mailbox.js';
import { encodeMutf7, isValidMutf7 } from '../../store/mutf7.js';
import type { ImapUrl } from './imap-url.js';

/** A URL's mailbox name (UTF-8, RFC 5092 §3.2) as a store path; a modified UTF-7 spelling is taken as well. */
export function findUrlMailbox(session: ImapSession, name: string): Mailbox | undefined {
  const store = session.server.store;
  return store.get(encodeMutf7(name)) ?? (isValidMutf7(name) ? store.get(name) : undefined);
}

/** The URL's section in the FETCH grammar (`1.2`, `HEADER.FIELDS (To)`, `1.MIME`), or null when it is not one. */
function sectionSpec(text: string): SectionSpec | null {
  try {
    const args = ArgParser.from(`[${text}]`);
    const spec = args.section();
    args.end();
    return spec;
  } catch (err) {
    if (err instanceof ParseError) return null;
    throw err;
  }
}

/**
 * The data of a message URL (`url.uid` set) in `mailbox`, or why there is
 * none (a stale UIDVALIDITY, a missing message or part, an invalid section).
 */
export function urlData(url: ImapUrl & { uid: number }, mailbox: Mailbox): Buffer | { error: string } {
  if (url.uidvalidity !== null && url.uidvalidity !== mailbox.uidvalidity) return { error: 'UIDVALIDITY has changed' };
  const message = mailbox.byUid(url.uid);
  if (!message) return { error: 'No such message' };
  let data = servedSource(message.raw);
  if (url.section !== null) {
    const spec = sectionSpec(url.section);
    if (spec === null) return { error: `Invalid section ${JSON.stringify(url.section.slice(0, 40))}` };
    const root = getMime(data);
    if (spec.part.length > 0 && findPart(root, spec.part) === null) return { error: 'No such part' };
    const got = sectionOf(data, root, spec);
    if (got === null) return { error: 'Invalid section' };
    data = got;
  }
  if (url.partial) {
    const { offset, length } = url.partial;
    data = offset >= data.length ? Buffer.alloc(0) : data.subarray(offset, length === null ? data.length : Math.min(data.length, offset + length));
  }
  return data;
}

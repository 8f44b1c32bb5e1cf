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
import type { MailboxView } from '../../store/view.js';
import { encodeMutf7, isValidMutf7 } from '../../store/mutf7.js';
import type { ImapUrl } from './imap-url.js';

/** A URL's mailbox name (UTF-8, RFC 5092 §3.2) as a store path; a modified UTF-7 spelling is taken as well. */
export function findUrlMailbox(session: ImapSession, name: string, store: MailboxView = session.mailboxes): Mailbox | undefined {
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

/** What a message URL names: the served message and the section of it, before `;PARTIAL=`. */
export interface UrlTarget {
  /** The message as FETCH serves it. */
  source: Buffer;
  /** The URL's section, null for the whole message. */
  section: SectionSpec | null;
}

/**
 * The message and section a message URL (`url.uid` set) names in
 * `mailbox`, or why there are none (a stale UIDVALIDITY, a missing message
 * or part, an invalid section).
 */
export function urlTarget(url: ImapUrl & { uid: number }, mailbox: Mailbox): UrlTarget | { error: string } {
  if (url.uidvalidity !== null && url.uidvalidity !== mailbox.uidvalidity) return { error: 'UIDVALIDITY has changed' };
  const message = mailbox.byUid(url.uid);
  if (!message) return { error: 'No such message' };
  const source = servedSource(message.raw);
  if (url.section === null) return { source, section: null };
  const spec = sectionSpec(url.section);
  if (spec === null) return { error: `Invalid section ${JSON.stringify(url.section.slice(0, 40))}` };
  if (spec.part.length > 0 && findPart(getMime(source), spec.part) === null) return { error: 'No such part' };
  return { source, section: spec };
}

/** `data` cut to the URL's `;PARTIAL=offset[.length]` (RFC 5550), if it has one. */
export function applyPartial(url: ImapUrl, data: Buffer): Buffer {
  if (!url.partial) return data;
  const { offset, length } = url.partial;
  return offset >= data.length ? Buffer.alloc(0) : data.subarray(offset, length === null ? data.length : Math.min(data.length, offset + length));
}

/**
 * The data of a message URL (`url.uid` set) in `mailbox`, or why there is
 * none (a stale UIDVALIDITY, a missing message or part, an invalid section).
 */
export function urlData(url: ImapUrl & { uid: number }, mailbox: Mailbox): Buffer | { error: string } {
  const target = urlTarget(url, mailbox);
  if ('error' in target) return target;
  let data = target.source;
  if (target.section !== null) {
    const got = sectionOf(data, getMime(data), target.section);
    if (got === null) return { error: 'Invalid section' };
    data = got;
  }
  return applyPartial(url, data);
}

/**
 * URLAUTH=BINARY (RFC 5524): the extended URLFETCH. An argument may be a
 * list, `(url [param ...])`, asking for metadata and for the data in a form
 * a non-mail application can use:
 *
 * - `BODYPARTSTRUCTURE`: the structure of the part the URL names, as FETCH
 *   BODYSTRUCTURE gives it (for a URL without a section, the message's);
 * - `BINARY`: the part with its Content-Transfer-Encoding removed (RFC 3516
 *   rules: a literal8 `~{n}` exactly when the bytes hold a NUL); a URL's
 *   `;PARTIAL=` counts in the decoded bytes, as `BINARY[part]<o.n>` does;
 * - `BODY`: the data as the plain URLFETCH gives it.
 *
 * BODY and BINARY together are BAD; a list with no parameter means BODY.
 * The answer for a list is `url (item value ...)` with the items in the
 * order BODYPARTSTRUCTURE, then BODY or BINARY, whatever order they were
 * asked in. A URL that fails, for any reason, is `url NIL` as in the plain
 * form (RFC 4467 §6.3); so is one whose BINARY or BODYPARTSTRUCTURE cannot
 * be made: a section with a text part (`HEADER`, `TEXT`, `MIME`), which
 * names no body part, or a Content-Transfer-Encoding the server does not
 * know. The answer's form follows each argument's, so a client that sends
 * plain URLs sees exactly RFC 4467's answer.
 */
import { CommandFailure, bad } from '../../imap/command.js';
import type { ArgParser } from '../../imap/parser.js';
import { atom, literal, type ImapValue } from '../../imap/wire/values.js';
import { bodyStructure, findPart, getMime, section as sectionOf } from '../../mime/index.js';
import { UnknownEncoding, binaryContent } from '../binary/content.js';
import { applyPartial, type UrlTarget } from '../catenate/url-data.js';
import type { ImapUrl } from '../catenate/imap-url.js';

/** One URLFETCH argument: the URL, and for the list form what it asks for. */
export interface FetchRequest {
  url: string;
  /** Null for a plain URL argument (RFC 4467's form). */
  extended: { bodyPartStructure: boolean; data: 'BODY' | 'BINARY' | null } | null;
}

/** `url` or `"(" url *(SP param) ")"`. */
export function readFetchRequest(args: ArgParser): FetchRequest {
  if (!args.tryChar('(')) return { url: args.astring().toString('latin1'), extended: null };
  const url = args.astring().toString('latin1');
  let bodyPartStructure = false;
  let data: 'BODY' | 'BINARY' | null = null;
  while (args.trySp()) {
    const param = args.atom().toUpperCase();
    if (param === 'BODYPARTSTRUCTURE') bodyPartStructure = true;
    else if (param === 'BODY' || param === 'BINARY') {
      if (data !== null && data !== param) throw new CommandFailure(bad('URLFETCH cannot ask for both BODY and BINARY'));
      data = param;
    } else throw new CommandFailure(bad(`Unknown URLFETCH parameter ${param.slice(0, 40)}`));
  }
  args.char(')');
  if (!bodyPartStructure && data === null) data = 'BODY';
  return { url, extended: { bodyPartStructure, data } };
}

/** The part a URL's section names for BINARY/BODYPARTSTRUCTURE, or null when it names no body part. */
function bodyPart(target: UrlTarget): number[] | null {
  if (target.section === null) return [];
  return target.section.text === undefined ? target.section.part : null;
}

/**
 * The answer for a list argument: `(BODYPARTSTRUCTURE (...) BINARY ~{n}...)`,
 * or null (NIL) when something asked for cannot be made.
 */
export function extendedAnswer(request: NonNullable<FetchRequest['extended']>, url: ImapUrl, target: UrlTarget): ImapValue[] | null {
  const items: ImapValue[] = [];
  const { source } = target;
  if (request.bodyPartStructure) {
    const part = bodyPart(target);
    if (part === null) return null;
    const root = getMime(source);
    const node = part.length === 0 ? root : findPart(root, part);
    if (node === null) return null;
    items.push(atom('BODYPARTSTRUCTURE'), bodyStructure(node, source, true));
  }
  if (request.data === 'BODY') {
    const data = target.section === null ? source : sectionOf(source, getMime(source), target.section);
    if (data === null) return null;
    items.push(atom('BODY'), literal(applyPartial(url, data)));
  } else if (request.data === 'BINARY') {
    const part = bodyPart(target);
    if (part === null) return null;
    let decoded: Buffer;
    try {
      decoded = applyPartial(url, binaryContent(source, part));
    } catch (err) {
      if (err instanceof UnknownEncoding) return null;
      throw err;
    }
    items.push(atom('BINARY'), literal(decoded, decoded.includes(0)));
  }
  return items;
}

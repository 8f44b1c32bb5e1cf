/**
 * URLAUTH=BINARY (RFC 5524): the extended URLFETCH. An argument may be a
 * list, `(url [param ...])`, asking for metadata and for the data in a form
 * a non-mail application can use:
 *
 * - `BODYPARTSTRUCTURE`: the structure of the part the URL names, as FETCH
 *   BODYSTRUCTURE gives it (for a URL without a section, the message's);
 *   asked with BINARY it describes the data "as it has been returned"
 *   (§3.2): the identity encoding `binary`, the decoded size and lines
 *   (../binary/structure.ts). It describes the whole part, not the
 *   `;PARTIAL=` window (as Dovecot does).
 * - `BINARY`: the part with its Content-Transfer-Encoding removed, always
 *   as a literal, a literal8 `~{n}` exactly when the bytes hold a NUL
 *   (§3.1 MUST); a URL's `;PARTIAL=` counts in the decoded bytes, as
 *   `BINARY[part]<o.n>` does; NIL for an encoding the server does not know
 *   (§3.2), the BODYPARTSTRUCTURE then describing the part as it is (§4's
 *   X-BLURDYBLOOP example);
 * - `BODY`: the data as the plain URLFETCH gives it.
 *
 * BODY and BINARY together are BAD; a list with no parameter means BODY.
 * The answer for a list is `url (item value) (item value)` (§5
 * `url-metadata`: each element in its own parentheses) in the order
 * BODYPARTSTRUCTURE, then BODY or BINARY, whatever order they were asked
 * in. A URL that fails, for any reason, is `url NIL` as in the plain form
 * (RFC 4467 §6.3); so is one asking for BINARY or BODYPARTSTRUCTURE of a
 * section with a text part (`HEADER`, `TEXT`, `MIME`), which names no body
 * part. The answer's form follows each argument's, so a client that sends
 * plain URLs sees exactly RFC 4467's answer.
 */
import { CommandFailure, bad } from '../../imap/command.js';
import type { ArgParser } from '../../imap/parser.js';
import { atom, literal, type ImapValue } from '../../imap/wire/values.js';
import { bodyStructure, findPart, getMime, section as sectionOf } from '../../mime/index.js';
import { UnknownEncoding, binaryContent } from '../binary/content.js';
import { binaryStructure } from '../binary/structure.js';
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
 * The answer for a list argument after its URL: one parenthesized element
 * per item, `(BODYPARTSTRUCTURE (...)) (BINARY ~{n}...)` (RFC 5524 §5
 * `url-metadata = 1*(SP "(" url-metadata-el ")")`), or null (NIL) when the
 * URL names no body part for what is asked.
 */
export function extendedAnswer(request: NonNullable<FetchRequest['extended']>, url: ImapUrl, target: UrlTarget): ImapValue[] | null {
  const elements: ImapValue[] = [];
  const { source } = target;
  const part = bodyPart(target);
  const binary = request.data === 'BINARY';
  if ((request.bodyPartStructure || binary) && part === null) return null;
  if (request.bodyPartStructure) {
    const root = getMime(source);
    const node = part!.length === 0 ? root : findPart(root, part!);
    if (node === null) return null;
    // With BINARY it describes the decoded data; a part that cannot be decoded is described as it is (§4).
    let structure: ImapValue | null = null;
    if (binary) structure = whenDecodable(() => binaryStructure(source, part!));
    items(elements, 'BODYPARTSTRUCTURE', structure ?? bodyStructure(node, source, true));
  }
  if (request.data === 'BODY') {
    const data = target.section === null ? source : sectionOf(source, getMime(source), target.section);
    if (data === null) return null;
    items(elements, 'BODY', literal(applyPartial(url, data)));
  } else if (binary) {
    // A literal always (never quoted: decoded data may hold CR, LF, 8-bit); literal8 exactly when it holds NUL.
    // §3.2: "If this is not possible (... the content transfer encoding is unknown ...) then this MAY contain NIL".
    const decoded = whenDecodable(() => applyPartial(url, binaryContent(source, part!)));
    items(elements, 'BINARY', decoded === null ? null : literal(decoded, decoded.includes(0)));
  }
  return elements;
}

function items(out: ImapValue[], name: string, value: ImapValue): void {
  out.push([atom(name), value]);
}

/** `make()`, or null when the data is in an encoding the server does not know. */
function whenDecodable<T>(make: () => T): T | null {
  try {
    return make();
  } catch (err) {
    if (err instanceof UnknownEncoding) return null;
    throw err;
  }
}

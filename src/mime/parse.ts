/**
 * One-pass MIME parser producing a byte-offset tree (see types.ts).
 *
 * Boundary handling follows Dovecot's message parser:
 * - a delimiter is a line starting with "--" + boundary; only the prefix
 *   has to match (RFC 2046), and when several active boundaries match, the
 *   longest wins (an exact match of the whole line stops the search),
 *   innermost first;
 * - the line break before a delimiter belongs to the delimiter, not to the
 *   part before it;
 * - a delimiter of an enclosing multipart also ends the inner ones (so a
 *   missing close-delimiter is tolerated), and a delimiter line ends a
 *   part's header even when no blank line was seen;
 * - the preamble and epilogue belong to the multipart's body but to no part;
 * - Content-* headers of a message count only when it has MIME-Version or
 *   Content-Type; parts inside a multipart always count;
 * - without a (usable) Content-Type, a part is text/plain, or message/rfc822
 *   inside multipart/digest;
 * - a multipart or message nested MAX_DEPTH deep (the message itself
 *   being depth 0, so at depth MAX_DEPTH - 1) is not parsed further: it is
 *   a leaf shown as application/octet-stream, its parameters kept;
 * - a multipart without a boundary parameter has no parts; `boundary=""`
 *   makes every line starting with "--" a delimiter;
 * - a blank line right before a delimiter of an enclosing multipart
 *   belongs to the delimiter, so such a header ends without a blank line
 *   (unless the delimiter is the part's own first one).
 *
 * Sizes and line counts are of the bytes parsed (bare LF line endings
 * count as they are: one byte, one line). FETCH parses the CRLF form of a
 * message (`servedSource` in crlf.ts), as Dovecot serves it.
 */
import {
  defaultContentType,
  fullValue,
  parseContentType,
  parseDisposition,
  parseEncoding,
  parseLanguage,
} from './header.js';
import type { ContentType, Disposition, HeaderField, MimeKind, MimeNode } from './types.js';

/** Deepest nesting parsed as structure; deeper multiparts and messages are leaves. */
export const MAX_DEPTH = 100;

/** A delimiter line found in the input. */
interface Stop {
  /** Offset of the line ("--boundary..."). */
  line: number;
  /** Index of the matching boundary in the parser's stack. */
  index: number;
  /** Whether it is a close-delimiter ("--boundary--"). */
  close: boolean;
  /** Offset of the line after it. */
  next: number;
  /** Whether the delimiter line ended with a line break. */
  terminated: boolean;
}

const NL_DASHES = Buffer.from('\n--', 'latin1');
const OCTET = [Buffer.from('application'), Buffer.from('octet-stream')] as const;

/** Mutable twin of MimeNode used while building. */
type Building = { -readonly [K in keyof MimeNode]: MimeNode[K] };

function countLf(raw: Buffer, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) if (raw[i] === 10) n++;
  return n;
}

interface MimeInfo {
  isMime: boolean;
  contentType: ContentType;
  explicitType: boolean;
  encoding: Buffer | null;
  id: Buffer | null;
  description: Buffer | null;
  md5: Buffer | null;
  location: Buffer | null;
  disposition: Disposition | null;
  language: Buffer[] | null;
}

/** Reads the Content-* fields (the first of each wins, as in Dovecot). */
function mimeInfo(fields: readonly HeaderField[], isPart: boolean, inDigest: boolean): MimeInfo {
  let isMime = isPart;
  const info: MimeInfo = {
    isMime,
    contentType: defaultContentType(inDigest),
    explicitType: false,
    encoding: null,
    id: null,
    description: null,
    md5: null,
    location: null,
    disposition: null,
    language: null,
  };
  let seenEncoding = false;
  for (const f of fields) {
    const key = f.key;
    if (key === 'mime-version') {
      isMime = true;
      continue;
    }
    if (!key.startsWith('content-')) continue;
    switch (key) {
      case 'content-type':
        isMime = true;
        if (!info.explicitType) {
          info.explicitType = true;
          info.contentType = parseContentType(fullValue(f));
        }
        break;
      case 'content-transfer-encoding':
        if (!seenEncoding) {
          seenEncoding = true;
          info.encoding = parseEncoding(fullValue(f));
        }
        break;
      case 'content-id':
        info.id ??= fullValue(f);
        break;
      case 'content-description':
        info.description ??= fullValue(f);
        break;
      case 'content-md5':
        info.md5 ??= fullValue(f);
        break;
      case 'content-location':
        info.location ??= fullValue(f);
        break;
      case 'content-disposition':
        info.disposition ??= parseDisposition(fullValue(f));
        break;
      case 'content-language':
        info.language ??= parseLanguage(fullValue(f));
        break;
    }
  }
  if (!isMime) {
    // Not MIME: Dovecot forgets every Content-* header.
    return { ...info, isMime, contentType: defaultContentType(inDigest), explicitType: false, encoding: null, id: null, description: null, md5: null, location: null, disposition: null, language: null };
  }
  return { ...info, isMime };
}

class Parser {
  /** Boundaries of the enclosing multiparts, outermost first. */
  private readonly stack: Buffer[] = [];
  /**
   * Set by parseEntity: whether the entity it returned ends with a header
   * that a delimiter cut short (its own, or that of its last part or
   * encapsulated message). Dovecot counts the line break before that
   * delimiter into the enclosing message/rfc822 part and multipart (but not
   * into the header sections), so their bodies then end at the delimiter line.
   */
  private headerCut = false;

  constructor(private readonly raw: Buffer) {}

  /** If a delimiter of an enclosing multipart starts at line `p`, describe it. */
  private matchAt(p: number): Stop | null {
    const raw = this.raw;
    const n = raw.length;
    const stack = this.stack;
    if (stack.length === 0 || p + 1 >= n || raw[p] !== 45 || raw[p + 1] !== 45) return null;
    const lf = raw.indexOf(10, p + 2);
    let e = lf < 0 ? n : lf;
    if (e > p + 2 && raw[e - 1] === 13) e--;
    let len = e - (p + 2);
    if (len > 2 && raw[e - 1] === 45 && raw[e - 2] === 45) len -= 2;
    let best = -1;
    for (let i = stack.length - 1; i >= 0; i--) {
      const b = stack[i]!;
      if (b.length <= len && raw.compare(b, 0, b.length, p + 2, p + 2 + b.length) === 0) {
        if (best < 0 || stack[best]!.length < b.length) {
          best = i;
          if (b.length === len) break;
        }
      }
    }
    if (best < 0) return null;
    const after = p + 2 + stack[best]!.length;
    return {
      line: p,
      index: best,
      close: after + 1 < n && raw[after] === 45 && raw[after + 1] === 45,
      next: lf < 0 ? n : lf + 1,
      terminated: lf >= 0,
    };
  }

  /** The next delimiter line at or after line start `from`, or null. */
  private findNext(from: number): Stop | null {
    if (this.stack.length === 0) return null;
    const first = this.matchAt(from);
    if (first !== null) return first;
    let pos = from;
    for (;;) {
      const i = this.raw.indexOf(NL_DASHES, pos);
      if (i < 0) return null;
      const s = this.matchAt(i + 1);
      if (s !== null) return s;
      pos = i + 1;
    }
  }

  /** End of the content before a delimiter line at `line` (its line break excluded), not before `min`. */
  private contentEnd(line: number, min: number): number {
    const raw = this.raw;
    let e = line;
    if (e > min && raw[e - 1] === 10) {
      e--;
      if (e > min && raw[e - 1] === 13) e--;
    }
    return e < min ? min : e;
  }

  private emptyNode(at: number, depth: number): MimeNode {
    return {
      kind: 'leaf',
      depth,
      headerStart: at,
      headerEnd: at,
      bodyStart: at,
      bodyEnd: at,
      fields: [],
      isMime: false,
      contentType: defaultContentType(false),
      encoding: null,
      encodingKey: '7bit',
      id: null,
      description: null,
      md5: null,
      location: null,
      disposition: null,
      language: null,
      boundary: null,
      size: 0,
      lines: 0,
      children: [],
      message: null,
    };
  }

  /**
   * Parses the entity (header + body) starting at line start `start`.
   * @returns the node and the delimiter that ended it (null: end of input)
   */
  parseEntity(start: number, depth: number, inDigest: boolean, isPart: boolean): [MimeNode, Stop | null] {
    const raw = this.raw;
    const n = raw.length;
    const fields: HeaderField[] = [];
    let stop: Stop | null = null;
    let bodyStart = n;

    // current field being collected
    let fStart = -1;
    let fNameEnd = 0;
    let fValueStart = 0;
    let fValueEnd = 0;
    let fEnd = 0;
    const finish = (limit: number): void => {
      if (fStart < 0) return;
      let name = raw.toString('latin1', fStart, fNameEnd);
      let k = name.length;
      while (k > 0 && (name.charCodeAt(k - 1) === 32 || name.charCodeAt(k - 1) === 9)) k--;
      if (k !== name.length) name = name.slice(0, k);
      const end = fEnd > limit ? limit : fEnd;
      const valueEnd = fValueEnd > end ? end : fValueEnd;
      fields.push({
        name,
        key: name.toLowerCase(),
        start: fStart,
        end,
        value: raw.subarray(fValueStart < valueEnd ? fValueStart : valueEnd, valueEnd),
      });
      fStart = -1;
    };

    /** Offset of the blank line that ended the header, or -1. */
    let blankLine = -1;
    let p = start;
    for (;;) {
      if (p >= n) {
        finish(n);
        bodyStart = n;
        break;
      }
      if (raw[p] === 45 && raw[p + 1] === 45 && this.stack.length > 0) {
        const s = this.matchAt(p);
        if (s !== null) {
          stop = s;
          bodyStart = this.contentEnd(p, start);
          finish(bodyStart);
          break;
        }
      }
      const lf = raw.indexOf(10, p);
      const lineEnd = lf < 0 ? n : lf + 1;
      const contentEnd = lf < 0 ? n : lf > p && raw[lf - 1] === 13 ? lf - 1 : lf;
      if (lf >= 0 && contentEnd === p) {
        finish(n);
        blankLine = p;
        bodyStart = lineEnd;
        break;
      }
      const c = raw[p]!;
      if ((c === 32 || c === 9) && fStart >= 0) {
        fValueEnd = contentEnd;
        fEnd = lineEnd;
      } else {
        finish(n);
        let colon = p;
        while (colon < contentEnd && raw[colon] !== 58) colon++;
        fStart = p;
        fNameEnd = colon;
        fValueStart = colon < contentEnd ? colon + 1 : contentEnd;
        fValueEnd = contentEnd;
        fEnd = lineEnd;
      }
      p = lineEnd;
    }

    const info = mimeInfo(fields, isPart, inDigest);
    let ct = info.contentType;
    let boundary: Buffer | null = null;
    let kind: MimeKind = 'leaf';
    const multipart = ct.type === 'multipart' && ct.rawSubtype !== null && ct.rawSubtype.length > 0;
    const message = ct.type === 'message' && (ct.subtype === 'rfc822' || ct.subtype === 'global');
    if ((multipart || message) && depth + 1 >= MAX_DEPTH) {
      // Too deep: shown as an opaque part, parameters kept (Dovecot).
      ct = { ...ct, type: 'application', subtype: 'octet-stream', rawType: OCTET[0], rawSubtype: OCTET[1] };
    } else if (multipart) {
      for (const param of ct.params) {
        if (param.name.length === 8 && param.name.toString('latin1').toLowerCase() === 'boundary') {
          boundary = param.value;
          break;
        }
      }
      // Without a boundary parameter it is still a multipart, one with no
      // parts; an empty boundary="" makes every line starting "--" a delimiter.
      kind = 'multipart';
    } else if (message) {
      kind = 'message';
    }

    if (blankLine >= 0 && this.stack.length > 0) {
      // When the line after the blank line is a delimiter of an enclosing
      // multipart (the part's own boundary competing), the blank line's break
      // belongs to that delimiter: the header has no blank line and no body.
      const own = boundary !== null ? this.stack.push(boundary) - 1 : -1;
      const s = this.matchAt(bodyStart);
      if (own >= 0) this.stack.pop();
      if (s !== null && s.index !== own) {
        stop = s;
        bodyStart = blankLine;
      }
    }

    const node: Building = {
      kind,
      depth,
      headerStart: start,
      headerEnd: bodyStart,
      bodyStart,
      bodyEnd: bodyStart,
      fields,
      isMime: info.isMime,
      contentType: ct,
      encoding: info.encoding,
      encodingKey: info.encoding === null ? '7bit' : info.encoding.toString('latin1').toLowerCase(),
      id: info.id,
      description: info.description,
      md5: info.md5,
      location: info.location,
      disposition: info.disposition,
      language: info.language,
      boundary,
      size: 0,
      lines: 0,
      children: [],
      message: null,
    };

    if (stop !== null) {
      // The header was cut short by a delimiter: no body.
      if (kind === 'message') node.message = this.emptyNode(bodyStart, depth + 1);
      this.headerCut = true;
      return [node, stop];
    }

    /** Whether this entity ends with a header that a delimiter cut short (see headerCut). */
    let cut = false;
    if (kind === 'multipart' && boundary === null) {
      stop = this.findNext(bodyStart);
      node.bodyEnd = stop === null ? n : this.contentEnd(stop.line, bodyStart);
      node.lines = countLf(raw, bodyStart, node.bodyEnd);
    } else if (kind === 'multipart') {
      const children: MimeNode[] = [];
      const mine = this.stack.push(boundary!) - 1;
      const digest = ct.subtype === 'digest';
      let s = this.findNext(bodyStart);
      let lastCut = false;
      while (s !== null && s.index === mine && !s.close) {
        if (!s.terminated) {
          // "--boundary" as the very last bytes: no part follows
          s = null;
          break;
        }
        const [child, next] = this.parseEntity(s.next, depth + 1, digest, true);
        lastCut = this.headerCut;
        children.push(child);
        s = next;
      }
      this.stack.pop();
      // The epilogue starts after the close-delimiter line, its line break
      // included; an enclosing delimiter right after it takes no line break away.
      // Without its own close-delimiter, the multipart ends where an enclosing
      // delimiter starts, but never before the end of its last part (a part
      // that ended with a close-delimiter line keeps that line's break).
      let epilogue = children.length > 0 ? Math.max(bodyStart, children[children.length - 1]!.bodyEnd) : bodyStart;
      const closed = s !== null && s.index === mine;
      if (closed) {
        epilogue = s!.next;
        s = this.findNext(s!.next);
      }
      if (s !== null && !closed && lastCut) {
        // ended by an enclosing delimiter right after a cut header: keep the line break
        node.bodyEnd = s.line;
        cut = true;
      } else {
        node.bodyEnd = s === null ? n : this.contentEnd(s.line, epilogue);
      }
      node.children = children;
      let lines = 0;
      let cursor = bodyStart;
      for (const child of children) {
        lines += countLf(raw, cursor, child.bodyStart) + child.lines;
        cursor = child.bodyEnd;
      }
      node.lines = lines + countLf(raw, cursor, node.bodyEnd);
      stop = s;
    } else if (kind === 'message') {
      const [child, next] = this.parseEntity(bodyStart, depth + 1, false, false);
      node.message = child;
      if (this.headerCut && next !== null) {
        cut = true;
        // The message's header ran into a delimiter: as in Dovecot, the part
        // then keeps the line break before the delimiter (its header sections
        // do not).
        node.bodyEnd = next.line;
        node.lines = countLf(raw, bodyStart, node.bodyEnd);
      } else {
        node.bodyEnd = child.bodyEnd;
        node.lines = countLf(raw, child.headerStart, child.bodyStart) + child.lines;
      }
      stop = next;
    } else {
      stop = this.findNext(bodyStart);
      node.bodyEnd = stop === null ? n : this.contentEnd(stop.line, bodyStart);
      node.lines = countLf(raw, bodyStart, node.bodyEnd);
    }
    node.size = node.bodyEnd - node.bodyStart;
    this.headerCut = cut;
    return [node, stop];
  }
}

/**
 * Parses a message into a byte-offset MIME tree in one pass, without
 * copying bodies.
 * @returns the root node (the message itself)
 */
export function parseMime(raw: Buffer): MimeNode {
  return new Parser(raw).parseEntity(0, 0, false, false)[0];
}

let cache: WeakMap<Buffer, MimeNode> | null = null;

/**
 * `parseMime` with a per-Buffer cache: the same Buffer object (shared by
 * mailbox copies and server resets) is parsed only once.
 * @returns the cached or freshly parsed root node
 */
export function getMime(raw: Buffer): MimeNode {
  cache ??= new WeakMap();
  let root = cache.get(raw);
  if (root === undefined) {
    root = parseMime(raw);
    cache.set(raw, root);
  }
  return root;
}

// Reading a message source for the message view: header fields, RFC 2047
// encoded words, and the MIME part tree (RFC 2045, RFC 2046). It works on a
// "binary string" (one char per byte, as atob gives it), so sizes are bytes.

/** Bytes of a binary string as text in `charset` (UTF-8 when unknown); bad bytes become U+FFFD. */
export function decodeBytes(binary, charset = 'utf-8') {
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** Splits a part into its header text and body at the first empty line. */
export function splitPart(binary) {
  const m = /\r?\n\r?\n/.exec(binary);
  if (binary.startsWith('\r\n') || binary.startsWith('\n')) return { head: '', body: binary.replace(/^\r?\n/, '') };
  if (!m) return { head: binary, body: '' };
  return { head: binary.slice(0, m.index), body: binary.slice(m.index + m[0].length) };
}

/** Header fields in order, unfolded: `[{ name, value }]` (values still raw bytes). */
export function parseHeaders(head) {
  const fields = [];
  for (const line of head.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && fields.length > 0) fields[fields.length - 1].value += ' ' + line.trim();
    else {
      const colon = line.indexOf(':');
      if (colon > 0) fields.push({ name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() });
    }
  }
  return fields;
}

/** The first field named `name` (case-insensitive), or ''. */
export function header(fields, name) {
  const lower = name.toLowerCase();
  const f = fields.find((x) => x.name.toLowerCase() === lower);
  return f ? f.value : '';
}

/** Decodes RFC 2047 encoded words (`=?charset?B|Q?text?=`) in a raw header value for display. */
export function decodeWords(value) {
  // 8-bit header text is UTF-8 (RFC 6532); encoded words are ASCII, so this leaves them alone.
  const utf8 = /[\x80-\xff]/.test(value) && !/[^\x00-\xff]/.test(value) ? decodeBytes(value) : value;
  // Whitespace between two encoded words is not shown (RFC 2047 section 6.2).
  const joined = utf8.replace(/(\?=)\s+(=\?)/g, '$1$2');
  return joined.replace(/=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g, (word, charset, enc, data) => {
    try {
      const cs = charset.split('*')[0];
      if (enc === 'B' || enc === 'b') return decodeBytes(atob(data), cs);
      const q = data.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
      return decodeBytes(q, cs);
    } catch {
      return word;
    }
  });
}

/** `type/subtype; a=b; c="d"` → `{ value, params: Map }` (names lowercased). */
export function parseParams(value) {
  const params = new Map();
  const semi = value.indexOf(';');
  const main = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  const re = /;\s*([^=\s;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g;
  let m;
  while ((m = re.exec(value)) !== null) {
    params.set(m[1].toLowerCase(), m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]);
  }
  return { value: main, params };
}

/** Depth and part limits, so a hostile message cannot make the page hang. */
const MAX_DEPTH = 20;
const MAX_PARTS = 500;

/**
 * The MIME tree of a message: `{ type, params, encoding, disposition,
 * filename, size, children }`, `children` for multipart and message/rfc822.
 */
export function structure(binary) {
  const budget = { parts: 0 };
  return partOf(binary, 'text/plain', 0, budget);
}

function partOf(binary, defaultType, depth, budget) {
  budget.parts++;
  const { head, body } = splitPart(binary);
  const fields = parseHeaders(head);
  const ct = parseParams(header(fields, 'Content-Type') || defaultType);
  const cd = parseParams(header(fields, 'Content-Disposition'));
  const node = {
    type: ct.value || defaultType,
    params: ct.params,
    encoding: (header(fields, 'Content-Transfer-Encoding') || '7bit').toLowerCase(),
    disposition: cd.value,
    filename: decodeWords(cd.params.get('filename') ?? ct.params.get('name') ?? ''),
    size: body.length,
    children: [],
  };
  if (depth >= MAX_DEPTH || budget.parts >= MAX_PARTS) return node;
  const boundary = ct.params.get('boundary');
  if (node.type.startsWith('multipart/') && boundary) {
    const childType = node.type === 'multipart/digest' ? 'message/rfc822' : 'text/plain';
    for (const child of bodyParts(body, boundary)) {
      if (budget.parts >= MAX_PARTS) break;
      node.children.push(partOf(child, childType, depth + 1, budget));
    }
  } else if (node.type === 'message/rfc822' || node.type === 'message/global') {
    node.children.push(partOf(body, 'text/plain', depth + 1, budget));
  }
  return node;
}

/** The body parts between `--boundary` lines (RFC 2046 section 5.1.1). */
function bodyParts(body, boundary) {
  const parts = [];
  const delimiter = '--' + boundary;
  const lines = body.split(/(?<=\n)/);
  let current = null;
  for (const line of lines) {
    const bare = line.replace(/[ \t]*\r?\n$/, '');
    if (bare === delimiter + '--') {
      if (current !== null) parts.push(current.replace(/\r?\n$/, ''));
      return parts;
    }
    if (bare === delimiter) {
      if (current !== null) parts.push(current.replace(/\r?\n$/, ''));
      current = '';
      continue;
    }
    if (current !== null) current += line;
  }
  if (current !== null) parts.push(current);
  return parts;
}

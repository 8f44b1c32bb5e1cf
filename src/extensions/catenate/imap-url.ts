/**
 * IMAP URLs (RFC 5092) as CATENATE (RFC 4469) takes them: an absolute
 * `imap://[user[;AUTH=x]@]host[:port]/<path>`, a network-path reference
 * `//host/<path>`, an absolute-path reference `/<path>` (relative to the
 * session's server) or a relative-path reference `<path>` (against the base
 * `imap://user@server/`, as RFC 4469 §3 has it), where `<path>` names a
 * mailbox, a message or a part:
 *
 *     enc-mailbox [;UIDVALIDITY=n] [ /;UID=n [/;SECTION=s] [/;PARTIAL=o[.l]]
 *       [ [;EXPIRE=t] ;URLAUTH=access:mech:token ] | ?enc-search ]
 *
 * Parameter names are case-insensitive. Percent-encoding is decoded in the
 * user, the mailbox (UTF-8, RFC 5092 §3.2) and the section; characters a
 * component may not hold unencoded make the URL invalid. `;UID=3` alone
 * names no mailbox, so it is invalid; so are dot segments (`../x`). URLAUTH
 * is read and kept, not verified.
 */

/** An IMAP URL, decoded. */
export interface ImapUrl {
  /** The `imap://` or `//` part; null for an absolute-path or relative-path reference. */
  server: { user: string | null; auth: string | null; host: string; port: number | null } | null;
  /** The mailbox name, percent-decoded (UTF-8). */
  mailbox: string;
  uidvalidity: number | null;
  /** Null for a URL of a mailbox or a message list. */
  uid: number | null;
  /** The percent-encoded search of a message list URL (`?SUBJECT%20x`), or null. */
  search: string | null;
  /** The section, percent-decoded (`1.2`, `HEADER.FIELDS (To)`), or null. */
  section: string | null;
  partial: { offset: number; length: number | null } | null;
  /** `[;EXPIRE=t];URLAUTH=...` as given (not verified), or null. */
  urlauth: string | null;
}

/** Why a text is not an IMAP URL this parser accepts. */
export class ImapUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImapUrlError';
  }
}

const MAX_UINT32 = 4294967295;

const isAlnum = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
/** `unreserved / sub-delims-sh` (RFC 5092 `uchar` without pct-encoded). */
const isUcharPlain = (c: number): boolean => isAlnum(c) || '-._~!$\'()*+,'.includes(String.fromCharCode(c));
/** `achar = uchar / "&" / "=" / "~"`. */
const isAchar = (c: number): boolean => isUcharPlain(c) || c === 0x26 || c === 0x3d;
/** `bchar = achar / ":" / "@" / "/"`. */
const isBchar = (c: number): boolean => isAchar(c) || c === 0x3a || c === 0x40 || c === 0x2f;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Checks `text` against a character class (with `%XX` allowed) and decodes it as UTF-8. */
function decode(text: string, allowed: (c: number) => boolean, what: string): string {
  if (text.length === 0) throw new ImapUrlError(`Empty ${what}`);
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x25) {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new ImapUrlError(`Invalid percent-encoding in the ${what}`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (allowed(c)) bytes.push(c);
    else throw new ImapUrlError(`Character not allowed in the ${what}: ${JSON.stringify(text[i])}`);
  }
  try {
    return utf8.decode(Uint8Array.from(bytes));
  } catch {
    throw new ImapUrlError(`The ${what} is not UTF-8`);
  }
}

function number(text: string, what: string, nonZero: boolean): number {
  if (!/^\d{1,10}$/.test(text)) throw new ImapUrlError(`Invalid ${what}`);
  const n = Number(text);
  if (n > MAX_UINT32 || (nonZero && n === 0)) throw new ImapUrlError(`Invalid ${what}`);
  return n;
}

function parseServer(authority: string): NonNullable<ImapUrl['server']> {
  const at = authority.lastIndexOf('@');
  let user: string | null = null;
  let auth: string | null = null;
  if (at >= 0) {
    const info = authority.slice(0, at);
    const semi = info.indexOf(';');
    const userPart = semi < 0 ? info : info.slice(0, semi);
    if (semi >= 0) {
      const rest = info.slice(semi);
      if (!/^;AUTH=/i.test(rest)) throw new ImapUrlError('Invalid user information');
      const mech = rest.slice(6);
      auth = mech === '*' ? '*' : decode(mech, isAchar, 'AUTH mechanism');
    }
    if (userPart.length > 0) user = decode(userPart, isAchar, 'user');
    else if (auth === null) throw new ImapUrlError('Empty user');
  }
  const hostPort = authority.slice(at + 1);
  // host = IP-literal / IPv4address / reg-name (RFC 3986), then [":" port].
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::(\d{0,5}))?$/.exec(hostPort);
  if (!m || m[1]!.length === 0) throw new ImapUrlError('Invalid host');
  const host = m[1]!.startsWith('[') ? m[1]! : decode(m[1]!, (c) => isAchar(c) || c === 0x3b, 'host');
  let port: number | null = null;
  if (m[2] !== undefined && m[2].length > 0) {
    port = Number(m[2]);
    if (port > 65535) throw new ImapUrlError('Invalid port');
  }
  return { user, auth, host, port };
}

/** One `;NAME=value` of the path, and whether a `/` came right before it. */
interface Param {
  name: string;
  value: string;
  slash: boolean;
}

/** `<path>` after the `/` that starts it: the mailbox and its parameters in RFC 5092 order. */
function parsePath(path: string, rump: boolean): Omit<ImapUrl, 'server'> {
  // `?` is in no component but the search, which comes last: imessagelist = imailbox-ref ["?" enc-search].
  const query = path.indexOf('?');
  if (query >= 0) {
    const head = parsePath(path.slice(0, query), rump);
    if (head.uid !== null) throw new ImapUrlError('A search after a message');
    const search = path.slice(query + 1);
    decode(search, isBchar, 'search');
    return { ...head, search };
  }
  const semi = path.indexOf(';');
  let mailboxText = semi < 0 ? path : path.slice(0, semi);
  const params: Param[] = [];
  if (semi >= 0) {
    let slash = false;
    if (mailboxText.endsWith('/')) {
      mailboxText = mailboxText.slice(0, -1);
      slash = true;
    }
    const pieces = path.slice(semi + 1).split(';');
    for (let i = 0; i < pieces.length; i++) {
      let piece = pieces[i]!;
      const eq = piece.indexOf('=');
      if (eq <= 0) throw new ImapUrlError(`Invalid parameter ;${piece.slice(0, 40)}`);
      const nextSlash = i + 1 < pieces.length && piece.endsWith('/');
      if (nextSlash) piece = piece.slice(0, -1);
      params.push({ name: piece.slice(0, eq).toUpperCase(), value: piece.slice(eq + 1), slash });
      slash = nextSlash;
    }
  }
  const url: Omit<ImapUrl, 'server'> = {
    mailbox: decode(mailboxText, isBchar, 'mailbox name'),
    uidvalidity: null,
    uid: null,
    search: null,
    section: null,
    partial: null,
    urlauth: null,
  };
  let i = 0;
  const take = (name: string, slash: boolean): string | null => {
    const p = params[i];
    if (!p || p.name !== name) return null;
    if (p.slash !== slash) throw new ImapUrlError(slash ? `/ missing before ;${name}` : `Unexpected / before ;${name}`);
    i++;
    return p.value;
  };
  const uidvalidity = take('UIDVALIDITY', false);
  if (uidvalidity !== null) url.uidvalidity = number(uidvalidity, 'UIDVALIDITY', true);
  const uid = take('UID', true);
  if (uid !== null) {
    url.uid = number(uid, 'UID', true);
    const section = take('SECTION', true);
    if (section !== null) url.section = decode(section, isBchar, 'section');
    const partial = take('PARTIAL', true);
    if (partial !== null) {
      const m = /^(\d+)(?:\.(\d+))?$/.exec(partial);
      if (!m) throw new ImapUrlError('Invalid PARTIAL');
      url.partial = { offset: number(m[1]!, 'PARTIAL offset', false), length: m[2] === undefined ? null : number(m[2], 'PARTIAL length', true) };
    }
    const start = i;
    const expire = take('EXPIRE', false);
    const urlauth = take('URLAUTH', false);
    if (urlauth !== null) {
      // A rump URL (RFC 4467 §2: access identifier only) is what GENURLAUTH signs, never a URL to read.
      if (!(rump ? /^[^:]+$/ : /^[^:]+:[^:]+:[^:]+$/).test(urlauth)) throw new ImapUrlError(rump ? 'Invalid URLAUTH rump' : 'Invalid URLAUTH');
      url.urlauth = params
        .slice(start, i)
        .map((p) => `;${p.name}=${p.value}`)
        .join('');
    } else if (expire !== null) throw new ImapUrlError(';EXPIRE without ;URLAUTH');
  }
  if (i < params.length) throw new ImapUrlError(`Unexpected parameter ;${params[i]!.name.slice(0, 40)}`);
  return url;
}

/**
 * Parses an IMAP URL or absolute-path reference; throws ImapUrlError when it
 * is not one. With `rump`, `;URLAUTH=` must hold an access identifier alone
 * (RFC 4467 `authimapurlrump`, GENURLAUTH's argument) instead of `access:mech:token`.
 */
export function parseImapUrl(text: string, options: { rump?: boolean } = {}): ImapUrl {
  if (text.length === 0) throw new ImapUrlError('Empty URL');
  if (text.length > 8192) throw new ImapUrlError('URL too long');
  if (text.includes('#')) throw new ImapUrlError('A fragment is not allowed');
  let server: ImapUrl['server'] = null;
  let rest: string;
  const scheme = /^imap:\/\//i.test(text) ? 7 : text.startsWith('//') ? 2 : 0;
  if (scheme > 0) {
    const slash = text.indexOf('/', scheme);
    server = parseServer(slash < 0 ? text.slice(scheme) : text.slice(scheme, slash));
    rest = slash < 0 ? '' : text.slice(slash + 1);
    if (rest.length === 0) throw new ImapUrlError('The URL names a server, not a mailbox');
  } else if (text.startsWith('/')) {
    rest = text.slice(1);
    if (rest.length === 0) throw new ImapUrlError('The URL names no mailbox');
  } else if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(text)) {
    throw new ImapUrlError('Not an IMAP URL');
  } else {
    // A relative-path reference, against the base `imap://user@server/` (RFC 4469 §3; RFC 3986
    // §5.2 merges it below the root): `INBOX/;UID=3` is `/INBOX/;UID=3`, `;UID=3` names no mailbox.
    if (/(^|\/)\.\.?(\/|$)/.test(text.split(/[?;]/)[0]!)) throw new ImapUrlError('Dot segments are not supported');
    rest = text;
  }
  return { server, ...parsePath(rest, options.rump === true) };
}

const encodeComponent = (text: string, allowed: (c: number) => boolean): string => {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out += allowed(byte) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
};

/** The URL as text (percent-encoding what must be), such that `parseImapUrl(formatImapUrl(u))` gives `u`. */
export function formatImapUrl(url: ImapUrl): string {
  let out = '';
  if (url.server) {
    out += 'imap://';
    const s = url.server;
    if (s.user !== null || s.auth !== null) {
      if (s.user !== null) out += encodeComponent(s.user, isAchar);
      if (s.auth !== null) out += `;AUTH=${s.auth === '*' ? '*' : encodeComponent(s.auth, isAchar)}`;
      out += '@';
    }
    out += s.host.startsWith('[') ? s.host : encodeComponent(s.host, isAchar);
    if (s.port !== null) out += `:${s.port}`;
  }
  // A `/` starting the name would read as a network path, one ending it as the separator before ;UID.
  out += '/' + encodeComponent(url.mailbox, isBchar).replace(/^\/|\/$/g, '%2F');
  if (url.uidvalidity !== null) out += `;UIDVALIDITY=${url.uidvalidity}`;
  if (url.search !== null) return `${out}?${url.search}`;
  if (url.uid === null) return out;
  out += `/;UID=${url.uid}`;
  if (url.section !== null) out += `/;SECTION=${encodeComponent(url.section, (c) => isBchar(c) && c !== 0x2f)}`;
  if (url.partial) out += `/;PARTIAL=${url.partial.offset}${url.partial.length === null ? '' : `.${url.partial.length}`}`;
  if (url.urlauth !== null) out += url.urlauth;
  return out;
}

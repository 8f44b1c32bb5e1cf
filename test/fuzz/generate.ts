/**
 * Input generator of the IMAP fuzzer: valid commands of every state built
 * from the RFC 3501 grammar (plus the extensions `plugins: 'all'` loads),
 * then mutated at the token level (literals of wrong size, `{n+}`, 8-bit
 * bytes, NULs, deep parentheses, huge numbers and sequence sets, overlong
 * lines, unbalanced quotes) and at the byte level; and plain random bytes.
 * Everything is drawn from one seeded PRNG, so a seed replays exactly.
 */
import { Prng } from '../../src/util/prng.js';

export type FuzzState = 'notAuthenticated' | 'authenticated' | 'selected';

/** A literal in a command: announced size may differ from the data on purpose. */
export interface LiteralPart {
  lit: Buffer;
  sync: boolean;
  binary?: boolean;
  /** Size written in the marker (defaults to the data length). */
  announce?: string;
}

export type Part = string | Buffer | LiteralPart;

export interface GeneratorLimits {
  /** The server's maxLineLength: overlong lines go just past it. */
  maxLineLength: number;
  /** More mailbox names to draw from (per-user mailboxes: Other Users and shared names); none by default. */
  mailboxes?: readonly string[];
}

/**
 * A message whose parts decode to CR, LF, NUL and 8-bit octets (issue 29's base64 part among them):
 * BINARY, BODY partials, PREVIEW and URLFETCH of it must send literals, never quoted strings.
 */
export function lineBreakParts(): Buffer {
  const decoded = Buffer.from('abcdefg\rhijkl\r\nmno\npqrstuvqxyz', 'latin1');
  return Buffer.from(
    'Subject: caf\xe9\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=q\r\n\r\n' +
      '--q\r\nContent-Type: text/plain\r\n\r\nfirst line\r\nsecond\r\n' +
      '--q\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n' + Buffer.from('\u00e9t\u00e9\r\nhiver\n').toString('base64') + '\r\n' +
      '--q\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n' + decoded.toString('base64') + '\r\n' +
      '--q\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n' + Buffer.from([0, 13, 10, 255, 0]).toString('base64') + '\r\n' +
      '--q\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n' + decoded.toString('base64') + '\r\n' +
      '--q\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nnul=00 cr=0D lf=0A crlf=0D=0A 8bit =E9=\r\nsoft\r\n' +
      '--q--\r\n',
    'latin1',
  );
}

export class Rand {
  readonly prng: Prng;
  constructor(seed: number) {
    this.prng = new Prng(seed);
  }
  int(lo: number, hi: number): number {
    return lo + this.prng.below(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.prng.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.prng.below(items.length)]!;
  }
  bytes(n: number, alphabet?: string): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = alphabet ? alphabet.charCodeAt(this.prng.below(alphabet.length)) : this.prng.below(256);
    return b;
  }
}

const IMAPISH = '()[]{}<>"\\ *%+~-.:,$0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\r\n';

const MAILBOXES = ['INBOX', 'inbox', 'Archive', 'Archive/Sub', 'Trash', 'Fuzz', 'Fuzz/Deep/er', 'Nope', '"a b"', '"&AOk-t&AOk-"', '&', '"&Jjo"', '""', 'INBOX/child', '"*"', '%', '"x\\"y"'];
/** LIST-EXTENDED selection options (RFC 5258), valid and not. */
const LIST_SELECTIONS = ['()', '(SUBSCRIBED)', '(SUBSCRIBED RECURSIVEMATCH)', '(RECURSIVEMATCH)', '(REMOTE)', '(REMOTE RECURSIVEMATCH)', '(REMOTE SUBSCRIBED)', '(SPECIAL-USE RECURSIVEMATCH)', '(subscribed', '(NOSUCH)'];
/** LIST-EXTENDED pattern lists: `("INBOX" "Drafts" "Sent/%")`. */
const LIST_PATTERN_LISTS = ['("INBOX" "Drafts")', '(INBOX % "Fuzz/*")', '()', '("*" "*")', '("Entw*")'];
const LIST_PATTERNS = ['*', '%', '""', 'INBOX', 'Arch*', '%/%', '"*"', '"&AOk-*"', 'Fuzz/*'];
const FLAGS = ['\\Seen', '\\Answered', '\\Flagged', '\\Deleted', '\\Draft', '\\seen', '$Forwarded', '$Junk', 'kw1', 'kw2', 'Fz'];
const FETCH_ITEMS = [
  'FLAGS', 'UID', 'INTERNALDATE', 'RFC822.SIZE', 'ENVELOPE', 'BODYSTRUCTURE', 'BODY', 'BODY[]', 'BODY.PEEK[]', 'BODY.PEEK[HEADER]',
  'BODY[TEXT]', 'BODY[1]', 'BODY[1.MIME]', 'BODY[2.1]', 'BODY.PEEK[HEADER.FIELDS (Subject From)]', 'BODY[HEADER.FIELDS.NOT (To)]',
  'BODY[]<0.10>', 'BODY.PEEK[TEXT]<2.3>', 'RFC822', 'RFC822.HEADER', 'RFC822.TEXT', 'MODSEQ',
  // BINARY (RFC 3516) and PREVIEW (RFC 8970), with some of their malformed shapes.
  'BINARY[1]', 'BINARY.PEEK[]', 'BINARY.SIZE[1]', 'BINARY.PEEK[2]<0.4>', 'BINARY[1.1]<3.1>', 'BINARY.SIZE[]', 'BINARY.PEEK[9]',
  'BINARY.PEEK[1.MIME]', 'BINARY[0]', 'BINARY.SIZE[1]<0.1>', 'BINARY.PEEK', 'binary.peek[2]<1.99999999999>',
  // Partials that cut decoded bytes and raw lines at CR, LF and NUL (the driver's INBOX message 6 has such parts).
  'BINARY.PEEK[5]<10.10>', 'BINARY.PEEK[6]', 'BINARY.PEEK[6]<3.4>', 'BINARY.SIZE[5]', 'BODY.PEEK[5]<0.10>', 'BODY.PEEK[1]<5.8>', 'BINARY.PEEK[]<0.300>',
  'PREVIEW', 'PREVIEW (LAZY)', 'preview (lazy lazy)', 'PREVIEW ()', 'PREVIEW (EAGER)', 'PREVIEW[]',
  'X-GM-MSGID', 'X-GM-THRID', 'X-GM-LABELS',
  'EMAILID', 'THREADID', 'SAVEDATE',
];
/** X-GM-EXT-1: labels as STORE and SEARCH give them (system labels, user labels, quoted, odd). */
const GM_LABELS = ['\\Inbox', '\\Starred', '\\Important', '\\Trash', 'Fuzz', '"Muy Importante"', 'Archive/Sub', '""', '\\Bogus', '"&AOk-"'];
/** X-GM-RAW queries: valid ones of the documented subset and broken ones. */
const GM_RAW = [
  '"from:alice"', '"subject:\\"a b\\" is:unread"', '"(x OR y) -label:fuzz"', '"has:attachment larger:1K"', '"before:2020/01/01"',
  '"in:anywhere"', '"{a b} filename:x list:y"', '"{unbalanced"', '"(unbalanced"', '"x)"', '"OR"', '"before:soon"', '"-"', '""', '"((((((((x))))))))"',
];
const FETCH_MACROS = ['ALL', 'FAST', 'FULL'];
const STATUS_ITEMS = ['MESSAGES', 'RECENT', 'UIDNEXT', 'UIDVALIDITY', 'UNSEEN', 'HIGHESTMODSEQ', 'SIZE', 'MAILBOXID', 'DELETED'];
/** Mailbox names as UTF-8 bytes (RFC 6855 after ENABLE UTF8=ACCEPT, RFC 9051 after ENABLE IMAP4rev2), malformed UTF-8 and forbidden characters among them. */
const UTF8_MAILBOXES = ['"K\xc3\xa4se"', '"\xe6\x97\xa5\xe6\x9c\xac/\xc3\x9cnter"', '"R&D"', '"bad\xff"', '"half\xc3"', '"nel\xc2\x85"', '"ls\xe2\x80\xa8"', '"Cafe\xcc\x81"', 'Entw\xc3\xbcrfe'];
const HUGE_NUMBERS = ['0', '4294967295', '4294967296', '99999999999999999999', '18446744073709551616', '9007199254740993', '-1', '00000000000000000000001', '1e9'];

/** Commands by name with their argument generators; `states` is where they are valid. */
interface CommandDef {
  name: string;
  states: readonly FuzzState[];
  args: (g: Generator) => Part[];
}

const ANY: readonly FuzzState[] = ['notAuthenticated', 'authenticated', 'selected'];
const AUTH: readonly FuzzState[] = ['authenticated', 'selected'];
const SEL: readonly FuzzState[] = ['selected'];
const NA: readonly FuzzState[] = ['notAuthenticated'];

export class Generator {
  readonly r: Rand;
  private tagN = 0;
  constructor(
    seed: number,
    readonly limits: GeneratorLimits,
  ) {
    this.r = new Rand(seed);
  }

  tag(): string {
    return `F${(++this.tagN).toString(36)}`;
  }

  // ------------------------------------------------------------ argument pieces

  mailbox(): Part {
    const r = this.r;
    // Drawn only when given, so the default runs' inputs stay what their seeds always gave.
    if (this.limits.mailboxes && r.chance(0.25)) return r.pick(this.limits.mailboxes);
    if (r.chance(0.1)) return this.literalOf(r.pick(['INBOX', 'Archive', 'Fuzz', 'caf\xe9', 'x\x00y', 'K\xc3\xa4se']));
    if (r.chance(0.1)) return r.pick(UTF8_MAILBOXES);
    return r.pick(MAILBOXES);
  }
  astring(words: readonly string[]): Part {
    const r = this.r;
    const w = r.pick(words);
    const k = r.int(0, 9);
    if (k < 5) return w;
    if (k < 8) return `"${w}"`;
    return this.literalOf(w);
  }
  literalOf(text: string | Buffer, sync = this.r.chance(0.5)): LiteralPart {
    return { lit: typeof text === 'string' ? Buffer.from(text, 'latin1') : text, sync };
  }
  seqSet(): string {
    const r = this.r;
    const n = (): string => (r.chance(0.15) ? '*' : String(r.int(1, 12)));
    switch (r.int(0, 8)) {
      case 0:
        return '1:*';
      case 1:
        return n();
      case 2:
        return `${n()}:${n()}`;
      case 3:
        return `${n()},${n()}:${n()},${n()}`;
      case 4:
        return '*';
      case 5:
        return r.chance(0.5) ? '$' : `${r.int(1, 4)}:${r.int(100, 5000)}`;
      case 6:
        // Past EXISTS (issue 29): BAD in FETCH/STORE/COPY/MOVE, matching nothing in SEARCH; `*` still the last message.
        return r.pick(['1000', '1000:*', '*:1000', '7,2', '12:1000', '2,1000:3', '4294967295:1']);
      default:
        return `${r.int(1, 3)}`;
    }
  }
  /**
   * ESEARCH/SEARCHRES/PARTIAL result options (RFC 4731, RFC 5182, RFC 9394)
   * before the criteria, sometimes: `RETURN ()`, `RETURN (MIN COUNT SAVE)`,
   * `RETURN (PARTIAL -1:-5)`, unknown or
   * malformed ones.
   */
  searchReturn(): string[] {
    const r = this.r;
    if (!r.chance(0.3)) return [];
    if (r.chance(0.1)) return [r.pick(['RETURN ', 'RETURN MIN ', 'RETURN (MIN ', 'RETURN (FIRST) ', 'return (save) '])];
    const options = ['MIN', 'MAX', 'ALL', 'COUNT', 'SAVE'].filter(() => r.chance(0.35));
    // RFC 9394 PARTIAL: good ranges from either end, and broken ones.
    // RFC 5267 §4 CONTEXT=SEARCH/SORT: live results and the hint.
    if (r.chance(0.2)) options.push(r.pick(['UPDATE', 'CONTEXT', 'update']));
    if (r.chance(0.3)) options.push(`PARTIAL ${r.pick(['1:10', '-1:-5', '5:2', `${r.int(1, 50)}:${r.int(1, 50)}`, '-3:-100', '23500:24000', '0:5', '1:-5', '7', '1:*', '4:2', '-3:-1', '600:500', '-1:-1'])}`);
    return [`RETURN (${options.join(' ')}) `];
  }
  /** SORT criteria (RFC 5256, RFC 5957), sometimes broken: empty, unknown keys, a dangling REVERSE. */
  sortCriteria(): string {
    const r = this.r;
    if (r.chance(0.08)) return r.pick(['()', '(REVERSE)', '(FOO)', 'SUBJECT', '(SUBJECT', '(REVERSE REVERSE DATE)']);
    const keys = ['ARRIVAL', 'CC', 'DATE', 'FROM', 'SIZE', 'SUBJECT', 'TO', 'DISPLAYFROM', 'DISPLAYTO', 'reverse date'];
    const n = r.int(1, 3);
    return `(${Array.from({ length: n }, () => `${r.chance(0.3) ? 'REVERSE ' : ''}${r.pick(keys)}`).join(' ')})`;
  }
  /** The mandatory charset of SORT and THREAD criteria. */
  sortCharset(): string {
    return this.r.pick(['UTF-8', 'US-ASCII', 'utf-8', '"UTF-8"', 'X-BOGUS']);
  }
  /** A LIST-EXTENDED return list, sometimes LIST-STATUS's `STATUS (items)` (RFC 5819). */
  listReturn(): string[] {
    const r = this.r;
    if (!r.chance(0.25)) return [];
    const items = Array.from({ length: r.int(0, 3) }, () => r.pick(STATUS_ITEMS));
    const status = r.chance(0.1) ? 'STATUS' : `STATUS (${items.join(' ')})`;
    return [` RETURN (${r.pick([status, `CHILDREN ${status}`, 'CHILDREN', `${status} SUBSCRIBED`, 'SUBSCRIBED CHILDREN', ''])})`];
  }
  /**
   * NOTIFY arguments (RFC 5465 §8): NONE, or SET [STATUS] with event groups
   * of every filter, event lists with MessageNew's FETCH attributes, NONE,
   * unknown events, and the combinations the rules refuse (MessageNew
   * alone, MailboxName with selected, selected twice).
   */
  notifyArgs(): string[] {
    const r = this.r;
    if (r.chance(0.15)) return [r.pick(['NONE', 'none', 'SET', 'SET STATUS', 'SET ()', 'NONE (selected (MessageNew))', 'BOGUS'])];
    const filters = ['selected', 'selected-delayed', 'inboxes', 'personal', 'subscribed', 'SUBTREE INBOX', 'subtree (Fuzz "a b")', 'mailboxes Fuzz/Deep/er', 'mailboxes ("*" INBOX)', 'nosuch'];
    const events = ['MessageNew', 'MessageExpunge', 'FlagChange', 'AnnotationChange', 'MailboxName', 'SubscriptionChange', 'MailboxMetadataChange', 'ServerMetadataChange', 'QuotaExceeded', 'XFoo'];
    const groups = Array.from({ length: r.int(1, 3) }, () => {
      const filter = r.pick(filters);
      if (r.chance(0.15)) return `(${filter} NONE)`;
      const chosen = events.filter(() => r.chance(0.3));
      if (r.chance(0.6)) chosen.unshift('MessageNew', 'MessageExpunge');
      const list = chosen.map((e) => {
        if (e !== 'MessageNew' || !r.chance(0.3)) return e;
        const atts = this.fetchAtts();
        return `MessageNew ${atts.startsWith('(') ? atts : `(${atts})`}`;
      });
      return `(${filter} (${list.join(' ')}))`;
    });
    return [`SET${r.chance(0.3) ? ' STATUS' : ''} ${groups.join(' ')}`];
  }
  flag(): string {
    return this.r.chance(0.2) ? `kw${this.r.int(0, 30)}` : this.r.pick(FLAGS);
  }
  flagList(): string {
    const n = this.r.int(0, 3);
    return `(${Array.from({ length: n }, () => this.flag()).join(' ')})`;
  }
  /** RFC 4466 select parameters: none mostly, CONDSTORE, QRESYNC with known-uids and seq-match-data (valid and not). */
  selectParams(): string {
    const r = this.r;
    if (r.chance(0.6)) return '';
    const qresync = () =>
      `QRESYNC (${r.pick(['1', '4294967295', '0', 'x'])} ${r.pick(['1', '99', '0'])}${r.pick(['', ` ${this.seqSet()}`, ` ${this.seqSet()} (${this.seqSet()} ${this.seqSet()})`, ' (1:3 1,5,9)', ' (1:* 1:4)', ' (2,1 1,2)'])})`;
    return ` (${r.pick(['CONDSTORE', qresync(), 'X-FOO', '', `CONDSTORE ${qresync()}`])})`;
  }
  fetchAtts(): string {
    const r = this.r;
    if (r.chance(0.15)) return r.pick(FETCH_MACROS);
    if (r.chance(0.25)) return r.pick(FETCH_ITEMS);
    const n = r.int(1, 4);
    return `(${Array.from({ length: n }, () => r.pick(FETCH_ITEMS)).join(' ')})`;
  }
  searchKey(depth = 0): string {
    const r = this.r;
    const k = r.int(0, depth > 3 ? 6 : 12);
    switch (k) {
      case 0:
        return r.pick(['ALL', 'ANSWERED', 'DELETED', 'FLAGGED', 'NEW', 'OLD', 'RECENT', 'SEEN', 'UNSEEN', 'UNDELETED', 'DRAFT', 'UNDRAFT']);
      case 1:
        return `${r.pick(['FROM', 'TO', 'CC', 'BCC', 'SUBJECT', 'BODY', 'TEXT'])} ${r.pick(['alice', '"hello world"', '""', 'x'])}`;
      case 2:
        return `${r.pick(['BEFORE', 'ON', 'SINCE', 'SENTBEFORE', 'SENTON', 'SENTSINCE'])} ${r.pick(['1-Jan-2020', '31-Dec-2099', '"2-Nov-2026"', '29-Feb-2023', '1-Foo-2020'])}`;
      case 3:
        return `${r.pick(['LARGER', 'SMALLER'])} ${r.int(0, 1000)}`;
      case 4:
        return `${r.pick(['KEYWORD', 'UNKEYWORD'])} ${this.flag().replace('\\', '')}`;
      case 5:
        return `UID ${this.seqSet()}`;
      case 6:
        return this.seqSet();
      case 7:
        return `HEADER ${r.pick(['Subject', 'Message-ID', 'X'])} ${r.pick(['m', '""', '"a b"'])}`;
      case 8:
        return `NOT ${this.searchKey(depth + 1)}`;
      case 9:
        return `OR ${this.searchKey(depth + 1)} ${this.searchKey(depth + 1)}`;
      case 10:
        return `(${this.searchKey(depth + 1)} ${this.searchKey(depth + 1)})`;
      case 11:
        return r.pick([
          'MODSEQ 1', 'OLDER 10', 'YOUNGER 100000',
          // OBJECTID (RFC 8474 §6) and SAVEDATE (RFC 8514 §4.3), malformed arguments among them.
          'EMAILID M1', 'THREADID T1', 'EMAILID "M2"', 'EMAILID M!', 'THREADID', 'SAVEDATESUPPORTED',
          'SAVEDBEFORE 1-Jan-2020', 'SAVEDON "2-Nov-2026"', 'SAVEDSINCE 29-Feb-2023', 'SAVEDSINCE 1-Foo-2020',
          'SUBJECT "gr\xc3\xbc\xc3\x9fe"',
        ]);
      default:
        // X-GM-EXT-1 keys: 64-bit ids (in range and not), labels, X-GM-RAW queries.
        switch (r.int(0, 3)) {
          case 0:
            return `${r.pick(['X-GM-MSGID', 'X-GM-THRID'])} ${r.pick(['1700000000000000000', '1', '18446744073709551615', '18446744073709551616', 'x', '0'])}`;
          case 1:
            return `X-GM-LABELS ${r.pick(GM_LABELS)}`;
          default:
            return `X-GM-RAW ${r.pick(GM_RAW)}`;
        }
    }
  }
  /** STORE's X-GM-LABELS value: a list of labels, or one. */
  gmLabels(): string {
    const r = this.r;
    if (r.chance(0.2)) return r.pick(GM_LABELS);
    return `(${Array.from({ length: r.int(0, 3) }, () => r.pick(GM_LABELS)).join(' ')})`;
  }
  /** An IMAP URL (RFC 5092) for CATENATE: valid ones of the fuzz mailboxes, broken ones, others' and relative ones. */
  imapUrl(): string {
    const r = this.r;
    const uid = r.pick(['1', '2', '3', '0', '4294967296', '99', '*']);
    const mailbox = r.pick(['INBOX', 'inbox', 'Archive', 'Fuzz/Deep/er', 'Nope', '%C3%A9', 'caf%C3%A9', '%FF', '%', 'a%20b']);
    const tail = r.pick(['', '/;SECTION=1', '/;SECTION=HEADER', '/;SECTION=1.MIME', '/;section=2.1', '/;SECTION=HEADER.FIELDS%20(Subject)', '/;SECTION=TEXT/;PARTIAL=2.5', '/;PARTIAL=0', '/;PARTIAL=1.0', ';URLAUTH=anonymous:internal:00', '/;SECTION=']);
    const validity = r.chance(0.3) ? `;UIDVALIDITY=${r.pick(['1', '0', '385759045'])}` : '';
    const head = r.pick(['/', '/', 'imap://testuser@localhost/', 'imap://other@h/', '//localhost/', '', 'imap:///', 'http://x/']);
    return `${head}${mailbox}${validity}${r.pick(['/;UID=', ';UID=', '/;uid='])}${uid}${tail}`;
  }
  /** An RFC 4467 URL: a rump for GENURLAUTH, a signed-looking one for URLFETCH, or any CATENATE URL. */
  urlauthUrl(): string {
    const r = this.r;
    if (r.chance(0.2)) return this.imapUrl();
    const user = r.pick(['testuser', 'other', 'test%75ser']);
    const path = r.pick(['INBOX/;UID=1', 'INBOX/;uid=2/;section=1', 'Archive;UIDVALIDITY=1/;UID=1', 'Nope/;UID=1', 'INBOX/;UID=1/;PARTIAL=0.3']);
    const expire = r.pick(['', '', ';EXPIRE=2030-01-01T00:00:00Z', ';EXPIRE=2000-01-01T00:00:00Z', ';EXPIRE=soon']);
    const access = r.pick(['anonymous', 'authuser', 'user+testuser', 'submit+testuser', 'user+', 'everyone', 'AUTHUSER']);
    const mech = r.pick(['', '', ':INTERNAL:0123456789abcdef0123456789abcdef01234567', ':internal:00', ':XSHA:ab', ':INTERNAL:']);
    return `imap://${user}@localhost/${path}${expire};URLAUTH=${access}${mech}`;
  }
  /** RFC 4469 `CATENATE (cat-part *(SP cat-part))`, sometimes malformed. */
  catenate(): Part[] {
    const r = this.r;
    const out: Part[] = ['CATENATE ('];
    const n = r.chance(0.05) ? 0 : r.int(1, 4);
    for (let i = 0; i < n; i++) {
      if (i > 0) out.push(' ');
      const k = r.int(0, 9);
      if (k < 4) out.push('TEXT ', this.literalOf(r.pick(['Subject: cat\r\n\r\n', '\r\n--b\r\n', 'x', ''])));
      else if (k < 8) out.push('URL ', r.chance(0.7) ? JSON.stringify(this.imapUrl()) : this.literalOf(this.imapUrl()));
      else out.push(r.pick(['TEXT "x"', 'URL', 'FOO 1', 'URL ("/INBOX/;UID=1")', '()']));
    }
    if (r.chance(0.95)) out.push(')');
    return out;
  }
  message(): Buffer {
    const r = this.r;
    const n = r.int(0, 4);
    if (n === 0) return Buffer.from(`Subject: f${r.int(0, 99)}\r\n\r\nbody\r\n`);
    if (n === 1)
      return Buffer.from(
        'Content-Type: multipart/mixed; boundary=b\r\nSubject: mp\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\none\r\n--b\r\nContent-Type: message/rfc822\r\n\r\nSubject: in\r\n\r\ntwo\r\n--b--\r\n',
      );
    if (n === 2) return r.bytes(r.int(0, 120)); // any bytes, 8-bit and NUL included
    if (n === 3) return Buffer.from(`Subject: =?utf-8?B?${Buffer.from('h\xe9llo').toString('base64')}?=\r\nContent-Type: text/plain; charset=x-unknown\r\n\r\n\xff\xfe\r\n`, 'latin1');
    if (n === 4 && r.chance(0.5)) {
      // Encoded parts for BINARY and PREVIEW: base64 with NUL, quoted-printable HTML, an encoding nobody knows.
      const cte = r.pick(['base64', 'quoted-printable', 'x-uuencode', 'binary', 'BASE64']);
      return Buffer.from(
        `MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=z\r\n\r\n--z\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>caf=C3=A9 &amp; <b>x</b>=\r\n</p>\r\n--z\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: ${cte}\r\n\r\nAAEC/w==\r\n--z--\r\n`,
        'latin1',
      );
    }
    if (n === 4 && r.chance(0.5)) {
      if (r.chance(0.5)) return lineBreakParts();
      // Parts that decode to a bare CR, a bare LF, CRLF and NUL (issue 29): base64 clean, with junk and base64url
      // characters, cut short; quoted-printable with encoded CR/LF, soft breaks and a bad escape.
      const body = r.pick([Buffer.from('abcdefg\rhijkl\r\nmno\npqrstuvqxyz', 'latin1').toString('base64'), 'YW-Jj_ZG Vm!\r\nAA0K\r\nDQo', 'YQ==YmM=', 'a=0Db=0Ac=\r\nd=00e=ZZ=']);
      const cte = body.startsWith('a=') ? 'quoted-printable' : 'base64';
      return Buffer.from(`MIME-Version: 1.0\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: ${cte}\r\n\r\n${body}\r\n`, 'latin1');
    }
    return r.bytes(r.int(0, 200), IMAPISH);
  }

  /** ACL identifiers (RFC 4314 §3: astring), atoms and not: quoted, NIL, digits, a literal with CR LF, 8-bit. */
  aclIdentifier(): Part {
    const r = this.r;
    if (r.chance(0.15)) return this.literalOf(r.pick(['two\r\nlines', 'J\xf6rg', 'x']));
    return r.pick(['Fred', '-Fred', '$team', 'a]b', 'user@example.com', '"two words"', 'NIL', '"nil"', '12345', '""', '"x\\"y"']);
  }

  /** METADATA entry names (RFC 5464 §3.2), valid and not. */
  metadataEntry(): Part {
    return this.astring(['/private/comment', '/shared/comment', '/shared/vendor/a]b', '/private/x y', '/private', '/bad', '/shared//x', '/private/*']);
  }

  /** METADATA values: quoted, NIL, a literal with CR LF and 8-bit, a literal8 with NUL (RFC 5464 §5 value = nstring / literal8). */
  metadataValue(): Part {
    const r = this.r;
    switch (r.int(0, 4)) {
      case 0:
        return r.pick(['"plain"', 'NIL', '""', 'atomvalue']);
      case 1:
        return this.literalOf('line one\r\nline two');
      case 2:
        return this.literalOf(Buffer.from('bare\nLF and CR\r and \xe9', 'latin1'));
      case 3:
        return { lit: Buffer.from('nul\0byte'), sync: r.chance(0.5), binary: true };
      default:
        return { lit: Buffer.from('nul\0in a plain literal'), sync: r.chance(0.5) };
    }
  }

  // ------------------------------------------------------------ commands

  private readonly defs: CommandDef[] = [
    { name: 'CAPABILITY', states: ANY, args: () => [] },
    { name: 'NOOP', states: ANY, args: () => [] },
    { name: 'ID', states: ANY, args: (g) => [g.r.pick(['NIL', '("name" "fuzz")', '("a" NIL)', '()'])] },
    { name: 'LOGIN', states: NA, args: (g) => [g.astring(['testuser', 'nobody', '']), ' ', g.astring(['testpass', 'wrong', ''])] },
    { name: 'AUTHENTICATE', states: NA, args: (g) => [g.r.pick(['PLAIN', 'XOAUTH2', 'OAUTHBEARER', 'EXTERNAL', 'CRAM-MD5', 'plain'])] },
    { name: 'SELECT', states: AUTH, args: (g) => [g.mailbox(), g.selectParams()] },
    { name: 'EXAMINE', states: AUTH, args: (g) => [g.mailbox(), g.selectParams()] },
    { name: 'CREATE', states: AUTH, args: (g) => [g.mailbox()] },
    { name: 'DELETE', states: AUTH, args: (g) => [g.mailbox()] },
    { name: 'RENAME', states: AUTH, args: (g) => [g.mailbox(), ' ', g.mailbox()] },
    { name: 'SUBSCRIBE', states: AUTH, args: (g) => [g.mailbox()] },
    { name: 'UNSUBSCRIBE', states: AUTH, args: (g) => [g.mailbox()] },
    {
      name: 'LIST',
      states: AUTH,
      args: (g) => [
        ...(g.r.chance(0.2) ? [g.r.pick(LIST_SELECTIONS), ' '] : []),
        g.r.pick(['""', 'INBOX', '"Fuzz/"']),
        ' ',
        g.r.chance(0.15) ? g.r.pick(LIST_PATTERN_LISTS) : g.r.pick(LIST_PATTERNS),
        ...g.listReturn(),
      ],
    },
    { name: 'LSUB', states: AUTH, args: (g) => [g.r.pick(['""', 'INBOX']), ' ', g.r.pick(LIST_PATTERNS)] },
    {
      name: 'STATUS',
      states: AUTH,
      args: (g) => [g.mailbox(), ' ', `(${Array.from({ length: g.r.int(1, 4) }, () => g.r.pick(STATUS_ITEMS)).join(' ')})`],
    },
    {
      name: 'APPEND',
      states: AUTH,
      args: (g) => {
        const out: Part[] = [g.mailbox()];
        // MULTIAPPEND (RFC 3502): more messages, each with its own flags and date; sometimes an empty one (the cancel).
        const count = g.r.chance(0.8) ? 1 : g.r.int(2, 4);
        for (let i = 0; i < count; i++) {
          out.push(' ');
          if (g.r.chance(0.5)) out.push(g.flagList(), ' ');
          if (g.r.chance(0.3)) out.push(g.r.pick(['"17-Jul-1996 02:44:25 -0700"', '" 1-Jan-2000 00:00:00 +0000"', '"31-Feb-2020 25:00:00 +9999"']), ' ');
          const k = g.r.int(0, 9);
          // RFC 6855 §4: `UTF8 (literal8)`, sometimes malformed (no parentheses, a plain literal).
          if (k === 0) out.push(g.r.pick(['UTF8 (', 'utf8 (', 'UTF8 ']), { lit: g.message(), sync: g.r.chance(0.3), binary: g.r.chance(0.8) }, g.r.pick([')', ')', '']));
          else if (k <= 2) out.push(...g.catenate());
          else out.push({ lit: g.r.chance(0.05) ? Buffer.alloc(0) : g.message(), sync: g.r.chance(0.3), binary: g.r.chance(0.15) });
        }
        return out;
      },
    },
    { name: 'IDLE', states: AUTH, args: () => [] },
    { name: 'NOTIFY', states: AUTH, args: (g) => g.notifyArgs() },
    { name: 'NAMESPACE', states: AUTH, args: () => [] },
    { name: 'ENABLE', states: AUTH, args: (g) => [g.r.pick(['CONDSTORE', 'QRESYNC', 'UTF8=ACCEPT', 'X-FOO', 'CONDSTORE X', 'IMAP4rev2', 'imap4rev2 QRESYNC'])] },
    { name: 'CHECK', states: SEL, args: () => [] },
    { name: 'CLOSE', states: SEL, args: () => [] },
    { name: 'UNSELECT', states: SEL, args: () => [] },
    // RFC 4467: GENURLAUTH url mech ..., URLFETCH url ..., RESETKEY [mailbox [mech ...]].
    {
      name: 'GENURLAUTH',
      states: AUTH,
      args: (g) => Array.from({ length: g.r.int(1, 3) }, (_, i) => [i > 0 ? ' ' : '', g.astring([g.urlauthUrl()]), ` ${g.r.pick(['INTERNAL', 'internal', 'XSHA1'])}`]).flat(),
    },
    {
      name: 'URLFETCH',
      states: AUTH,
      // RFC 5524 (URLAUTH=BINARY): an argument may be `(url [BODYPARTSTRUCTURE] [BINARY | BODY])`.
      args: (g) =>
        Array.from({ length: g.r.int(1, 3) }, (_, i) => {
          const url = g.astring([g.urlauthUrl()]);
          if (!g.r.chance(0.5)) return [i > 0 ? ' ' : '', url];
          const params = Array.from({ length: g.r.int(0, 3) }, () => ' ' + g.r.pick(['BINARY', 'BODY', 'BODYPARTSTRUCTURE', 'binary', 'FOO']));
          return [i > 0 ? ' ' : '', '(', url, ...params, g.r.chance(0.95) ? ')' : ''];
        }).flat(),
    },
    // ACL (RFC 4314): identifiers that are atoms and ones that are not; never testuser or anyone, so the probes keep their rights.
    { name: 'GETACL', states: AUTH, args: (g) => [g.mailbox()] },
    { name: 'MYRIGHTS', states: AUTH, args: (g) => [g.mailbox()] },
    { name: 'LISTRIGHTS', states: AUTH, args: (g) => [g.mailbox(), ' ', g.aclIdentifier()] },
    { name: 'SETACL', states: AUTH, args: (g) => [g.mailbox(), ' ', g.aclIdentifier(), ' ', g.r.pick(['lr', '+w', '-r', '""', 'lrswipkxtecda', 'lrQ', '"+cd"'])] },
    { name: 'DELETEACL', states: AUTH, args: (g) => [g.mailbox(), ' ', g.aclIdentifier()] },
    // METADATA (RFC 5464): values with CR, LF, NUL and 8-bit come back as literals (literal8 for NUL).
    {
      name: 'SETMETADATA',
      states: AUTH,
      args: (g) => [g.r.chance(0.3) ? '""' : g.mailbox(), ' (', g.metadataEntry(), ' ', g.metadataValue(), ...(g.r.chance(0.3) ? [' ', g.metadataEntry(), ' ', g.metadataValue()] : []), g.r.chance(0.95) ? ')' : ''],
    },
    {
      name: 'GETMETADATA',
      states: AUTH,
      args: (g) => [g.r.pick(['', '(DEPTH infinity) ', '(MAXSIZE 5) ', '(DEPTH 1 MAXSIZE 100) ', '(DEPTH 2) ']), g.r.chance(0.3) ? '""' : g.mailbox(), ' ', g.r.chance(0.5) ? g.metadataEntry() : '(/private /shared)'],
    },
    { name: 'RESETKEY', states: AUTH, args: (g) => (g.r.chance(0.3) ? [] : [g.mailbox(), ...(g.r.chance(0.5) ? [] : [` ${g.r.pick(['INTERNAL', 'XSHA1', 'INTERNAL INTERNAL'])}`])]) },
    // RFC 8437: back to not authenticated (the driver's probe learns the new state).
    { name: 'UNAUTHENTICATE', states: AUTH, args: (g) => (g.r.chance(0.9) ? [] : ['now']) },
    { name: 'EXPUNGE', states: SEL, args: () => [] },
    { name: 'UID EXPUNGE', states: SEL, args: (g) => [g.seqSet()] },
    {
      name: 'SEARCH',
      states: SEL,
      args: (g) => [...g.searchReturn(), ...(g.r.chance(0.1) ? ['CHARSET ', g.r.pick(['UTF-8', 'US-ASCII', 'X-BOGUS']), ' ', g.searchKey()] : [g.searchKey()])],
    },
    { name: 'UID SEARCH', states: SEL, args: (g) => [...g.searchReturn(), g.searchKey()] },
    // RFC 5267 §4.3: tags of live results (the generator's tags, or unknown ones), one or several, or none.
    {
      name: 'CANCELUPDATE',
      states: SEL,
      args: (g) => (g.r.chance(0.15) ? [g.literalOf('F1')] : g.r.chance(0.1) ? [] : [g.r.pick(['"F1"', '"F2" "F3"', '"nosuch"', 'F1', '"F4" '])]),
    },
    // RFC 5256 SORT and THREAD; RFC 5267 ESORT's RETURN before the criteria.
    { name: 'SORT', states: SEL, args: (g) => [...g.searchReturn(), g.sortCriteria(), ' ', g.sortCharset(), ' ', g.searchKey()] },
    { name: 'UID SORT', states: SEL, args: (g) => [g.sortCriteria(), ' ', g.sortCharset(), ' ', g.searchKey(), ...(g.r.chance(0.3) ? [' ', g.searchKey()] : [])] },
    {
      name: 'THREAD',
      states: SEL,
      args: (g) => [g.r.pick(['REFERENCES', 'ORDEREDSUBJECT', 'references', 'XYZZY']), ' ', g.sortCharset(), ' ', g.searchKey()],
    },
    { name: 'UID THREAD', states: SEL, args: (g) => [g.r.pick(['REFERENCES', 'ORDEREDSUBJECT']), ' ', g.sortCharset(), ' ', g.searchKey()] },
    { name: 'FETCH', states: SEL, args: (g) => [g.seqSet(), ' ', g.fetchAtts()] },
    { name: 'UID FETCH', states: SEL, args: (g) => [g.seqSet(), ' ', g.fetchAtts()] },
    {
      name: 'STORE',
      states: SEL,
      args: (g) => [g.seqSet(), ' ', g.r.pick(['FLAGS', '+FLAGS', '-FLAGS', 'FLAGS.SILENT', '+FLAGS.SILENT', '-FLAGS.SILENT']), ' ', g.r.chance(0.8) ? g.flagList() : g.flag()],
    },
    { name: 'UID STORE', states: SEL, args: (g) => [g.seqSet(), ' ', g.r.pick(['+FLAGS', '-FLAGS.SILENT', 'FLAGS']), ' ', g.flagList()] },
    {
      name: 'STORE',
      states: SEL,
      args: (g) => [g.seqSet(), ' ', g.r.pick(['X-GM-LABELS', '+X-GM-LABELS', '-X-GM-LABELS', '+X-GM-LABELS.SILENT', '-x-gm-labels.silent']), ' ', g.gmLabels()],
    },
    { name: 'UID STORE', states: SEL, args: (g) => [g.seqSet(), ' ', g.r.pick(['+X-GM-LABELS', '-X-GM-LABELS', 'X-GM-LABELS.SILENT']), ' ', g.gmLabels()] },
    { name: 'COPY', states: SEL, args: (g) => [g.seqSet(), ' ', g.mailbox()] },
    { name: 'UID COPY', states: SEL, args: (g) => [g.seqSet(), ' ', g.mailbox()] },
    { name: 'MOVE', states: SEL, args: (g) => [g.seqSet(), ' ', g.mailbox()] },
    { name: 'UID MOVE', states: SEL, args: (g) => [g.seqSet(), ' ', g.mailbox()] },
    { name: 'LOGOUT', states: ANY, args: () => [] },
    { name: 'STARTTLS', states: NA, args: () => [] },
    { name: 'XFUZZ', states: ANY, args: (g) => [g.r.pick(['', 'a', '(b)'])] },
  ];

  /** A valid command for `state` (most of the time) with what follows on the wire for IDLE/AUTHENTICATE. */
  validCommand(state: FuzzState): Part[] {
    const r = this.r;
    let def: CommandDef;
    if (r.chance(0.85)) {
      const fit = this.defs.filter((d) => d.states.includes(state));
      def = r.pick(fit);
      // LOGOUT ends the connection: keep it rare.
      if (def.name === 'LOGOUT' && r.chance(0.9)) def = this.defs[1]!;
    } else def = r.pick(this.defs);
    const name = r.chance(0.1) ? def.name.toLowerCase() : def.name;
    const args = def.args(this);
    const parts: Part[] = [this.tag(), ' ', name];
    if (args.length) parts.push(' ', ...args);
    parts.push('\r\n');
    if (def.name === 'IDLE') parts.push(r.pick(['DONE\r\n', 'done\r\n', 'DONE \r\n', 'NOPE\r\n', '\r\n', 'DONE\n']));
    if (def.name === 'AUTHENTICATE') {
      const mech = String(args[0]).toUpperCase();
      const plain = Buffer.from(r.pick(['\0testuser\0testpass', 'testuser\0testuser\0testpass', '\0testuser\0bad', 'junk', '\0\0'])).toString('base64');
      const xo = Buffer.from(`user=testuser\x01auth=Bearer ${r.pick(['testtoken', 'bad'])}\x01\x01`).toString('base64');
      const bearer = Buffer.from(`n,a=testuser,\x01host=x\x01auth=Bearer ${r.pick(['testtoken', 'bad'])}\x01\x01`).toString('base64');
      // RFC 4422 A.1: EXTERNAL's message is the authorization identity (often empty).
      const external = Buffer.from(r.pick(['', 'testuser', 'other', '\0'])).toString('base64');
      const data = mech === 'XOAUTH2' ? xo : mech === 'OAUTHBEARER' ? bearer : mech === 'EXTERNAL' ? external : plain;
      if (r.chance(0.3)) {
        // SASL-IR: the initial response on the command line.
        parts.splice(parts.length - 1, 0, ' ', r.chance(0.9) ? data : r.pick(['=', '!!!', '*']));
      } else {
        parts.push(r.pick([data + '\r\n', data + '\r\n', '*\r\n', '@@@\r\n', '\r\n', data.slice(1) + '\r\n']));
      }
      // A refused token gets a JSON challenge and one more line.
      if (mech !== 'PLAIN' && r.chance(0.5)) parts.push('\r\n');
    }
    return parts;
  }

  // ------------------------------------------------------------ mutations

  /** One input for a session in `state`: a valid command, a mutated one, or random bytes. */
  input(state: FuzzState): Buffer {
    const r = this.r;
    const k = r.int(0, 99);
    if (k < 8) return this.randomBytes();
    const parts = this.validCommand(state);
    if (k < 35) return serialize(parts);
    const mutated = this.mutateParts(parts);
    const bytes = serialize(mutated);
    return r.chance(0.25) ? this.mutateBytes(bytes) : bytes;
  }

  randomBytes(): Buffer {
    const r = this.r;
    const n = r.int(1, 300);
    const data = r.chance(0.5) ? r.bytes(n) : r.bytes(n, IMAPISH);
    return r.chance(0.7) ? Buffer.concat([data, Buffer.from('\r\n')]) : data;
  }

  mutateParts(input: Part[]): Part[] {
    const r = this.r;
    const parts = [...input];
    const times = r.int(1, 3);
    for (let t = 0; t < times; t++) {
      // Never touch the tag (index 0) and the line ends, so the tag stays traceable most of the time.
      const at = r.int(1, Math.max(1, parts.length - 2));
      const part = parts[at]!;
      switch (r.int(0, 15)) {
        case 0: // a string becomes a literal
          if (typeof part === 'string' && part.length) parts[at] = { lit: Buffer.from(part.replace(/^"|"$/g, ''), 'latin1'), sync: r.chance(0.5) };
          break;
        case 1: // a literal of the wrong size
          if (typeof part === 'object' && 'lit' in part) {
            const n = part.lit.length;
            const wrong = r.pick([n + 1, Math.max(0, n - 1), n + r.int(2, 50), 0, Math.floor(n / 2)]);
            parts[at] = { ...part, announce: String(wrong) };
          } else parts.splice(at, 0, ' ', { lit: r.bytes(r.int(0, 20)), sync: r.chance(0.5), announce: String(r.int(0, 30)) });
          break;
        case 2: // a huge or unusable literal size (rare: everything after it in the batch is literal data)
          if (r.chance(0.85)) break;
          parts.splice(at, 0, ' ', { lit: Buffer.alloc(0), sync: r.chance(0.6), announce: r.pick(['4294967296', '99999999999999999999', '9007199254740993', '2000000', '18446744073709551615']) });
          break;
        case 3: // {n} <-> {n+}, or literal8
          if (typeof part === 'object' && 'lit' in part) parts[at] = r.chance(0.7) ? { ...part, sync: !part.sync } : { ...part, binary: !part.binary };
          else parts.splice(at, 0, ' ', { lit: Buffer.from('x'), sync: false, binary: r.chance(0.5) });
          break;
        case 4: // 8-bit bytes
          parts.splice(at, 0, Buffer.from(r.bytes(r.int(1, 6)).map((b) => b | 0x80)));
          break;
        case 5: // NUL
          parts.splice(at, 0, r.pick(['\0', 'a\0b', '"\0"', '\0\0\0']));
          break;
        case 6: {
          // deep parentheses
          const depth = r.pick([10, 99, 100, 101, 1000, 20000]);
          const open = '('.repeat(depth);
          const close = r.chance(0.7) ? ')'.repeat(depth) : ')'.repeat(r.int(0, depth));
          parts.splice(at, 0, ' ', open + r.pick(['', 'ALL', 'FLAGS', 'a']) + close);
          break;
        }
        case 7: // huge numbers
          if (typeof part === 'string' && /\d/.test(part)) parts[at] = part.replace(/\d+/, r.pick(HUGE_NUMBERS));
          else parts.splice(at, 0, ' ', r.pick(HUGE_NUMBERS));
          break;
        case 8: {
          // huge sequence sets
          const kind = r.int(0, 4);
          const set =
            kind === 0
              ? '1:4294967295'
              : kind === 1
                ? Array.from({ length: r.int(100, 5000) }, (_, i) => String(i + 1)).join(',')
                : kind === 2
                  ? '4294967295:*'
                  : kind === 3
                    ? Array.from({ length: 2000 }, () => `${r.int(1, 9)}:${r.int(1, 9)}`).join(',')
                    : `${r.pick(HUGE_NUMBERS)}:${r.pick(HUGE_NUMBERS)}`;
          if (typeof part === 'string' && /^[\d*$:,]+$/.test(part)) parts[at] = set;
          else parts.splice(at, 0, ' ', set);
          break;
        }
        case 9: // overlong line
          parts.splice(at, 0, 'A'.repeat(this.limits.maxLineLength + r.int(-2, 40)));
          break;
        case 10: // unbalanced quotes
          if (typeof part === 'string' && part.includes('"')) parts[at] = part.replace('"', '');
          else parts.splice(at, 0, r.pick(['"', '"abc', '"\\', 'a"b', '"\\x"', '"\\"']));
          break;
        case 11: // drop a part
          if (parts.length > 3) parts.splice(at, 1);
          break;
        case 12: // duplicate a part
          parts.splice(at, 0, part);
          break;
        case 13: // CR / LF in the middle
          parts.splice(at, 0, r.pick(['\r', '\n', '\r\n', '\r\r\n']));
          break;
        case 14: // command from another state or another command's arguments
          parts.splice(at, 0, ' ', ...this.validCommand(r.pick(['notAuthenticated', 'authenticated', 'selected'] as const)).slice(2, -1));
          break;
        default: // random IMAP-ish text
          parts.splice(at, 0, r.bytes(r.int(1, 12), IMAPISH).toString('latin1'));
      }
    }
    return parts;
  }

  mutateBytes(data: Buffer): Buffer {
    const r = this.r;
    const out = Buffer.from(data);
    const op = r.int(0, 3);
    if (out.length === 0) return out;
    if (op === 0) {
      for (let i = r.int(1, 4); i > 0; i--) out[r.int(0, out.length - 1)] = r.prng.below(256);
      return out;
    }
    if (op === 1) return out.subarray(0, r.int(0, out.length));
    if (op === 2) {
      const at = r.int(0, out.length);
      return Buffer.concat([out.subarray(0, at), r.bytes(r.int(1, 8)), out.subarray(at)]);
    }
    const at = r.int(0, out.length - 1);
    const len = r.int(1, Math.min(20, out.length - at));
    return Buffer.concat([out, out.subarray(at, at + len)]);
  }
}

/** Parts to bytes; literals as `{n}` / `{n+}` / `~{n}` + CRLF + data. */
export function serialize(parts: readonly Part[]): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    if (typeof p === 'string') out.push(Buffer.from(p, 'latin1'));
    else if (Buffer.isBuffer(p)) out.push(p);
    else {
      const n = p.announce ?? String(p.lit.length);
      out.push(Buffer.from(`${p.binary ? '~' : ''}{${n}${p.sync ? '' : '+'}}\r\n`, 'latin1'), p.lit);
    }
  }
  return Buffer.concat(out);
}

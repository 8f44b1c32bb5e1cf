/**
 * The catalogue of real-world breakage the `malformed` profile draws from.
 * Every case has a stable name (what `X-Rookery-Case:` and the manifest
 * say), a sentence on what is broken, and where Rookery's reading of it is
 * written down (docs/mime.md items, or the RFC rule broken). A client test
 * can then say which breakage it survives: "case bare-lf: the body shows".
 */
import { words } from './bytes.js';
import { Rng } from './random.js';

export interface CaseContext {
  rng: Rng;
  /** Unique to the message (index and seed): ids and boundaries. */
  tag: string;
  /** Header lines every case starts with (Message-ID, Date, From, To, Subject, and X-Rookery-Case unless turned off), CRLF each. */
  head(subject?: string): string;
}

export interface MalformedCase {
  readonly name: string;
  /** What is broken, in one sentence. */
  readonly what: string;
  /** Where the reading is documented: a docs/mime.md item or the rule broken. */
  readonly ref: string;
  /** False for cases whose point is the first bytes, where no X-Rookery-Case line can go (the manifest still names them). */
  readonly caseHeader: boolean;
  make(c: CaseContext): Buffer;
}

const text = (s: string): Buffer => Buffer.from(s, 'utf8');
const bin = (s: string): Buffer => Buffer.from(s, 'latin1');
const body = (c: CaseContext): string => `${words(c.rng, c.rng.int(5, 15))}\r\n`;

function simple(c: CaseContext, headers: string, content = body(c)): Buffer {
  return text(`${c.head()}${headers}\r\n${content}`);
}

function mixed(c: CaseContext, bound: string, parts: string[], close = true, headers = ''): Buffer {
  return text(
    `${c.head()}MIME-Version: 1.0\r\n${headers}Content-Type: multipart/mixed; boundary="${bound}"\r\n\r\n` +
      parts.map((p) => `--${bound}\r\n${p}\r\n`).join('') +
      (close ? `--${bound}--\r\n` : ''),
  );
}

const C: [string, string, string, boolean, (c: CaseContext) => Buffer][] = [
  // docs/mime.md item 2: header sections and blank lines.
  ['part-header-no-blank-line', 'a part header runs straight into the next delimiter, with no blank line', 'docs/mime.md item 2', true, (c) => mixed(c, `h${c.tag}`, ['Content-Type: text/plain', `Content-Type: text/plain\r\n\r\n${body(c)}`])],
  ['blank-before-delimiter', 'a part that is only a header and the blank line the delimiter takes as its line break', 'docs/mime.md item 2', true, (c) => mixed(c, `k${c.tag}`, ['Content-Type: text/plain\r\n', `Content-Type: text/plain\r\n\r\n${body(c)}`])],
  ['rfc822-header-no-blank-line', 'a message/rfc822 part whose message header runs into the delimiter', 'docs/mime.md item 2 (a deliberate difference from Dovecot)', true, (c) => mixed(c, `r${c.tag}`, [`Content-Type: text/plain\r\n\r\n${body(c)}`, 'Content-Type: message/rfc822\r\n\r\nSubject: inner\r\nX-A: 1'])],
  ['empty-rfc822', 'a message/rfc822 part that is nothing but the blank line', 'docs/mime.md item 2', true, (c) => mixed(c, `e${c.tag}`, [`Content-Type: text/plain\r\n\r\n${body(c)}`, 'Content-Type: message/rfc822\r\n'])],
  ['no-body-separator', 'a message of header fields only, without the blank line', 'RFC 5322 §2.1 (body optional), RFC 3501 §6.4.5', true, (c) => text(`${c.head()}MIME-Version: 1.0`)],
  ['empty-message', 'zero octets', 'RFC 5322 §3.6 (From and Date are required)', false, () => Buffer.alloc(0)],
  // docs/mime.md item 3: line endings.
  ['bare-lf', 'every line ends in LF alone', 'docs/mime.md item 3', true, (c) => text(`${c.head()}Content-Type: text/plain\r\n\r\n${body(c)}${body(c)}`.replace(/\r\n/g, '\n'))],
  ['bare-cr', 'lone CRs inside header and body lines', 'docs/mime.md item 3 (a lone CR is left alone)', true, (c) => simple(c, 'X-Note: one\rtwo\r\n', `first\rsecond\r\n${body(c)}`)],
  ['mixed-line-endings', 'CRLF, LF and CR line ends in one message', 'docs/mime.md item 3', true, (c) => text(`${c.head()}Content-Type: text/plain\n\r\nline one\nline two\r\nline three\r${body(c)}`)],
  // docs/mime.md item 4: repeated fields.
  ['repeated-address-fields', 'two From: and two To: fields', 'docs/mime.md item 4', true, (c) => simple(c, 'From: second@example.org\r\nTo: extra@example.net\r\n')],
  ['repeated-subject-date', 'two Subject: and two Date: fields', 'docs/mime.md item 4 (the last one counts)', true, (c) => simple(c, `Subject: second subject ${words(c.rng, 2)}\r\nDate: Tue, 02 Jan 2024 10:00:00 +0000\r\n`)],
  // docs/mime.md item 5: broken addresses.
  ['empty-angle-address', 'To: <> and Name <>', 'docs/mime.md item 5', true, (c) => simple(c, 'Cc: <>, Name <>\r\n')],
  ['at-sign-only', 'Cc: @', 'docs/mime.md item 5', true, (c) => simple(c, 'Cc: @\r\n')],
  ['unclosed-angle-address', 'Bcc: <alice@example.com (no closing >)', 'docs/mime.md item 5', true, (c) => simple(c, 'Cc: <alice@example.com\r\n')],
  ['address-words-no-at', 'a display name with no address (To: John Smith)', 'docs/mime.md item 5', true, (c) => simple(c, 'Cc: John Smith\r\n')],
  ['address-missing-domain', 'a@ and a@b.,', 'docs/mime.md item 5', true, (c) => simple(c, 'Cc: a@, a@b.,\r\n')],
  ['address-missing-local', '@b', 'docs/mime.md item 5', true, (c) => simple(c, 'Cc: @example.org\r\n')],
  ['address-dotted-local', 'local parts with leading, trailing and double dots', 'docs/mime.md item 5', true, (c) => simple(c, 'Cc: a..b@example.org, .a@example.org, a.@example.org\r\n')],
  ['route-without-colon', 'an obsolete route without its colon (<@r1 u@h>)', 'docs/mime.md item 5', true, (c) => simple(c, 'Cc: <@relay.example u@example.org>\r\n')],
  ['junk-after-address', 'words after an address in a list (u@h junk, v@h)', 'docs/mime.md item 5', true, (c) => simple(c, 'Cc: u@example.org junk here, v@example.org\r\n')],
  ['broken-group-member', 'a group with a broken member (G: x, y z, <w;)', 'docs/mime.md item 5', true, (c) => simple(c, 'Cc: Group: x@example.org, y z, <w;\r\n')],
  ['whitespace-runs-in-subject', 'runs of blanks and tabs, folded, leading and trailing, in the subject', 'docs/mime.md item 5 (strings for humans)', true, (c) => text(`${c.head(`  ${words(c.rng, 2)}\t\t ${words(c.rng, 2)}\r\n  folded   ${words(c.rng, 1)}  `)}\r\n${body(c)}`)],
  ['quote-and-backslash-in-name', 'a display name and subject with " and \\ in them', 'docs/mime.md item 5', true, (c) => simple(c, 'Cc: "say \\"hi\\" \\\\ o/" <q@example.org>\r\nX-Quote: back\\slash\r\n')],
  ['nul-in-header', 'a NUL byte inside the subject', 'docs/mime.md item 5 (NUL becomes 0x80)', true, (c) => text(`${c.head(`before\0after ${words(c.rng, 1)}`)}\r\n${body(c)}`)],
  // docs/mime.md item 6: broken Content-Type / Content-Disposition.
  ['content-type-three-parts', 'Content-Type: foo/bar/baz', 'docs/mime.md item 6', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type: foo/bar/baz\r\n')],
  ['content-type-no-subtype', 'Content-Type: text/ and /plain', 'docs/mime.md item 6', true, (c) => mixed(c, `t${c.tag}`, [`Content-Type: text/\r\n\r\n${body(c)}`, `Content-Type: /plain\r\n\r\n${body(c)}`])],
  ['content-type-trailing-garbage', 'Content-Type: text/plain garbage', 'docs/mime.md item 6', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type: text/plain garbage; charset=utf-8\r\n')],
  ['content-type-without-slash', 'Content-Type: text (no subtype)', 'docs/mime.md item 6', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type: text\r\n')],
  ['content-type-empty', 'an empty Content-Type value', 'docs/mime.md item 6', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type:\r\n')],
  ['disposition-without-type', 'Content-Disposition: ;filename=d.txt, an empty one, and in/line', 'docs/mime.md item 6', true, (c) => mixed(c, `d${c.tag}`, [`Content-Type: text/plain\r\nContent-Disposition: ;filename=d.txt\r\n\r\n${body(c)}`, `Content-Type: text/plain\r\nContent-Disposition:\r\n\r\n${body(c)}`, `Content-Type: text/plain\r\nContent-Disposition: in/line; a=b\r\n\r\n${body(c)}`])],
  ['broken-parameters', 'parameters with an empty name, an empty value, and junk', 'docs/mime.md item 6', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type: text/plain; =broken; a=; b=;; junk junk; charset=utf-8\r\n')],
  ['rfc2231-broken-continuation', 'RFC 2231 continuations out of order, with a gap and a bad charset', 'RFC 2231 §3-4', true, (c) => mixed(c, `p${c.tag}`, [`Content-Type: text/plain\r\n\r\n${body(c)}`, "Content-Type: application/octet-stream;\r\n name*2=\"c.txt\"; name*0*=x-bogus''a%; name*3=d\r\nContent-Disposition: attachment; filename*=utf-8''%E2%82\r\nContent-Transfer-Encoding: base64\r\n\r\nAAECAw=="])],
  // docs/mime.md item 7: boundaries.
  ['multipart-without-boundary', 'a multipart with no boundary parameter', 'docs/mime.md item 7', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type: multipart/mixed\r\n', `--x\r\nContent-Type: text/plain\r\n\r\n${body(c)}--x--\r\n`)],
  ['empty-boundary', 'boundary="" (every line starting with -- is a delimiter)', 'docs/mime.md item 7', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=""\r\n', `--\r\nContent-Type: text/plain\r\n\r\n${body(c)}----\r\n`)],
  ['missing-boundary', 'the boundary parameter names a string that never appears in the body', 'RFC 2046 §5.1.1', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary="never-used"\r\n', `--other\r\nContent-Type: text/plain\r\n\r\n${body(c)}--other--\r\n`)],
  ['missing-close-delimiter', 'a multipart whose close-delimiter never comes', 'docs/mime.md "Other rules" (tolerated)', true, (c) => mixed(c, `m${c.tag}`, [`Content-Type: text/plain\r\n\r\n${body(c)}`, `Content-Type: text/html\r\n\r\n<p>${body(c)}</p>`], false)],
  ['nested-missing-close', 'an inner multipart ended by the outer delimiter, without its own close', 'docs/mime.md "Other rules"', true, (c) => mixed(c, `o${c.tag}`, [`Content-Type: multipart/alternative; boundary="i${c.tag}"\r\n\r\n--i${c.tag}\r\nContent-Type: text/plain\r\n\r\n${body(c)}`, `Content-Type: text/plain\r\n\r\n${body(c)}`])],
  ['reused-parent-boundary', 'a nested multipart with the same boundary as its parent', 'docs/mime.md "Other rules"', true, (c) => mixed(c, `s${c.tag}`, [`Content-Type: multipart/mixed; boundary="s${c.tag}"\r\n\r\n--s${c.tag}\r\nContent-Type: text/plain\r\n\r\n${body(c)}`, `Content-Type: text/plain\r\n\r\n${body(c)}`])],
  ['boundary-prefix-of-another', 'an inner boundary that starts with the outer one', 'docs/mime.md "Other rules" (longest wins)', true, (c) => mixed(c, `b${c.tag}`, [`Content-Type: multipart/alternative; boundary="b${c.tag}-inner"\r\n\r\n--b${c.tag}-inner\r\nContent-Type: text/plain\r\n\r\n${body(c)}\r\n--b${c.tag}-inner--`, `Content-Type: text/plain\r\n\r\n${body(c)}`])],
  ['long-boundary', 'a boundary of more than 80 characters (RFC 2046 allows 70)', 'docs/mime.md "Other rules" (a deliberate difference from Dovecot)', true, (c) => mixed(c, `long-boundary-${c.tag}-${'x'.repeat(90)}`, [`Content-Type: text/plain\r\n\r\n${body(c)}`, `Content-Type: text/plain\r\n\r\n${body(c)}`])],
  ['content-headers-without-mime-version', 'Content-Type and Content-Transfer-Encoding at the top without MIME-Version', 'docs/mime.md "Other rules"', true, (c) => text(`${c.head()}Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from('<p>hi</p>').toString('base64')}\r\n`)],
  ['duplicate-content-type', 'two Content-Type fields (the first wins)', 'docs/mime.md "Other rules"', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Type: text/html\r\n')],
  // docs/mime.md items 8 and 9.
  ['deep-nesting', 'multiparts nested 120 deep (more than the 100 Rookery opens)', 'docs/mime.md item 8', true, (c) => {
    const depth = 120;
    let inner = `Content-Type: text/plain\r\n\r\n${body(c)}`;
    for (let d = depth; d >= 1; d--) inner = `Content-Type: multipart/mixed; boundary="d${d}x"\r\n\r\n--d${d}x\r\n${inner}\r\n--d${d}x--`;
    return text(`${c.head()}MIME-Version: 1.0\r\n${inner}\r\n`);
  }],
  ['message-global', 'a message/global part (RFC 6532)', 'docs/mime.md item 9 (a deliberate difference from Dovecot)', true, (c) => mixed(c, `g${c.tag}`, [`Content-Type: text/plain\r\n\r\n${body(c)}`, `Content-Type: message/global\r\n\r\nSubject: =?utf-8?q?gr=C3=BC=C3=9Fe?=\r\nFrom: j\u00fcrgen@example.de\r\n\r\n${body(c)}`])],
  // Beyond docs/mime.md: bytes, encodings and lines.
  ['8bit-headers', 'raw UTF-8 in From, To and Subject (no encoded words, no RFC 6532 negotiation)', 'RFC 5322 §2.2 (US-ASCII only)', true, (c) => text(`${c.head(`Grüße aus Köln ${words(c.rng, 2)}`)}Cc: Jürgen Müller <juergen@example.de>\r\n\r\n${body(c)}`)],
  ['latin1-headers', 'ISO-8859-1 bytes in the subject and a name: not UTF-8', 'RFC 5322 §2.2', true, (c) => Buffer.concat([bin(`${c.head('Caf\xe9 cr\xe8me')}Cc: Andr\xe9 <andre@example.fr>\r\n\r\n`), text(body(c))])],
  ['invalid-utf8-body', 'a body declared UTF-8 holding bytes that are not', 'RFC 3629', true, (c) => Buffer.concat([text(`${c.head()}MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`), Buffer.from([0xc3, 0x28, 0x20, 0xff, 0xfe, 0xe2, 0x82, 0x0d, 0x0a])])],
  ['8bit-body-declared-7bit', '8-bit bytes in a body whose Content-Transfer-Encoding says 7bit', 'RFC 2045 §6.2', true, (c) => Buffer.concat([text(`${c.head()}MIME-Version: 1.0\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 7bit\r\n\r\n`), bin('caf\xe9 \xe0 la cr\xe8me\r\n')])],
  ['nul-in-body', 'NUL bytes in the body', 'RFC 5322 §2.3 (NUL not allowed)', true, (c) => Buffer.concat([text(`${c.head()}\r\n`), Buffer.from('a\0b\0\0c\r\n', 'latin1')])],
  ['overlong-line', 'a body line of 20,000 characters (RFC 5322 §2.1.1 says at most 998)', 'RFC 5322 §2.1.1', true, (c) => simple(c, '', `${'y'.repeat(20_000)}\r\n${body(c)}`)],
  ['overlong-header-line', 'an unfolded header field of 5,000 characters', 'RFC 5322 §2.1.1', true, (c) => simple(c, `X-Long: ${words(c.rng, 1).repeat(1)}${'z'.repeat(5000)}\r\n`)],
  ['many-header-fields', '2,000 header fields', 'resource use', true, (c) => {
    let h = '';
    for (let i = 0; i < 2000; i++) h += `X-Field-${i}: ${i}\r\n`;
    return simple(c, h);
  }],
  ['long-references', 'a References field of 500 message ids, folded', 'RFC 5322 §3.6.4', true, (c) => {
    const ids: string[] = [];
    for (let i = 0; i < 500; i++) ids.push(`<ref${i}.${c.tag}@example.org>`);
    return simple(c, `References: ${ids.join('\r\n ')}\r\nIn-Reply-To: ${ids[499]}\r\n`);
  }],
  ['header-without-colon', 'a header line with no colon among the fields', 'RFC 5322 §2.2', true, (c) => simple(c, 'This line has no colon\r\nX-After: yes\r\n')],
  ['continuation-first', 'the header starts with a folded continuation line', 'RFC 5322 §2.2.3', false, (c) => text(` folded first line\r\n${c.head()}\r\n${body(c)}`)],
  ['space-before-colon', 'field names followed by blanks before the colon (Subject : x)', 'RFC 5322 §4.5.1 (obsolete syntax)', true, (c) => simple(c, 'X-Spaced : value\r\nCc\t: spaced@example.org\r\n')],
  ['bad-base64', 'a base64 body with characters outside the alphabet, misplaced = and a cut quantum', 'docs/mime.md BINARY (junk is ignored)', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n', 'SGVsbG8g!!d29y*bGQ=\r\nSGk=SGk\r\nQUJD-_RA\r\n')],
  ['bad-quoted-printable', 'quoted-printable with = not followed by hex, lower-case hex and trailing blanks', 'docs/mime.md BINARY', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n', 'a=ZZb =c3=a9 trailing   \r\nsoft=  \r\nbreak=\r\n')],
  ['unknown-transfer-encoding', 'Content-Transfer-Encoding: x-uuencode', 'docs/mime.md BINARY (NO [UNKNOWN-CTE])', true, (c) => simple(c, 'MIME-Version: 1.0\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: x-uuencode\r\n', 'begin 644 a.txt\r\n#86)C\r\n`\r\nend\r\n')],
  ['encoded-word-unknown-charset', 'an encoded word in a charset no decoder knows', 'RFC 2047 §6.2', true, (c) => text(`${c.head('=?x-no-such-charset?Q?caf=E9?= menu')}\r\n${body(c)}`)],
  ['encoded-word-malformed', 'encoded words that are cut short, bad base64, and inside a quoted string', 'RFC 2047 §5-6', true, (c) => simple(c, 'Cc: "=?utf-8?B?SsO8cmdlbg==?=" <j@example.org>\r\nX-Bad: =?utf-8?B?!!!?= =?utf-8?Q?unterminated\r\n', body(c))],
  ['wrong-charset-label', 'a text part labelled utf-8 whose bytes are windows-1252', 'RFC 2046 §4.1.2', true, (c) => Buffer.concat([text(`${c.head()}MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`), bin('\x93quoted\x94 \x96 dash \x80 euro\r\n')])],
  ['missing-date', 'no Date field', 'RFC 5322 §3.6 (Date is required)', true, (c) => text(c.head().replace(/^Date: .*\r\n/m, '') + `\r\n${body(c)}`)],
  ['invalid-date', 'a Date field no parser reads', 'RFC 5322 §3.3', true, (c) => text(c.head().replace(/^Date: .*\r\n/m, 'Date: 32 Foo 2021 25:61:00 +9999\r\n') + `\r\n${body(c)}`)],
  ['far-future-date', 'a Date in the year 9999 and one before 1900', 'RFC 5322 §3.3', true, (c) => text(c.head().replace(/^Date: .*\r\n/m, 'Date: Fri, 31 Dec 9999 23:59:59 +1400\r\nResent-Date: Mon, 01 Jan 1800 00:00:00 -1200\r\n') + `\r\n${body(c)}`)],
  ['missing-from', 'no From field', 'RFC 5322 §3.6 (From is required)', true, (c) => text(c.head().replace(/^From: .*\r\n/m, '') + `\r\n${body(c)}`)],
  ['mbox-from-line-in-body', 'body lines starting with "From " and ">From " (mbox quoting must round-trip)', 'RFC 4155', true, (c) => simple(c, '', `From the start\r\n>From quoted\r\n\r\nFrom here ${body(c)}`)],
  ['bare-header-terminator', 'the header ends with LF LF while the rest uses CRLF', 'docs/mime.md item 3', true, (c) => text(`${c.head()}Content-Type: text/plain\n\n${body(c)}`)],
];

/** The catalogue, in a fixed order (the malformed profile takes them in turn). */
export const MALFORMED_CASES: readonly MalformedCase[] = C.map(([name, what, ref, caseHeader, make]) => ({ name, what, ref, caseHeader, make }));

/** The names of every case, in catalogue order. */
export const MALFORMED_CASE_NAMES: readonly string[] = MALFORMED_CASES.map((c) => c.name);

let byName: Map<string, MalformedCase> | null = null;

export function malformedCase(name: string): MalformedCase | undefined {
  byName ??= new Map(MALFORMED_CASES.map((c) => [c.name, c]));
  return byName.get(name);
}

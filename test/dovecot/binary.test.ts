/**
 * BINARY (RFC 3516, RFC 9051 §6.4.5) against Dovecot: messages whose parts
 * decode to bytes with bare CR, bare LF and CRLF, base64 with blanks and
 * junk between the groups (RFC 2045 §6.8), quoted-printable with soft line
 * breaks, encoded CR/LF and bad escapes (§6.7), stored bodies with bare LF
 * and bare CR, unknown and broken encodings, are appended byte for byte to
 * Rookery and to a throwaway Dovecot; for every part BINARY.SIZE, BINARY
 * and the partial forms `<o.n>` are fetched one item per command, and the
 * outcome (the tagged status word and response code, the FETCH item byte
 * for byte) must be the same.
 *
 * Set ROOKERY_DIFF_VERBOSE=1 to print every answer.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { startServer } from '../helpers/server.js';
import { findDovecot, startDovecot } from './dovecot.js';
import { generateMessages } from './generator.js';
import { parseFetch, type Val } from './imap-values.js';
import { getMime, servedSource, type MimeNode } from '../../src/mime/index.js';
import { DiffSession } from './session.js';

const VERBOSE = process.env.ROOKERY_DIFF_VERBOSE === '1';

/** The 30 octets of issue 29: a bare CR, a CRLF and a bare LF. */
const MIXED = Buffer.from('abcdefg\rhijkl\r\nmno\npqrstuvqxyz', 'latin1');

const HEAD = 'From: a@example.com\r\nTo: b@example.com\r\nSubject: binary\r\nMIME-Version: 1.0\r\n';

interface Case {
  name: string;
  raw: Buffer;
  /** Part numbers to fetch besides `[]` (the whole message). */
  parts: string[];
}

function single(name: string, type: string, encoding: string | null, body: string | Buffer): Case {
  const cte = encoding === null ? '' : `Content-Transfer-Encoding: ${encoding}\r\n`;
  const head = Buffer.from(`${HEAD}Content-Type: ${type}\r\n${cte}\r\n`, 'latin1');
  return { name, raw: Buffer.concat([head, typeof body === 'string' ? Buffer.from(body, 'latin1') : body]), parts: ['1'] };
}

function multi(name: string, parts: { type: string; encoding: string | null; body: string }[]): Case {
  let raw = `${HEAD}Content-Type: multipart/mixed; boundary="zz"\r\n\r\npreamble\r\n`;
  for (const p of parts) {
    raw += `--zz\r\nContent-Type: ${p.type}\r\n${p.encoding === null ? '' : `Content-Transfer-Encoding: ${p.encoding}\r\n`}\r\n${p.body}\r\n`;
  }
  raw += '--zz--\r\n';
  return { name, raw: Buffer.from(raw, 'latin1'), parts: parts.map((_, i) => String(i + 1)) };
}

const b64 = (data: Buffer): string => data.toString('base64');

const GENERATED = Number(process.env.ROOKERY_BINARY_DIFF_COUNT ?? 200);

const CASES: Case[] = [
  single('base64 text, mixed line ends', 'text/plain; charset=us-ascii', 'base64', `${b64(MIXED)}\r\n`),
  single('base64 octet-stream, mixed line ends', 'application/octet-stream', 'base64', `${b64(MIXED)}\r\n`),
  single('base64 in short lines', 'text/plain', 'base64', `${b64(MIXED).replace(/(.{8})/g, '$1\r\n')}\r\n`),
  single('base64 with blanks and junk between groups', 'text/plain', 'base64', 'YWJj ZGVm\t\r\n!Z2hp*aWpr\r\n~~bG1u.\r\n'),
  single('base64 with junk inside a group', 'application/octet-stream', 'base64', 'YW%Jj\r\nZG!Vm\r\n'),
  single('base64 with base64url junk', 'application/octet-stream', 'base64', 'YW-Jj_ZGVm\r\n'),
  single('base64 with padding then more data', 'application/octet-stream', 'base64', 'YQ==\r\nYmM=\r\n'),
  single('base64 missing its padding', 'text/plain', 'base64', 'YWJjZA\r\n'),
  single('base64 with a lone trailing character', 'text/plain', 'base64', 'YWJjZ\r\n'),
  single('base64 with NUL and 8-bit octets', 'image/gif', 'base64', `${b64(Buffer.from([0x47, 0, 0xff, 13, 10, 0x80, 10, 13]))}\r\n`),
  single('base64 empty body', 'text/plain', 'base64', ''),
  single('quoted-printable empty body', 'text/plain', 'quoted-printable', ''),
  single('upper-case BASE64', 'text/plain', 'BASE64', `${b64(MIXED)}\r\n`),
  single(
    'quoted-printable soft breaks and encoded CR/LF',
    'text/plain; charset=utf-8',
    'quoted-printable',
    'abc=\r\ndef= \t\r\nghi=0D=0Ajkl=0Amno=0Dpqr\r\nCaf=C3=A9 cr=c3=a8me  \r\ntrailing tab\t\r\nend=\r\n',
  ),
  single('quoted-printable bad escapes', 'text/plain', 'quoted-printable', 'a=ZZb =4 c=\r\n=3\r\nlast=\r\n=4'),
  single('quoted-printable stored with bare LF', 'text/plain', 'quoted-printable', 'one=\ntwo\nthree=0A\nfour  \n'),
  single('quoted-printable with a bare CR', 'text/plain', 'quoted-printable', 'one\rtwo=\r\nthree\r\n'),
  single('quoted-printable octet-stream with hard breaks', 'application/octet-stream', 'quoted-printable', 'x=00y\r\nz=FF\r\n'),
  single('7bit stored with bare LF and bare CR', 'text/plain', '7bit', 'one\ntwo\rthree\r\nfour\n'),
  single('no encoding field, bare LF', 'text/plain', null, 'line1\nline2\n'),
  single('8bit text', 'text/plain; charset=iso-8859-1', '8bit', 'caf\xe9\r\n\xff\r\n'),
  single('binary with bare CR', 'application/octet-stream', 'binary', 'a\rb\r\nc'),
  single('unknown encoding', 'application/octet-stream', 'x-uuencode', 'begin 644 x\r\n#86)C\r\n`\r\nend\r\n'),
  single('encoding with a comment', 'text/plain', 'base64 (comment)', `${b64(MIXED)}\r\n`),
  single('encoding with blanks', 'text/plain', '  base64  ', `${b64(MIXED)}\r\n`),
  ...['', 'bad value', 'base64 x', '7bit;', 'base64; x=y', '(c) base64', '"base64"', 'x-'].map((cte) => single(`odd encoding value ${JSON.stringify(cte)}`, 'text/plain', cte, `${b64(MIXED)}\r\n`)),
  {
    name: 'multipart declared base64',
    raw: Buffer.from(
      `${HEAD}Content-Type: multipart/mixed; boundary="m"\r\nContent-Transfer-Encoding: base64\r\n\r\n--m\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n${b64(MIXED)}\r\n--m--\r\n`,
      'latin1',
    ),
    parts: ['1'],
  },
  multi('multipart with each kind', [
    { type: 'text/plain', encoding: 'base64', body: b64(MIXED) },
    { type: 'text/plain', encoding: 'quoted-printable', body: 'soft=\r\nbreak=0Abare' },
    { type: 'application/octet-stream', encoding: 'x-unknown', body: 'opaque' },
    { type: 'text/plain', encoding: '7bit', body: 'plain\nbare lf' },
  ]),
  {
    name: 'message/rfc822 and nested multipart holding encoded parts',
    raw: Buffer.from(
      `${HEAD}Content-Type: multipart/mixed; boundary="o"\r\n\r\n--o\r\nContent-Type: message/rfc822\r\n\r\n` +
        `Subject: inner\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n${b64(MIXED)}\r\n` +
        '--o\r\nContent-Type: multipart/alternative; boundary="i"\r\n\r\n--i\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\na=0Db=\r\nc\r\n' +
        `--i\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n${b64(Buffer.from([1, 0, 13, 10, 255]))}\r\n--i--\r\n--o--\r\n`,
      'latin1',
    ),
    parts: ['1', '1.1', '2', '2.1', '2.2'],
  },
];

// Generated messages (test/dovecot/generator.ts): their parts are fetched by the part numbers their own structure has.
for (const [i, m] of generateMessages(29, GENERATED).entries()) CASES.push({ name: `generated ${i + 1}`, raw: m.raw, parts: [] });

/** Partial forms: inside, across the end, past the end, zero length. */
const PARTIALS = ['<0.10>', '<10.10>', '<25.100>', '<1000.5>', '<3.0>'];

const DECODING = new Set(['base64', 'quoted-printable']);

/** Whether `test` holds for a node of the tree under `node`. */
function someNode(node: MimeNode, test: (n: MimeNode) => boolean): boolean {
  if (test(node)) return true;
  if (node.kind === 'message') return node.message !== null && someNode(node.message, test);
  return node.kind === 'multipart' && node.children.some((c) => someNode(c, test));
}

/** A message (the top one or an encapsulated one) without MIME headers that still has a Content-Transfer-Encoding field. */
const nonMimeEncoded = (n: MimeNode): boolean => !n.isMime && n.fields.some((f) => f.key === 'content-transfer-encoding');

/** A deliberate difference: items of the named cases (all cases when `cases` is null) where Dovecot answers `dovecot`. */
interface Allowed {
  cases: RegExp | null;
  /** What the message must have (read from Rookery's own MIME tree), when set. */
  has?: (root: MimeNode) => boolean;
  items: RegExp;
  dovecot: RegExp;
  reason: string;
}

const ALLOW: Allowed[] = [
  {
    cases: null,
    items: /<3\.0>$/,
    dovecot: /^(OK|NO) /,
    reason: 'a partial of length 0: the grammar has `partial = "<" number64 "." nz-number64 ">"` (RFC 9051 §9, RFC 3501 §9), so Rookery answers BAD; Dovecot accepts it',
  },
  {
    cases: null,
    has: (root) => someNode(root, (n) => n.kind !== 'leaf' && DECODING.has(n.encodingKey)),
    items: /^BINARY(\.SIZE|\.PEEK)?\[/,
    dovecot: /./,
    reason:
      'a multipart or message/rfc822 part whose Content-Transfer-Encoding says base64 or quoted-printable, which RFC 2045 §6.4 and RFC 2046 §5.2.1 forbid (only 7bit, 8bit or binary): Rookery gives its parts each decoded; Dovecot decodes the whole body as that encoding and so loses its parts (and its BINARY.SIZE then disagrees with its BINARY)',
  },
  {
    cases: null,
    has: (root) => someNode(root, nonMimeEncoded),
    items: /^BINARY(\.SIZE|\.PEEK)?\[/,
    dovecot: /./,
    reason:
      'a message with a Content-Transfer-Encoding field but neither MIME-Version nor Content-Type: its Content-* fields do not apply (RFC 2045 §4), and the BODYSTRUCTURE of both servers calls it 7bit, so Rookery gives it as it is; Dovecot\'s BINARY decodes it anyway',
  },
  {
    cases: null,
    has: (root) => someNode(root, (n) => n.contentType.type === 'message' && n.contentType.subtype === 'global'),
    items: /^BINARY(\.SIZE|\.PEEK)?\[/,
    dovecot: /./,
    reason: 'message/global is an encapsulated message (RFC 9051 §7.5.2, RFC 6532 §3.7; docs/mime.md item 9): Rookery decodes the parts inside it; Dovecot 2.3 treats it as one opaque part',
  },
  {
    cases: null,
    has: (root) => someNode(root, (n) => n.kind === 'leaf' && DECODING.has(n.encodingKey) && n.bodyStart === n.bodyEnd && n.encodingKey.length !== 6),
    items: /^BINARY(\.SIZE|\.PEEK)?\[/,
    dovecot: /^OK /,
    reason:
      'an empty quoted-printable body: both servers leave such a part as it is, but Dovecot counts its header as if rewritten to "binary" (10 octets fewer than "quoted-printable"), so the literal of any section holding it is cut short',
  },
  {
    cases: /^generated/,
    items: /./,
    dovecot: /^(NO \[PARSE\]|DISCONNECTED)$/,
    reason:
      'generated bodies labelled base64 or quoted-printable that are not valid in it (plain words under base64, a cut quantum): Rookery decodes them as the cases above, Dovecot answers NO [PARSE] or ends the session',
  },
  {
    cases: /junk|padding then/,
    items: /./,
    dovecot: /^NO \[PARSE\]$/,
    reason:
      'base64 with characters outside the alphabet, or data after the "=" padding: RFC 2045 §6.8 says such characters "are to be ignored" and that "=" may be taken as the end of the data, so Rookery decodes; Dovecot fails the FETCH with NO [PARSE]',
  },
  {
    cases: /quoted-printable bad escapes|quoted-printable with a bare CR/,
    items: /./,
    dovecot: /^NO \[PARSE\]$/,
    reason:
      'quoted-printable with "=" not followed by two hex digits, or a bare CR: RFC 2045 §6.7 suggests a robust decoder keep "=" and what follows as they are, and says a decoder "might" drop illegal control characters; Rookery keeps both; Dovecot fails the FETCH with NO [PARSE]',
  },
  {
    cases: /missing its padding|lone trailing/,
    items: /./,
    dovecot: /^DISCONNECTED$/,
    reason:
      'base64 whose last quantum is incomplete: Rookery decodes the whole octets it holds (RFC 2045 §6.8 has no error case); Dovecot logs "Base64 data ends prematurely" and ends the session',
  },
];

/** Dovecot contradicting itself: BINARY of a part works (or fails otherwise), BINARY.SIZE of it says UNKNOWN-CTE. */
const SIZE_QUIRK =
  'BINARY.SIZE of a part whose encoding Dovecot knows, in a message with a part it cannot decode: Dovecot answers NO [UNKNOWN-CTE] (it sizes every part of the message at once) where its BINARY of the same part does not; Rookery gives the size of what BINARY gives (RFC 3516 §4.2)';

/** Dovecot sends every decoded section as a literal8; Rookery only one that holds NUL. */
const LITERAL8 =
  'a literal8 only for data with NUL: RFC 3516 §4.3 (RFC 9051 §7.5.2) says the server SHOULD send 8-bit data without NUL as a string; Dovecot sends every decoded section as ~{n}';

function itemsFor(c: Case): string[] {
  // BINARY before BINARY.SIZE: the check of a Dovecot quirk below looks at what BINARY gave
  const items = ['BINARY.PEEK[]', 'BINARY.SIZE[]'];
  for (const p of c.parts) {
    items.push(`BINARY.PEEK[${p}]`, `BINARY.SIZE[${p}]`);
    for (const partial of PARTIALS) items.push(`BINARY.PEEK[${p}]${partial}`);
  }
  return items;
}

/** Part numbers of a message as Rookery's BODYSTRUCTURE has them (leaves and containers, at most 20). */
async function partsOf(session: DiffSession, uid: number): Promise<string[]> {
  const got = await session.fetch(uid, ['BODYSTRUCTURE']);
  const out: string[] = [];
  const walk = (v: Val, path: number[]): void => {
    if (v.t !== 'list' || out.length >= 20 || path.length > 6) return;
    if (v.v[0]?.t === 'list') {
      let n = 0;
      for (const child of v.v) {
        if (child.t !== 'list') break;
        const p = [...path, ++n];
        out.push(p.join('.'));
        walk(child, p);
      }
    } else if (path.length === 0) out.push('1');
  };
  const body = got.get('BODYSTRUCTURE');
  if (body) walk(body.val, []);
  return out;
}

/** The two answers around their first difference. */
function around(a: string, b: string): [string, string] {
  // past the literal's length, which differs whenever the content does
  let i = Math.min(a.indexOf('}\r\n') + 3, b.indexOf('}\r\n') + 3, a.length, b.length);
  if (i < 3 || a.slice(0, i).replace(/\{\d+\}/, '') !== b.slice(0, i).replace(/\{\d+\}/, '')) i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 100);
  const cut = (t: string): string => `${from > 0 ? `${t.slice(0, 30)}...` : ''}${t.slice(from, i + 150)}${t.length > i + 150 ? `...(${t.length})` : ''}`;
  return [cut(a), cut(b)];
}

/** What one single-item FETCH gave: the status word and code, and the item as written. */
async function outcome(session: DiffSession, uid: number, item: string): Promise<string> {
  let answer: { lines: string[]; status: string };
  try {
    answer = await session.run(`UID FETCH ${uid} (${item})`);
  } catch {
    return 'DISCONNECTED';
  }
  const { lines, status } = answer;
  const m = /^(OK|NO|BAD)(?: \[([^\]]+)\])?/.exec(status);
  const head = m ? `${m[1]}${m[2] ? ` [${m[2]}]` : ''}` : status;
  const values: string[] = [];
  for (const line of lines.filter((l) => /^\* \d+ FETCH /.test(l))) {
    for (const [label, v] of parseFetch(line)) if (label !== 'UID') values.push(`${label} ${v.raw}`);
  }
  return `${head} ${values.join(' ')}`.trim();
}

test('BINARY, BINARY.SIZE and partial BINARY answer like Dovecot 2.3 over mixed line ends and odd encodings', { timeout: 120_000 }, async (t) => {
  if (findDovecot() === null) {
    t.skip('dovecot not installed (Debian: apt-get install dovecot-imapd)');
    return;
  }
  const cleanups: (() => Promise<void>)[] = [];
  const bounded = (p: Promise<void>): Promise<void> => Promise.race([p, new Promise<void>((r) => setTimeout(r, 5000).unref())]).catch(() => undefined);
  let log: string | null = null;
  try {
    const dovecot = (await startDovecot())!;
    cleanups.push(() => dovecot.stop());
    log = path.join(dovecot.dir, 'dovecot.log');
    const { server, port } = await startServer({ plugins: ['BINARY'] });
    cleanups.push(() => server.stop());
    const rook = await DiffSession.open(port, 'testuser', 'testpass');
    cleanups.push(async () => rook.close());
    // Dovecot ends the session on a read error of a part (a truncated base64 quantum): open another one
    let dove = await DiffSession.open(dovecot.port, 'u', 'pass');
    cleanups.push(async () => dove.close());
    for (const c of CASES) {
      await rook.append('INBOX', c.raw);
      await dove.append('INBOX', c.raw);
    }
    await rook.ok('SELECT INBOX');
    await dove.ok('SELECT INBOX');
    const diffs: string[] = [];
    const allowed = new Map<string, number>();
    const allow = (reason: string): void => void allowed.set(reason, (allowed.get(reason) ?? 0) + 1);
    let compared = 0;
    for (let i = 0; i < CASES.length; i++) {
      const c = CASES[i]!;
      const dovecotSaid = new Map<string, string>();
      if (c.parts.length === 0) c.parts = await partsOf(rook, i + 1);
      for (const item of itemsFor(c)) {
        const [ours, theirs] = await Promise.all([outcome(rook, i + 1, item), outcome(dove, i + 1, item)]);
        if (theirs === 'DISCONNECTED') {
          dove.close();
          dove = await DiffSession.open(dovecot.port, 'u', 'pass');
          await dove.ok('SELECT INBOX');
        }
        compared++;
        if (VERBOSE) t.diagnostic(`${c.name}: ${item}\n  rookery: ${JSON.stringify(ours)}\n  dovecot: ${JSON.stringify(theirs)}`);
        dovecotSaid.set(item, theirs);
        if (ours === theirs) continue;
        const size = /^BINARY\.SIZE(\[[\d.]*\])$/.exec(item);
        if (size && ours.startsWith('OK ') && theirs === 'NO [UNKNOWN-CTE]' && !(dovecotSaid.get(`BINARY.PEEK${size[1]}`) ?? 'NO [UNKNOWN-CTE]').startsWith('NO [UNKNOWN-CTE]')) {
          allow(SIZE_QUIRK);
          continue;
        }
        const entry = ALLOW.find(
          (a) => (a.cases === null || a.cases.test(c.name)) && (a.has === undefined || a.has(getMime(servedSource(c.raw)))) && a.items.test(item) && a.dovecot.test(theirs),
        );
        if (entry) allow(entry.reason);
        else if (!ours.includes('~{') && theirs.replace(/ ~\{(\d+)\}/, ' {$1}') === ours) allow(LITERAL8);
        else {
          const [a, b] = around(ours, theirs.replace(/ ~\{(\d+)\}/, ' {$1}'));
          diffs.push(`${c.name}: ${item}\n  rookery: ${JSON.stringify(a)}\n  dovecot: ${JSON.stringify(b)}`);
        }
      }
    }
    t.diagnostic(`${dovecot.version}: ${CASES.length} messages, ${compared} items compared, ${diffs.length} differences`);
    for (const [reason, n] of allowed) t.diagnostic(`  allowed ${n} x ${reason}`);
    for (const d of VERBOSE ? diffs : diffs.slice(0, 30)) t.diagnostic(d);
    assert.equal(diffs.length, 0, `${diffs.length} differences from Dovecot`);
  } catch (err) {
    if (log !== null) t.diagnostic(`dovecot log:\n${await readFile(log, 'utf8').catch(() => '(none)')}`);
    throw err;
  } finally {
    for (const cleanup of cleanups.reverse()) await bounded(cleanup());
  }
});

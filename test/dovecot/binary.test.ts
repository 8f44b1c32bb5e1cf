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
import { parseFetch } from './imap-values.js';
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
  multi('multipart with each kind', [
    { type: 'text/plain', encoding: 'base64', body: b64(MIXED) },
    { type: 'text/plain', encoding: 'quoted-printable', body: 'soft=\r\nbreak=0Abare' },
    { type: 'application/octet-stream', encoding: 'x-unknown', body: 'opaque' },
    { type: 'text/plain', encoding: '7bit', body: 'plain\nbare lf' },
  ]),
];

/** Partial forms: inside, across the end, past the end, zero length. */
const PARTIALS = ['<0.10>', '<10.10>', '<25.100>', '<1000.5>', '<3.0>'];

/** A deliberate difference: items of the named cases (all cases when `cases` is null) where Dovecot answers `dovecot`. */
interface Allowed {
  cases: RegExp | null;
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
    cases: /multipart with each kind/,
    items: /^BINARY\.SIZE\[[124]\]$/,
    dovecot: /^NO \[UNKNOWN-CTE\]$/,
    reason:
      'BINARY.SIZE of a decodable part beside a part in an unknown encoding: Dovecot fails it (it sizes every part of the message at once) while its BINARY of the same part succeeds; Rookery gives the size of what BINARY gives (RFC 3516 §4.2)',
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

/** Dovecot sends every decoded section as a literal8; Rookery only one that holds NUL. */
const LITERAL8 =
  'a literal8 only for data with NUL: RFC 3516 §4.3 (RFC 9051 §7.5.2) says the server SHOULD send 8-bit data without NUL as a string; Dovecot sends every decoded section as ~{n}';

function itemsFor(c: Case): string[] {
  const items = ['BINARY.SIZE[]', 'BINARY.PEEK[]'];
  for (const p of c.parts) {
    items.push(`BINARY.SIZE[${p}]`, `BINARY.PEEK[${p}]`);
    for (const partial of PARTIALS) items.push(`BINARY.PEEK[${p}]${partial}`);
  }
  return items;
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
      for (const item of itemsFor(c)) {
        const [ours, theirs] = await Promise.all([outcome(rook, i + 1, item), outcome(dove, i + 1, item)]);
        if (theirs === 'DISCONNECTED') {
          dove.close();
          dove = await DiffSession.open(dovecot.port, 'u', 'pass');
          await dove.ok('SELECT INBOX');
        }
        compared++;
        if (VERBOSE) t.diagnostic(`${c.name}: ${item}\n  rookery: ${JSON.stringify(ours)}\n  dovecot: ${JSON.stringify(theirs)}`);
        if (ours === theirs) continue;
        const entry = ALLOW.find((a) => (a.cases === null || a.cases.test(c.name)) && a.items.test(item) && a.dovecot.test(theirs));
        if (entry) allow(entry.reason);
        else if (!ours.includes('~{') && theirs.replace(/ ~\{(\d+)\}/, ' {$1}') === ours) allow(LITERAL8);
        else diffs.push(`${c.name}: ${item}\n  rookery: ${JSON.stringify(ours).slice(0, 400)}\n  dovecot: ${JSON.stringify(theirs).slice(0, 400)}`);
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

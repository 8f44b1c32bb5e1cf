/**
 * Parser fuzz: every ArgParser entry point over seeded random and mutated
 * arguments (with literals and literal8). A syntax error must be a
 * ParseError (the text of a tagged BAD); anything else thrown would be a
 * `NO [SERVERBUG]` in a session. A successful parse must leave the cursor
 * where the next token can be read (`atEnd()` or a following byte).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ArgParser, ParseError } from '../../src/imap/parser.js';
import { LiteralSegment, type Segment } from '../../src/imap/wire/reader.js';
import { Rand } from './generate.js';

const PIECES = [
  '1', '*', '1:*', '2:4', '$', '1000:*', '*:1000', '4:2', '-1:-3', '0', '4294967295', '4294967296', '99999999999999999999', ',', ':', '(', ')', '[', ']', '<', '>', '.', ' ', '"', '\\',
  'FLAGS', 'UID', 'BODY', 'BODY.PEEK', 'BINARY', 'BINARY.SIZE', 'HEADER', 'HEADER.FIELDS', 'HEADER.FIELDS.NOT', 'TEXT', 'MIME', 'ALL', 'FAST', 'FULL',
  'ENVELOPE', 'RFC822', 'INTERNALDATE', 'MODSEQ', 'NOT', 'OR', 'KEYWORD', 'SINCE', 'BEFORE', 'ON', 'SENTON', 'LARGER', 'SMALLER', 'CHARSET',
  'OLDER', 'YOUNGER', 'NEW', 'UNSEEN', 'HEADER', 'Subject', '1-Jan-2020', '"1-Jan-2020"', '31-Feb-2021', '"17-Jul-1996 02:44:25 -0700"',
  '\\Seen', '\\*', '\\Recent', '\\Foo', 'kw', 'NIL', 'INBOX', 'inbox/x', '&AOk-', '&', '&Jjo', 'MESSAGES', 'UIDNEXT', '"/flags/\\\\seen"',
  'priv', 'shared', 'all', '\x00', '\xff', '\r', '\n', '{', '}',
  // UTF-8 (RFC 6855) for the parser's utf8 mode: well-formed, cut short, forbidden in names.
  '"K\xc3\xa4se"', '\xc3\xa4', '\xe6\x97\xa5', '\xc3', '"\xe2\x80\xa8"', '"\xc2\x85"', '"R&D"',
  // The lenient grammar (ServerOptions.leniency, the dovecot preset): 8-bit quoted strings without UTF-8
  // mode, any escaped character (8-bit ones too), runs of spaces, spaces inside parentheses and at the end.
  '"Gr\xc3\xbc\xc3\x9fe"', '"a\\b"', '"\\G\\r\\\xc3\xbc"', '"\\\xff"', '"\\\r"', '"\\', '  ', '   ', '( ', ' )', '(  FLAGS  UID  )', 'OR  SEEN  UNSEEN', '"\xff"', '1,2,', '1,,2', '1:*, ',
];

const LENIENT = { eightBitQuoted: true, anyEscape: true, extraSpaces: true, trailingComma: true } as const;

const ENTRY_POINTS: [string, (p: ArgParser) => unknown][] = [
  ['sequenceSet', (p) => p.sequenceSet()],
  ['fetchAttributes', (p) => p.fetchAttributes({ extensions: ['X-GM-LABELS'] })],
  ['searchProgram', (p) => p.searchProgram()],
  ['flagList', (p) => p.flagList({ allowWildcard: true })],
  ['flags', (p) => p.flags()],
  ['mailbox', (p) => p.mailbox()],
  ['listMailbox', (p) => p.listMailbox()],
  ['mailbox pattern', (p) => p.mailbox({ pattern: true })],
  ['astring', (p) => p.astring()],
  ['nstring', (p) => p.nstring()],
  ['string', (p) => p.string()],
  ['number', (p) => p.number()],
  ['nzNumber', (p) => p.nzNumber()],
  ['number64', (p) => p.number64()],
  ['date', (p) => p.date()],
  ['dateTime', (p) => p.dateTime()],
  ['statusAttributes', (p) => p.statusAttributes()],
  ['section', (p) => p.section()],
  ['partial', (p) => p.partial()],
  ['anyLiteral', (p) => p.anyLiteral()],
  ['tag+command', (p) => [p.tag(), p.sp(), p.commandName()]],
];

function randomArgs(r: Rand): Segment[] {
  const segments: Segment[] = [];
  let text = '';
  const n = r.int(0, 12);
  for (let i = 0; i < n; i++) {
    const k = r.int(0, 9);
    if (k === 0) {
      segments.push(Buffer.from(text, 'latin1'), new LiteralSegment(r.bytes(r.int(0, 6), 'ab\x00\xff"() '), r.chance(0.2)));
      text = '';
    } else if (k === 1) text += r.bytes(r.int(1, 4)).toString('latin1');
    else if (k === 2) text += '('.repeat(r.int(1, 150));
    else text += r.pick(PIECES) + (r.chance(0.5) ? ' ' : '');
  }
  segments.push(Buffer.from(text, 'latin1'));
  return segments;
}

test('parser entry points: 60,000 random arguments give a value or a ParseError, nothing else (in turn strict, UTF-8 and lenient mode)', () => {
  const r = new Rand(1234);
  const surprises: string[] = [];
  const counts = { ok: 0, parseError: 0 };
  for (let i = 0; i < 60_000; i++) {
    const [name, entry] = ENTRY_POINTS[i % ENTRY_POINTS.length]!;
    const segments = randomArgs(r);
    const mode = Math.floor(i / ENTRY_POINTS.length) % 3;
    const parser = new ArgParser(segments, { maxNesting: 100, utf8: mode === 1, ...(mode === 2 ? LENIENT : {}) });
    try {
      entry(parser);
      counts.ok++;
      // After a value: the end, or something the next step can look at.
      if (!parser.atEnd() && !parser.isAtLiteral()) assert.equal(typeof parser.peekChar(), 'string');
    } catch (err) {
      if (err instanceof ParseError) counts.parseError++;
      else if (surprises.length < 10) {
        const shown = segments.map((s) => (s instanceof LiteralSegment ? `{${s.binary ? '~' : ''}${JSON.stringify(s.data.toString('latin1'))}}` : s.toString('latin1'))).join('');
        surprises.push(`${name}(${JSON.stringify(shown)}): ${(err as Error).stack?.split('\n').slice(0, 3).join(' | ')}`);
      }
    }
  }
  assert.deepEqual(surprises, []);
  // Both outcomes are common: the arguments reach past the first token.
  assert.ok(counts.ok > 5000 && counts.parseError > 5000, JSON.stringify(counts));
});

test('the lenient grammar is a superset: whatever parses strictly parses leniently to the same value (30,000 random arguments)', () => {
  const r = new Rand(4321);
  let compared = 0;
  for (let i = 0; i < 30_000; i++) {
    const [name, entry] = ENTRY_POINTS[i % ENTRY_POINTS.length]!;
    const segments = randomArgs(r);
    let strict: unknown;
    try {
      strict = entry(new ArgParser(segments, { maxNesting: 100 }));
    } catch (err) {
      if (!(err instanceof ParseError)) throw err;
      continue;
    }
    compared++;
    const shown = segments.map((s) => (s instanceof LiteralSegment ? `{${JSON.stringify(s.data.toString('latin1'))}}` : s.toString('latin1'))).join('');
    assert.deepEqual(entry(new ArgParser(segments, { maxNesting: 100, ...LENIENT })), strict, `${name}(${JSON.stringify(shown)})`);
  }
  assert.ok(compared > 2000, String(compared));
});

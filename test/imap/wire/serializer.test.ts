import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgParser } from '../../../src/imap/parser.js';
import { CommandReader, type Segment } from '../../../src/imap/wire/reader.js';
import {
  adjoined,
  continuation,
  encodeResponse,
  encodeValue,
  tagged,
  untagged,
  untaggedStatus,
} from '../../../src/imap/wire/serializer.js';
import { astring, atom, literal, utf8Text, type ImapValue } from '../../../src/imap/wire/values.js';
import { Prng } from '../../../src/util/prng.js';
import { ResponseSplitter, parseResponse } from '../../fuzz/response-check.js';
import { grammarError } from '../../dovecot/imap-values.js';

const text = (b: Buffer) => b.toString('latin1');
const enc = (v: ImapValue) => text(encodeValue(v));

/** Frames `X <encoded>\r\n` through the reader and returns a parser positioned on the value. */
function reparse(encoded: Buffer): ArgParser {
  let segments: Segment[] | null = null;
  const reader = new CommandReader({
    onCommand: (s) => (segments = s),
    onLine: () => undefined,
    onReject: (r) => assert.fail(r.text),
    sendContinuation: () => undefined,
  });
  reader.push(Buffer.concat([Buffer.from('X '), encoded, Buffer.from('\r\n')]));
  assert.ok(segments);
  const p = new ArgParser(segments);
  p.atom();
  p.sp();
  return p;
}

describe('encodeValue', () => {
  it('encodes NIL, numbers and atoms', () => {
    assert.equal(enc(null), 'NIL');
    assert.equal(enc(0), '0');
    assert.equal(enc(4294967295), '4294967295');
    assert.equal(enc(atom('\\Seen')), '\\Seen');
    assert.equal(enc(atom('BODY[HEADER.FIELDS (SUBJECT)]<0>')), 'BODY[HEADER.FIELDS (SUBJECT)]<0>');
    assert.throws(() => encodeValue(-1), TypeError);
    assert.throws(() => encodeValue(1.5), TypeError);
    assert.throws(() => encodeValue(Number.NaN), TypeError);
  });

  it('quotes strings that can be quoted, escaping " and \\', () => {
    assert.equal(enc(''), '""');
    assert.equal(enc('hello world'), '"hello world"');
    assert.equal(enc('say "hi" \\o/'), '"say \\"hi\\" \\\\o/"');
    assert.equal(enc('tab\there'), '"tab\there"');
    assert.equal(enc(Buffer.from('a"b')), '"a\\"b"');
    assert.equal(enc(Buffer.alloc(0)), '""');
  });

  it('sends a literal for 8-bit, CR, LF and NUL', () => {
    assert.equal(enc('café'), '{5}\r\ncafé'.replace('café', Buffer.from('café').toString('latin1')));
    assert.equal(enc('a\r\nb'), '{4}\r\na\r\nb');
    assert.equal(enc('a\nb'), '{3}\r\na\nb');
    // CHAR8 has no NUL: in a plain literal it goes out as 0x80 (Dovecot does the same); literal8 keeps it.
    assert.equal(enc(Buffer.from([0x61, 0x00])), '{2}\r\na\x80');
    assert.equal(enc(Buffer.from([0xff])), '{1}\r\n\xff');
    assert.equal(enc('\u{1f600}'), `{4}\r\n${Buffer.from('\u{1f600}').toString('latin1')}`);
  });

  it('always sends Literal as a literal, ~{n} when binary', () => {
    assert.equal(enc(literal(Buffer.from('abc'))), '{3}\r\nabc');
    assert.equal(enc(literal(Buffer.alloc(0))), '{0}\r\n');
    assert.equal(enc(literal(Buffer.from([0, 1]), true)), '~{2}\r\n\0\x01');
  });

  it('encodes nested lists', () => {
    assert.equal(enc([]), '()');
    assert.equal(enc([[], [[]]]), '(() (()))');
    assert.equal(
      enc([atom('UID'), 7, atom('FLAGS'), [atom('\\Seen'), atom('$Junk')], atom('ENVELOPE'), ['Mon', null, [[null, null, 'a', 'b.c']]]]),
      '(UID 7 FLAGS (\\Seen $Junk) ENVELOPE ("Mon" NIL ((NIL NIL "a" "b.c"))))',
    );
    assert.equal(enc(['x', literal(Buffer.from('\r\n')), 'y']), '("x" {2}\r\n\r\n "y")');
  });
});

describe('adjoined lists (RFC 3501 §9: 1*body, 1*address)', () => {
  it('writes the leading lists back to back, the rest with SP', () => {
    // body-type-mpart = 1*body SP media-subtype [SP body-ext-mpart]
    const plain = ['text', 'plain', null, null, null, '7bit', 1, 0];
    assert.equal(
      enc(adjoined([plain, [...plain], 'mixed', ['boundary', 'b'], ['inline', null], null])),
      '(("text" "plain" NIL NIL NIL "7bit" 1 0)("text" "plain" NIL NIL NIL "7bit" 1 0) "mixed" ("boundary" "b") ("inline" NIL) NIL)',
    );
    // env-to = "(" 1*address ")" / nil
    assert.equal(
      enc(adjoined([[null, null, 'u0', 'example.org'], [null, null, 'u1', 'example.org']])),
      '((NIL NIL "u0" "example.org")(NIL NIL "u1" "example.org"))',
    );
  });

  it('leaves other lists alone', () => {
    assert.equal(enc([[1], [2], 'x']), '((1) (2) "x")');
    assert.equal(enc(adjoined(['x', [1], [2]])), '("x" (1) (2))');
    assert.equal(enc(adjoined([[1]])), '((1))');
  });

  it('passes a strict body and envelope grammar check', () => {
    const part = ['text', 'plain', ['charset', 'us-ascii'], null, null, '7bit', 3, 1];
    assert.equal(grammarError('body', enc(adjoined([part, [...part], 'alternative']))), null);
    // with SP between the parts, "(" + ")" ... " (" reads as a part followed by SP and a subtype: not a string
    assert.match(grammarError('body', enc([part, [...part], 'alternative'])) ?? '', /^expected a string at 60/);
    const addrs = adjoined([[null, null, 'a', 'b'], [null, null, 'c', 'd']]);
    assert.equal(grammarError('envelope', enc([null, null, addrs, addrs, addrs, null, null, null, null, null])), null);
  });
});

describe('responses', () => {
  it('writes untagged responses', () => {
    assert.equal(text(untagged(3, atom('EXISTS'))), '* 3 EXISTS\r\n');
    assert.equal(text(untagged(12, atom('FETCH'), [atom('BODY[]'), literal(Buffer.from('Hi\r\n'))])), '* 12 FETCH (BODY[] {4}\r\nHi\r\n)\r\n');
    assert.equal(text(encodeResponse('*')), '*\r\n');
    assert.equal(text(encodeResponse('*', atom('LIST'), [atom('\\HasNoChildren')], '/', 'INBOX')), '* LIST (\\HasNoChildren) "/" "INBOX"\r\n');
  });

  it('writes tagged and status responses with codes', () => {
    assert.equal(text(tagged('A1', 'OK', null, 'LOGIN completed')), 'A1 OK LOGIN completed\r\n');
    assert.equal(text(tagged('A2', 'OK', 'READ-WRITE', 'SELECT completed')), 'A2 OK [READ-WRITE] SELECT completed\r\n');
    assert.equal(
      text(tagged('A3', 'OK', { name: 'COPYUID', args: [38505, atom('304,319:320'), atom('3956:3958')] }, 'Done')),
      'A3 OK [COPYUID 38505 304,319:320 3956:3958] Done\r\n',
    );
    assert.equal(
      text(untaggedStatus('OK', { name: 'PERMANENTFLAGS', args: [[atom('\\Seen'), atom('\\*')]] }, 'Flags permitted.')),
      '* OK [PERMANENTFLAGS (\\Seen \\*)] Flags permitted.\r\n',
    );
    assert.equal(text(untaggedStatus('BYE', undefined, 'bye\r\nA1 OK')), '* BYE bye  A1 OK\r\n');
    assert.equal(text(tagged('A4', 'NO', { name: 'BADCHARSET', args: [[atom('UTF-8')]] }, '')), 'A4 NO [BADCHARSET (UTF-8)]\r\n');
  });

  it('writes continuation requests', () => {
    assert.equal(text(continuation('OK')), '+ OK\r\n');
    assert.equal(text(continuation()), '+ \r\n');
  });

  it('batches responses', () => {
    const out = Buffer.concat([untagged(1, atom('EXISTS')), untaggedStatus('OK', { name: 'UIDNEXT', args: [5] }, 'x'), tagged('A', 'OK', null, 'done')]);
    assert.equal(out.length, 43);
    assert.equal(text(out), '* 1 EXISTS\r\n* OK [UIDNEXT 5] x\r\nA OK done\r\n');
  });
});

describe('round trip through the reader and the parser', () => {
  it('gives back strings byte for byte', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const samples: Buffer[] = [Buffer.alloc(0), Buffer.from('"\\'), Buffer.from('NIL'), Buffer.from('{3}')];
    for (let i = 0; i < 300; i++) {
      const ascii = rnd() < 0.5;
      // no NUL: a {n} literal carries CHAR8 only (RFC 3501 §9), and the parser refuses NUL there
      samples.push(Buffer.from(Array.from({ length: Math.floor(rnd() * 20) }, () => 1 + Math.floor(rnd() * (ascii ? 127 : 255)))));
    }
    for (const sample of samples) {
      const p = reparse(encodeValue(sample));
      assert.deepEqual(p.string(), sample);
      p.end();
    }
  });

  it('gives back lists of nstrings', () => {
    const value = [Buffer.from('a b'), null, Buffer.from('x\r\ny'), Buffer.from('\xff', 'latin1')];
    const p = reparse(encodeValue(value));
    assert.deepEqual(
      p.list((q) => q.nstring()),
      value,
    );
    p.end();
  });

  it('gives back literal8 data', () => {
    const data = Buffer.from([0, 13, 10, 255]);
    const p = reparse(encodeValue(literal(data, true)));
    const lit = p.anyLiteral();
    assert.equal(lit.binary, true);
    assert.deepEqual(lit.data, data);
  });

  it('encodes a 100,000-message FETCH response', () => {
    const parts: Buffer[] = [];
    for (let i = 1; i <= 100_000; i++) {
      parts.push(untagged(i, atom('FETCH'), [
        atom('UID'),
        i,
        atom('FLAGS'),
        [atom('\\Seen')],
        atom('ENVELOPE'),
        ['Mon, 1 Jan 2024 00:00:00 +0000', `Subject ${i}`, [['Name', null, 'user', 'example.com']], null, null, null, null, null, null, '<id@x>'],
      ]));
    }
    const bytes = Buffer.concat(parts);
    assert.ok(bytes.length > 10_000_000);
    assert.ok(text(parts[99_999]!).startsWith('* 100000 FETCH (UID 100000 FLAGS (\\Seen) ENVELOPE ('));
  });
});

describe('the one rule: no CR, LF, NUL or 8-bit in a quoted string (RFC 3501 §9, RFC 9051 §9 QUOTED-CHAR, RFC 3516 §4.3)', () => {
  /** Encodes `* ID ("k" value)` and reads it back with the fuzzer's strict grammar check. */
  function sentAs(value: ImapValue, utf8 = false): { wire: string; got: Buffer } {
    const wire = encodeResponse('*', atom('ID'), ['k', value]);
    let responses = 0;
    new ResponseSplitter().push(wire, (r) => {
      assert.equal(parseResponse(r, { utf8 }).type, 'ID');
      responses++;
    });
    assert.equal(responses, 1, `one response: ${JSON.stringify(text(wire))}`);
    // The value is the second element of the list: quoted, literal or literal8.
    const body = text(wire).slice('* ID ("k" '.length, -')\r\n'.length);
    const lit = /^~?\{(\d+)\}\r\n/.exec(body);
    const got = lit ? Buffer.from(body.slice(lit[0].length), 'latin1') : Buffer.from(body.slice(1, -1).replace(/\\(["\\])/g, '$1'), 'latin1');
    return { wire: text(wire), got };
  }

  it('the issue\'s BINARY partial (jkl CRLF mno CRLF) goes out as a literal, as every CR/LF/NUL/8-bit string does', () => {
    const decoded = Buffer.from('abcdefg\rhijkl\r\nmno\npqrstuvqxyz');
    const partial = decoded.subarray(10, 20);
    for (const value of [partial, partial.toString('latin1'), literal(partial)]) {
      assert.equal(sentAs(value).wire, `* ID ("k" {10}\r\n${partial.toString('latin1')})\r\n`);
    }
    for (const bytes of ['a\rb', 'a\nb', 'a\r\nb', 'caf\xe9']) assert.match(sentAs(Buffer.from(bytes, 'latin1')).wire, /^\* ID \("k" \{\d+\}\r\n/);
    assert.match(sentAs(Buffer.from([0x61, 0x00])).wire, /^\* ID \("k" \{2\}\r\n/, 'NUL: a plain literal (as 0x80) unless the producer marks it binary');
    assert.match(sentAs(literal(Buffer.from([0x61, 0x00]), true)).wire, /^\* ID \("k" ~\{2\}\r\n/);
  });

  it('random strings and bytes: every encoding passes the strict check and gives the bytes back', () => {
    const prng = new Prng(29);
    const ALPHABET = ['a', ' ', '"', '\\', '\r', '\n', '\0', '\x7f', '\x01', '\t', 'é', '€', '\u{1f600}', '{', '}', '~', '(', ')', '*'];
    for (let i = 0; i < 3000; i++) {
      const n = prng.below(12);
      let str = '';
      for (let j = 0; j < n; j++) str += ALPHABET[prng.below(ALPHABET.length)];
      const bytes = Buffer.alloc(n);
      for (let j = 0; j < n; j++) bytes[j] = prng.below(4) === 0 ? prng.below(256) : 0x20 + prng.below(0x5f);
      const noNul = (b: Buffer): Buffer => Buffer.from(b.map((c) => (c === 0 ? 0x80 : c)));
      assert.deepEqual(sentAs(str).got, noNul(Buffer.from(str, 'utf8')), JSON.stringify(str));
      assert.deepEqual(sentAs(bytes).got, noNul(bytes), bytes.toString('hex'));
      assert.deepEqual(sentAs(literal(bytes, bytes.includes(0))).got, bytes, bytes.toString('hex'));
      // UTF-8 quoted (RFC 6855 §3) only for Utf8Text, checked as a session that enabled UTF8=ACCEPT.
      assert.deepEqual(sentAs(utf8Text(str), true).got, noNul(Buffer.from(str, 'utf8')), JSON.stringify(str));
    }
  });

  it('UTF-8 text is quoted only as Utf8Text, and never with CR, LF or NUL', () => {
    assert.equal(sentAs(utf8Text('Entwürfe'), true).wire, `* ID ("k" "${Buffer.from('Entwürfe').toString('latin1')}")\r\n`);
    assert.match(sentAs('Entwürfe').wire, /^\* ID \("k" \{9\}\r\n/);
    assert.match(sentAs(utf8Text('a\r\nü'), true).wire, /^\* ID \("k" \{5\}\r\n/);
  });

  it('refuses an atom that would put CR, LF, NUL or 8-bit outside a literal', () => {
    for (const bad of ['a\r\nb', 'a\nb', 'a\0', 'caf\u00e9', '\u{1f600}']) assert.throws(() => encodeValue(atom(bad)), /Not an IMAP atom/, JSON.stringify(bad));
    assert.equal(enc(atom('BODY[HEADER.FIELDS ("X-A")]<0>')), 'BODY[HEADER.FIELDS ("X-A")]<0>');
  });
});

describe('astring (RFC 3501 §9: 1*ASTRING-CHAR / string)', () => {
  it('is an atom where the text is one, as RFC 4314 §3.6 writes identifiers', () => {
    assert.equal(enc(astring('Fred')), 'Fred');
    assert.equal(enc(astring('-Fred')), '-Fred');
    assert.equal(enc(astring('$team')), '$team');
    assert.equal(enc(astring('a]b')), 'a]b');
    assert.equal(enc(astring('/shared/comment')), '/shared/comment');
    assert.equal(enc(astring('user@example.com')), 'user@example.com');
  });

  it('is quoted or a literal otherwise, and for NIL and numbers, which generic tokenizers would not read as strings', () => {
    assert.equal(enc(astring('')), '""');
    assert.equal(enc(astring('two words')), '"two words"');
    for (const special of ['a(b', 'a)b', 'a{b', 'a%b', 'a*b', 'a"b', 'a\\b', 'a\x7fb', 'a\tb']) assert.equal(enc(astring(special)), `"${special.replace(/["\\]/g, '\\$&')}"`, special);
    assert.equal(enc(astring('NIL')), '"NIL"');
    assert.equal(enc(astring('nil')), '"nil"');
    assert.equal(enc(astring('nils')), 'nils');
    assert.equal(enc(astring('123')), '"123"');
    assert.equal(enc(astring('123a')), '123a');
    assert.equal(enc(astring('Jörg')), `{5}\r\n${Buffer.from('Jörg').toString('latin1')}`);
    assert.equal(enc(astring('a\r\nb')), '{4}\r\na\r\nb');
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getMime, MAX_DEPTH, parseMime } from '../../src/mime/index.js';
import { ALTERNATIVE, BARE_LF, MIXED, NESTED, SIMPLE } from './fixtures.js';

const text = (raw: Buffer, a: number, b: number): string => raw.toString('latin1', a, b);

test('simple message: header block, body, fields', () => {
  const root = parseMime(SIMPLE);
  assert.equal(root.kind, 'leaf');
  assert.equal(root.isMime, false);
  assert.equal(root.headerStart, 0);
  assert.equal(text(SIMPLE, root.bodyStart, root.bodyEnd), 'Hello Bob,\r\nHow are you?\r\n');
  assert.ok(text(SIMPLE, root.headerStart, root.headerEnd).endsWith('Message-ID: <123@example.com>\r\n\r\n'));
  assert.equal(root.size, 26);
  assert.equal(root.lines, 2);
  assert.deepEqual(
    root.fields.map((f) => f.name),
    ['From', 'To', 'Subject', 'Date', 'Message-ID'],
  );
  const subject = root.fields[2]!;
  assert.equal(subject.key, 'subject');
  assert.equal(text(SIMPLE, subject.start, subject.end), 'Subject: Hello\r\n');
  assert.equal(subject.value.toString(), ' Hello');
  assert.equal(root.contentType.type, 'text');
  assert.equal(root.contentType.rawType, null);
  assert.equal(root.encodingKey, '7bit');
});

test('folded field keeps its folding in value and offsets', () => {
  const raw = Buffer.from('Subject: one\r\n two\r\n\tthree\r\nX: y\r\n\r\n');
  const root = parseMime(raw);
  assert.equal(root.fields.length, 2);
  assert.equal(root.fields[0]!.value.toString(), ' one\r\n two\r\n\tthree');
  assert.equal(text(raw, root.fields[0]!.start, root.fields[0]!.end), 'Subject: one\r\n two\r\n\tthree\r\n');
});

test('multipart/alternative: parts exclude preamble, epilogue and the CRLF before delimiters', () => {
  const root = parseMime(ALTERNATIVE);
  assert.equal(root.kind, 'multipart');
  assert.equal(root.boundary?.toString(), 'XX');
  assert.equal(root.children.length, 2);
  const [p1, p2] = root.children;
  assert.equal(text(ALTERNATIVE, p1!.headerStart, p1!.headerEnd), 'Content-Type: text/plain; charset=UTF-8\r\n\r\n');
  assert.equal(text(ALTERNATIVE, p1!.bodyStart, p1!.bodyEnd), 'plain line 1\r\nline 2');
  assert.equal(p1!.size, 20);
  assert.equal(p1!.lines, 1);
  assert.equal(text(ALTERNATIVE, p2!.bodyStart, p2!.bodyEnd), '<b>h=C3=A9</b>');
  assert.equal(p2!.contentType.type, 'text');
  assert.equal(p2!.contentType.subtype, 'html');
  assert.equal(p2!.contentType.rawType?.toString(), 'TEXT');
  assert.equal(p2!.encodingKey, 'quoted-printable');
  // the multipart's body runs from the preamble to the end of the epilogue
  assert.equal(text(ALTERNATIVE, root.bodyStart, root.bodyStart + 8), 'preamble');
  assert.equal(root.bodyEnd, ALTERNATIVE.length);
  // every LF of the body: preamble 1, delimiter lines 3, part headers 2+3, part bodies 1+0,
  // line breaks before the 2nd and 3rd delimiters 2, epilogue 1
  assert.equal(root.lines, 13);
});

test('RFC 2231 parameters are merged and decoded', () => {
  const root = parseMime(MIXED);
  const att = root.children[1]!;
  assert.equal(att.disposition?.type, 'attachment');
  const [fn] = att.disposition!.params;
  assert.equal(fn!.name.toString(), 'filename*');
  assert.equal(fn!.value.toString(), "utf-8''na%C3%AFve.txt");
  assert.equal(fn!.key, 'filename');
  assert.equal(fn!.decoded, 'naïve.txt');
  assert.equal(att.contentType.params[0]!.decoded, 'r.bin');
  assert.deepEqual(att.language?.map(String), ['en', 'fr']);
  assert.equal(att.id?.toString(), '<part2@example.com>');
});

test('RFC 2231: plain continuations, mixed sections, unordered sections, missing section', () => {
  const ct = (v: string) => parseMime(Buffer.from(`Content-Type: ${v}\r\n\r\n`)).contentType.params.map((p) => [p.name.toString(), p.value.toString(), p.decoded]);
  assert.deepEqual(ct('text/plain; title*1=" world"; title*0=hello; charset=utf-8'), [
    ['charset', 'utf-8', 'utf-8'],
    ['title', 'hello world', 'hello world'],
  ]);
  assert.deepEqual(ct("application/x; k*0=a%; k*1*=b%25"), [['k*', "''a%25b%25", 'a%b%']]);
  assert.deepEqual(ct("application/x; name*=iso-8859-1'fr'caf%E9"), [['name*', "iso-8859-1'fr'caf%E9", 'café']]);
  assert.deepEqual(ct('application/x; k*0=a; k*2=c'), [
    ['k*0', 'a', 'a'],
    ['k*2', 'c', 'c'],
  ]);
  // an encoded word in a quoted value is decoded in `decoded` only
  assert.deepEqual(ct('application/x; name="=?UTF-8?Q?r=C3=A9sum=C3=A9.pdf?="'), [
    ['name', '=?UTF-8?Q?r=C3=A9sum=C3=A9.pdf?=', 'résumé.pdf'],
  ]);
});

test('message/rfc822 part encapsulates a message', () => {
  const root = parseMime(NESTED);
  const [p1, p2] = root.children;
  assert.equal(p1!.fields.length, 0);
  assert.equal(text(NESTED, p1!.headerStart, p1!.headerEnd), '\r\n');
  assert.equal(p1!.contentType.type, 'text');
  assert.equal(p2!.kind, 'message');
  const inner = p2!.message!;
  assert.equal(inner.depth, 2);
  assert.equal(inner.headerStart, p2!.bodyStart);
  assert.equal(inner.bodyEnd, p2!.bodyEnd);
  assert.equal(text(NESTED, inner.bodyStart, inner.bodyEnd), 'Inner body\r\nline two');
  assert.equal(p2!.size, 116);
  assert.equal(p2!.lines, 5);
  assert.equal(inner.isMime, false);
});

test('bare LF line endings', () => {
  const root = parseMime(BARE_LF);
  assert.equal(root.kind, 'multipart');
  assert.equal(root.children.length, 2);
  const [p1, p2] = root.children;
  assert.equal(text(BARE_LF, p1!.headerStart, p1!.headerEnd), 'Content-Type: text/plain\n\n');
  assert.equal(text(BARE_LF, p1!.bodyStart, p1!.bodyEnd), 'line1\nline2');
  assert.equal(p1!.lines, 1);
  assert.equal(p2!.size, 4);
  const simple = parseMime(Buffer.from('Subject: a\n\nhello\nworld\n'));
  assert.equal(simple.headerEnd, 12);
  assert.equal(simple.size, 12);
  assert.equal(simple.lines, 2);
});

test('headers without a body, without a blank line, and an empty message', () => {
  const raw = Buffer.from('Subject: x\r\nFrom: a@b.example\r\n');
  const root = parseMime(raw);
  assert.equal(root.headerEnd, raw.length);
  assert.equal(root.bodyStart, raw.length);
  assert.equal(root.size, 0);
  assert.equal(root.fields.length, 2);
  const noEol = parseMime(Buffer.from('Subject: x'));
  assert.equal(noEol.fields[0]!.value.toString(), ' x');
  const empty = parseMime(Buffer.alloc(0));
  assert.equal(empty.fields.length, 0);
  assert.equal(empty.size, 0);
  const blankOnly = parseMime(Buffer.from('\r\nbody'));
  assert.equal(blankOnly.headerEnd, 2);
  assert.equal(blankOnly.size, 4);
});

test('missing close delimiter, header cut by a delimiter, delimiter at EOF without newline', () => {
  const raw = Buffer.from('Content-Type: multipart/mixed; boundary=q\r\n\r\n--q\r\nContent-Type: text/plain\r\n--q\r\n\r\nlast part');
  const root = parseMime(raw);
  assert.equal(root.children.length, 2);
  const [p1, p2] = root.children;
  assert.equal(text(raw, p1!.headerStart, p1!.headerEnd), 'Content-Type: text/plain');
  assert.equal(p1!.size, 0);
  assert.equal(p1!.fields[0]!.end, p1!.headerEnd);
  assert.equal(text(raw, p2!.bodyStart, p2!.bodyEnd), 'last part');
  const eof = parseMime(Buffer.from('Content-Type: multipart/mixed; boundary=q\r\n\r\n--q\r\n\r\na\r\n--q'));
  assert.equal(eof.children.length, 1);
  assert.equal(eof.children[0]!.size, 1);
});

test('nested multiparts: outer delimiter ends inner parts; longest boundary wins', () => {
  const raw = Buffer.from(
    'Content-Type: multipart/mixed; boundary=abc\r\n\r\n' +
      '--abc\r\nContent-Type: multipart/alternative; boundary=abc-inner\r\n\r\n' +
      '--abc-inner\r\n\r\none\r\n--abc-inner\r\n\r\ntwo\r\n' + // no close delimiter for the inner one
      '--abc\r\n\r\nthree\r\n--abc--\r\n',
  );
  const root = parseMime(raw);
  assert.equal(root.children.length, 2);
  const inner = root.children[0]!;
  assert.equal(inner.kind, 'multipart');
  assert.deepEqual(
    inner.children.map((c) => text(raw, c.bodyStart, c.bodyEnd)),
    ['one', 'two'],
  );
  assert.equal(text(raw, root.children[1]!.bodyStart, root.children[1]!.bodyEnd), 'three');
});

test('same boundary nested: the innermost multipart takes it', () => {
  const raw = Buffer.from(
    'Content-Type: multipart/mixed; boundary=s\r\n\r\n--s\r\nContent-Type: multipart/mixed; boundary=s\r\n\r\n--s\r\n\r\nx\r\n--s--\r\n--s--\r\n',
  );
  const root = parseMime(raw);
  assert.equal(root.children.length, 1);
  assert.equal(root.children[0]!.children.length, 1);
});

test('multipart/digest parts default to message/rfc822; multipart without boundary has no parts', () => {
  const raw = Buffer.from('Content-Type: multipart/digest; boundary=d\r\n\r\n--d\r\n\r\nSubject: in digest\r\n\r\nhi\r\n--d--\r\n');
  const root = parseMime(raw);
  const part = root.children[0]!;
  assert.equal(part.kind, 'message');
  assert.equal(part.contentType.type, 'message');
  assert.equal(part.message!.fields[0]!.key, 'subject');
  const noBoundary = parseMime(Buffer.from('Content-Type: multipart/mixed\r\n\r\n--x\r\n'));
  assert.equal(noBoundary.kind, 'multipart');
  assert.equal(noBoundary.children.length, 0);
  assert.equal(noBoundary.size, 5);
});

test('Content-* headers are ignored on a message without MIME-Version or Content-Type', () => {
  const root = parseMime(Buffer.from('Content-Transfer-Encoding: base64\r\nContent-Disposition: inline\r\n\r\naGk=\r\n'));
  assert.equal(root.isMime, false);
  assert.equal(root.encoding, null);
  assert.equal(root.disposition, null);
  const mime = parseMime(Buffer.from('MIME-Version: 1.0\r\nContent-Transfer-Encoding: base64\r\n\r\naGk=\r\n'));
  assert.equal(mime.encodingKey, 'base64');
});

test('deep nesting is capped: the multipart at depth MAX_DEPTH - 1 is an application/octet-stream leaf', () => {
  const depth = MAX_DEPTH + 20;
  let s = '';
  for (let i = 0; i < depth; i++) s += `Content-Type: multipart/mixed; boundary=b${i}x\r\n\r\n--b${i}x\r\n`;
  s += '\r\nleaf\r\n';
  for (let i = depth - 1; i >= 0; i--) s += `--b${i}x--\r\n`;
  const raw = Buffer.from(s);
  let node = parseMime(raw);
  let levels = 0;
  while (node.kind === 'multipart') {
    node = node.children[0]!;
    levels++;
  }
  assert.equal(levels, MAX_DEPTH - 1);
  assert.equal(node.depth, MAX_DEPTH - 1);
  assert.equal(node.kind, 'leaf');
  assert.equal(node.contentType.type, 'application');
  assert.equal(node.contentType.subtype, 'octet-stream');
  assert.equal(node.contentType.params[0]!.value.toString(), `b${MAX_DEPTH - 1}x`);
});

test('getMime caches per Buffer', () => {
  const a = getMime(SIMPLE);
  assert.equal(getMime(SIMPLE), a);
  assert.notEqual(getMime(Buffer.from(SIMPLE)), a);
});

test('10 MiB message with 10,000 parts, and a part of 1.8 million lines, parse whole', () => {
  const body = `${'x'.repeat(1000)}\r\n`;
  const parts: string[] = ['MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="==sep=="\r\n\r\n'];
  for (let i = 0; i < 10_000; i++) parts.push(`--==sep==\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n${body}`);
  parts.push('--==sep==--\r\n');
  const raw = Buffer.from(parts.join(''));
  assert.ok(raw.length > 10_000_000);
  const root = parseMime(raw);
  assert.equal(root.children.length, 10_000);
  assert.equal(root.children[9_999]!.size, 1000);
  // one big part with many short lines
  const big = Buffer.from(`Subject: big\r\n\r\n${'--\r\n-- x\r\nline\r\n'.repeat(600_000)}`);
  assert.equal(parseMime(big).lines, 1_800_000);
});

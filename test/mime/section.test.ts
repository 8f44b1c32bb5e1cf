import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findPart, messageSize, parseMime, section, type SectionSpec } from '../../src/mime/index.js';
import { ALTERNATIVE, BARE_LF, INNER_BODY, INNER_HEADER, MIXED, NESTED, SIMPLE } from './fixtures.js';

const sec = (raw: Buffer, spec: SectionSpec): string | null => {
  const out = section(raw, parseMime(raw), spec);
  return out === null ? null : out.toString('latin1');
};

const SIMPLE_HEADER =
  'From: Alice Example <alice@example.com>\r\nTo: bob@example.org\r\nSubject: Hello\r\n' +
  'Date: Mon, 7 Feb 1994 21:52:25 -0800\r\nMessage-ID: <123@example.com>\r\n\r\n';

test('whole message, HEADER, TEXT', () => {
  assert.equal(sec(SIMPLE, { part: [] }), SIMPLE.toString('latin1'));
  assert.equal(sec(SIMPLE, { part: [], text: 'HEADER' }), SIMPLE_HEADER);
  assert.equal(sec(SIMPLE, { part: [], text: 'TEXT' }), 'Hello Bob,\r\nHow are you?\r\n');
  assert.equal(messageSize(SIMPLE), SIMPLE.length);
});

test('non-multipart message: part 1 is its body, nothing else exists', () => {
  assert.equal(sec(SIMPLE, { part: [1] }), 'Hello Bob,\r\nHow are you?\r\n');
  assert.equal(sec(SIMPLE, { part: [1], text: 'MIME' }), SIMPLE_HEADER);
  assert.equal(sec(SIMPLE, { part: [2] }), '');
  assert.equal(sec(SIMPLE, { part: [1, 1] }), '');
  assert.equal(sec(SIMPLE, { part: [1], text: 'HEADER' }), '');
  assert.equal(sec(SIMPLE, { part: [1], text: 'TEXT' }), '');
});

test('HEADER.FIELDS and HEADER.FIELDS.NOT: message order, any case, blank line added', () => {
  assert.equal(
    sec(SIMPLE, { part: [], text: 'HEADER.FIELDS', fields: ['SUBJECT', 'from'] }),
    'From: Alice Example <alice@example.com>\r\nSubject: Hello\r\n\r\n',
  );
  assert.equal(sec(SIMPLE, { part: [], text: 'HEADER.FIELDS', fields: ['X-Nothing'] }), '\r\n');
  assert.equal(
    sec(SIMPLE, { part: [], text: 'HEADER.FIELDS.NOT', fields: ['from', 'to', 'date'] }),
    'Subject: Hello\r\nMessage-ID: <123@example.com>\r\n\r\n',
  );
  const folded = Buffer.from('Subject: a\r\n b\r\nTo: x@y\r\nSubject: second\r\n\r\nbody');
  assert.equal(sec(folded, { part: [], text: 'HEADER.FIELDS', fields: ['subject'] }), 'Subject: a\r\n b\r\nSubject: second\r\n\r\n');
});

test('multipart parts and their MIME headers', () => {
  assert.equal(sec(ALTERNATIVE, { part: [1] }), 'plain line 1\r\nline 2');
  assert.equal(sec(ALTERNATIVE, { part: [2] }), '<b>h=C3=A9</b>');
  assert.equal(
    sec(ALTERNATIVE, { part: [2], text: 'MIME' }),
    'Content-Type: TEXT/HTML; CHARSET="UTF-8"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n',
  );
  assert.equal(sec(ALTERNATIVE, { part: [3] }), '');
  // a non-multipart part is its own part 1 (Dovecot), but nothing lies below that
  assert.equal(sec(ALTERNATIVE, { part: [2, 1] }), '<b>h=C3=A9</b>');
  assert.equal(sec(ALTERNATIVE, { part: [2, 1, 1] }), '');
  assert.equal(sec(ALTERNATIVE, { part: [2, 2] }), '');
  assert.equal(sec(MIXED, { part: [2] }), 'AAECAwQF');
  assert.equal(sec(BARE_LF, { part: [1], text: 'MIME' }), 'Content-Type: text/plain\n\n');
  assert.equal(sec(BARE_LF, { part: [], text: 'HEADER.FIELDS', fields: ['subject'] }), 'Subject: lf\n\r\n');
});

test('message/rfc822 part: HEADER, TEXT, MIME, body and sub-parts', () => {
  assert.equal(sec(NESTED, { part: [2] }), INNER_HEADER + INNER_BODY);
  assert.equal(sec(NESTED, { part: [2], text: 'MIME' }), 'Content-Type: message/rfc822\r\n\r\n');
  assert.equal(sec(NESTED, { part: [2], text: 'HEADER' }), INNER_HEADER);
  assert.equal(sec(NESTED, { part: [2], text: 'TEXT' }), INNER_BODY);
  assert.equal(sec(NESTED, { part: [2], text: 'HEADER.FIELDS', fields: ['Subject'] }), 'Subject: inner\r\n\r\n');
  assert.equal(sec(NESTED, { part: [2, 1] }), INNER_BODY);
  assert.equal(sec(NESTED, { part: [2, 1], text: 'MIME' }), INNER_HEADER);
  assert.equal(sec(NESTED, { part: [2, 2] }), '');
  assert.equal(sec(NESTED, { part: [1], text: 'MIME' }), '\r\n');
  assert.equal(sec(NESTED, { part: [1] }), 'See below.');
  assert.equal(sec(NESTED, { part: [1], text: 'HEADER' }), '');
});

test('nested multipart inside message/rfc822', () => {
  const raw = Buffer.from(
    'Content-Type: multipart/mixed; boundary=o\r\n\r\n--o\r\nContent-Type: message/rfc822\r\n\r\n' +
      'Subject: in\r\nContent-Type: multipart/alternative; boundary=i\r\n\r\n--i\r\n\r\nA\r\n--i\r\n\r\nB\r\n--i--\r\n--o--\r\n',
  );
  assert.equal(sec(raw, { part: [1, 1] }), 'A');
  assert.equal(sec(raw, { part: [1, 2] }), 'B');
  assert.equal(sec(raw, { part: [1, 3] }), '');
  assert.equal(sec(raw, { part: [1], text: 'HEADER.FIELDS.NOT', fields: ['content-type'] }), 'Subject: in\r\n\r\n');
  const root = parseMime(raw);
  assert.equal(findPart(root, [1, 2])?.bodyEnd, raw.indexOf('\r\n--i--'));
  assert.equal(findPart(root, []), root);
});

test('invalid specifications give null', () => {
  assert.equal(sec(SIMPLE, { part: [], text: 'MIME' }), null);
  assert.equal(sec(SIMPLE, { part: [0] }), null);
  assert.equal(sec(SIMPLE, { part: [], text: 'HEADER.FIELDS' }), null);
  assert.equal(sec(SIMPLE, { part: [], text: 'HEADER.FIELDS.NOT', fields: [] }), null);
});

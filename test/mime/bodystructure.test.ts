import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bodyStructure, parseMime } from '../../src/mime/index.js';
import { ALTERNATIVE, BARE_LF, MIXED, NESTED, SIMPLE } from './fixtures.js';
import { imapText } from './imap-text.js';

const bs = (raw: Buffer, ext = true): string => imapText(bodyStructure(parseMime(raw), raw, ext));
const one = (header: string, body: string, ext = true): string => bs(Buffer.from(`${header}\r\n\r\n${body}`), ext);

test('simple text message: defaults in lower case', () => {
  assert.equal(bs(SIMPLE), '("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 26 2 NIL NIL NIL NIL)');
  assert.equal(bs(SIMPLE, false), '("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 26 2)');
});

test('multipart/alternative: names as written, charset kept, no extension data in BODY', () => {
  assert.equal(
    bs(ALTERNATIVE),
    '(("text" "plain" ("charset" "UTF-8") NIL NIL "7bit" 20 1 NIL NIL NIL NIL)' +
      '("TEXT" "HTML" ("CHARSET" "UTF-8") NIL NIL "quoted-printable" 14 0 NIL NIL NIL NIL) ' +
      '"alternative" ("boundary" "XX") NIL NIL NIL)',
  );
  assert.equal(
    bs(ALTERNATIVE, false),
    '(("text" "plain" ("charset" "UTF-8") NIL NIL "7bit" 20 1)("TEXT" "HTML" ("CHARSET" "UTF-8") NIL NIL "quoted-printable" 14 0) "alternative")',
  );
});

test('multipart/mixed with attachment: id, description, disposition, RFC 2231, language', () => {
  assert.equal(
    bs(MIXED),
    '(("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 13 0 NIL NIL NIL NIL)' +
      '("application" "octet-stream" ("name" "r.bin") "<part2@example.com>" "the report" "base64" 8 NIL ' +
      '("attachment" ("filename*" "utf-8\'\'na%C3%AFve.txt")) ("en" "fr") NIL) ' +
      '"mixed" ("boundary" "frontier") NIL NIL NIL)',
  );
});

test('nested message/rfc822 has envelope, body structure and line count', () => {
  assert.equal(
    bs(NESTED),
    '(("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 10 0 NIL NIL NIL NIL)' +
      '("message" "rfc822" NIL NIL NIL "7bit" 116 ' +
      '("Tue, 1 Mar 2022 10:00:00 +0000" "inner" (("Inner Sender" NIL "inner" "example.net")) ' +
      '(("Inner Sender" NIL "inner" "example.net")) (("Inner Sender" NIL "inner" "example.net")) NIL NIL NIL NIL NIL) ' +
      '("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 20 1 NIL NIL NIL NIL) 5 NIL NIL NIL NIL) ' +
      '"mixed" ("boundary" "b1") NIL NIL NIL)',
  );
  assert.equal(
    bs(NESTED, false),
    '(("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 10 0)' +
      '("message" "rfc822" NIL NIL NIL "7bit" 116 ' +
      '("Tue, 1 Mar 2022 10:00:00 +0000" "inner" (("Inner Sender" NIL "inner" "example.net")) ' +
      '(("Inner Sender" NIL "inner" "example.net")) (("Inner Sender" NIL "inner" "example.net")) NIL NIL NIL NIL NIL) ' +
      '("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 20 1) 5) "mixed")',
  );
});

test('bare LF message: sizes of the parsed bytes (FETCH parses the CRLF form, see crlf.test.ts)', () => {
  assert.equal(
    bs(BARE_LF),
    '(("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 11 1 NIL NIL NIL NIL)' +
      '("text" "plain" ("charset" "iso-8859-1") NIL NIL "8bit" 4 0 NIL NIL NIL NIL) "mixed" ("boundary" "zz") NIL NIL NIL)',
  );
});

test('single part with every extension field', () => {
  assert.equal(
    one(
      [
        'MIME-Version: 1.0',
        'Content-Type: image/png; name=logo.png',
        'Content-Transfer-Encoding: BASE64',
        'Content-ID: <logo@x>',
        'Content-Description: A\r\n logo',
        'Content-MD5: Q2hlY2sgSW50ZWdyaXR5IQ==',
        'Content-Disposition: inline',
        'Content-Language: en-GB',
        'Content-Location: http://example.com/logo.png',
      ].join('\r\n'),
      'iVBORw0KGgo=\r\n',
    ),
    '("image" "png" ("name" "logo.png") "<logo@x>" "A logo" "BASE64" 14 "Q2hlY2sgSW50ZWdyaXR5IQ==" ("inline" NIL) ("en-GB") "http://example.com/logo.png")',
  );
});

test('text part without charset gets charset us-ascii appended to its parameters', () => {
  assert.equal(one('Content-Type: text/html; format=flowed', 'x'), '("text" "html" ("format" "flowed" "charset" "us-ascii") NIL NIL "7bit" 1 0 NIL NIL NIL NIL)');
  assert.equal(one('Content-Type: application/pdf', 'x', false), '("application" "pdf" NIL NIL NIL "7bit" 1)');
});

test('empty multipart gets an empty text/plain part; message without header is text/plain', () => {
  assert.equal(
    bs(Buffer.from('Content-Type: multipart/mixed; boundary=e\r\n\r\nno parts here\r\n')),
    '(("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 0 0 NIL NIL NIL NIL) "mixed" ("boundary" "e") NIL NIL NIL)',
  );
  assert.equal(bs(Buffer.alloc(0)), '("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 0 0 NIL NIL NIL NIL)');
});

test('message/rfc822 in a digest and message/global', () => {
  const digest = Buffer.from('Content-Type: multipart/digest; boundary=d\r\n\r\n--d\r\n\r\nSubject: s\r\n\r\nhi\r\n--d--\r\n');
  assert.equal(
    bs(digest, false),
    '(("message" "rfc822" NIL NIL NIL "7bit" 16 (NIL "s" NIL NIL NIL NIL NIL NIL NIL NIL) ("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 2 0) 2) "digest")',
  );
  // item 9: message/global holds a message (RFC 9051 §7.5.2, RFC 6532 §3.7), like message/rfc822
  assert.equal(
    one('Content-Type: message/global', 'Subject: s\r\n\r\nhi', false),
    '("message" "global" NIL NIL NIL "7bit" 16 (NIL "s" NIL NIL NIL NIL NIL NIL NIL NIL) ("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 2 0) 2)',
  );
});

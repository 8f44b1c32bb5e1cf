import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envelope, parseMime } from '../../src/mime/index.js';
import { MIXED, NESTED, SIMPLE } from './fixtures.js';
import { imapText } from './imap-text.js';

const env = (raw: Buffer): string => imapText(envelope(parseMime(raw), raw));
const msg = (header: string): Buffer => Buffer.from(`${header}\r\n\r\nbody\r\n`, 'utf8');
/** The address-list fields of an envelope for a single header value. */
const to = (value: string): string => {
  const raw = msg(`To: ${value}`);
  const e = envelope(parseMime(raw), raw) as unknown[];
  return imapText(e[5] as Parameters<typeof imapText>[0]);
};

test('simple message envelope; sender and reply-to default to from', () => {
  assert.equal(
    env(SIMPLE),
    '("Mon, 7 Feb 1994 21:52:25 -0800" "Hello" (("Alice Example" NIL "alice" "example.com")) ' +
      '(("Alice Example" NIL "alice" "example.com")) (("Alice Example" NIL "alice" "example.com")) ' +
      '((NIL NIL "bob" "example.org")) NIL NIL NIL "<123@example.com>")',
  );
});

test('all fields present, values from the header bytes', () => {
  const raw = msg(
    [
      'Date: Tue, 1 Mar 2022 10:00:00 +0000',
      'Subject: All',
      'From: a@x.example',
      'Sender: s@x.example',
      'Reply-To: r@x.example',
      'To: t@x.example',
      'Cc: c1@x.example, c2@x.example',
      'Bcc: b@x.example',
      'In-Reply-To: <prev@x.example>',
      'Message-ID: <id@x.example>',
    ].join('\r\n'),
  );
  assert.equal(
    env(raw),
    '("Tue, 1 Mar 2022 10:00:00 +0000" "All" ((NIL NIL "a" "x.example")) ((NIL NIL "s" "x.example")) ' +
      '((NIL NIL "r" "x.example")) ((NIL NIL "t" "x.example")) ((NIL NIL "c1" "x.example")(NIL NIL "c2" "x.example")) ' +
      '((NIL NIL "b" "x.example")) "<prev@x.example>" "<id@x.example>")',
  );
  const e = envelope(parseMime(raw), raw) as unknown[];
  assert.ok(Buffer.isBuffer(e[0]));
  assert.ok(Buffer.isBuffer(e[1]));
});

test('missing headers are NIL; empty ones are ""', () => {
  assert.equal(env(msg('Subject: only')), '(NIL "only" NIL NIL NIL NIL NIL NIL NIL NIL)');
  assert.equal(env(Buffer.alloc(0)), '(NIL NIL NIL NIL NIL NIL NIL NIL NIL NIL)');
  assert.equal(env(msg('Subject:\r\nDate: \r\nFrom: a@b.example\r\nSender:')), '("" "" ((NIL NIL "a" "b.example")) ((NIL NIL "a" "b.example")) ((NIL NIL "a" "b.example")) NIL NIL NIL NIL NIL)');
});

test('folded subject is collapsed; other values only lose their line breaks; last occurrence wins', () => {
  const raw = msg('Subject:   Re:\r\n   a   folded\r\n\tsubject  \r\nMessage-ID:\r\n <x@y>\r\nIn-Reply-To: <a@b>\r\nIn-Reply-To: <c@d>');
  assert.equal(env(raw), '(NIL "Re: a folded subject" NIL NIL NIL NIL NIL NIL "<c@d>" " <x@y>")');
});

test('8-bit header bytes stay byte-exact; encoded words are not decoded', () => {
  const raw = msg('Subject: Grüße =?UTF-8?Q?caf=C3=A9?=\r\nFrom: Jörg <j@x.de>, =?ISO-8859-1?Q?Andr=E9?= <a@x.de>');
  const e = envelope(parseMime(raw), raw) as unknown[];
  assert.deepEqual(e[1], Buffer.from('Grüße =?UTF-8?Q?caf=C3=A9?=', 'utf8'));
  const from = e[2] as unknown[][];
  assert.deepEqual(from[0]![0], Buffer.from('Jörg', 'utf8'));
  assert.deepEqual(from[1]![0], Buffer.from('=?ISO-8859-1?Q?Andr=E9?=', 'latin1'));
  const latin = Buffer.concat([Buffer.from('Subject: caf'), Buffer.from([0xe9]), Buffer.from('\r\n\r\nx')]);
  assert.deepEqual((envelope(parseMime(latin), latin) as unknown[])[1], Buffer.from([0x63, 0x61, 0x66, 0xe9]));
});

test('groups', () => {
  assert.equal(
    to('Team: ann@example.com, "Bob B" <bob@example.com>;, carol@example.com'),
    '((NIL NIL "Team" NIL)(NIL NIL "ann" "example.com")("Bob B" NIL "bob" "example.com")(NIL NIL NIL NIL)(NIL NIL "carol" "example.com"))',
  );
  assert.equal(to('undisclosed-recipients:;'), '((NIL NIL "undisclosed-recipients" NIL)(NIL NIL NIL NIL))');
  assert.equal(to('Empty Group: ;'), '((NIL NIL "Empty Group" NIL)(NIL NIL NIL NIL))');
  const raw = MIXED;
  assert.match(imapText(envelope(parseMime(raw), raw)), /\(\("Doe, John" NIL "john" "example\.com"\)\)/);
});

test('address forms', () => {
  assert.equal(to('<bare@example.com>'), '((NIL NIL "bare" "example.com"))');
  assert.equal(to('john@example.com (John Doe)'), '(("John Doe" NIL "john" "example.com"))');
  assert.equal(to('John Q. Public <jqp@example.com>'), '(("John Q. Public" NIL "jqp" "example.com"))');
  assert.equal(to('"quoted \\"name\\"" <q@example.com>'), '(("quoted \\"name\\"" NIL "q" "example.com"))');
  assert.equal(to('"john doe"@example.com'), '((NIL NIL "john doe" "example.com"))');
  assert.equal(to('Relay <@a.example,@b.example:user@c.example>'), '(("Relay" "@a.example,@b.example" "user" "c.example"))');
  assert.equal(to('user@[192.0.2.1]'), '((NIL NIL "user" "[192.0.2.1]"))');
  assert.equal(to('a@b.example,\r\n  (comment) c@d.example'), '((NIL NIL "a" "b.example")(NIL NIL "c" "d.example"))');
});

test('broken addresses, the Dovecot way', () => {
  // expected values are Dovecot 2.3.19's ENVELOPE for the same To: lines
  assert.equal(to('John Smith'), '(("John Smith" NIL "MISSING_MAILBOX" "MISSING_DOMAIN"))');
  assert.equal(to('localonly'), '((NIL NIL "localonly" "MISSING_DOMAIN"))');
  assert.equal(to('<user>'), '((NIL NIL "user" "MISSING_DOMAIN"))');
  assert.equal(to('Name <>'), '(("Name" NIL "MISSING_MAILBOX" "MISSING_DOMAIN"))');
  assert.equal(to('@example.com'), '((NIL NIL "MISSING_MAILBOX" "example.com"))');
  assert.equal(to('(just a comment)'), 'NIL');
  assert.equal(to(''), 'NIL');
  assert.equal(to('"q l"'), '(("q l" NIL "MISSING_MAILBOX" "MISSING_DOMAIN"))');
  assert.equal(to('a..b@x, .a@x, a.@x'), '((NIL NIL "a..b" "x")(NIL NIL ".a" "x")(NIL NIL "a." "x"))');
  assert.equal(to('<@r1:u@h>, <@r1 u@h>'), '((NIL "@r1" "u" "h")(NIL "INVALID_ROUTE" "u" "h"))');
  assert.equal(to('a@b (c) d'), '(("c" NIL "a" "b"))');
  assert.equal(
    to('G: x, y z, <w;'),
    '((NIL NIL "G" NIL)(NIL NIL "x" "MISSING_DOMAIN")("y z" NIL "MISSING_MAILBOX" "MISSING_DOMAIN")(NIL NIL "w" "SYNTAX_ERROR")(NIL NIL NIL NIL))',
  );
  assert.equal(to('G: ;, a@b'), '((NIL NIL "G" NIL)(NIL NIL NIL NIL)(NIL NIL "a" "b"))');
  assert.equal(to('u@h extra junk, v@h'), '((NIL NIL "u" "h"))');
  assert.equal(to('"x" y <z@w>'), '(("x y" NIL "z" "w"))');
  assert.equal(to('a@b.,c@d'), '((NIL NIL "a" "MISSING_DOMAIN")(NIL NIL "c" "d"))');
});

test('item 5: <>, @ and an unclosed <addr (Dovecot 2.3)', () => {
  assert.equal(to('<>'), '((NIL NIL "MISSING_MAILBOX" "MISSING_DOMAIN"))');
  assert.equal(to('@'), '((NIL NIL "MISSING_MAILBOX" "MISSING_DOMAIN"))');
  assert.equal(to('<alice@example.com'), '((NIL NIL "alice" "SYNTAX_ERROR"))');
  assert.equal(
    to('<>, @, <alice@example.com'),
    '((NIL NIL "MISSING_MAILBOX" "MISSING_DOMAIN")(NIL NIL "MISSING_MAILBOX" "MISSING_DOMAIN")(NIL NIL "alice" "SYNTAX_ERROR"))',
  );
});

test('item 4: every address of every From line; the last Subject', () => {
  const raw = Buffer.from('From: a@b\r\nTo: x@y\r\nFrom: c@d, e@f\r\nSubject: one\r\nSubject: two\r\nReply-To: r@x\r\nReply-To:\r\n\r\nbody');
  assert.equal(
    imapText(envelope(parseMime(raw), raw)),
    '(NIL "two" ((NIL NIL "a" "b")(NIL NIL "c" "d")(NIL NIL "e" "f")) ((NIL NIL "a" "b")(NIL NIL "c" "d")(NIL NIL "e" "f")) ' +
      '((NIL NIL "r" "x")) ((NIL NIL "x" "y")) NIL NIL NIL NIL)',
  );
});

test('envelope of an encapsulated message', () => {
  const root = parseMime(NESTED);
  const inner = root.children[1]!.message!;
  assert.equal(
    imapText(envelope(inner, NESTED)),
    '("Tue, 1 Mar 2022 10:00:00 +0000" "inner" (("Inner Sender" NIL "inner" "example.net")) ' +
      '(("Inner Sender" NIL "inner" "example.net")) (("Inner Sender" NIL "inner" "example.net")) NIL NIL NIL NIL NIL)',
  );
});

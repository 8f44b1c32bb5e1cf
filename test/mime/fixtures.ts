/** Hand-written test messages (CRLF unless the name says otherwise). */
const crlf = (lines: string[]): Buffer => Buffer.from(lines.join('\r\n'), 'utf8');

/** text/plain, no MIME headers. Body: 26 bytes, 2 lines. */
export const SIMPLE = crlf([
  'From: Alice Example <alice@example.com>',
  'To: bob@example.org',
  'Subject: Hello',
  'Date: Mon, 7 Feb 1994 21:52:25 -0800',
  'Message-ID: <123@example.com>',
  '',
  'Hello Bob,',
  'How are you?',
  '',
]);

/** multipart/alternative with preamble and epilogue. */
export const ALTERNATIVE = crlf([
  'From: a@b.example',
  'Subject: alt',
  'MIME-Version: 1.0',
  'Content-Type: multipart/alternative; boundary="XX"',
  '',
  'preamble',
  '--XX',
  'Content-Type: text/plain; charset=UTF-8',
  '',
  'plain line 1', // part 1 body: "plain line 1\r\nline 2" = 20 bytes, 1 line
  'line 2',
  '--XX',
  'Content-Type: TEXT/HTML; CHARSET="UTF-8"',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  '<b>h=C3=A9</b>', // part 2 body: 14 bytes, 0 lines
  '--XX--',
  'epilogue',
  '',
]);

/** multipart/mixed with a base64 attachment named with RFC 2231 continuations. */
export const MIXED = crlf([
  'From: "Doe, John" <john@example.com>',
  'To: Team: ann@example.com, "Bob B" <bob@example.com>;, carol@example.com',
  'Subject: Report',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary=frontier',
  '',
  '--frontier',
  'Content-Type: text/plain',
  '',
  'See attached.', // 13 bytes, 0 lines
  '--frontier',
  'Content-Type: application/octet-stream; name="r.bin"',
  'Content-Transfer-Encoding: base64',
  'Content-Disposition: attachment;',
  " filename*0*=utf-8''na%C3%AF;",
  ' filename*1*=ve.txt',
  'Content-ID: <part2@example.com>',
  'Content-Description: the report',
  'Content-Language: en, fr',
  '',
  'AAECAwQF', // 8 bytes: 00 01 02 03 04 05
  '--frontier--',
  '',
]);

/** The message encapsulated in NESTED: header 96 bytes (4 lines), body 20 bytes (1 line). */
export const INNER_HEADER = 'From: Inner Sender <inner@example.net>\r\nSubject: inner\r\nDate: Tue, 1 Mar 2022 10:00:00 +0000\r\n\r\n';
export const INNER_BODY = 'Inner body\r\nline two';

/** multipart/mixed holding a text part with an empty header and a message/rfc822. */
export const NESTED = Buffer.from(
  'From: outer@example.com\r\n' +
    'Subject: Fwd: inner\r\n' +
    'Content-Type: multipart/mixed; boundary="b1"\r\n' +
    '\r\n' +
    '--b1\r\n' +
    '\r\n' +
    'See below.\r\n' +
    '--b1\r\n' +
    'Content-Type: message/rfc822\r\n' +
    '\r\n' +
    INNER_HEADER +
    INNER_BODY +
    '\r\n--b1--\r\n',
);

/** Bare LF line endings. */
export const BARE_LF = Buffer.from(
  'From: x@y.example\nSubject: lf\nContent-Type: multipart/mixed; boundary=zz\n\n' +
    '--zz\nContent-Type: text/plain\n\nline1\nline2\n' + // part 1 body "line1\nline2": 11 bytes, 1 line
    '--zz\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: 8bit\n\ncaf\xe9\n' + // "caf\xe9": 4 bytes
    '--zz--\n',
  'latin1',
);

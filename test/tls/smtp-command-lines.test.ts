/**
 * The SMTP watch's line splitter meets a ClientHello sent in plain text (a
 * client after `220` to STARTTLS with no handshake, the starttls-no-handshake
 * attack): the record's bytes are binary, so an LF inside them must not make
 * a command of what follows it (the matrix's verdict for smtplib once
 * depended on the random bytes of its hello). The real path is
 * test/tls/smtp-client-matrix.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SmtpCommandLines } from '../../src/tls/attacks/smtp-attack.js';

/** A TLS handshake record (RFC 8446 §5.1) whose body holds `inside`. */
function record(inside: string): Buffer {
  const body = Buffer.from(`\x01\x00\x00\x10${inside}`, 'latin1');
  const head = Buffer.from([0x16, 0x03, 0x01, 0, 0]);
  head.writeUInt16BE(body.length, 3);
  return Buffer.concat([head, body]);
}

test('a plain-text ClientHello is no command; the lines after it are', () => {
  const seen: string[] = [];
  const lines = new SmtpCommandLines((line) => seen.push(line.toString('latin1')));
  const hello = record('\x8a\nE5 \xd2\xcb\r\nQUIT\r\n');
  // Split inside the record, as a socket may deliver it.
  lines.feed(hello.subarray(0, 9), false);
  lines.feed(Buffer.concat([hello.subarray(9), Buffer.from('EHLO after\r\n')]), false);
  lines.feed(Buffer.from('MAIL FROM:<a@b>\r\n'), false);
  assert.deepEqual(seen, ['EHLO after\r\n', 'MAIL FROM:<a@b>\r\n']);
});

test('inside DATA a line that starts like a record is message text', () => {
  const seen: string[] = [];
  const lines = new SmtpCommandLines((line) => seen.push(line.toString('latin1')));
  lines.feed(Buffer.from('DATA\r\n\x16\x03\x01\xff\xffbody\r\n.\r\nQUIT\r\n', 'latin1'), false);
  assert.deepEqual(seen, ['DATA\r\n', 'QUIT\r\n']);
});

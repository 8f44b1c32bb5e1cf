import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bodyText, decodeCharset, decodeHeaderValue, decodeTransfer, headerValues, parseMime } from '../../src/mime/index.js';
import { ALTERNATIVE, BARE_LF, MIXED, NESTED } from './fixtures.js';

const hv = (s: string): string => decodeHeaderValue(Buffer.from(s, 'utf8'));

test('RFC 2047 encoded words: B and Q, ISO-8859-1 and UTF-8', () => {
  assert.equal(hv('=?ISO-8859-1?Q?Caf=E9_cr=E8me?='), 'Café crème');
  assert.equal(hv('=?iso-8859-1?b?Q2Fm6Q==?='), 'Café');
  assert.equal(hv('=?UTF-8?B?w6lsw6h2ZQ==?='), 'élève');
  assert.equal(hv('=?utf-8?q?=C3=A9l=C3=A8ve?='), 'élève');
  assert.equal(hv('Re: =?iso-8859-1?q?H=E9llo?= world'), 'Re: Héllo world');
  assert.equal(hv('=?UTF-8*en?Q?hi?='), 'hi');
});

test('adjacent encoded words join; a character split over words survives; folding is removed', () => {
  assert.equal(hv('=?UTF-8?Q?a?= =?UTF-8?Q?b?='), 'ab');
  assert.equal(hv('=?UTF-8?Q?=C3?=\r\n =?UTF-8?Q?=A9t=C3=A9?='), 'été');
  assert.equal(hv('=?UTF-8?Q?a?= x =?UTF-8?Q?b?='), 'a x b');
  assert.equal(hv('=?ISO-8859-1?Q?=E9?= =?UTF-8?Q?=C3=A9?='), 'éé');
  assert.equal(hv(' folded\r\n line'), 'folded line');
  assert.equal(hv('=?bogus?X?nope?='), '=?bogus?X?nope?=');
});

test('8-bit header bytes: UTF-8, else latin1', () => {
  assert.equal(decodeHeaderValue(Buffer.from(' Grüße', 'utf8')), 'Grüße');
  assert.equal(decodeHeaderValue(Buffer.from([0x20, 0x63, 0x61, 0x66, 0xe9])), 'café');
});

test('headerValues decodes every field with that name', () => {
  const raw = Buffer.from('Subject: =?UTF-8?Q?one?=\r\nX: y\r\nsubject: two\r\n\r\n');
  const root = parseMime(raw);
  assert.deepEqual(headerValues(root, raw, 'SUBJECT'), ['one', 'two']);
  assert.deepEqual(headerValues(root, raw, 'cc'), []);
});

test('decodeTransfer', () => {
  assert.deepEqual(decodeTransfer(Buffer.from('AAEC\r\nAwQF\r\n'), 'base64'), Buffer.from([0, 1, 2, 3, 4, 5]));
  assert.equal(decodeTransfer(Buffer.from('a=3Db=\r\nc  \r\nd =\r\ne=20\r\nf=ZZ=4'), 'Quoted-Printable').toString('latin1'), 'a=bc\r\nd e \r\nf=ZZ=4');
  assert.equal(decodeTransfer(Buffer.from('soft=\nbreak\n'), 'quoted-printable').toString(), 'softbreak\n');
  const same = Buffer.from('x');
  assert.equal(decodeTransfer(same, '8bit'), same);
  assert.equal(decodeTransfer(same, 'binary'), same);
});

test('decodeCharset', () => {
  assert.equal(decodeCharset(Buffer.from([0x93, 0xfa, 0x96, 0x7b]), 'Shift_JIS'), '日本');
  assert.equal(decodeCharset(Buffer.from([0xd0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]), 'koi8-r'), 'привет');
  assert.equal(decodeCharset(Buffer.from([0xe9]), 'iso-8859-1'), 'é');
  assert.equal(decodeCharset(Buffer.from([0xe9]), 'x-unknown-charset'), 'é');
  assert.equal(decodeCharset(Buffer.from([0xe9]), 'utf-8'), 'é');
  assert.equal(decodeCharset(Buffer.from('é', 'utf8'), 'us-ascii'), 'é');
  assert.equal(decodeCharset(Buffer.from([0xff, 0xfe, 0x41, 0x00]), 'utf-16'), 'A');
  assert.equal(decodeCharset(Buffer.from('Hi +AGkAIA- Mom +-'), 'UTF-7'), 'Hi i  Mom +');
  assert.equal(decodeCharset(Buffer.from([0xa4, 0xa4, 0xa4, 0xe5]), 'big5'), '中文');
});

test('bodyText: text parts decoded, attachments skipped, nested messages included', () => {
  assert.equal(bodyText(parseMime(ALTERNATIVE), ALTERNATIVE), 'plain line 1\r\nline 2\n<b>hé</b>');
  assert.equal(bodyText(parseMime(MIXED), MIXED), 'See attached.');
  assert.equal(bodyText(parseMime(NESTED), NESTED), 'See below.\nInner body\r\nline two');
  assert.equal(bodyText(parseMime(BARE_LF), BARE_LF), 'line1\nline2\ncafé');
  const b64 = Buffer.from('Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\nw6lsw6h2ZQ==\r\n');
  assert.equal(bodyText(parseMime(b64), b64), 'élève');
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { servedSize, servedSource } from '../../src/mime/index.js';

test('a CRLF message is served from its own Buffer', () => {
  const raw = Buffer.from('Subject: a\r\n\r\nbody\r\n');
  assert.equal(servedSource(raw), raw);
  assert.equal(servedSize(raw), raw.length);
});

test('bare LF gets its CR; CRLF and lone CR stay as they are', () => {
  const raw = Buffer.from('A: 1\nB: 2\r\n\nx\ry\n\n');
  const served = servedSource(raw);
  assert.equal(served.toString('latin1'), 'A: 1\r\nB: 2\r\n\r\nx\ry\r\n\r\n');
  assert.equal(servedSize(raw), served.length);
  assert.equal(servedSource(raw), served); // cached per Buffer
  assert.equal(raw.toString('latin1'), 'A: 1\nB: 2\r\n\nx\ry\n\n'); // the stored bytes are not touched
});

test('edge positions: LF first and last, empty message', () => {
  assert.equal(servedSource(Buffer.from('\n')).toString('latin1'), '\r\n');
  assert.equal(servedSource(Buffer.from('a\n')).toString('latin1'), 'a\r\n');
  assert.equal(servedSize(Buffer.alloc(0)), 0);
});

test('large messages convert in one pass', () => {
  const raw = Buffer.from('line\n'.repeat(200_000));
  assert.equal(servedSize(raw), raw.length + 200_000);
  assert.equal(servedSource(raw).length, raw.length + 200_000);
});

/**
 * The POP3 replay's line framer: however the bytes are split across reads,
 * the same lines come out (a `{5}` is text in POP3, not a literal), and a
 * peer cannot make it hold more than its bound.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LineFramer } from '../../src/transcript/line-framer.js';
import { pop3LinesMatch } from '../../src/transcript/replay.js';

const STREAM = Buffer.from('+OK ready\r\nUSER a {5}\r\nAUTH PLAIN\r\n+ \r\nAGFsaWNlAHB3\r\n.\r\nlast line without end', 'latin1');

/** A small seeded generator (mulberry32): the splits are the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('any split of the stream gives the same CRLF lines, a {n} at a line end included; the unfinished tail is rest()', () => {
  const whole = new LineFramer();
  const expected = whole.push(STREAM).map((u) => u.bytes.toString('latin1'));
  assert.deepEqual(expected, ['+OK ready\r\n', 'USER a {5}\r\n', 'AUTH PLAIN\r\n', '+ \r\n', 'AGFsaWNlAHB3\r\n', '.\r\n']);
  assert.equal(whole.rest()?.bytes.toString('latin1'), 'last line without end');
  const random = prng(33);
  for (let round = 0; round < 200; round++) {
    const f = new LineFramer();
    const got: string[] = [];
    let at = 0;
    while (at < STREAM.length) {
      const n = 1 + Math.floor(random() * 8);
      for (const u of f.push(STREAM.subarray(at, at + n))) got.push(u.bytes.toString('latin1'));
      at += n;
    }
    assert.deepEqual(got, expected);
    assert.equal(f.rest()?.bytes.toString('latin1'), 'last line without end');
  }
});

test('a line longer than maxUnit sets overflow and is dropped, not held', () => {
  const f = new LineFramer(16);
  assert.deepEqual(f.push(Buffer.alloc(10, 0x41)), []);
  assert.deepEqual(f.push(Buffer.alloc(10, 0x41)), []);
  assert.equal(f.overflow, true);
  assert.equal(f.rest(), null);
});

test('*** in a recorded line matches any non-empty value in its place, nothing else', () => {
  const u = (s: string) => ({ bytes: Buffer.from(s, 'latin1'), starts: true });
  assert.ok(pop3LinesMatch(u('PASS ***\r\n'), u('PASS hunter2\r\n')));
  assert.ok(pop3LinesMatch(u('***\r\n'), u('AGFsaWNlAHB3\r\n')));
  assert.ok(pop3LinesMatch(u('AUTH PLAIN ***\r\n'), u('AUTH PLAIN AGFsaWNl\r\n')));
  assert.ok(!pop3LinesMatch(u('PASS ***\r\n'), u('PASS\r\n')));
  assert.ok(!pop3LinesMatch(u('AUTH PLAIN ***\r\n'), u('AUTH LOGIN AGFsaWNl\r\n')));
  assert.ok(!pop3LinesMatch(u('RETR 1\r\n'), u('RETR 2\r\n')));
});

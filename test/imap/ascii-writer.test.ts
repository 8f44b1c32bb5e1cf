import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { putAscii, putBytes, putNumber, roomFor } from '../../src/imap/wire/ascii-writer.js';
import { flagListOctets } from '../../src/imap/wire/flag-text.js';
import { NO_FLAGS } from '../../src/store/message.js';

describe('ascii writer (metadata FETCH octets)', () => {
  it('writes every number as String() does, at the digit boundaries and past 32 bits', () => {
    const values = [0, 9, 10, 99, 100, 4294967295, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 1234567890123];
    for (let d = 1; d < 1e15; d *= 10) values.push(d - 1, d, d + 1);
    for (const v of values) {
      const buf = Buffer.alloc(20, 0x2e);
      const end = putNumber(buf, 2, v);
      assert.equal(buf.toString('latin1', 2, end), String(v), `value ${v}`);
      assert.equal(buf[1], 0x2e, 'nothing before the position is touched');
      assert.equal(buf[end], 0x2e, 'nothing after the number is touched');
    }
  });

  it('grows the buffer keeping what was written, and copies short and long runs alike', () => {
    let buf: Buffer = Buffer.alloc(4);
    let pos = putAscii(buf, 0, 'ab');
    buf = roomFor(buf, pos, 100);
    assert.ok(buf.length >= 102);
    pos = putBytes(buf, pos, Buffer.from('c'.repeat(40)));
    pos = putBytes(buf, pos, Buffer.from('de'));
    assert.equal(buf.toString('latin1', 0, pos), `ab${'c'.repeat(40)}de`);
    assert.equal(roomFor(buf, pos, 1), buf, 'room left: the same buffer');
  });

  it('joins a flag set once and gives the same octets for the same set', () => {
    const set = new Set(['\\Seen', '$Label1']);
    const first = flagListOctets(set);
    assert.equal(first.toString('latin1'), '\\Seen $Label1');
    assert.equal(flagListOctets(set), first);
    assert.equal(flagListOctets(NO_FLAGS).length, 0);
  });
});

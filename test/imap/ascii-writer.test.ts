import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { putAscii, putBytes, putNumber, roomFor } from '../../src/imap/wire/ascii-writer.js';
import { tagged } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

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

  it('serves a metadata FETCH of a whole mailbox line by line as RFC 3501 §7.4.2 words it, over 64 KiB and with long keywords', async () => {
    const { server, port } = await startServer();
    try {
      const keyword = `$${'k'.repeat(300)}`;
      const count = 3000;
      for (let i = 1; i <= count; i++) {
        const flags = i % 3 === 0 ? [] : i % 3 === 1 ? ['\\Seen'] : ['\\Seen', '\\Flagged', keyword];
        server.control.addMessage('INBOX', { raw: mail(`m${i}`), flags });
      }
      const client = await rawSession(port);
      // The first session to select sees every message as \Recent (RFC 3501 §2.3.2).
      await client.command('SELECT INBOX');
      const lines = await client.command('FETCH 1:* (UID FLAGS)');
      assert.match(tagged(lines), /^T\d+ OK/);
      const fetched = lines.filter((l) => l.startsWith('* ') && l.includes(' FETCH '));
      assert.equal(fetched.length, count);
      const stored = server.control.listMessages('INBOX');
      for (let i = 0; i < count; i++) {
        const flags = [...stored[i]!.flags, '\\Recent'].join(' ');
        assert.equal(fetched[i], `* ${i + 1} FETCH (UID ${stored[i]!.uid} FLAGS (${flags}))`);
      }
      assert.ok(fetched.join('\r\n').length > 64 * 1024, 'the answer is larger than one part');
      client.close();
    } finally {
      await server.stop();
    }
  });
});

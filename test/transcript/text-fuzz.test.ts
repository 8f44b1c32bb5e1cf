/**
 * Properties over random input: the text form reads back to the same bytes
 * whatever they are; a mangled transcript is read or refused with
 * TranscriptSyntaxError, never anything else; credential redaction gives the
 * same bytes however the client's stream is cut into chunks; a ring that
 * shares chunks between sessions lists what a ring that copies them lists.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CredentialFilter } from '../../src/transcript/redact.js';
import { parseTranscripts, TranscriptSyntaxError } from '../../src/transcript/text.js';
import { Transcript } from '../../src/transcript/transcript.js';
import { TranscriptRing, type TranscriptChunk } from '../../src/transcript/ring.js';
import { SharedChunks } from '../../src/transcript/shared-chunks.js';
import { Prng } from '../../src/util/prng.js';

const PIECES = ['a1 NOOP\r\n', '\r\n', '\r', '\n', '\\', '\\x41', ' ', '\t', 'é', '\u00ff', '{5}\r\n', '# ', '0 C: ', '***', 'x'];

function randomBytes(rng: Prng): Buffer {
  const parts: Buffer[] = [];
  const n = rng.below(12);
  for (let i = 0; i < n; i++) {
    if (rng.next() < 0.3) parts.push(Buffer.from([rng.below(256)]));
    else parts.push(Buffer.from(PIECES[rng.below(PIECES.length)]!, 'utf8'));
  }
  return Buffer.concat(parts);
}

test('any bytes survive the text form: render, then parse, gives each side its bytes back', () => {
  const rng = new Prng(15);
  for (let run = 0; run < 500; run++) {
    const chunks: TranscriptChunk[] = [];
    let at = 1_700_000_000_000;
    for (let i = rng.below(8); i > 0; i--) {
      at += rng.below(3);
      chunks.push({ at, from: rng.next() < 0.5 ? 'client' : 'server', data: randomBytes(rng) });
    }
    const t = new Transcript({ session: 1, user: null, remoteAddress: null, openedAt: 1_700_000_000_000, closedAt: null, droppedBytes: 0, redacted: false, chunks: chunks.filter((c) => c.data.length > 0) });
    const [back] = parseTranscripts(t.text());
    assert.deepEqual(back?.bytes('client') ?? Buffer.alloc(0), t.bytes('client'), `run ${run}: ${JSON.stringify(t.text())}`);
    assert.deepEqual(back?.bytes('server') ?? Buffer.alloc(0), t.bytes('server'), `run ${run}`);
  }
});

test('a mangled transcript is read or refused with TranscriptSyntaxError naming its line', () => {
  const rng = new Prng(16);
  const base = '# Rookery transcript 1\n# session: 2\n0 S: * OK ready\n1 C: a1 LOGIN u ***\n2 S: a1 OK done\\\n3 S: \\x41\\\\\n';
  const junk = ['\\', '\\x', '\\xZZ', '\\q', 'C:', ' S: ', '#', '\n', '\r\n', '99999999999999999999 C: x', '-1 C: x', '0 X: y', 'é', '\u0000'];
  for (let run = 0; run < 2000; run++) {
    let text = base;
    for (let k = rng.below(4) + 1; k > 0; k--) {
      const at = rng.below(text.length + 1);
      const cut = rng.below(4);
      text = text.slice(0, at) + (rng.next() < 0.7 ? junk[rng.below(junk.length)]! : '') + text.slice(at + cut);
    }
    try {
      parseTranscripts(text);
    } catch (err) {
      assert.ok(err instanceof TranscriptSyntaxError, `run ${run}: ${String(err)} for ${JSON.stringify(text)}`);
      assert.match(err.message, /^transcript line \d+: /);
    }
  }
});

test('redaction does not depend on how the client stream is cut into chunks', () => {
  const stream = Buffer.from(
    'a1 LOGIN testuser "pa ss\\"word"\r\n' +
      'a2 APPEND INBOX {30}\r\nb1 LOGIN x secret-in-literal\r\n\r\n' +
      'a3 LOGIN {8}\r\ntestuser {6}\r\nsecret\r\n' +
      'a4 AUTHENTICATE PLAIN AHRlc3R1c2VyAHRlc3RwYXNz\r\n' +
      'a5 AUTHENTICATE PLAIN\r\nAHRlc3R1c2VyAHRlc3RwYXNz\r\n' +
      'a6 AUTHENTICATE XOAUTH2\r\ndXNlcj10ZXN0\r\n*\r\n' +
      'a7 APPEND INBOX {5+}\r\nLOGIN\r\n' +
      'a8 NOOP\r\n',
    'latin1',
  );
  const whole = new CredentialFilter().client(stream)!.toString('latin1');
  assert.equal(
    whole,
    'a1 LOGIN testuser ***\r\n' +
      'a2 APPEND INBOX {30}\r\nb1 LOGIN x secret-in-literal\r\n\r\n' +
      'a3 LOGIN {8}\r\ntestuser ***\r\n' +
      'a4 AUTHENTICATE PLAIN ***\r\n' +
      'a5 AUTHENTICATE PLAIN\r\n***\r\n' +
      'a6 AUTHENTICATE XOAUTH2\r\n***\r\n*\r\n' +
      'a7 APPEND INBOX {5+}\r\nLOGIN\r\n' +
      'a8 NOOP\r\n',
  );
  const rng = new Prng(17);
  for (let run = 0; run < 1000; run++) {
    const filter = new CredentialFilter();
    const out: Buffer[] = [];
    for (let at = 0; at < stream.length; ) {
      const size = 1 + rng.below(rng.next() < 0.5 ? 4 : 40);
      const piece = filter.client(stream.subarray(at, at + size));
      if (piece) out.push(Buffer.from(piece));
      at += size;
    }
    assert.equal(Buffer.concat(out).toString('latin1'), whole, `run ${run}`);
  }
});

test('a pipelined chunk of plain command lines passes whole; a LOGIN or literal among them still goes the careful way', () => {
  const plain = Buffer.from('a1 NOOP\r\na2 UID FETCH 7 (FLAGS)\r\na3 UID SEARCH UNSEEN\r\n', 'latin1');
  // Nothing to redact: the very chunk comes back, not a copy.
  assert.equal(new CredentialFilter().client(plain), plain);
  const mixed = (login: string): string => new CredentialFilter().client(Buffer.from(`a1 NOOP\r\na2 ${login} bob secret\r\na3 NOOP\r\n`, 'latin1'))!.toString('latin1');
  assert.equal(mixed('LOGIN'), 'a1 NOOP\r\na2 LOGIN bob ***\r\na3 NOOP\r\n');
  assert.equal(mixed('login'), 'a1 NOOP\r\na2 login bob ***\r\na3 NOOP\r\n');
  // A literal after plain lines: its bytes are never read as a command (a LOGIN inside it stays).
  const literal = Buffer.from('a1 NOOP\r\na2 APPEND INBOX {22}\r\nb LOGIN x not-a-secret\r\na3 NOOP\r\n', 'latin1');
  assert.equal(new CredentialFilter().client(literal)!.toString('latin1'), literal.toString('latin1'));
});

test('the ring keeps exactly the newest maxBytes bytes, in order, with each side and time', () => {
  const rng = new Prng(18);
  for (let run = 0; run < 300; run++) {
    const maxBytes = 1 + rng.below(rng.next() < 0.4 ? 64 : 40_000);
    const ring = new TranscriptRing(maxBytes);
    // The model: every byte with its side and time; the ring must hold the last maxBytes of them.
    const model: { side: 'client' | 'server'; at: number; byte: number }[] = [];
    let at = 0;
    for (let i = rng.below(200); i > 0; i--) {
      at += rng.below(2);
      const side = rng.next() < 0.5 ? 'client' : 'server';
      // Small chunks are copied into the ring, large ones (8 KiB and more) kept by reference: both, mixed.
      const roll = rng.next();
      const size = roll < 0.05 ? maxBytes + rng.below(100) : rng.below(Math.min(maxBytes, roll < 0.3 ? 12_000 : 3000)) + 1;
      const data = Buffer.alloc(size);
      for (let b = 0; b < size; b++) data[b] = rng.below(256);
      ring.add(at, side, data);
      for (const byte of data) model.push({ side, at, byte });
    }
    const kept = model.slice(Math.max(0, model.length - maxBytes));
    const chunks = ring.list();
    const flat = chunks.flatMap((c) => [...c.data].map((byte) => ({ side: c.from, at: c.at, byte })));
    assert.deepEqual(flat, kept, `run ${run} (maxBytes ${maxBytes})`);
    assert.equal(ring.dropped, model.length - kept.length);
    ring.compact();
    assert.deepEqual(ring.list().flatMap((c) => [...c.data]), kept.map((k) => k.byte));
  }
});

test('rings that share the chunks many sessions record alike list the same chunks as rings that copy them', () => {
  const rng = new Prng(20);
  // Sessions of one server: their openings are drawn from a few common pieces, so they repeat across rings.
  const common = Array.from({ length: 6 }, (_, i) => Buffer.from(`* OK piece ${i} ${'x'.repeat(rng.below(900))}\r\n`));
  // Long pieces are looked up by a hash of a sample of their bytes: twins that differ elsewhere must stay apart.
  const twin = Buffer.from(`* OK twin ${'y'.repeat(1000)}\r\n`);
  for (let i = 1; i < 8; i++) {
    const other = Buffer.from(twin);
    other[i] = 0x30 + i;
    common.push(other);
  }
  common.push(twin);
  for (let server = 0; server < 30; server++) {
    const shared = new SharedChunks();
    const rings: { sharing: TranscriptRing; copying: TranscriptRing }[] = [];
    for (let session = 0; session < 12; session++) {
      const maxBytes = rng.next() < 0.3 ? 1 + rng.below(3000) : 256 * 1024;
      const sharing = new TranscriptRing(maxBytes, shared);
      const copying = new TranscriptRing(maxBytes);
      rings.push({ sharing, copying });
      // A pinned clock now and then: consecutive chunks of one side then merge into one.
      let at = 1_700_000_000_000;
      for (let i = rng.below(40); i > 0; i--) {
        if (rng.next() < 0.3) at += 1;
        const side = rng.next() < 0.5 ? 'client' : 'server';
        const roll = rng.next();
        let data: Buffer;
        if (roll < 0.6) data = common[rng.below(common.length)]!;
        else if (roll < 0.7) data = Buffer.alloc(8192 + rng.below(2000), 0x61 + rng.below(3));
        else {
          data = Buffer.alloc(1 + rng.below(600));
          for (let b = 0; b < data.length; b++) data[b] = rng.below(256);
        }
        sharing.add(at, side, data);
        copying.add(at, side, data);
      }
    }
    for (const [n, { sharing, copying }] of rings.entries()) {
      const listed = sharing.list();
      assert.deepEqual(listed, copying.list(), `server ${server} session ${n}`);
      assert.equal(sharing.size, copying.size);
      assert.equal(sharing.dropped, copying.dropped);
      // A reader that changes what it was given changes no other session's transcript.
      const before = rings.map((r) => r.sharing.list());
      for (const chunk of listed) if (chunk.data.length < 8192) chunk.data.fill(0x7e);
      assert.deepEqual(rings.map((r) => r.sharing.list()).filter((_, k) => k !== n), before.filter((_, k) => k !== n));
    }
  }
});

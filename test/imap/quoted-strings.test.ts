/**
 * A quoted string never carries CR, LF, NUL or 8-bit octets (RFC 3501 §9
 * and RFC 9051 §9 QUOTED-CHAR; RFC 3516 §4.3 for BINARY): whatever holds
 * them goes out as a literal, literal8 only for NUL where the grammar
 * allows it (BINARY, METADATA values). Checked over a real socket with
 * `plugins: 'all'` for every producer of such strings: BINARY and its
 * partials, BODY[...] partials, URLFETCH, METADATA values, PREVIEW,
 * ENVELOPE, a script's `mutate`. Every response passes the strict reader
 * (test/helpers/strict-client.ts), which rejects a quoted string with CR,
 * LF or NUL, and 8-bit before UTF8=ACCEPT.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import { RawClient } from '../helpers/raw-client.js';
import { rawSession, startServer } from '../helpers/server.js';
import { StrictClient, type Mismatch, type Result } from '../helpers/strict-client.js';
import type { Value } from '../fuzz/response-check.js';

/** The part: base64 that decodes to 30 octets with a bare CR, a CRLF and a bare LF. */
const DECODED = Buffer.from('abcdefg\rhijkl\r\nmno\npqrstuvqxyz', 'latin1');
const QP_DECODED = Buffer.from('nul\0 cr\r lf\n 8bit \xe9', 'latin1');
const MESSAGE = Buffer.from(
  'From: Ren\xe9 <rene@example.com>\r\nSubject: caf\xe9 au lait\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n' +
    '--b\r\nContent-Type: text/plain\r\n\r\nfirst line\r\nsecond line\r\n' +
    '--b\r\nContent-Type: text/plain\r\n\r\ntwo\r\n' +
    '--b\r\nContent-Type: text/plain\r\n\r\nthree\r\n' +
    '--b\r\nContent-Type: text/plain\r\n\r\nfour\r\n' +
    `--b\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n${DECODED.toString('base64')}\r\n` +
    '--b\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nnul=00 cr=0D lf=0A 8bit =E9\r\n' +
    '--b--\r\n',
  'latin1',
);

const str = (v: Value | undefined): Buffer => {
  assert.equal(v?.t, 'str', `not a string: ${JSON.stringify(v)}`);
  return (v as { v: Buffer }).v;
};
const fetched = (r: Result, item: string): Value | undefined => r.untagged.find((u) => u.type === 'FETCH')?.fetch?.get(item);

describe('no CR, LF, NUL or 8-bit in a quoted string, whatever produces the string (plugins: all)', () => {
  let server: Server;
  let port: number;
  before(async () => {
    ({ server, port } = await startServer({
      plugins: 'all',
      storage: { INBOX: { messages: [{ raw: MESSAGE.toString('latin1') }], metadata: { '/private/comment': 'line one\r\nline two', '/shared/x': 'a\nb' } } },
    }));
  });
  after(() => server.stop());

  test("the issue's BINARY.PEEK[5]<10.10>: a literal of the decoded octets 10 to 19, not a quoted string with line breaks", async () => {
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('P1 FETCH 1 (BINARY.PEEK[5]<10.10>)\r\n');
    const lines = await c.until('P1');
    assert.deepEqual(lines, [`* 1 FETCH (BINARY[5]<10> {10}\r\n${DECODED.subarray(10, 20).toString('latin1')})`, 'P1 OK Fetch completed']);
    c.close();
  });

  test('every producer of such strings passes the strict reader, with the bytes intact', async () => {
    const mismatches: Mismatch[] = [];
    const c = await StrictClient.connect(port, 'q', (m) => mismatches.push(m));
    try {
      assert.equal((await c.command('LOGIN testuser testpass')).tagged.type, 'OK');
      assert.equal((await c.command('SELECT INBOX')).tagged.type, 'OK');

      // BINARY, whole and partial; literal8 only for the part whose decoded bytes hold NUL.
      assert.deepEqual(str(fetched(await c.command('FETCH 1 (BINARY.PEEK[5]<10.10>)'), 'BINARY[5]<10>')), DECODED.subarray(10, 20));
      assert.deepEqual(str(fetched(await c.command('FETCH 1 (BINARY.PEEK[5])'), 'BINARY[5]')), DECODED);
      assert.deepEqual(str(fetched(await c.command('FETCH 1 (BINARY.PEEK[6])'), 'BINARY[6]')), QP_DECODED);
      // BODY[...] partials that cut through a line end.
      assert.deepEqual(str(fetched(await c.command('FETCH 1 (BODY.PEEK[1]<5.8>)'), 'BODY[1]<5>')), Buffer.from(' line\r\ns'));
      assert.deepEqual(str(fetched(await c.command('FETCH 1 (BODY.PEEK[1]<10.1>)'), 'BODY[1]<10>')), Buffer.from('\r'));
      // ENVELOPE with 8-bit header text (not quoted before UTF8=ACCEPT), BODYSTRUCTURE, PREVIEW.
      const envelope = fetched(await c.command('FETCH 1 (ENVELOPE)'), 'ENVELOPE');
      assert.equal(envelope?.t, 'list');
      assert.match(str((envelope as { v: Value[] }).v[1]).toString('latin1'), /^caf[\x80-\xff]+ au lait$/);
      assert.equal(fetched(await c.command('FETCH 1 (BODYSTRUCTURE)'), 'BODYSTRUCTURE')?.t, 'list');
      assert.equal(str(fetched(await c.command('FETCH 1 (PREVIEW)'), 'PREVIEW')).toString(), 'first line second line');

      // METADATA values with line breaks (RFC 5464 §5 value = nstring / literal8).
      const meta = await c.command('GETMETADATA INBOX (/private/comment /shared/x)');
      assert.equal(meta.tagged.type, 'OK');
      assert.match(meta.untagged[0]!.response.text, /^\* METADATA "INBOX" \(\/private\/comment \{18\}\r\n \/shared\/x \{3\}\r\n\)$/);
      assert.deepEqual(meta.untagged[0]!.response.literals.map((l) => l.toString('latin1')), ['line one\r\nline two', 'a\nb']);

      // URLFETCH (RFC 4467, URLAUTH=BINARY RFC 5524) of the part: a literal of its data, BINARY decoded.
      const gen = await c.command('GENURLAUTH "imap://testuser@example.com/INBOX/;uid=1/;section=5;urlauth=user+testuser" INTERNAL');
      const url = /^\* GENURLAUTH "([^"]+)"$/.exec(gen.untagged[0]!.response.text)?.[1];
      assert.ok(url, gen.untagged[0]?.response.text);
      const plain = await c.command(`URLFETCH "${url}"`);
      assert.equal(plain.tagged.type, 'OK');
      assert.deepEqual(plain.untagged[0]!.response.literals, [Buffer.from(DECODED.toString('base64'))]);
      const binary = await c.command(`URLFETCH ("${url}" BINARY)`);
      assert.equal(binary.tagged.type, 'OK');
      assert.deepEqual(binary.untagged[0]!.response.literals, [DECODED]);

      // A script rule's `mutate` that sets a string with CR LF: the serializer makes it a literal.
      server.script.add({ on: 'response', untagged: 'FETCH', mutate: [{ set: 'BODY[2]', value: 'set\r\nby a rule' }] });
      try {
        assert.deepEqual(str(fetched(await c.command('FETCH 1 (BODY.PEEK[2])'), 'BODY[2]')), Buffer.from('set\r\nby a rule'));
      } finally {
        server.script.clear();
      }

      // After ENABLE UTF8=ACCEPT, UTF-8 may be quoted (RFC 6855 §3) and the strict reader allows it; CR and LF still may not.
      // ENABLE belongs to the authenticated state (RFC 6855 §3).
      assert.equal((await c.command('CLOSE')).tagged.type, 'OK');
      const enabled = await c.command('ENABLE UTF8=ACCEPT');
      assert.equal(enabled.untagged[0]?.response.text, '* ENABLED UTF8=ACCEPT');
      assert.equal((await c.command('SELECT INBOX')).tagged.type, 'OK');
      assert.equal((await c.command('FETCH 1 (ENVELOPE BINARY.PEEK[5]<10.10>)')).tagged.type, 'OK');
      const created = await c.command('CREATE "Entw\u00fcrfe"');
      assert.equal(created.tagged.type, 'OK', created.tagged.response.text);
      const list = await c.command('LIST "" "Entw*"');
      assert.equal(list.untagged.length, 1);
      assert.match(list.untagged[0]!.response.text, /^\* LIST \(.*\) "\/" "Entw\xc3\xbcrfe"$/, 'the UTF-8 name quoted, and the strict reader took it');
      await c.logout();
    } finally {
      c.close();
    }
    assert.deepEqual(mismatches, []);
  });

  test('the strict reader reports a quoted string with CR LF as malformed (it would catch a regression)', async () => {
    const mismatches: Mismatch[] = [];
    const c = await StrictClient.connect(port, 'r', (m) => mismatches.push(m));
    try {
      await c.command('LOGIN testuser testpass');
      await c.command('SELECT INBOX');
      // A rule that writes the broken answer on purpose (`quoted` keeps CR and LF).
      server.script.add({ on: 'response', untagged: 'FETCH', mutate: [{ quoted: 'BINARY[5]<10>' }] });
      try {
        // "jkl" CRLF "m": quoted, the response ends inside the string and its rest is a line of its own.
        const r = await c.command('FETCH 1 (BINARY.PEEK[5]<10.6>)');
        assert.equal(r.tagged.type, 'OK');
      } finally {
        server.script.clear();
      }
    } finally {
      c.close();
    }
    assert.ok(
      mismatches.some((m) => /^malformed response: quoted string not closed before CRLF/.test(m.problem)),
      JSON.stringify(mismatches),
    );
  });
});

test('a raw client sees a literal where a METADATA value or a BINARY partial holds a line break', async () => {
  const { server, port } = await startServer({ plugins: ['BINARY', 'METADATA', 'LITERAL+'], storage: { INBOX: { messages: [{ raw: MESSAGE.toString('latin1') }] } } });
  try {
    const c: RawClient = await rawSession(port);
    assert.match((await c.command('SETMETADATA INBOX (/private/comment {9+}\r\nline\r\ntwo)')).at(-1)!, /OK/);
    assert.deepEqual((await c.command('GETMETADATA INBOX /private/comment'))[0], '* METADATA "INBOX" (/private/comment {9}\r\nline\r\ntwo)');
    await c.command('SELECT INBOX');
    assert.deepEqual((await c.command('FETCH 1 (BINARY.PEEK[5]<13.3>)'))[0], '* 1 FETCH (BINARY[5]<13> {3}\r\n\r\nm)');
    c.close();
  } finally {
    await server.stop();
  }
});

/**
 * URLAUTH=BINARY (RFC 5524) over real sockets: the extended URLFETCH
 * argument `(url [BODYPARTSTRUCTURE] [BINARY | BODY])`. Expectations come
 * from the RFC's rules and from the other commands' own answers, not from
 * URLFETCH's: BINARY is the part with its transfer encoding removed (the
 * bytes the test encoded itself), BODYPARTSTRUCTURE is the part's entry in
 * FETCH BODYSTRUCTURE, BODY is what the plain URLFETCH sends.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawClient } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';
import { ResponseSplitter, parseResponse } from '../fuzz/response-check.js';

const users = { joe: { password: 'joepass' }, submit: { password: 'submitpass' } };

/** Bytes with a NUL and 8-bit octets: BINARY must send them as a literal8. */
const BLOB = Buffer.from([0x47, 0x49, 0x46, 0x00, 0xff, 0x10, 0x0d, 0x0a, 0x80, 0x41]);
const TEXT = 'Si vis pacem, para bellum.\r\n';
const qp = 'Caf=C3=A9 cr=C3=A8me\r\n';
const MESSAGE =
  'From: joe@example.com\r\nSubject: parts\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n' +
  `--b\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n${TEXT}` +
  `--b\r\nContent-Type: image/gif\r\nContent-Transfer-Encoding: base64\r\n\r\n${BLOB.toString('base64')}\r\n` +
  `--b\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${qp}` +
  '--b\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\nbegin 644 x\r\nend\r\n--b--\r\n';

async function login(port: number, user: keyof typeof users): Promise<RawClient> {
  const c = await RawClient.connect(port);
  await c.line();
  const lines = await c.command(`LOGIN ${user} ${users[user].password}`);
  assert.match(lines[lines.length - 1]!, /OK/);
  return c;
}

async function start() {
  return startServer({
    plugins: 'all',
    users,
    pluginOptions: { URLAUTH: { submitUsers: ['submit'] } },
    storage: { INBOX: { messages: [{ raw: MESSAGE }] } },
  });
}

/** joe signs `imap://joe@example.com/INBOX/;uid=1<rest>;urlauth=submit+joe`. */
async function sign(joe: RawClient, rest: string): Promise<string> {
  const lines = await joe.command(`GENURLAUTH "imap://joe@example.com/INBOX/;uid=1${rest};urlauth=submit+joe" INTERNAL`);
  const m = /^\* GENURLAUTH "([^"]+)"$/.exec(lines[0]!);
  assert.ok(m, lines.join('\n'));
  return m[1]!;
}

/**
 * The one untagged URLFETCH line of a command and its tagged status; every
 * response must pass the fuzzer's grammar check (RFC 4467 §9, RFC 5524 §5).
 */
async function urlfetch(c: RawClient, args: string): Promise<{ data: string; status: string }> {
  const lines = await c.command(`URLFETCH ${args}`);
  new ResponseSplitter().push(Buffer.from(lines.map((l) => `${l}\r\n`).join(''), 'latin1'), (r) => void parseResponse(r));
  return { data: lines.slice(0, -1).join('\n'), status: lines[lines.length - 1]!.replace(/^T\d+ /, '') };
}

test('URLAUTH=BINARY is advertised beside URLAUTH', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    const caps = (await joe.command('CAPABILITY'))[0]!.split(' ');
    assert.ok(caps.includes('URLAUTH') && caps.includes('URLAUTH=BINARY'), caps.join(' '));
    joe.close();
  } finally {
    await server.stop();
  }
});

test('BINARY removes the transfer encoding; bytes with a NUL come as a literal8, others as a literal', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    const gif = await sign(joe, '/;section=2');
    const text = await sign(joe, '/;section=3');
    const submit = await login(port, 'submit');
    // The client reads the literal8 as raw bytes: compare them as latin1 text.
    const r = await urlfetch(submit, `("${gif}" BINARY)`);
    assert.equal(r.data, `* URLFETCH "${gif}" (BINARY ~{${BLOB.length}}\r\n${BLOB.toString('latin1')})`);
    assert.equal(r.status, 'OK URLFETCH completed');
    // The CRLF before the boundary belongs to the boundary (RFC 2046 §5.1.1), not to the part.
    const utf8 = Buffer.from('Café crème', 'utf8');
    const t = await urlfetch(submit, `("${text}" BINARY)`);
    assert.equal(t.data, `* URLFETCH "${text}" (BINARY {${utf8.length}}\r\n${utf8.toString('latin1')})`);
    submit.close();
    joe.close();
  } finally {
    await server.stop();
  }
});

test("BODYPARTSTRUCTURE is the part's entry in FETCH BODYSTRUCTURE; the whole message's for a URL without a section", async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    await joe.command('EXAMINE INBOX');
    const structure = (await joe.command('FETCH 1 BODYSTRUCTURE'))[0]!;
    const whole = /^\* 1 FETCH \(BODYSTRUCTURE (.*)\)$/.exec(structure)![1]!;
    // The second child of the multipart: the text between the first child's closing and the second's.
    const children = [...whole.matchAll(/\("(?:text|image|application)"[^()]*(?:\([^()]*\)[^()]*)*\)/gi)].map((m) => m[0]);
    assert.equal(children.length, 4, whole);
    const url = await sign(joe, '/;section=2');
    const message = await sign(joe, '');
    const submit = await login(port, 'submit');
    const r = await urlfetch(submit, `("${url}" BODYPARTSTRUCTURE)`);
    assert.equal(r.data, `* URLFETCH "${url}" (BODYPARTSTRUCTURE ${children[1]})`);
    const all = await urlfetch(submit, `("${message}" BODYPARTSTRUCTURE)`);
    assert.equal(all.data, `* URLFETCH "${message}" (BODYPARTSTRUCTURE ${whole})`);
    submit.close();
    joe.close();
  } finally {
    await server.stop();
  }
});

test('BODY (or no parameter) gives the plain URLFETCH bytes; both items come BODYPARTSTRUCTURE first; plain and list arguments mix', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    const url = await sign(joe, '/;section=1');
    const submit = await login(port, 'submit');
    const plain = await urlfetch(submit, `"${url}"`);
    const body = TEXT.slice(0, -2); // the CRLF before the boundary belongs to it (RFC 2046 §5.1.1)
    assert.equal(plain.data, `* URLFETCH "${url}" {${body.length}}\r\n${body}`);
    assert.equal((await urlfetch(submit, `("${url}" BODY)`)).data, `* URLFETCH "${url}" (BODY {${body.length}}\r\n${body})`);
    assert.equal((await urlfetch(submit, `("${url}")`)).data, `* URLFETCH "${url}" (BODY {${body.length}}\r\n${body})`);
    const both = await urlfetch(submit, `("${url}" BINARY BODYPARTSTRUCTURE) "${url}"`);
    assert.match(both.data, new RegExp(`^\\* URLFETCH "[^"]+" \\(BODYPARTSTRUCTURE \\("text" "plain" .*\\)\\) \\(BINARY \\{${body.length}\\}\\r\\n${body}\\) "[^"]+" \\{${body.length}\\}\\r\\n${body}$`));
    submit.close();
    joe.close();
  } finally {
    await server.stop();
  }
});

test(';PARTIAL= counts in the decoded bytes for BINARY', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    const url = await sign(joe, '/;section=2/;partial=3.4');
    const submit = await login(port, 'submit');
    const part = BLOB.subarray(3, 7);
    assert.equal((await urlfetch(submit, `("${url}" BINARY)`)).data, `* URLFETCH "${url}" (BINARY ~{4}\r\n${part.toString('latin1')})`);
    submit.close();
    joe.close();
  } finally {
    await server.stop();
  }
});

test('NIL, not an error, for what cannot be made: a wrong token, a MIME section; (BINARY NIL) for an unknown encoding', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    const good = await sign(joe, '/;section=2');
    const wrong = good.slice(0, -1) + (good.endsWith('0') ? '1' : '0');
    const mime = await sign(joe, '/;section=2.MIME');
    const uu = await sign(joe, '/;section=4');
    const submit = await login(port, 'submit');
    const r = await urlfetch(submit, `("${wrong}" BINARY) ("${mime}" BINARY) ("${mime}" BODYPARTSTRUCTURE) ("${uu}" BINARY)`);
    // RFC 5524 §3.2: BINARY "MAY contain NIL" when the encoding is unknown to the server; the URL itself is good.
    assert.equal(r.data, `* URLFETCH "${wrong}" NIL "${mime}" NIL "${mime}" NIL "${uu}" (BINARY NIL)`);
    assert.equal(r.status, 'OK URLFETCH completed');
    // The MIME header itself is still there for BODY, and the unknown encoding's bytes as stored.
    assert.match((await urlfetch(submit, `("${mime}" BODY)`)).data, /\(BODY \{\d+\}\r\nContent-Type: image\/gif/);
    assert.match((await urlfetch(submit, `("${uu}" BODY)`)).data, /\(BODY \{\d+\}\r\nbegin 644 x/);
    submit.close();
    joe.close();
  } finally {
    await server.stop();
  }
});

test('BAD for BODY with BINARY, an unknown parameter or an unclosed list; nothing is sent and the session goes on', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    const url = await sign(joe, '/;section=1');
    const submit = await login(port, 'submit');
    for (const args of [`("${url}" BODY BINARY)`, `"${url}" ("${url}" BINARY BODY)`, `("${url}" FOO)`, `("${url}" BINARY`]) {
      const lines = await submit.command(`URLFETCH ${args}`);
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(lines[0]!, /^T\d+ BAD /);
    }
    assert.match((await urlfetch(submit, `("${url}" BINARY BINARY)`)).status, /^OK/);
    assert.match((await submit.command('NOOP'))[0]!, /^T\d+ OK/);
    submit.close();
    joe.close();
  } finally {
    await server.stop();
  }
});

/** The entry of part `n` (1-based) in a multipart BODYSTRUCTURE answer: its n-th top-level list. */
function childOf(structure: string, n: number): string {
  let depth = 0;
  let start = -1;
  let seen = 0;
  let quoted = false;
  for (let i = 0; i < structure.length; i++) {
    const ch = structure[i];
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
      continue;
    }
    if (ch === '"') quoted = true;
    else if (ch === '(') {
      if (depth === 1) start = i;
      depth++;
    } else if (ch === ')') {
      depth--;
      if (depth === 1 && ++seen === n) return structure.slice(start, i + 1);
    }
  }
  throw new Error(`no part ${n} in ${structure}`);
}

test('RFC 5524 §3.2 and §5: BINARY with BODYPARTSTRUCTURE describes the decoded data (identity encoding, decoded size and lines), each metadata element in its own parentheses, the data a literal', async () => {
  // issue 29: a base64 text part of 11 decoded octets; a base64 image with NUL; a QP text part
  const eleven = 'hello world';
  const raw =
    'From: joe@example.com\r\nSubject: bps\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n' +
    `--b\r\nContent-Type: text/plain; charset=us-ascii\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from(eleven).toString('base64')}\r\n` +
    `--b\r\nContent-Type: image/gif\r\nContent-Transfer-Encoding: base64\r\n\r\n${BLOB.toString('base64')}\r\n` +
    `--b\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${qp}` +
    '--b--\r\n';
  const { server, port } = await startServer({
    plugins: 'all',
    users,
    pluginOptions: { URLAUTH: { submitUsers: ['submit'] } },
    storage: { INBOX: { messages: [{ raw }] } },
  });
  try {
    const joe = await login(port, 'joe');
    await joe.command('EXAMINE INBOX');
    const whole = /^\* 1 FETCH \(BODYSTRUCTURE (.*)\)$/.exec((await joe.command('FETCH 1 BODYSTRUCTURE'))[0]!)![1]!;
    const [text, gif, qpText] = [1, 2, 3].map((n) => childOf(whole, n));
    const urls: string[] = [];
    for (const section of ['/;section=1', '/;section=2', '/;section=3', '']) urls.push(await sign(joe, section));
    const submit = await login(port, 'submit');

    // The text part: "base64" and its encoded size/lines in FETCH BODYSTRUCTURE, "binary" 11 0 with BINARY.
    assert.match(text, /"base64" 16 0 /);
    const decodedText = text.replace('"base64" 16 0 ', '"binary" 11 0 ');
    const r1 = await urlfetch(submit, `("${urls[0]}" BINARY BODYPARTSTRUCTURE)`);
    assert.equal(r1.data, `* URLFETCH "${urls[0]}" (BODYPARTSTRUCTURE ${decodedText}) (BINARY {11}\r\n${eleven})`);
    // A part holding NUL: literal8 (§3.1 MUST); a non-text part has no line count.
    const r2 = await urlfetch(submit, `("${urls[1]}" BODYPARTSTRUCTURE BINARY)`);
    const decodedGif = gif.replace(`"base64" ${BLOB.toString('base64').length} `, `"binary" ${BLOB.length} `);
    assert.notEqual(decodedGif, gif);
    assert.equal(r2.data, `* URLFETCH "${urls[1]}" (BODYPARTSTRUCTURE ${decodedGif}) (BINARY ~{${BLOB.length}}\r\n${BLOB.toString('latin1')})`);
    // Quoted-printable: decoded to 13 octets without a line break (the CRLF before the boundary is the boundary's).
    const utf8 = Buffer.from('Café crème', 'utf8');
    const r3 = await urlfetch(submit, `("${urls[2]}" BODYPARTSTRUCTURE BINARY)`);
    assert.equal(r3.data, `* URLFETCH "${urls[2]}" (BODYPARTSTRUCTURE ${qpText.replace(/"quoted-printable" \d+ \d+ /, `"binary" ${utf8.length} 0 `)}) (BINARY {${utf8.length}}\r\n${utf8.toString('latin1')})`);
    // Without BINARY the structure is the part as stored (§4: "BODYPARTSTRUCTURE BODY" shows "BASE64" 164).
    assert.equal((await urlfetch(submit, `("${urls[0]}" BODYPARTSTRUCTURE BODY)`)).data.split('\r\n')[0], `* URLFETCH "${urls[0]}" (BODYPARTSTRUCTURE ${text}) (BODY {16}`);
    assert.equal((await urlfetch(submit, `("${urls[0]}" BODYPARTSTRUCTURE)`)).data, `* URLFETCH "${urls[0]}" (BODYPARTSTRUCTURE ${text})`);

    // The whole message with BINARY: every part described decoded, sizes as FETCH BINARY.SIZE gives them.
    const sizes = /BINARY\.SIZE\[1\] (\d+) BINARY\.SIZE\[2\] (\d+) BINARY\.SIZE\[3\] (\d+)/.exec((await joe.command('FETCH 1 (BINARY.SIZE[1] BINARY.SIZE[2] BINARY.SIZE[3])'))[0]!)!;
    const all = await urlfetch(submit, `("${urls[3]}" BODYPARTSTRUCTURE BINARY)`);
    const m = /^\* URLFETCH "[^"]+" \(BODYPARTSTRUCTURE (.*)\) \(BINARY ~\{(\d+)\}\r\n/s.exec(all.data);
    assert.ok(m, all.data.slice(0, 300));
    const described = m[1]!;
    assert.match(childOf(described, 1), new RegExp(`"binary" ${sizes[1]} 0 `));
    assert.match(childOf(described, 2), new RegExp(`"binary" ${sizes[2]} `));
    assert.match(childOf(described, 3), new RegExp(`"binary" ${sizes[3]} 0 `));
    const binarySize = /BINARY\.SIZE\[\] (\d+)/.exec((await joe.command('FETCH 1 BINARY.SIZE[]'))[0]!)![1];
    assert.equal(m[2], binarySize);
    submit.close();
    joe.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5524 §4: a part that cannot be decoded gets its BODYPARTSTRUCTURE as it is and (BINARY NIL); a part that does not exist is NIL', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    await joe.command('EXAMINE INBOX');
    const whole = /^\* 1 FETCH \(BODYSTRUCTURE (.*)\)$/.exec((await joe.command('FETCH 1 BODYSTRUCTURE'))[0]!)![1]!;
    const uuStructure = childOf(whole, 4);
    assert.match(uuStructure, /"x-uuencode"/);
    const uu = await sign(joe, '/;section=4');
    const missing = await sign(joe, '/;section=200');
    const submit = await login(port, 'submit');
    assert.equal((await urlfetch(submit, `("${uu}" BODYPARTSTRUCTURE BINARY)`)).data, `* URLFETCH "${uu}" (BODYPARTSTRUCTURE ${uuStructure}) (BINARY NIL)`);
    assert.equal((await urlfetch(submit, `("${missing}" BODYPARTSTRUCTURE BODY)`)).data, `* URLFETCH "${missing}" NIL`);
    submit.close();
    joe.close();
  } finally {
    await server.stop();
  }
});

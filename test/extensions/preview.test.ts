/**
 * PREVIEW (RFC 8970) over real sockets: the capability, the FETCH item and
 * its LAZY modifier (shapes of the RFC's §4 examples), and the preview
 * rules: at most 256 characters (not octets, never a cut UTF-8 sequence),
 * the text/plain alternative chosen, HTML made plain, transfer encoding and
 * charset decoded, whitespace collapsed, "" for a message without text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RawClient } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

async function withMessages(messages: string[], plugins = ['PREVIEW'], run: (c: RawClient) => Promise<void>): Promise<void> {
  const { server, port } = await startServer({ plugins });
  for (const raw of messages) server.control.addMessage('INBOX', { raw });
  const c = await rawSession(port);
  try {
    await c.command('SELECT INBOX');
    await run(c);
  } finally {
    c.close();
    await server.stop();
  }
}

/** The PREVIEW value of one FETCH line: a quoted string or a literal, read as UTF-8; null for NIL. */
function previewIn(line: string): string | null {
  const bytes = Buffer.from(line, 'latin1').toString('utf8');
  const literal = /PREVIEW \{(\d+)\}\r\n/.exec(line);
  if (literal) {
    const start = line.indexOf('}\r\n', literal.index) + 3;
    return Buffer.from(line.slice(start, start + Number(literal[1])), 'latin1').toString('utf8');
  }
  if (/PREVIEW NIL/.test(bytes)) return null;
  const quoted = /PREVIEW "((?:[^"\\]|\\.)*)"/.exec(bytes);
  assert.ok(quoted, `no PREVIEW in ${line}`);
  return quoted[1]!.replace(/\\(.)/g, '$1');
}

const previewOf = async (c: RawClient, seq: number, item = 'PREVIEW'): Promise<string | null> => {
  const lines = await c.command(`FETCH ${seq} (${item})`);
  assert.match(lines.at(-1)!, /OK Fetch completed$/, lines.join('\n'));
  return previewIn(lines[0]!);
};

const mime = (headers: string, body: string): string => `From: a@example.com\r\nSubject: p\r\nMIME-Version: 1.0\r\n${headers}\r\n\r\n${body}`;

test('RFC 8970 §4: CAPABILITY lists PREVIEW; FETCH (RFC822.SIZE PREVIEW) answers the text; LAZY answers it too (never NIL here)', async () => {
  const body = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit.\r\nCurabitur aliquam turpis et ante dictum.\r\n';
  await withMessages([mail('lorem', body), mail('empty', '')], ['PREVIEW'], async (c) => {
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 PREVIEW', 'T3 OK Capability completed']);
    const lines = await c.command('FETCH 1 (RFC822.SIZE PREVIEW)');
    assert.match(lines[0]!, /^\* 1 FETCH \(RFC822\.SIZE \d+ PREVIEW "Lorem ipsum dolor sit amet, consectetur adipiscing elit\. Curabitur aliquam turpis et ante dictum\."\)$/);
    assert.equal(lines.at(-1), 'T4 OK Fetch completed');
    // The §4 LAZY example: each message answered with its preview ("" when it has no text).
    assert.deepEqual(await c.command('FETCH 1:2 (PREVIEW (LAZY))'), [
      '* 1 FETCH (PREVIEW "Lorem ipsum dolor sit amet, consectetur adipiscing elit. Curabitur aliquam turpis et ante dictum.")',
      '* 2 FETCH (PREVIEW "")',
      'T5 OK Fetch completed',
    ]);
    assert.equal(await previewOf(c, 1, 'preview (lazy lazy)'), await previewOf(c, 1));
  });
});

test('PREVIEW is a FETCH item only: no \\Seen, no SEARCH key, BAD for unknown modifiers, and not offered without the plugin', async () => {
  await withMessages([mail('one', 'text')], ['PREVIEW', 'CONDSTORE'], async (c) => {
    await c.command('FETCH 1 PREVIEW');
    assert.doesNotMatch((await c.command('FETCH 1 FLAGS'))[0]!, /\\Seen/);
    assert.match((await c.command('SEARCH PREVIEW "text"')).at(-1)!, /^T5 BAD/);
    assert.match((await c.command('FETCH 1 (PREVIEW (LAZY FAST))')).at(-1)!, /^T6 BAD Unknown PREVIEW modifier FAST/);
    assert.match((await c.command('FETCH 1 (PREVIEW (FAST))')).at(-1)!, /^T7 BAD/);
    assert.match((await c.command('FETCH 1 (PREVIEW (LAZY)')).at(-1)!, /^T8 BAD/);
    assert.match((await c.command('FETCH 1 PREVIEW[]')).at(-1)!, /^T9 BAD/);
    // A list after a lone PREVIEW that holds no preview modifier is the FETCH's modifiers (RFC 4466).
    const lines = await c.command('FETCH 1 PREVIEW (CHANGEDSINCE 0)');
    assert.match(lines[0]!, /^\* 1 FETCH \(PREVIEW "text" MODSEQ \(\d+\)\)$/);
    assert.equal(lines.at(-1), 'T10 OK Fetch completed');
  });
  await withMessages([mail('one', 'text')], [], async (c) => {
    assert.doesNotMatch((await c.command('CAPABILITY'))[0]!, /PREVIEW/);
    assert.match((await c.command('FETCH 1 PREVIEW')).at(-1)!, /^T4 BAD Unknown fetch attribute PREVIEW/);
  });
});

test('RFC 8970 §3.1: at most 256 characters, counted in characters (not octets), no UTF-8 sequence cut', async () => {
  const ascii = 'word '.repeat(80);
  const accented = 'é'.repeat(300);
  const emoji = '😀'.repeat(300);
  const messages = [
    mail('ascii', ascii),
    mime('Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit', accented),
    mime('Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64', Buffer.from(emoji).toString('base64')),
  ];
  await withMessages(messages, ['PREVIEW'], async (c) => {
    const one = (await previewOf(c, 1))!;
    assert.ok([...one].length <= 256);
    assert.equal(one, ascii.slice(0, 256).trimEnd());
    const two = (await previewOf(c, 2))!;
    assert.equal(two, 'é'.repeat(256));
    assert.equal(Buffer.byteLength(two), 512);
    const three = (await previewOf(c, 3))!;
    assert.equal([...three].length, 256);
    assert.equal(three, '😀'.repeat(256));
    assert.ok(!three.includes('\ufffd'));
  });
});

test('multipart/alternative gives the text/plain part; HTML alone is made plain; attachments and attached messages are skipped', async () => {
  const alternative = mime(
    'Content-Type: multipart/alternative; boundary=alt',
    '--alt\r\nContent-Type: text/html\r\n\r\n<p>HTML version</p>\r\n--alt\r\nContent-Type: text/plain\r\n\r\nPlain version\r\n--alt--\r\n',
  );
  const html = mime(
    'Content-Type: text/html; charset=utf-8',
    '<html><head><title>T</title><style>p { color: red }</style></head><body><!-- hidden --><script>var x = 1;</script>' +
      '<p>Dear&nbsp;Bob,</p><p>Fish &amp; chips &lt;3 &#x263A; &#233;t&eacute; &Eacute;T&Eacute;</p><div>bold<b>er</b></div></body></html>',
  );
  const mixed = mime(
    'Content-Type: multipart/mixed; boundary=m',
    '--m\r\nContent-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0=\r\n' +
      '--m\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=a.txt\r\n\r\nattached text\r\n' +
      '--m\r\nContent-Type: message/rfc822\r\n\r\nSubject: fwd\r\n\r\nforwarded text\r\n' +
      '--m\r\nContent-Type: multipart/alternative; boundary=n\r\n\r\n--n\r\nContent-Type: text/html\r\n\r\n<i>only</i> html\r\n--n--\r\n--m--\r\n',
  );
  const noText = mime('Content-Type: multipart/mixed; boundary=m', '--m\r\nContent-Type: image/gif\r\nContent-Transfer-Encoding: base64\r\n\r\nR0lGODlh\r\n--m--\r\n');
  await withMessages([alternative, html, mixed, noText], ['PREVIEW'], async (c) => {
    assert.equal(await previewOf(c, 1), 'Plain version');
    assert.equal(await previewOf(c, 2), 'Dear Bob, Fish & chips <3 ☺ été ÉTÉ bolder');
    assert.equal(await previewOf(c, 3), 'only html');
    assert.equal(await previewOf(c, 4), '');
  });
});

test('transfer encoding and charset are decoded; whitespace runs collapse; an empty body gives ""', async () => {
  const messages = [
    mime('Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable', 'caf=E9 cr=E8me =\r\nbr=FBl=E9e'),
    mime('Content-Type: text/plain; charset=koi8-r\r\nContent-Transfer-Encoding: base64', Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]).toString('base64')),
    mime('Content-Type: text/plain', '   first\r\n\r\n\r\n\tsecond   third\r\n   \r\n'),
    mime('Content-Type: text/plain', ''),
    'Subject: no body at all\r\n',
  ];
  await withMessages(messages, ['PREVIEW'], async (c) => {
    assert.equal(await previewOf(c, 1), 'café crème brûlée');
    assert.equal(await previewOf(c, 2), 'Привет');
    assert.equal(await previewOf(c, 3), 'first second third');
    assert.equal(await previewOf(c, 4), '');
    assert.equal(await previewOf(c, 5), '');
  });
});

/**
 * UTF8=ACCEPT (RFC 6855) over real sockets: the capability and ENABLE
 * (§3, authenticated state only), UTF-8 quoted strings and mailbox names
 * once enabled while other sessions keep seeing modified UTF-7, BAD for
 * malformed UTF-8 and forbidden characters (§3), BAD for SEARCH CHARSET
 * after ENABLE (§3), the APPEND `UTF8 (literal8)` data form and NO for an
 * 8-bit header without ENABLE (§4). Then imapflow, which enables
 * UTF8=ACCEPT when offered and lists a non-ASCII mailbox by its name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ImapFlow } from 'imapflow';
import { encodeMutf7 } from '../../src/store/mutf7.js';
import type { RawClient } from '../helpers/raw-client.js';
import { collect, rawSession, startServer } from '../helpers/server.js';

const PLUGINS = ['UTF8=ACCEPT', 'ENABLE', 'UNSELECT', 'UIDPLUS', 'LIST-STATUS', 'NAMESPACE'];
const storage = { INBOX: {}, '': { folders: { [encodeMutf7('Käse')]: {}, [encodeMutf7('日本語')]: { folders: { [encodeMutf7('Ünter')]: {} } } } } };

/** Sends raw bytes (UTF-8 or not) as one command line with this tag, returns the response lines (as UTF-8). */
async function send(c: RawClient, tag: string, bytes: Buffer | string): Promise<string[]> {
  c.write(Buffer.concat([Buffer.from(`${tag} `), typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes, Buffer.from('\r\n')]));
  return (await c.until(tag)).map((l) => Buffer.from(l, 'latin1').toString('utf8'));
}

test('RFC 6855 §3: UTF8=ACCEPT is advertised (UTF8=ONLY is not); ENABLE turns it on in the authenticated state only', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS, storage });
  try {
    const c = await rawSession(port);
    const caps = (await c.command('CAPABILITY'))[0]!;
    assert.match(caps, / UTF8=ACCEPT( |$)/);
    assert.doesNotMatch(caps, /UTF8=ONLY/);
    await c.command('SELECT INBOX');
    assert.deepEqual(await c.command('ENABLE UTF8=ACCEPT'), ['* ENABLED', 'T4 OK Enabled'], 'not in the selected state');
    assert.deepEqual(server.control.sessions()[0]!.enabled, []);
    await c.command('UNSELECT');
    assert.deepEqual(await c.command('enable utf8=accept'), ['* ENABLED UTF8=ACCEPT', 'T6 OK Enabled']);
    assert.deepEqual(await c.command('ENABLE UTF8=ACCEPT'), ['* ENABLED', 'T7 OK Enabled'], 'already enabled: not listed again (RFC 5161)');
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 6855 §3: after ENABLE mailbox names are UTF-8 in LIST, STATUS, NAMESPACE and in arguments; a session that did not enable sees modified UTF-7 as before', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS, storage });
  try {
    const legacy = await rawSession(port);
    const c = await rawSession(port);
    const before = await legacy.command('LIST "" *');
    // Listed in the order of the stored (modified UTF-7) names, for both kinds of session.
    assert.deepEqual(before.slice(0, -1), [
      `* LIST () "/" "&ZeVnLIqe-"`,
      `* LIST () "/" "&ZeVnLIqe-/&ANw-nter"`,
      '* LIST () "/" "INBOX"',
      `* LIST () "/" "K&AOQ-se"`,
    ]);
    // 8-bit in a quoted string is BAD before ENABLE.
    assert.match((await send(legacy, 'L1', 'SELECT "Käse"'))[0]!, /^L1 BAD/);

    await c.command('ENABLE UTF8=ACCEPT');
    const list = await send(c, 'U1', 'LIST "" *');
    assert.deepEqual(list.slice(0, -1), ['* LIST () "/" "日本語"', '* LIST () "/" "日本語/Ünter"', '* LIST () "/" "INBOX"', '* LIST () "/" "Käse"']);
    assert.deepEqual((await send(c, 'U2', 'LIST "" "日本語/%"')).slice(0, -1), ['* LIST () "/" "日本語/Ünter"']);
    assert.deepEqual((await send(c, 'U3', 'LIST "日本語/" "Ü*"')).slice(0, -1), ['* LIST () "/" "日本語/Ünter"']);
    assert.deepEqual((await send(c, 'U4', 'LIST "" "*e"')).slice(0, -1), ['* LIST () "/" "Käse"']);
    assert.deepEqual((await send(c, 'U5', 'LIST "" "K&AOQ-se"')).slice(0, -1), [], 'a UTF-8 session never names mailboxes in modified UTF-7');
    assert.deepEqual((await send(c, 'U6', 'STATUS "Käse" (MESSAGES)'))[0], '* STATUS "Käse" (MESSAGES 0)');
    assert.deepEqual((await send(c, 'U7', 'LIST "" "K*" RETURN (STATUS (UIDNEXT))')).slice(0, -1), ['* LIST () "/" "Käse"', '* STATUS "Käse" (UIDNEXT 1)']);
    assert.match((await send(c, 'U8', 'CREATE "Grüße/Straße"')).at(-1)!, /^U8 OK/);
    assert.match((await send(c, 'U9', 'SELECT "Grüße/Straße"')).at(-1)!, /^U9 OK/);
    // A literal carries UTF-8 too.
    const name = Buffer.from('日本語');
    c.write(Buffer.concat([Buffer.from(`U10 STATUS {${name.length}+}\r\n`), name, Buffer.from(' (MESSAGES)\r\n')]));
    assert.deepEqual((await c.until('U10')).map((l) => Buffer.from(l, 'latin1').toString('utf8'))[0], '* STATUS "日本語" (MESSAGES 0)');
    // The store keeps modified UTF-7: the legacy session sees the new mailboxes in that form.
    assert.deepEqual((await legacy.command('LIST "" "Gr*"')).slice(0, -1), [
      `* LIST () "/" "${encodeMutf7('Grüße')}"`,
      `* LIST () "/" "${encodeMutf7('Grüße/Straße')}"`,
    ]);
    assert.ok(server.store.has(encodeMutf7('Grüße/Straße')));
    // An ampersand is an ampersand in UTF-8 names.
    assert.match((await send(c, 'U11', 'CREATE "R&D"')).at(-1)!, /^U11 OK/);
    assert.deepEqual((await legacy.command('LIST "" R*')).slice(0, -1), ['* LIST () "/" "R&-D"']);
    assert.deepEqual((await send(c, 'U12', 'LIST "" R*')).slice(0, -1), ['* LIST () "/" "R&D"']);
    assert.deepEqual((await send(c, 'U13', 'NAMESPACE'))[0], '* NAMESPACE (("" "/")) NIL NIL');
    legacy.close();
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 6855 §3: malformed UTF-8 and forbidden characters in names are BAD; SEARCH with CHARSET is BAD; UTF-8 search strings work', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS, storage });
  try {
    server.control.addMessage('INBOX', { raw: 'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=\r\n\r\nhello\r\n' });
    server.control.addMessage('INBOX', { raw: 'Subject: other\r\n\r\nbye\r\n' });
    const c = await rawSession(port);
    await c.command('ENABLE UTF8=ACCEPT');
    assert.match((await send(c, 'B1', Buffer.from('CREATE "bad\xff\xfename"', 'latin1')))[0]!, /^B1 BAD .*UTF-8/);
    assert.match((await send(c, 'B2', Buffer.from('CREATE "half\xc3"', 'latin1')))[0]!, /^B2 BAD/);
    assert.match((await send(c, 'B3', 'CREATE "line\u2028sep"'))[0]!, /^B3 BAD/);
    assert.match((await send(c, 'B4', 'CREATE "c1\u0085control"'))[0]!, /^B4 BAD/);
    assert.deepEqual(server.store.list().map((m) => m.path).filter((p) => !p.startsWith('&') && p !== 'INBOX' && !p.startsWith('K')), []);
    await c.command('SELECT INBOX');
    assert.match((await c.command('SEARCH CHARSET UTF-8 SUBJECT hello'))[0]!, /^T\d+ BAD/);
    assert.match((await c.command('SEARCH CHARSET US-ASCII ALL'))[0]!, /^T\d+ BAD/);
    assert.deepEqual((await send(c, 'S1', 'SEARCH SUBJECT "grüße"')).slice(0, 1), ['* SEARCH 1']);
    assert.match((await c.command('NOOP')).at(-1)!, /^T\d+ OK NOOP completed$/);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 6855 §4: APPEND takes UTF8 (literal8); without ENABLE an 8-bit header is NO (in any form), an 8-bit body is fine', async () => {
  const { server, port } = await startServer({ plugins: PLUGINS });
  try {
    const message = Buffer.from('From: Jörg <jörg@例え.jp>\r\nSubject: Grüße\r\n\r\nHallo\r\n');
    const legacy = await rawSession(port);
    legacy.write(Buffer.concat([Buffer.from(`A1 APPEND INBOX {${message.length}+}\r\n`), message, Buffer.from('\r\n')]));
    assert.match((await legacy.until('A1')).at(-1)!, /^A1 NO /);
    legacy.write(Buffer.concat([Buffer.from(`A2 APPEND INBOX UTF8 (~{${message.length}+}\r\n`), message, Buffer.from(')\r\n')]));
    assert.match((await legacy.until('A2')).at(-1)!, /^A2 NO /);
    const body8 = Buffer.from('Subject: plain\r\n\r\nGrüße im Text\r\n');
    legacy.write(Buffer.concat([Buffer.from(`A3 APPEND INBOX {${body8.length}+}\r\n`), body8, Buffer.from('\r\n')]));
    assert.match((await legacy.until('A3')).at(-1)!, /^A3 OK/);
    assert.equal(server.store.get('INBOX')!.messages.length, 1);

    const c = await rawSession(port);
    await c.command('ENABLE UTF8=ACCEPT');
    c.write(Buffer.concat([Buffer.from(`A4 APPEND INBOX (\\Seen) UTF8 (~{${message.length}+}\r\n`), message, Buffer.from(')\r\n')]));
    assert.match((await c.until('A4')).at(-1)!, /^A4 OK \[APPENDUID \d+ 2\]/);
    // A plain literal inside UTF8 ( ) is accepted too, and so is a plain literal after ENABLE.
    c.write(Buffer.concat([Buffer.from(`A5 APPEND INBOX utf8 ({${message.length}+}\r\n`), message, Buffer.from(')\r\n')]));
    assert.match((await c.until('A5')).at(-1)!, /^A5 OK/);
    c.write(Buffer.concat([Buffer.from(`A6 APPEND INBOX {${message.length}+}\r\n`), message, Buffer.from('\r\n')]));
    assert.match((await c.until('A6')).at(-1)!, /^A6 OK/);
    const stored = server.store.get('INBOX')!.messages;
    assert.equal(stored.length, 4);
    for (const m of stored.slice(1)) assert.ok(m.raw.equals(message));
    assert.deepEqual([...stored[1]!.flags], ['\\Seen']);
    // Malformed forms are BAD, and the session goes on.
    c.write(Buffer.concat([Buffer.from(`A7 APPEND INBOX UTF8 ~{${message.length}+}\r\n`), message, Buffer.from('\r\n')]));
    assert.match((await c.until('A7')).at(-1)!, /^A7 BAD/);
    c.write(Buffer.concat([Buffer.from(`A8 APPEND INBOX UTF8 (~{${message.length}+}\r\n`), message, Buffer.from('\r\n')]));
    assert.match((await c.until('A8')).at(-1)!, /^A8 BAD/);
    assert.deepEqual(await c.command('NOOP'), ['T3 OK NOOP completed']);
    legacy.close();
    c.close();
  } finally {
    await server.stop();
  }
});

test('imapflow enables UTF8=ACCEPT when offered and lists, creates and opens non-ASCII mailboxes by their names', { timeout: 20000 }, async () => {
  const { server, port } = await startServer({ plugins: PLUGINS, storage });
  const commands = collect(server, 'command');
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, disableAutoIdle: true });
  client.on('error', () => undefined);
  try {
    await client.connect();
    assert.ok(commands.some((e) => e.command === 'ENABLE' && e.status === 'OK'));
    assert.deepEqual(server.control.sessions()[0]!.enabled, ['UTF8=ACCEPT']);
    const paths = (await client.list()).map((m) => m.path).sort();
    assert.deepEqual(paths, ['INBOX', 'Käse', '日本語', '日本語/Ünter']);
    await client.mailboxCreate('Grüße');
    assert.ok(server.store.has(encodeMutf7('Grüße')));
    const opened = await client.mailboxOpen('日本語/Ünter');
    assert.equal(opened.path, '日本語/Ünter');
    await client.append('Grüße', Buffer.from('Subject: Grüße aus Köln\r\n\r\nHallo\r\n'));
    const status = await client.status('Grüße', { messages: true });
    assert.ok(status);
    assert.equal(status.messages, 1);
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

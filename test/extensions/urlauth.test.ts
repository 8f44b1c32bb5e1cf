/**
 * URLAUTH (RFC 4467) over real sockets: the RFC's GENURLAUTH/URLFETCH
 * example (joe signs a part for submit+fred, a submission server fetches
 * it), RESETKEY invalidating signed URLs, ;EXPIRE= against a pinned server
 * clock, access identifiers that do not admit the session, wrong tokens,
 * expunged messages (all NIL, not errors), and the BAD/NO answers of
 * GENURLAUTH and RESETKEY.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RawClient } from '../helpers/raw-client.js';
import { RawClient as Raw } from '../helpers/raw-client.js';
import { startServer } from '../helpers/server.js';

const users = { joe: { password: 'joepass' }, fred: { password: 'fredpass' }, submit: { password: 'submitpass' }, testuser: { password: 'testpass' } };

const PART2 = 'Chris, here is the report.\r\n';
const MESSAGE =
  'From: joe@example.com\r\nTo: chris@example.com\r\nSubject: report\r\nMIME-Version: 1.0\r\n' +
  'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nFirst part\r\n--b\r\n' +
  `Content-Type: text/plain\r\n\r\n${PART2}--b--\r\n`;

const NOW = Date.parse('2026-11-24T12:00:00Z');

async function login(port: number, user: string): Promise<RawClient> {
  const c = await Raw.connect(port);
  await c.line();
  const lines = await c.command(`LOGIN ${user} ${users[user as keyof typeof users].password}`);
  assert.match(lines[lines.length - 1]!, /OK/);
  return c;
}

async function start(now: () => number = () => NOW) {
  return startServer({
    plugins: 'all',
    users,
    now,
    pluginOptions: { URLAUTH: { submitUsers: ['submit'] } },
    storage: { INBOX: { messages: [{ raw: MESSAGE }, { raw: 'Subject: two\r\n\r\nsecond\r\n' }] } } as never,
  });
}

/** A command's lines, the tag read as `T` (a test counts no commands). */
async function run(c: RawClient, command: string): Promise<string[]> {
  return (await c.command(command)).map((l) => l.replace(/^T\d+ /, 'T '));
}

/** The URL GENURLAUTH answered, from `* GENURLAUTH "..."`. */
function signed(lines: string[]): string[] {
  const line = lines.find((l) => l.startsWith('* GENURLAUTH '));
  assert.ok(line, lines.join('\n'));
  return [...line.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
}

test('RFC 4467 example: joe signs a part for submit+fred; the submission server fetches it, others get NIL', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    assert.match((await run(joe, 'CAPABILITY'))[0]!, / URLAUTH( |$)/);
    const rump = 'imap://joe@example.com/INBOX/;uid=1/;section=2;urlauth=submit+fred';
    const gen = await run(joe, `GENURLAUTH "${rump}" INTERNAL`);
    assert.equal(gen[gen.length - 1], 'T OK GENURLAUTH completed');
    const [url] = signed(gen);
    assert.match(url!, /^imap:\/\/joe@example\.com\/INBOX\/;uid=1\/;section=2;urlauth=submit\+fred:INTERNAL:[0-9a-f]{40}$/);

    const submit = await login(port, 'submit');
    const fetched = await run(submit, `URLFETCH "${url}"`);
    assert.deepEqual(fetched, [`* URLFETCH "${url}" {${PART2.length - 2}}\r\n${PART2.slice(0, -2)}`, 'T OK URLFETCH completed']);
    // The part's body ends before the CRLF that belongs to the boundary (RFC 2046 §5.1.1).
    // fred himself is not a submission server: submit+fred admits only those.
    const fred = await login(port, 'fred');
    assert.deepEqual(await run(fred, `URLFETCH "${url}"`), [`* URLFETCH "${url}" NIL`, 'T OK URLFETCH completed']);
    // A wrong token (one digit changed) and a URL without URLAUTH: NIL, and the session goes on.
    const wrong = url!.slice(0, -1) + (url!.endsWith('0') ? '1' : '0');
    assert.deepEqual(await run(submit, `URLFETCH "${wrong}" "imap://joe@example.com/INBOX/;uid=1"`), [
      `* URLFETCH "${wrong}" NIL "imap://joe@example.com/INBOX/;uid=1" NIL`,
      'T OK URLFETCH completed',
    ]);
    // The token covers the whole rump: another section under the same token does not verify.
    const moved = url!.replace(';section=2', ';section=1');
    assert.deepEqual(await run(submit, `URLFETCH "${moved}"`), [`* URLFETCH "${moved}" NIL`, 'T OK URLFETCH completed']);
    joe.close();
    submit.close();
    fred.close();
  } finally {
    await server.stop();
  }
});

test('access identifiers: user+name, authuser, anonymous; several URLs in one GENURLAUTH', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    const gen = await run(joe, 
      'GENURLAUTH "imap://joe@example.com/INBOX/;UID=2;URLAUTH=user+fred" INTERNAL "imap://joe@example.com/INBOX/;UID=2;URLAUTH=authuser" internal "imap://joe@example.com/INBOX/;UID=2;URLAUTH=anonymous" INTERNAL',
    );
    const [forFred, anyUser, anyone] = signed(gen);
    assert.equal(signed(gen).length, 3);
    const fred = await login(port, 'fred');
    const other = await login(port, 'testuser');
    const body = (lines: string[]): string => lines.join('');
    assert.match(body(await run(fred, `URLFETCH "${forFred}"`)), /^\* URLFETCH "[^"]+" \{\d+\}\r\nSubject: two/);
    assert.deepEqual(await run(other, `URLFETCH "${forFred}"`), [`* URLFETCH "${forFred}" NIL`, 'T OK URLFETCH completed']);
    assert.match(body(await run(other, `URLFETCH "${anyUser}"`)), /\{\d+\}\r\nSubject: two/);
    assert.match(body(await run(other, `URLFETCH "${anyone}"`)), /\{\d+\}\r\nSubject: two/);
    // URLFETCH needs a logged-in session.
    const anon = await Raw.connect(port);
    await anon.line();
    assert.match((await run(anon, `URLFETCH "${anyone}"`))[0]!, /^T (BAD|NO)/);
    for (const c of [joe, fred, other, anon]) c.close();
  } finally {
    await server.stop();
  }
});

test('RESETKEY invalidates URLs signed before it (one mailbox, or all); a new key gives new tokens', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    const rump = 'imap://joe@example.com/INBOX/;UID=1;URLAUTH=authuser';
    const [first] = signed(await run(joe, `GENURLAUTH "${rump}" INTERNAL`));
    const [again] = signed(await run(joe, `GENURLAUTH "${rump}" INTERNAL`));
    assert.equal(first, again, 'one key per mailbox: the same rump signs the same');
    const fetchOk = async (c: RawClient, url: string): Promise<boolean> => !(await run(c, `URLFETCH "${url}"`))[0]!.endsWith('NIL');
    assert.equal(await fetchOk(joe, first!), true);
    assert.deepEqual(await run(joe, 'RESETKEY INBOX INTERNAL'), ['T OK [URLMECH INTERNAL] Key reset']);
    assert.equal(await fetchOk(joe, first!), false);
    const [second] = signed(await run(joe, `GENURLAUTH "${rump}" INTERNAL`));
    assert.notEqual(second, first);
    assert.equal(await fetchOk(joe, second!), true);
    assert.deepEqual(await run(joe, 'RESETKEY'), ['T OK All keys reset']);
    assert.equal(await fetchOk(joe, second!), false);
    // RESETKEY of a mailbox that does not exist, an unknown mechanism.
    assert.match((await run(joe, 'RESETKEY Nope'))[0]!, /^T NO \[NONEXISTENT\]/);
    assert.match((await run(joe, 'RESETKEY INBOX XSHA1'))[0]!, /^T NO /);
    // server.reset() drops every key.
    const [third] = signed(await run(joe, `GENURLAUTH "${rump}" INTERNAL`));
    server.control.reset();
    const c = await login(port, 'joe');
    assert.equal(await fetchOk(c, third!), false);
    joe.close();
    c.close();
  } finally {
    await server.stop();
  }
});

test(';EXPIRE= is checked against the server clock; an expunged message fetches NIL', async () => {
  let now = NOW;
  const { server, port } = await start(() => now);
  try {
    const joe = await login(port, 'joe');
    const [url] = signed(await run(joe, 'GENURLAUTH "imap://joe@example.com/INBOX/;UID=2;EXPIRE=2026-11-24T13:00:00Z;URLAUTH=authuser" INTERNAL'));
    assert.match((await run(joe, `URLFETCH "${url}"`))[0]!, /\{\d+\}\r\nSubject: two/);
    now = Date.parse('2026-11-24T13:00:00Z');
    assert.deepEqual(await run(joe, `URLFETCH "${url}"`), [`* URLFETCH "${url}" NIL`, 'T OK URLFETCH completed']);
    now = NOW;
    assert.match((await run(joe, `URLFETCH "${url}"`))[0]!, /\{\d+\}\r\nSubject: two/);
    // Changing the date in the URL breaks the token.
    const later = url!.replace('13:00:00Z', '23:00:00Z');
    assert.deepEqual(await run(joe, `URLFETCH "${later}"`), [`* URLFETCH "${later}" NIL`, 'T OK URLFETCH completed']);
    await run(joe, 'SELECT INBOX');
    await run(joe, 'STORE 2 +FLAGS (\\Deleted)');
    await run(joe, 'EXPUNGE');
    const lines = await run(joe, `URLFETCH "${url}"`);
    assert.deepEqual(lines, [`* URLFETCH "${url}" NIL`, 'T OK URLFETCH completed']);
    joe.close();
  } finally {
    await server.stop();
  }
});

test('GENURLAUTH: BAD for what is not a rump URL, NO for another user, mechanism or mailbox; the session goes on', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    const answer = async (args: string): Promise<string> => {
      const lines = await run(joe, `GENURLAUTH ${args}`);
      return lines[lines.length - 1]!.replace(/^T /, '');
    };
    assert.match(await answer('"imap://joe@example.com/INBOX/;UID=1" INTERNAL'), /^BAD /);
    assert.match(await answer('"imap://joe@example.com/INBOX/;UID=1;URLAUTH=authuser:internal:0123456789abcdef0123456789abcdef" INTERNAL'), /^BAD /);
    assert.match(await answer('"/INBOX/;UID=1;URLAUTH=authuser" INTERNAL'), /^BAD /);
    assert.match(await answer('"imap://joe@example.com/INBOX/;UID=1;URLAUTH=everyone" INTERNAL'), /^BAD /);
    assert.match(await answer('"imap://joe@example.com/INBOX/;UID=1;EXPIRE=tomorrow;URLAUTH=authuser" INTERNAL'), /^BAD /);
    assert.match(await answer('"imap://joe@example.com/INBOX/;UID=1;URLAUTH=authuser"'), /^BAD /);
    assert.match(await answer(''), /^BAD /);
    assert.match(await answer('"imap://fred@example.com/INBOX/;UID=1;URLAUTH=authuser" INTERNAL'), /^NO /);
    assert.match(await answer('"imap://joe@example.com/INBOX/;UID=1;URLAUTH=authuser" XSHA1'), /^NO /);
    assert.match(await answer('"imap://joe@example.com/Nope/;UID=1;URLAUTH=authuser" INTERNAL'), /^NO /);
    assert.match(await answer('"imap://joe@example.com/INBOX/;UID=1;URLAUTH=authuser" INTERNAL'), /^OK /);
    assert.match((await run(joe, 'URLFETCH'))[0]!, /^T BAD /);
    assert.match((await run(joe, 'NOOP'))[0]!, /^T OK/);
    joe.close();
  } finally {
    await server.stop();
  }
});

test('CATENATE with URLAUTH loaded: a URLAUTH-ed URL is read when its token verifies (even another user\'s), BADURL when not', async () => {
  const { server, port } = await start();
  try {
    const joe = await login(port, 'joe');
    const [url] = signed(await run(joe, 'GENURLAUTH "imap://joe@example.com/INBOX/;UID=1/;SECTION=2;URLAUTH=user+fred" INTERNAL'));
    const fred = await login(port, 'fred');
    assert.match((await run(fred, `APPEND INBOX CATENATE (URL "${url}")`)).at(-1)!, /^T OK /);
    assert.equal(Buffer.from(server.control.listMessages('INBOX', { raw: true }).at(-1)!.raw!, 'base64').toString(), PART2.slice(0, -2));
    const wrong = url!.slice(0, -1) + (url!.endsWith('0') ? '1' : '0');
    assert.match((await run(fred, `APPEND INBOX CATENATE (URL "${wrong}")`)).at(-1)!, /^T NO \[BADURL /);
    // Only fred is admitted by user+fred.
    const other = await login(port, 'testuser');
    assert.match((await run(other, `APPEND INBOX CATENATE (URL "${url}")`)).at(-1)!, /^T NO \[BADURL /);
    for (const c of [joe, fred, other]) c.close();
  } finally {
    await server.stop();
  }
});

test('a script rule matches the new command names (URLFETCH)', async () => {
  const { server, port } = await start();
  try {
    server.script.add({ on: 'command', command: 'URLFETCH', times: 1, send: '$TAG NO [UNAVAILABLE] Try again later\r\n' });
    const joe = await login(port, 'joe');
    assert.deepEqual(await run(joe, 'URLFETCH "imap://joe@example.com/INBOX/;UID=1;URLAUTH=authuser:INTERNAL:00"'), ['T NO [UNAVAILABLE] Try again later']);
    assert.match((await run(joe, 'URLFETCH "imap://joe@example.com/INBOX/;UID=1;URLAUTH=authuser:INTERNAL:00"')).at(-1)!, /^T OK /);
    joe.close();
  } finally {
    await server.stop();
  }
});

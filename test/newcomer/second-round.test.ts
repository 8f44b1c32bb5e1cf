/**
 * Issue 30: a new user's first hour, second round, over real sockets and a
 * real client. A rule written as the docs write it (`command: 'FETCH'`)
 * fires for the FETCH imapflow sends (`UID FETCH` whenever `{ uid: true }`
 * is passed); a server with the default options offers IDLE, so imapflow
 * idles and `waitUntil({ session, idling: true })` resolves; a wait the
 * loaded plugins can never satisfy fails at once and names the capability.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ImapFlow } from 'imapflow';
import { createServer, ServiceError, type Server, type ServerOptions } from '../../src/index.js';
import { exited, startCli } from '../helpers/cli.js';
import { mail, rawSession } from '../helpers/server.js';
import { request, startRest } from '../rest/helpers.js';

function flow(port: number): ImapFlow {
  return new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false, verifyOnly: false });
}

async function started(options: ServerOptions = {}): Promise<{ server: Server; port: number }> {
  const server = createServer({ port: 0, ...options });
  const { imap } = await server.start();
  return { server, port: imap.port };
}

test('a command: "FETCH" rule fires for imapflow\u2019s fetchOne with { uid: true } (a UID FETCH on the wire)', async () => {
  const { server, port } = await started({ storage: { INBOX: { messages: [mail('one'), mail('two')] } } });
  const client = flow(port);
  try {
    const wire: string[] = [];
    server.on('command', (e) => wire.push(e.command));
    // The README's and docs' way of writing it: a FETCH that fails once.
    const rule = server.script.add({ on: 'command', command: 'FETCH', times: 1, send: '$TAG NO [UNAVAILABLE] Try again\r\n' });
    await client.connect();
    await client.mailboxOpen('INBOX');
    await assert.rejects(client.fetchOne('2', { envelope: true }, { uid: true }), (err: Error & { responseText?: string }) => {
      assert.match(err.responseText ?? err.message, /Try again/);
      return true;
    });
    assert.equal(rule.hits, 1, 'the rule answered the UID FETCH');
    // The next one runs: times: 1.
    const message = await client.fetchOne('2', { envelope: true }, { uid: true });
    assert.ok(message);
    assert.equal(message.envelope?.subject, 'two');
    assert.ok(wire.includes('UID FETCH'), `imapflow sent ${wire.join(', ')}`);
    await client.logout();
  } finally {
    client.close();
    await server.stop();
  }
});

test('uid: false keeps a rule to the plain FETCH, uid: true to UID FETCH; command takes a list (raw socket)', async () => {
  const { server, port } = await started({ storage: { INBOX: { messages: [mail('one')] } } });
  try {
    server.script.add([
      { on: 'command', command: 'FETCH', uid: false, send: '$TAG NO plain only\r\n' },
      { on: 'command', command: 'FETCH', uid: true, send: '$TAG NO uid only\r\n' },
      { on: 'command', command: ['noop', 'CHECK'], send: '$TAG NO listed\r\n' },
    ]);
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    const send = async (tag: string, line: string): Promise<string> => {
      c.write(`${tag} ${line}\r\n`);
      return (await c.until(tag)).at(-1)!;
    };
    assert.equal(await send('F1', 'FETCH 1 (FLAGS)'), 'F1 NO plain only');
    assert.equal(await send('F2', 'UID FETCH 1 (FLAGS)'), 'F2 NO uid only');
    assert.equal(await send('N1', 'NOOP'), 'N1 NO listed');
    assert.equal(await send('N2', 'CHECK'), 'N2 NO listed');
    assert.match(await send('N3', 'UID SEARCH ALL'), /^N3 OK/);
    c.close();
    // Bad combinations are refused with the field named.
    assert.throws(() => server.script.add({ on: 'command', uid: true, send: 'x' }), /uid: needs command/);
    assert.throws(() => server.script.add({ on: 'command', command: 'UID FETCH', uid: false }), /uid: false contradicts command "UID FETCH"/);
    assert.throws(() => server.script.add({ on: 'command', command: 'LOGIN', uid: true }), /command: "LOGIN" has no UID form/);
    assert.throws(() => server.script.add({ on: 'command', command: ['FETCH', 'FECTH'] }), /command\[1\]: no command "FECTH".*did you mean "FETCH"/);
    assert.throws(() => server.script.add({ on: 'command', command: [] }), /command: expected a command name or a non-empty array of them/);
  } finally {
    await server.stop();
  }
});

test('the default server offers IDLE: imapflow idles and waitUntil({ session, idling: true }) resolves', async () => {
  const { server, port } = await started({ storage: { INBOX: { messages: [mail('one'), mail('two')] } } });
  const client = flow(port);
  try {
    await client.connect();
    assert.ok(client.capabilities.has('IDLE'), 'IDLE is advertised');
    await client.mailboxOpen('INBOX');
    const [session] = server.sessions.list();
    assert.ok(session);
    // What a test does to wait for pushes (imapflow also starts IDLE by itself after 15 s with nothing to do);
    // without IDLE offered it would poll with NOOP instead.
    const idling = client.idle();
    const found = await server.waitUntil({ session: session.id, idling: true }, { timeout: 5000 });
    assert.deepEqual(found, { session: session.id, idling: true });
    // A message arrives while it idles, as EXISTS at once.
    const exists = new Promise<number>((resolve) => client.on('exists', (e: { count: number }) => resolve(e.count)));
    server.control.addMessage('INBOX', { raw: mail('while idling') });
    assert.equal(await exists, 3);
    await client.logout();
    await idling;
  } finally {
    client.close();
    await server.stop();
  }
});

test('waitUntil idling on a server without IDLE fails at once and names the capability', async () => {
  const bare: ServerOptions[] = [{ plugins: [] }, { capabilities: { hide: ['IDLE'] } }];
  for (const options of bare) {
    const { server, port } = await started(options);
    try {
      const c = await rawSession(port);
      const [session] = server.sessions.list();
      const began = Date.now();
      await assert.rejects(server.waitUntil({ session: session!.id, idling: true }, { timeout: 10_000 }), (err: unknown) => {
        assert.ok(err instanceof ServiceError);
        assert.equal(err.code, 'CANNOT');
        assert.match(err.message, /can never be idling: .*IDLE/);
        return true;
      });
      assert.ok(Date.now() - began < 1000, 'no timeout');
      // Not idling is a state every server has.
      assert.deepEqual(await server.waitUntil({ session: session!.id, idling: false }), { session: session!.id, idling: false });
      c.close();
    } finally {
      await server.stop();
    }
  }
});

test('over REST: a rule with a command list and uid, its schema in the OpenAPI document; an empty list is 400 naming command', async () => {
  const r = await startRest();
  try {
    const added = await request(r.restPort, 'POST', '/v1/script/rules', { json: { on: 'command', command: ['FETCH', 'STORE'], uid: true, send: '$TAG NO [UNAVAILABLE] later\r\n' } });
    assert.equal(added.status, 201, added.text);
    assert.deepEqual(added.json.rule.command, ['FETCH', 'STORE']);
    const c = await rawSession(r.imapPort);
    await c.command('SELECT INBOX');
    c.write('U1 UID STORE 1:* +FLAGS (\\Seen)\r\n');
    assert.equal((await c.until('U1')).at(-1), 'U1 NO [UNAVAILABLE] later');
    c.write('S1 STORE 1:* +FLAGS (\\Seen)\r\n');
    assert.match((await c.until('S1')).at(-1)!, /^S1 OK /);
    c.close();
    const empty = await request(r.restPort, 'POST', '/v1/script/rules', { json: { on: 'command', command: [] } });
    assert.equal(empty.status, 400);
    assert.match(empty.json.error.message, /command: expected a command name or a non-empty array of them/);
    const doc = (await request(r.restPort, 'GET', '/v1/openapi.json')).json;
    const rule = doc.components.schemas.ScriptRule.properties;
    assert.equal(rule.uid.type, 'boolean');
    assert.deepEqual(rule.command.oneOf.map((s: { type: string }) => s.type), ['string', 'array']);
  } finally {
    await r.server.stop();
  }
});

test('the rookery command has the same default set; --plugin none is the bare IMAP4rev1 core', async () => {
  for (const [args, expected] of [
    [[], /^\* CAPABILITY IMAP4rev1 IDLE NAMESPACE UIDPLUS MOVE .*\bCONDSTORE\b.*\bESEARCH\b/],
    [['--plugin', 'none'], /^\* CAPABILITY IMAP4rev1$/],
  ] as const) {
    const { child, port } = await startCli(['--port', '0', ...args]);
    try {
      const c = await rawSession(port);
      assert.match((await c.command('CAPABILITY'))[0]!, expected);
      c.close();
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  }
});

test('over REST: waiting for idling=true without IDLE is 409 CANNOT at once, naming IDLE', async () => {
  const r = await startRest({ plugins: [] });
  try {
    const c = await rawSession(r.imapPort);
    const session = r.server.sessions.list()[0]!.id;
    const began = Date.now();
    const reply = await request(r.restPort, 'GET', `/v1/events/wait?session=${session}&idling=true&timeout=10000`);
    assert.equal(reply.status, 409, reply.text);
    assert.equal(reply.json.error.code, 'CANNOT');
    assert.match(reply.json.error.message, /can never be idling: no loaded plugin offers the IDLE capability/);
    assert.ok(Date.now() - began < 2000);
    c.close();
  } finally {
    await r.server.stop();
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ImapFlow } from 'imapflow';
import type { ScriptEvent, ServerOptions } from '../../src/index.js';
import { collect, mail, rawSession, startServer } from '../helpers/server.js';
import { RawClient } from '../helpers/raw-client.js';

function flow(port: number, pass = 'testpass'): ImapFlow {
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass }, logger: false, disableAutoIdle: true });
  client.on('error', () => undefined);
  return client;
}

const STORAGE: ServerOptions['storage'] = { INBOX: { messages: [mail('One', 'x'.repeat(200)), mail('Two')] } };

test('imapflow parses responses chunked into 1-byte pieces with chunkDelay "tick"', { timeout: 20000 }, async () => {
  const { server, port } = await startServer({ storage: STORAGE });
  try {
    server.script.add([
      { on: 'greeting', chunk: 1, chunkDelay: 'tick' },
      { on: 'command', command: 'UID FETCH', chunk: 1, chunkDelay: 'tick' },
      { on: 'command', command: 'FETCH', chunk: 1, chunkDelay: 'tick' },
    ]);
    const client = flow(port);
    await client.connect();
    await client.mailboxOpen('INBOX');
    const subjects: string[] = [];
    for await (const msg of client.fetch('1:*', { envelope: true, source: true })) subjects.push(msg.envelope!.subject!);
    assert.deepEqual(subjects, ['One', 'Two']);
    await client.logout();
    assert.ok(server.script.rules[0]!.hits === 1);
    assert.ok(server.script.rules[1]!.hits + server.script.rules[2]!.hits >= 1);
  } finally {
    await server.stop();
  }
});

test('a scripted NO to the first LOGIN, normal behaviour after times: 1; script events and no command event', { timeout: 15000 }, async () => {
  // The bare core: without AUTH=PLAIN imapflow logs in with LOGIN.
  const { server, port } = await startServer({ plugins: [] });
  try {
    const handle = server.script.add({ on: 'command', command: 'LOGIN', times: 1, send: '$TAG NO [UNAVAILABLE] Try again later\r\n' });
    const scripts = collect(server, 'script');
    const commands = collect(server, 'command');
    const first = flow(port);
    await assert.rejects(first.connect());
    first.close();
    const second = flow(port);
    await second.connect();
    assert.ok(second.authenticated);
    await second.logout();
    assert.equal(handle.matched, 2);
    assert.equal(handle.hits, 1);
    assert.equal(scripts.length, 1);
    assert.equal(scripts[0]!.event, 'command');
    assert.equal(scripts[0]!.command, 'LOGIN');
    assert.equal(typeof scripts[0]!.tag, 'string');
    assert.equal(scripts[0]!.rule.send, '$TAG NO [UNAVAILABLE] Try again later\r\n');
    const logins = commands.filter((c) => c.command === 'LOGIN');
    assert.equal(logins.length, 1);
    assert.equal(logins[0]!.status, 'OK');
  } finally {
    await server.stop();
  }
});

test('raw: send+run, before/after, drop, response rule; RegExp match shows as {} in the event', async () => {
  const { server, port } = await startServer();
  try {
    const scripts: ScriptEvent[] = collect(server, 'script');
    const commands = collect(server, 'command');
    server.script.add([
      { on: 'command', match: /^X2 /, send: '* OK scripted\r\n', run: true },
      { on: 'command', command: 'NOOP', match: '^W', before: '* OK before\r\n', after: '* OK after\r\n' },
      { on: 'command', command: 'CHECK', drop: true },
      { on: 'response', match: '^T2 OK', send: '$TAG OK replaced\r\n' },
    ]);
    const c = await rawSession(port);
    c.write('X2 NOOP\r\n');
    const l1 = await c.until('X2');
    assert.equal(l1[0], '* OK scripted');
    assert.match(l1[l1.length - 1]!, /^X2 OK/);
    c.write('W3 NOOP\r\n');
    const l2 = await c.until('W3');
    assert.equal(l2[0], '* OK before');
    assert.match(l2[1]!, /^W3 OK/);
    assert.equal(await c.line(), '* OK after');
    c.write('D1 CHECK\r\n');
    const l4 = await c.command('NOOP');
    assert.deepEqual(l4, ['T2 OK replaced']);
    assert.equal(c.pending(), '');
    c.close();
    assert.equal(JSON.stringify(scripts[0]!.rule.match), '{}');
    assert.deepEqual(
      scripts.map((s) => [s.event, s.command, s.tag]),
      [
        ['command', 'NOOP', 'X2'],
        ['command', 'NOOP', 'W3'],
        ['command', 'CHECK', 'D1'],
        ['response', 'NOOP', 'T2'],
      ],
    );
    assert.ok(!commands.some((e) => e.tag === 'D1'));
    assert.ok(commands.some((e) => e.tag === 'X2'));
  } finally {
    await server.stop();
  }
});

test('delay keeps later output behind it', async () => {
  const { server, port } = await startServer();
  try {
    server.script.add({ on: 'command', tag: 'SLOW', delay: 150 });
    const c = await rawSession(port);
    const t0 = Date.now();
    c.write('SLOW NOOP\r\nFAST NOOP\r\n');
    const first = await c.line();
    const second = await c.line();
    assert.match(first, /^SLOW OK/);
    assert.match(second, /^FAST OK/);
    assert.ok(Date.now() - t0 >= 140);
    c.close();
  } finally {
    await server.stop();
  }
});

test('greeting rules: send instead, drop+close', async () => {
  const { server, port } = await startServer();
  try {
    const [h] = server.script.add([{ on: 'greeting', nth: 1, send: '* BYE Too busy\r\n', close: true }]);
    const c = await RawClient.connect(port);
    assert.equal(await c.line(), '* BYE Too busy');
    await c.closedByServer();
    const d = await RawClient.connect(port);
    assert.match(await d.line(), /^\* OK \[CAPABILITY/);
    d.close();
    assert.equal(h!.hits, 1);
    assert.equal(h!.matched, 2);
  } finally {
    await server.stop();
  }
});

test('quiet rule sends BYE Autologout during IDLE and closes', { timeout: 10000 }, async () => {
  const { server, port } = await startServer({ plugins: ["IDLE"] });
  try {
    server.script.add({ on: 'quiet', command: 'IDLE', quietFor: 100, send: '* BYE Autologout; idle for too long\r\n', close: true });
    const scripts = collect(server, 'script');
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('I1 IDLE\r\n');
    assert.equal(await c.line(), '+ idling');
    assert.equal(await c.line(), '* BYE Autologout; idle for too long');
    await c.closedByServer();
    assert.equal(scripts.length, 1);
    assert.deepEqual([scripts[0]!.event, scripts[0]!.command, scripts[0]!.tag], ['quiet', 'IDLE', 'I1']);
  } finally {
    await server.stop();
  }
});

test('truncate in the middle of a FETCH literal closes the connection', async () => {
  const { server, port } = await startServer({ storage: STORAGE });
  try {
    server.script.add({ on: 'command', command: 'FETCH', run: true, match: 'BODY', truncate: 80 });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('F1 FETCH 1 BODY.PEEK[]\r\n');
    await c.closedByServer();
    const got = c.pending();
    assert.equal(got.length, 80);
    assert.match(got, /^\* 1 FETCH \(BODY\[\] \{\d+\}\r\n/);
  } finally {
    await server.stop();
  }
});

test('close: "reset" is seen by the client as a reset', async () => {
  const { server, port } = await startServer();
  try {
    server.script.add({ on: 'command', command: 'NOOP', send: '* OK going\r\n', close: 'reset' });
    const c = await rawSession(port);
    const error = new Promise<string>((resolve) => c.socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? '')));
    c.write('R1 NOOP\r\n');
    assert.equal(await c.line(), '* OK going');
    assert.equal(await error, 'ECONNRESET');
  } finally {
    await server.stop();
  }
});

test('input rule: drop an IDLE DONE, the next one ends IDLE', async () => {
  const { server, port } = await startServer({ plugins: ["IDLE"] });
  try {
    server.script.add({ on: 'input', match: '^DONE$', times: 1, drop: true });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('I1 IDLE\r\n');
    assert.equal(await c.line(), '+ idling');
    c.write('DONE\r\n');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(c.pending(), '');
    c.write('DONE\r\n');
    assert.match(await c.line(), /^I1 OK/);
    c.close();
  } finally {
    await server.stop();
  }
});

test('chance repeatability: two fresh servers, same seed and traffic, same transcript', { timeout: 15000 }, async () => {
  async function transcript(): Promise<string> {
    const { server, port } = await startServer({
      scriptSeed: 42,
      script: [{ on: 'command', command: 'NOOP', chance: 0.3, send: '$TAG NO [UNAVAILABLE] Throttled\r\n' }],
    });
    try {
      const c = await rawSession(port);
      const lines: string[] = [];
      for (let i = 0; i < 30; i++) lines.push(...(await c.command('NOOP')));
      c.close();
      return lines.join('\n');
    } finally {
      await server.stop();
    }
  }
  const a = await transcript();
  const b = await transcript();
  assert.equal(a, b);
  assert.match(a, /Throttled/);
  assert.match(a, /OK/);
});

test('control.reset keeps rules and counters and restarts the seeded sequence', async () => {
  const { server } = await startServer({ scriptSeed: 3 });
  try {
    server.script.add({ on: 'quiet', quietFor: 5, chance: 0.5, send: 'x' });
    const ctx = { event: 'quiet' as const, session: 1, tag: null, command: null, state: null, user: null, mailbox: null, text: '', quietFor: 5 };
    const seq = (): boolean[] => Array.from({ length: 20 }, () => server.script.fire(ctx) !== null);
    const first = seq();
    server.control.reset();
    assert.deepEqual(seq(), first);
    assert.equal(server.script.rules[0]!.matched, 40);
  } finally {
    await server.stop();
  }
});

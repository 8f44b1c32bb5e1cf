/**
 * Issue 19, item 2: script rule typos. A misspelt field gets a suggestion; a
 * `command` that neither the core nor a loaded plugin defines would never
 * match, so a server refuses it (REST, `server.script.add`, the `script`
 * option), with a suggestion. Rules that pass still act on real sessions.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createServer, ServiceError, type ScriptRule } from '../../src/index.js';
import { ScriptEngine } from '../../src/script/engine.js';
import { rawSession, startServer } from '../helpers/server.js';
import { startRest } from '../rest/helpers.js';

function invalid(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ServiceError, String(err));
    assert.equal(err.code, 'INVALID');
    assert.match(err.message, message);
    return true;
  });
}

const rule = (r: Record<string, unknown>): ScriptRule => r as unknown as ScriptRule;

describe('script rule fields', () => {
  test('a misspelt field names the field it looks like; a far-off one lists the known fields', () => {
    const e = new ScriptEngine(1);
    invalid(() => e.add(rule({ on: 'command', comand: 'NOOP' })), /^comand: unknown field; did you mean "command"\?$/);
    invalid(() => e.add(rule({ on: 'command', Send: 'x' })), /^Send: unknown field; did you mean "send"\?$/);
    invalid(() => e.add(rule({ on: 'command', tims: 1 })), /^tims: unknown field; did you mean "times"\?$/);
    invalid(() => e.add(rule({ on: 'command', chunkdelay: 0, chunk: 1 })), /^chunkdelay: unknown field; did you mean "chunkDelay"\?$/);
    invalid(() => e.add(rule({ on: 'command', colour: 'red' })), /^colour: unknown field; known fields: on, command, /);
    invalid(() => e.add([{ on: 'command' }, rule({ on: 'command', mach: 'x' })]), /^\[1\]\.mach: unknown field; did you mean "match"\?$/);
    assert.equal(e.rules.length, 0);
  });

  test('a misspelt value of a fixed list (on, state) gets a suggestion; a state that never occurs is refused', () => {
    const e = new ScriptEngine(1);
    invalid(() => e.add(rule({ on: 'comand' })), /^on: expected one of greeting, command, input, response, quiet, smtp, continuation, pop3, oauth, got "comand"; did you mean "command"\?$/);
    invalid(() => e.add(rule({ on: 'command', state: 'Authenticted' })), /^state: expected one of Not Authenticated, Authenticated, Selected, Logout, Authorization, Transaction, Update, got "Authenticted"; did you mean "Authenticated"\?$/);
    invalid(() => e.add(rule({ on: 'command', state: 'selected' })), /did you mean "Selected"\?$/);
    assert.equal(e.add({ on: 'command', state: 'Not Authenticated' }).id, 1);
  });
});

describe('script rule commands against the server command table', () => {
  test('server.script.add refuses a command no one defines, with a suggestion', () => {
    const server = createServer();
    invalid(() => server.script.add({ on: 'command', command: 'FECTH', send: '$TAG NO x\r\n' }), /^command: no command "FECTH" on this server: .*; did you mean "FETCH"\?$/);
    invalid(() => server.script.add({ on: 'command', command: 'UID FECTH' }), /did you mean "UID FETCH"\?$/);
    invalid(() => server.script.add({ on: 'command', command: 'AUTHENTICTE PLAIN' }), /did you mean "AUTHENTICATE PLAIN"\?$/);
    invalid(() => server.script.add({ on: 'command', command: 'UID XYZZY' }), /no command "UID XYZZY"/);
    // Nothing close: the commands are listed, and the way to script an unknown command is named.
    invalid(() => server.script.add({ on: 'command', command: 'XYZZY' }), /no command "XYZZY" on this server.*commands: APPEND, .*LOGIN, .*use match \(for example "\^\\\\S\+ XYZZY\\\\b"\)$/);
    // Atomic: one bad rule, none added.
    invalid(() => server.script.add([{ on: 'command', command: 'NOOP' }, { on: 'response', command: 'SELCT' }]), /^\[1\]\.command: .*did you mean "SELECT"\?$/);
    assert.equal(server.script.rules.length, 0);
  });

  test('defined names pass: any case, UID forms of a base command, AUTHENTICATE with a mechanism (command events only)', () => {
    const server = createServer();
    for (const command of ['FETCH', 'fetch', 'Uid Fetch', 'UID STORE', 'UID SEARCH', 'UID EXPUNGE', 'AUTHENTICATE', 'AUTHENTICATE PLAIN', 'AUTHENTICATE X-ANYTHING', 'LOGIN', 'CHECK']) {
      server.script.add({ on: 'command', command });
    }
    // While AUTHENTICATE runs, input and response events name it without the mechanism.
    invalid(() => server.script.add({ on: 'input', command: 'AUTHENTICATE PLAIN', drop: true }), /^command: the mechanism .* use "AUTHENTICATE"$/);
    server.script.add({ on: 'input', command: 'AUTHENTICATE', drop: true });
  });

  test('the table is the server\'s: plugin commands exist only while their plugin is loaded', () => {
    invalid(() => createServer({ plugins: [] }).script.add({ on: 'command', command: 'IDLE' }), /no command "IDLE"/);
    invalid(() => createServer().script.add({ on: 'command', command: 'STARTTLS' }), /no command "STARTTLS"/);
    createServer({ plugins: ['IDLE'] }).script.add({ on: 'command', command: 'IDLE' });
    createServer({ plugins: ['MOVE'] }).script.add({ on: 'command', command: 'UID MOVE' });
    createServer({ starttls: true }).script.add({ on: 'command', command: 'STARTTLS' });
    // An engine on its own has no table and takes any name.
    new ScriptEngine(1).add({ on: 'command', command: 'XYZZY' });
  });

  test('the script option: a construction error in the options\' form', () => {
    assert.throws(
      () => createServer({ script: [{ on: 'command', command: 'NOOP' }, { on: 'command', command: 'FECTH' }] }),
      (err: unknown) => err instanceof ServiceError && err.code === 'INVALID' && /^script: \[1\]\.command: no command "FECTH".*did you mean "FETCH"\?$/.test(err.message),
    );
    assert.throws(() => createServer({ script: [{ on: 'command', comand: 'NOOP' } as unknown as ScriptRule] }), /script: \[0\]\.comand: unknown field; did you mean "command"\?/);
    assert.equal(createServer({ plugins: ['IDLE'], script: [{ on: 'command', command: 'IDLE', send: '$TAG NO x\r\n' }] }).script.rules.length, 1);
  });

  test('over REST: 400 INVALID with the suggestion, nothing added', async () => {
    const r = await startRest();
    try {
      const post = async (body: unknown): Promise<{ status: number; body: any }> => {
        const res = await fetch(`${r.base}/v1/script/rules`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        return { status: res.status, body: await res.json() };
      };
      let a = await post({ on: 'command', comand: 'NOOP', send: '$TAG NO x\r\n' });
      assert.equal(a.status, 400);
      assert.deepEqual(a.body, { error: { code: 'INVALID', message: 'comand: unknown field; did you mean "command"?' } });
      a = await post({ on: 'command', command: 'FECTH', send: '$TAG NO x\r\n' });
      assert.equal(a.status, 400);
      assert.equal(a.body.error.code, 'INVALID');
      assert.match(a.body.error.message, /^command: no command "FECTH" on this server: .*did you mean "FETCH"\?$/);
      a = await post([{ on: 'command', command: 'NOOP' }, { on: 'command', command: 'UID FECTH' }]);
      assert.equal(a.status, 400);
      assert.match(a.body.error.message, /^\[1\]\.command: .*did you mean "UID FETCH"\?$/);
      assert.deepEqual(await (await fetch(`${r.base}/v1/script/rules`)).json(), []);
      a = await post({ on: 'command', command: 'fetch', send: '$TAG NO scripted\r\n' });
      assert.equal(a.status, 201, JSON.stringify(a.body));
    } finally {
      await r.server.stop();
    }
  });

  test('rules that pass act on real sessions; an unknown command is scripted with match', async () => {
    const { server, port } = await startServer();
    try {
      server.script.add([
        { on: 'command', command: 'uid search', send: '$TAG NO [UNAVAILABLE] scripted search\r\n' },
        { on: 'command', match: '^\\S+ XYZZY\\b', send: '* XYZZY nothing happens\r\n$TAG OK XYZZY done\r\n' },
      ]);
      const c = await rawSession(port);
      await c.command('SELECT INBOX');
      assert.deepEqual(await c.command('UID SEARCH ALL'), ['T3 NO [UNAVAILABLE] scripted search']);
      assert.deepEqual(await c.command('XYZZY'), ['* XYZZY nothing happens', 'T4 OK XYZZY done']);
      c.close();
      assert.deepEqual(server.script.rules.map((r) => r.hits), [1, 1]);
    } finally {
      await server.stop();
    }
  });
});

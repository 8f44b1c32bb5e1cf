/**
 * Issue 18 items 6 and 7: names that are members of Object.prototype
 * (`__proto__`, `constructor`, `toString`, `hasOwnProperty`) are ordinary
 * mailbox, user and keyword names. They round-trip through IMAP, REST and a
 * snapshot, and as script-rule fields they are unknown fields (400 INVALID).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createServer } from '../../src/index.js';
import type { Storage } from '../../src/options/types.js';
import type { RawClient } from '../helpers/raw-client.js';
import { rawSession } from '../helpers/server.js';
import { request, startRest } from '../rest/helpers.js';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];
const enc = encodeURIComponent;

function ok(lines: string[]): void {
  assert.match(lines[lines.length - 1]!, /^\w+ OK/, lines.join('\n'));
}

let appends = 0;
async function append(c: RawClient, mailbox: string, flags: string, message: string): Promise<void> {
  const tag = `A${++appends}`;
  c.write(`${tag} APPEND "${mailbox}" (${flags}) {${message.length}+}\r\n${message}\r\n`);
  ok(await c.until(tag));
}

describe('names of Object.prototype members', () => {
  test('mailboxes, users and keywords round-trip through IMAP, REST and a snapshot', async () => {
    const r = await startRest({ plugins: 'all' });
    try {
      // Users over REST, then log in with them over IMAP.
      for (const name of NAMES) {
        const res = await request(r.restPort, 'POST', '/v1/users', { json: { name, password: `pw-${name}` } });
        assert.equal(res.status, 201, `${name}: ${res.text}`);
        assert.deepEqual(res.json, { name });
      }
      const users = await request(r.restPort, 'GET', '/v1/users');
      for (const name of NAMES) assert.ok(users.json.some((u: { name: string }) => u.name === name), name);
      for (const name of NAMES) {
        const c = await rawSession(r.imapPort, false);
        ok(await c.command(`LOGIN "${name}" "pw-${name}"`));
        c.close();
      }
      const changed = await request(r.restPort, 'PUT', `/v1/users/${enc('__proto__')}`, { json: { password: 'again' } });
      assert.equal(changed.status, 200, changed.text);

      // Mailboxes with children and messages over IMAP; keywords by STORE.
      const c = await rawSession(r.imapPort);
      for (const name of NAMES) {
        ok(await c.command(`CREATE "${name}/child"`));
        const msg = `Subject: ${name}\r\n\r\nbody\r\n`;
        await append(c, name, name === '__proto__' ? '\\Flagged $x' : '$x', msg);
        await append(c, `${name}/child`, '', msg);
      }
      ok(await c.command('SELECT INBOX'));
      await append(c, 'INBOX', '', 'Subject: kw\r\n\r\nx\r\n');
      ok(await c.command(`UID STORE 1 +FLAGS (${NAMES.join(' ')})`));
      c.close();

      // Mailboxes created over REST as children of a prototype-named one.
      for (const name of NAMES) {
        const res = await request(r.restPort, 'POST', '/v1/mailboxes', { json: { path: `INBOX/${name}` } });
        assert.equal(res.status, 201, res.text);
        const got = await request(r.restPort, 'GET', `/v1/mailboxes/${enc(name)}`);
        assert.equal(got.status, 200, got.text);
        assert.equal(got.json.messages, 1);
        const messages = await request(r.restPort, 'GET', `/v1/mailboxes/${enc(name + '/child')}/messages`);
        assert.equal(messages.status, 200, messages.text);
        assert.equal(messages.json.length, 1);
      }
      const flags = await request(r.restPort, 'POST', '/v1/mailboxes/INBOX/messages/flags', { json: { uids: [1], flags: ['__proto__'], mode: 'add' } });
      assert.equal(flags.status, 200, flags.text);

      const snap = await request(r.restPort, 'GET', '/v1/snapshot');
      assert.equal(snap.status, 200, snap.text);
      // The JSON text has the prototype names as own keys.
      const storage = JSON.parse(snap.text) as Storage;
      const folders = (storage[''] as { folders: Record<string, unknown> }).folders;
      for (const name of NAMES) assert.ok(Object.hasOwn(folders, name), `snapshot folders lack ${name}: ${Object.keys(folders).join(', ')}`);
      assert.equal(Object.getPrototypeOf(folders), Object.prototype);

      // In-process snapshot too: a new server restores every one of them.
      for (const source of [storage, r.server.control.snapshot()]) {
        const copy = createServer({ storage: source, plugins: 'all' });
        const paths = copy.control.listMailboxes().map((b) => b.path);
        for (const name of NAMES) {
          for (const p of [name, `${name}/child`, `INBOX/${name}`]) assert.ok(paths.includes(p), `${p} missing after restore: ${paths.join(', ')}`);
          const [msg] = copy.control.listMessages(name);
          assert.ok(msg, name);
          assert.ok(msg.flags.includes('$x'), `${name}: ${msg.flags.join(' ')}`);
        }
        assert.ok(copy.control.listMessages('__proto__')[0]!.flags.includes('\\Flagged'));
        const inbox = copy.control.listMessages('INBOX');
        for (const name of NAMES) assert.ok(inbox[0]!.flags.includes(name), `keyword ${name}: ${inbox[0]!.flags.join(' ')}`);
      }
    } finally {
      await r.server.stop();
    }
  });

  test('users option and storage input with prototype names', async () => {
    const users = JSON.parse('{"__proto__": {"password": "p1"}, "constructor": {"password": "p2"}, "toString": {"password": "p3"}}');
    const storage = JSON.parse(
      '{"INBOX": {"messages": [{"raw": "Subject: a\\r\\n\\r\\nb\\r\\n", "flags": ["__proto__", "constructor"]}]},' +
        ' "": {"folders": {"__proto__": {"messages": ["Subject: p\\r\\n\\r\\nq\\r\\n"], "folders": {"toString": {}}}, "valueOf": {}}}}',
    );
    const server = createServer({ port: 0, users, storage });
    const { imap } = await server.start();
    try {
      assert.deepEqual(server.control.listUsers().map((u) => u.name).sort(), ['__proto__', 'constructor', 'toString']);
      const c = await rawSession(imap.port, false);
      ok(await c.command('LOGIN "__proto__" p1'));
      const list = await c.command('LIST "" "*"');
      for (const p of ['__proto__', '__proto__/toString', 'valueOf']) assert.ok(list.some((l) => l.endsWith(` "${p}"`) || l.endsWith(` ${p}`)), `${p}: ${list.join('\n')}`);
      const status = await c.command('STATUS "__proto__" (MESSAGES)');
      assert.match(status.join('\n'), /MESSAGES 1/);
      c.close();
      const snap = server.control.snapshot();
      const again = createServer({ storage: JSON.parse(JSON.stringify(snap)) });
      assert.deepEqual(again.control.listMailboxes().map((b) => b.path), server.control.listMailboxes().map((b) => b.path));
    } finally {
      await server.stop();
    }
  });

  test('script rule fields named after Object.prototype members are 400 INVALID naming the field', async () => {
    const r = await startRest();
    try {
      const fields = ['hasOwnProperty', 'valueOf', '__proto__', '__defineGetter__', 'isPrototypeOf', 'toString', 'constructor', 'propertyIsEnumerable', 'toLocaleString', '__lookupGetter__'];
      for (const field of fields) {
        const body = `{"on": "command", "command": "NOOP", ${JSON.stringify(field)}: "x"}`;
        const res = await request(r.restPort, 'POST', '/v1/script/rules', { body, headers: { 'Content-Type': 'application/json' } });
        assert.equal(res.status, 400, `${field}: ${res.text}`);
        assert.equal(res.json.error.code, 'INVALID', field);
        assert.ok(res.json.error.message.startsWith(`${field}: unknown field`), `${field}: ${res.json.error.message}`);
        // Inside an array too, and nothing is added.
        const arr = `[{"on": "command"}, {"on": "command", ${JSON.stringify(field)}: {}}]`;
        const res2 = await request(r.restPort, 'POST', '/v1/script/rules', { body: arr, headers: { 'Content-Type': 'application/json' } });
        assert.equal(res2.status, 400, `${field}: ${res2.text}`);
        assert.match(res2.json.error.message, new RegExp(`\\[1\\]\\.${field.replace(/\$/g, '\\$')}: unknown field`));
      }
      const list = await request(r.restPort, 'GET', '/v1/script/rules');
      assert.deepEqual(list.json, []);
      // In-process the same.
      assert.throws(() => r.server.script.add(JSON.parse('{"on": "command", "__proto__": {"send": "x"}}')), /__proto__: unknown field/);
      assert.throws(() => createServer({ script: [JSON.parse('{"on": "command", "isPrototypeOf": 1}')] }), /isPrototypeOf: unknown field/);
    } finally {
      await r.server.stop();
    }
  });

  test('script rule timers beyond what Node can run are 400 INVALID, not a timer that fires at once', async () => {
    const r = await startRest();
    try {
      for (const rule of [{ on: 'quiet', quietFor: 2 ** 31 }, { on: 'command', delay: 1e15 }, { on: 'command', chunk: 1, chunkDelay: 2 ** 31 }]) {
        const res = await request(r.restPort, 'POST', '/v1/script/rules', { json: rule });
        assert.equal(res.status, 400, res.text);
        assert.match(res.json.error.message, /^(quietFor|delay|chunkDelay): expected an integer from \d+ to 2147483647 \(milliseconds\)/);
      }
      const ok = await request(r.restPort, 'POST', '/v1/script/rules', { json: { on: 'quiet', quietFor: 2 ** 31 - 1, send: '* OK\r\n' } });
      assert.equal(ok.status, 201, ok.text);
    } finally {
      await r.server.stop();
    }
  });
});

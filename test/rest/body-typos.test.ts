/**
 * Issue 19, item 1: a typo in a REST body is never silently dropped. Every
 * body is checked like the options are: an unknown key is 400 INVALID naming
 * it, with a "did you mean" when a known key is close, nested objects too;
 * the OpenAPI document says `additionalProperties: false` and lists the
 * defaults. Over real sockets (Node fetch).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Plugin } from '../../src/index.js';
import { SCRIPT_RULE } from '../../src/rest/routes.js';
import type { Schema } from '../../src/rest/schema.js';
import { RULE_FIELDS } from '../../src/script/validate.js';
import { rawSession } from '../helpers/server.js';
import { request, startRest, type Rest } from './helpers.js';

interface Answer {
  status: number;
  body: any;
}

async function call(r: Rest, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(r.base + path, {
    method,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  });
  return { status: res.status, body: await res.json() };
}

function invalid(a: Answer, message: RegExp): void {
  assert.equal(a.status, 400, JSON.stringify(a.body));
  assert.deepEqual(Object.keys(a.body), ['error']);
  assert.equal(a.body.error.code, 'INVALID');
  assert.match(a.body.error.message, message);
}

describe('REST bodies: unknown keys are refused with a suggestion', () => {
  test('POST /v1/users with "pasword": 400 naming it, and no user nobody can log in as', async () => {
    const r = await startRest();
    try {
      invalid(await call(r, 'POST', '/v1/users', { name: 'bob', pasword: 'x' }), /^pasword: unknown field; did you mean "password"\?$/);
      const users = await call(r, 'GET', '/v1/users');
      assert.deepEqual(users.body.map((u: { name: string }) => u.name), ['testuser']);
      // The same body spelled right works, and bob can log in.
      assert.equal((await call(r, 'POST', '/v1/users', { name: 'bob', password: 'x' })).status, 201);
      const c = await rawSession(r.imapPort, false);
      assert.match((await c.command('LOGIN bob x')).at(-1)!, /^T\d+ OK/);
      c.close();
    } finally {
      await r.server.stop();
    }
  });

  test('flags with "mod": 400, and the other flags of the message are kept', async () => {
    const r = await startRest();
    try {
      r.server.control.addMessage('INBOX', { raw: 'Subject: x\r\n\r\nx\r\n', flags: ['\\Flagged', '$Work'] });
      invalid(await call(r, 'POST', '/v1/mailboxes/INBOX/messages/flags', { uids: [1], flags: ['\\Seen'], mod: 'add' }), /^mod: unknown field; did you mean "mode"\?$/);
      assert.deepEqual(r.server.control.listMessages('INBOX')[0]!.flags, ['\\Flagged', '$Work']);
      // A near miss in an enum value gets a suggestion too.
      invalid(await call(r, 'POST', '/v1/mailboxes/INBOX/messages/flags', { uids: [1], flags: ['\\Seen'], mode: 'ad' }), /^mode: expected one of set, add, remove, got "ad"; did you mean "add"\?$/);
      const ok = await call(r, 'POST', '/v1/mailboxes/INBOX/messages/flags', { uids: [1], flags: ['\\Seen'], mode: 'add' });
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.body, [{ uid: 1, flags: ['\\Flagged', '$Work', '\\Seen'] }]);
    } finally {
      await r.server.stop();
    }
  });

  test('nested objects: a typo inside xoauth2 names its path', async () => {
    const r = await startRest();
    try {
      invalid(await call(r, 'POST', '/v1/users', { name: 'carol', xoauth2: { acessToken: 't' } }), /^xoauth2\.acessToken: unknown field; did you mean "accessToken"\?$/);
      invalid(
        await call(r, 'PUT', '/v1/users/testuser', { xoauth2: { accessToken: 't', sesionTimeout: 5 } }),
        /^xoauth2\.sesionTimeout: unknown field; did you mean "sessionTimeout"\?$/,
      );
      assert.deepEqual((await call(r, 'GET', '/v1/users')).body, [{ name: 'testuser', xoauth2: true }]);
      // Right spelling, and null still removes the token.
      assert.equal((await call(r, 'PUT', '/v1/users/testuser', { xoauth2: { accessToken: 't', sessionTimeout: 5 } })).status, 200);
      assert.equal((await call(r, 'PUT', '/v1/users/testuser', { xoauth2: null })).status, 200);
      assert.deepEqual((await call(r, 'GET', '/v1/users')).body, [{ name: 'testuser', xoauth2: false }]);
    } finally {
      await r.server.stop();
    }
  });

  test('a typo of a required field is named as a typo (not as the field missing); far-off keys list the known ones', async () => {
    const r = await startRest();
    try {
      invalid(await call(r, 'POST', '/v1/mailboxes', { pth: 'Work' }), /^pth: unknown field; did you mean "path"\?$/);
      invalid(await call(r, 'POST', '/v1/mailboxes', { path: 'Work', subscribe: false }), /^subscribe: unknown field; did you mean "subscribed"\?$/);
      invalid(await call(r, 'POST', '/v1/users', { name: 'dave', colour: 'blue' }), /^colour: unknown field; known fields: name, password, xoauth2$/);
      invalid(await call(r, 'POST', '/v1/mailboxes/INBOX/messages', { raw: 'x', flag: ['\\Seen'] }), /^flag: unknown field; did you mean "flags"\?$/);
      invalid(await call(r, 'POST', '/v1/mailboxes/INBOX/messages', { raw: 'x', Checks: true }), /^Checks: unknown field; did you mean "checks"\?$/);
      assert.equal(r.server.control.listMessages('INBOX').length, 0);
      assert.deepEqual(r.server.control.listMailboxes().map((m) => m.path), ['INBOX']);
    } finally {
      await r.server.stop();
    }
  });

  test('a typo in the shutdown body does not shut down (gracefull) ', async () => {
    const r = await startRest();
    try {
      invalid(await call(r, 'POST', '/v1/shutdown', { gracefull: false }), /^gracefull: unknown field; did you mean "graceful"\?$/);
      assert.equal((await call(r, 'GET', '/v1/users')).status, 200);
      assert.ok(r.server.address() !== null);
    } finally {
      await r.server.stop();
    }
  });

  test('routes without body fields refuse any key; prototype names are unknown fields, not inherited ones', async () => {
    const r = await startRest();
    try {
      r.server.control.createMailbox({ path: 'Old' });
      invalid(await call(r, 'DELETE', '/v1/mailboxes/Old', { force: true }), /^force: unknown field; this endpoint takes no body fields$/);
      assert.ok(r.server.control.listMailboxes().some((m) => m.path === 'Old'), 'refused: not deleted');
      // A GET with a body (fetch cannot send one): the filter someone meant to apply is not ignored.
      const get = await request(r.restPort, 'GET', '/v1/mailboxes/INBOX/messages', { json: { raw: true } });
      assert.equal(get.status, 400, get.text);
      assert.match(get.json.error.message, /^raw: unknown field; this endpoint takes no body fields$/);
      for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
        const a = await call(r, 'POST', '/v1/users', `{"name":"eve","${key}":{"password":"x"}}`);
        invalid(a, new RegExp(`^${key}: unknown field`));
      }
      invalid(await call(r, 'POST', '/v1/users', { name: 'eve', '': 1 }), /^"": unknown field/);
      invalid(await call(r, 'POST', '/v1/users', { name: 'eve', ['k'.repeat(500)]: 1 }), /^"k{64}\.\.\.": unknown field/);
      assert.deepEqual(r.server.control.listUsers().map((u) => u.name), ['testuser']);
      assert.equal(({} as Record<string, unknown>).password, undefined);
      // An empty object, and no body at all, are still fine.
      assert.equal((await call(r, 'DELETE', '/v1/mailboxes/Old', {})).status, 200);
      assert.equal((await call(r, 'GET', '/v1/users')).status, 200);
    } finally {
      await r.server.stop();
    }
  });

  test('every built-in route with a body refuses an unknown key before doing anything', async () => {
    const r = await startRest({ plugins: 'all' });
    try {
      r.server.control.addMessage('INBOX', { raw: 'Subject: x\r\n\r\nx\r\n' });
      const doc = (await call(r, 'GET', '/v1/openapi.json')).body;
      let checked = 0;
      let maps = 0;
      for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>)) {
        for (const [method, op] of Object.entries(ops)) {
          // A body that is a map of free names (METADATA entries) has no unknown keys.
          const schema = op.requestBody?.content['application/json']?.schema;
          if (schema && typeof schema.additionalProperties === 'object') {
            maps++;
            continue;
          }
          const target = path
            .replace('{path}', 'INBOX').replace('{name}', 'testuser').replace('{uid}', '1').replace('{session}', '1').replace('{id}', '1').replace('{identifier}', 'anyone');
          // GET bodies cannot go through fetch; the raw request helper sends them.
          const answer = await request(r.restPort, method.toUpperCase(), target, { json: { zzUnknownKey: 1 } });
          assert.equal(answer.status, 400, `${method} ${path}: ${answer.text}`);
          assert.equal(answer.json.error.code, 'INVALID', `${method} ${path}`);
          assert.match(answer.json.error.message, /zzUnknownKey: unknown field/, `${method} ${path}`);
          checked++;
        }
      }
      assert.ok(checked >= 30, `only ${checked} operations`);
      assert.ok(maps <= 2, `${maps} map bodies skipped`);
      // Nothing happened: the message, the mailbox, the user and the server are all still there.
      assert.equal(r.server.control.listMessages('INBOX').length, 1);
      assert.deepEqual(r.server.control.listUsers().map((u) => u.name), ['testuser']);
      assert.equal(r.server.script.rules.length, 0);
      assert.ok(r.server.address() !== null);
    } finally {
      await r.server.stop();
    }
  });

  test('plugin routes with additionalProperties: false behave the same; open plugin bodies stay open', async () => {
    const notes: unknown[] = [];
    const plugin: Plugin = {
      name: 'XNOTES',
      routes: [
        {
          method: 'POST', path: '/v1/notes', summary: 'Add a note', status: 201,
          body: { type: 'object', properties: { text: { type: 'string' }, meta: { type: 'object', properties: { author: { type: 'string' } }, additionalProperties: false } }, required: ['text'], additionalProperties: false },
          response: { type: 'object' },
          handle: ({ body }) => (notes.push(body), { added: true }),
        },
        {
          method: 'PUT', path: '/v1/notes', summary: 'Free-form', status: 200,
          body: { type: 'object', properties: { text: { type: 'string' } } },
          response: { type: 'object' },
          handle: ({ body }) => (notes.push(body), { set: true }),
        },
      ],
    };
    const r = await startRest({ plugins: [plugin] });
    try {
      invalid(await call(r, 'POST', '/v1/notes', { txet: 'hi' }), /^txet: unknown field; did you mean "text"\?$/);
      invalid(await call(r, 'POST', '/v1/notes', { text: 'hi', meta: { autor: 'me' } }), /^meta\.autor: unknown field; did you mean "author"\?$/);
      assert.equal((await call(r, 'POST', '/v1/notes', { text: 'hi', meta: { author: 'me' } })).status, 201);
      // JSON Schema semantics: without additionalProperties: false, more keys are the plugin's business.
      assert.equal((await call(r, 'PUT', '/v1/notes', { text: 'hi', extra: 1 })).status, 200);
      assert.deepEqual(notes, [{ text: 'hi', meta: { author: 'me' } }, { text: 'hi', extra: 1 }]);
      const doc = (await call(r, 'GET', '/v1/openapi.json')).body;
      assert.equal(doc.paths['/v1/notes'].post.requestBody.content['application/json'].schema.additionalProperties, false);
      assert.equal(doc.paths['/v1/notes'].put.requestBody.content['application/json'].schema.additionalProperties, undefined);
    } finally {
      await r.server.stop();
    }
  });
});

/** Every object schema in `schema` that lists properties (refs not followed). */
function objects(schema: Schema, at: string, out: [string, Schema][] = []): [string, Schema][] {
  if (schema.properties) {
    out.push([at, schema]);
    for (const [k, s] of Object.entries(schema.properties)) objects(s, `${at}.${k}`, out);
  }
  if (schema.items) objects(schema.items, `${at}[]`, out);
  for (const s of schema.oneOf ?? []) objects(s, at, out);
  return out;
}

describe('OpenAPI: request bodies are closed and list their defaults', () => {
  test('additionalProperties: false on every body object; defaults; the full ScriptRule', async () => {
    const r = await startRest({ plugins: 'all' });
    try {
      const doc = (await call(r, 'GET', '/v1/openapi.json')).body;
      const bodies = new Map<string, Schema>();
      for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>)) {
        for (const [method, op] of Object.entries(ops)) {
          const schema = op.requestBody?.content['application/json']?.schema;
          if (schema) bodies.set(`${method.toUpperCase()} ${path}`, schema);
        }
      }
      assert.ok(bodies.size >= 20, `${bodies.size} bodies`);
      for (const [what, schema] of bodies) {
        for (const [at, o] of objects(schema, what)) assert.equal(o.additionalProperties, false, `${at} is not closed`);
      }
      const prop = (what: string, ...path: string[]): Schema => {
        let s = bodies.get(what)!;
        for (const p of path) s = s.properties![p]!;
        return s;
      };
      assert.equal(prop('POST /v1/mailboxes/{path}/messages/flags', 'mode').default, 'set');
      assert.equal(prop('POST /v1/mailboxes', 'subscribed').default, true);
      assert.equal(prop('POST /v1/shutdown', 'graceful').default, true);
      assert.equal(prop('DELETE /v1/users/{name}', 'disconnect').default, true);
      assert.equal(prop('DELETE /v1/sessions/{session}', 'text').default, 'Disconnected by the server');
      assert.equal(prop('DELETE /v1/sessions/{session}', 'reset').default, false);
      assert.equal(prop('POST /v1/sessions/{session}/inject', 'encoding').default, 'utf-8');
      assert.equal(prop('POST /v1/mailboxes/{path}/messages', 'encoding').default, 'utf-8');
      assert.equal(prop('POST /v1/mailboxes/{path}/messages', 'checks').default, false);
      assert.deepEqual(prop('POST /v1/mailboxes/{path}/messages', 'flags').default, []);
      assert.equal(prop('POST /v1/mailboxes/{path}/uidvalidity', 'uids').default, 'keep');
      assert.equal(prop('POST /v1/mailboxes/{path}/uidvalidity', 'offset').default, 0);
      assert.equal(prop('POST /v1/mailboxes/{path}/uidvalidity', 'seed').default, 1);

      // The ScriptRule schema lists every field the rule validator knows (`when` is a function: in-process only).
      const rule = doc.components.schemas.ScriptRule as Schema;
      assert.deepEqual(Object.keys(rule.properties!).sort(), RULE_FIELDS.filter((f) => f !== 'when').sort());
      assert.deepEqual(Object.keys(SCRIPT_RULE.properties!).sort(), Object.keys(rule.properties!).sort());
      assert.equal(rule.additionalProperties, false);
      assert.deepEqual(rule.required, ['on']);
      assert.equal(rule.properties!.run!.default, false);
    } finally {
      await r.server.stop();
    }
  });
});

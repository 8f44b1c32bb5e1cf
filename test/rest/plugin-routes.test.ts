/**
 * User plugin objects: their REST routes are served after the built-in ones,
 * validated from their schemas, listed in the OpenAPI document only while
 * loaded; their IMAP commands and capabilities reach real sessions.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createServer, ServiceError, type Plugin } from '../../src/index.js';
import { ok } from '../../src/imap/command.js';
import { rawSession } from '../helpers/server.js';
import { request, startRest } from './helpers.js';

/** A plugin that counts, with a REST resource and an IMAP command reading the same state. */
function counterPlugin(): Plugin & { count: number } {
  const plugin: Plugin & { count: number } = {
    name: 'XCOUNTER',
    count: 0,
    requires: ['IDLE'],
    capabilities: () => ['XCOUNTER'],
    commands: [
      {
        name: 'XCOUNT',
        states: ['authenticated', 'selected'],
        run: () => ok(`count is ${plugin.count}`),
      },
    ],
    routes: [
      {
        method: 'GET',
        path: '/v1/counter',
        summary: 'The counter',
        status: 200,
        response: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
        handle: () => ({ count: plugin.count }),
      },
      {
        method: 'POST',
        path: '/v1/counter/{step}',
        summary: 'Add `step` to the counter',
        params: [{ name: 'step', type: 'integer', description: 'how much to add' }],
        body: { type: 'object', properties: { note: { type: 'string' } }, additionalProperties: false },
        status: 201,
        response: { type: 'object', properties: { count: { type: 'integer' } } },
        handle: async (ctx) => {
          const step = ctx.params.step as number;
          if (step === 13) throw new ServiceError('CANNOT', 'unlucky step');
          if (step === 99) throw new Error('plugin bug');
          await new Promise((r) => setImmediate(r));
          plugin.count += step;
          return { count: plugin.count };
        },
      },
      {
        // A method the built-in path does not have: served after the built-in ones.
        method: 'DELETE',
        path: '/v1/snapshot',
        summary: 'Plugin-only method on a built-in path',
        status: 200,
        response: { type: 'object' },
        handle: () => ({ plugin: true }),
      },
    ],
  };
  return plugin;
}

describe('plugin routes', () => {
  test('served, validated, error-mapped, and in the OpenAPI document', async () => {
    const plugin = counterPlugin();
    const r = await startRest({ plugins: [plugin] });
    try {
      assert.deepEqual((await request(r.restPort, 'GET', '/v1/counter')).json, { count: 0 });
      const added = await request(r.restPort, 'POST', '/v1/counter/5', { json: { note: 'five' } });
      assert.equal(added.status, 201);
      assert.deepEqual(added.json, { count: 5 });
      assert.equal(added.headers['cache-control'], 'no-store');
      assert.equal(plugin.count, 5);

      const badBody = await request(r.restPort, 'POST', '/v1/counter/1', { json: { other: 1 } });
      assert.equal(badBody.status, 400);
      assert.equal(badBody.json.error.code, 'INVALID');
      const badParam = await request(r.restPort, 'POST', '/v1/counter/abc', { json: {} });
      assert.equal(badParam.status, 400);
      assert.match(badParam.json.error.message, /step/);
      const noType = await request(r.restPort, 'POST', '/v1/counter/1', { body: '{}', headers: { 'Content-Type': 'text/plain' } });
      assert.equal(noType.status, 415);

      const refused = await request(r.restPort, 'POST', '/v1/counter/13', { json: {} });
      assert.equal(refused.status, 409);
      assert.deepEqual(refused.json, { error: { code: 'CANNOT', message: 'unlucky step' } });
      const bug = await request(r.restPort, 'POST', '/v1/counter/99', { json: {} });
      assert.equal(bug.status, 500);
      assert.equal(bug.json.error.code, 'SERVERERROR');
      // The server goes on after a plugin's bug.
      assert.deepEqual((await request(r.restPort, 'GET', '/v1/counter')).json, { count: 5 });

      assert.deepEqual((await request(r.restPort, 'DELETE', '/v1/snapshot')).json, { plugin: true });
      const put = await request(r.restPort, 'PUT', '/v1/snapshot', { json: {} });
      assert.equal(put.status, 405);
      assert.deepEqual(put.headers.allow!.split(', ').sort(), ['DELETE', 'GET']);
      const wrongMethod = await request(r.restPort, 'PUT', '/v1/counter');
      assert.equal(wrongMethod.status, 405);
      assert.equal(wrongMethod.headers.allow, 'GET');

      const doc = (await request(r.restPort, 'GET', '/v1/openapi.json')).json;
      assert.ok(doc.paths['/v1/counter'].get);
      assert.equal(doc.paths['/v1/counter/{step}'].post.parameters[0].schema.type, 'integer');
      assert.ok(doc.paths['/v1/counter/{step}'].post.responses['201']);
      assert.equal(doc.paths['/v1/snapshot'].delete.summary, 'Plugin-only method on a built-in path');

      // The same plugin's IMAP side: capability (and its required IDLE) and command.
      const imap = await rawSession(r.imapPort);
      const caps = (await imap.command('CAPABILITY')).join(' ');
      assert.match(caps, / XCOUNTER\b/);
      assert.match(caps, / IDLE\b/);
      assert.match((await imap.command('XCOUNT')).at(-1)!, /^T\d+ OK count is 5$/);
      imap.close();
    } finally {
      await r.server.stop();
    }
  });

  test('without the plugin its routes are 404 NOTFOUND and absent from OpenAPI', async () => {
    const r = await startRest({});
    try {
      const res = await request(r.restPort, 'GET', '/v1/counter');
      assert.equal(res.status, 404);
      assert.equal(res.json.error.code, 'NOTFOUND');
      const doc = (await request(r.restPort, 'GET', '/v1/openapi.json')).json;
      assert.equal(doc.paths['/v1/counter'], undefined);
      assert.equal(doc.paths['/v1/snapshot'].delete, undefined);
    } finally {
      await r.server.stop();
    }
  });

  test('mistakes in a plugin object are construction errors naming the path', () => {
    const base = counterPlugin();
    const invalid = (plugins: unknown[]): string => {
      try {
        createServer({ plugins: plugins as Plugin[] });
      } catch (err) {
        assert.ok(err instanceof ServiceError);
        return err.message;
      }
      assert.fail('expected a construction error');
    };
    assert.match(invalid([{ ...base, name: 'IDLE' }]), /plugins\[0\]\.name: "IDLE" is a built-in plugin name/);
    assert.match(invalid([base, { ...counterPlugin() }]), /plugins\[1\]\.name: a plugin named "XCOUNTER" is already loaded/);
    assert.match(invalid([{ name: 'X', routes: [{ ...base.routes![0], path: 'v1/x' }] }]), /plugins\[0\]\.routes\[0\]\.path: expected a path like/);
    assert.match(invalid([{ name: 'X', routes: [{ ...base.routes![0], path: '/v1/x/{id}' }] }]), /plugins\[0\]\.routes\[0\]\.params: path parameter \{id\} is not declared/);
    assert.match(invalid([{ name: 'X', routes: [{ ...base.routes![0], method: 'PATCH' }] }]), /routes\[0\]\.method: expected one of GET, POST, PUT, DELETE/);
    assert.match(invalid([{ name: 'X', routes: [{ ...base.routes![0], handle: undefined }] }]), /routes\[0\]\.handle: expected a function/);
    assert.match(invalid([{ name: 'X', routes: [{ ...base.routes![0], stream: true }] }]), /routes\[0\]\.stream: plugin routes answer with a JSON body/);
    // Built-in routes come first, so a plugin route they would always answer is a mistake.
    assert.match(
      invalid([{ name: 'X', routes: [{ ...base.routes![0], path: '/v1/mailboxes/special' }] }]),
      /routes\[0\]\.path: GET \/v1\/mailboxes\/special would never be reached: the built-in route GET \/v1\/mailboxes\/\{path\} answers it first/,
    );
    assert.match(invalid([{ name: 'X', requires: ['NOPE'] }]), /plugins\[0\]\.requires: unknown plugin "NOPE"; valid names: IMAP4REV2, IDLE/);
    assert.match(invalid([{ name: 'X', comands: [] }]), /plugins\[0\]\.comands: unknown key; did you mean "commands"\?/);
  });
});

/**
 * GET /v1/openapi.json checked from the outside: the document is a valid
 * OpenAPI 3.1 document (by an independent validator), declares the bearer
 * scheme, every path it lists is served for its declared method, and the
 * response schemas it declares match what GET endpoints really answer
 * (checked with Ajv's JSON Schema 2020-12 validator).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import { RawClient, tagged } from '../helpers/raw-client.js';
import { startRest, type Rest } from './helpers.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema: JsonObject }[];
  requestBody?: { content: Record<string, { schema: JsonObject }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: JsonObject }> }>;
}

interface OpenApiDoc {
  openapi: string;
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonObject>; securitySchemes?: Record<string, JsonObject> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
const COMPONENTS_ID = 'https://rookery.invalid/components.json';

/** A deep copy with every `#/components/schemas/X` reference pointing at `prefix + X`. */
function rewriteRefs(value: Json, prefix: string): Json {
  if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, prefix));
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/') ? prefix + v.slice('#/components/schemas/'.length) : rewriteRefs(v, prefix);
  }
  return out;
}

// ajv is CommonJS: under NodeNext the default import is its `module.exports`,
// which is the class and also carries it as `.default` (the typed way to reach it).
const AjvCtor = Ajv2020.default;
type AjvInstance = InstanceType<typeof AjvCtor>;

/** An Ajv with the document's component schemas added (as `$defs` of one schema). */
function ajvFor(doc: OpenApiDoc): AjvInstance {
  const ajv = new AjvCtor({ allErrors: true, strict: true });
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(doc.components.schemas as Json, '#/$defs/') as JsonObject });
  return ajv;
}

function check(ajv: AjvInstance, schema: JsonObject, body: unknown, what: string): void {
  const validate = ajv.compile(rewriteRefs(schema, `${COMPONENTS_ID}#/$defs/`) as JsonObject);
  assert.ok(validate(body), `${what}: body does not match the declared schema:\n${JSON.stringify(validate.errors, null, 2)}\nbody: ${JSON.stringify(body).slice(0, 2000)}`);
}

/** Sample values for path parameters; `missing` picks ones that do not exist. */
function fill(path: string, missing: boolean): string {
  const samples: Record<string, string> = missing
    ? { path: 'No such mailbox', name: 'nobody', session: '999999', uid: '999999', id: '999999', identifier: 'nobody' }
    : { path: 'INBOX', name: 'testuser', session: '999999', uid: '1', id: '1', identifier: 'anyone' };
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = samples[name];
    assert.ok(v !== undefined, `no sample value for {${name}} in ${path}`);
    return encodeURIComponent(v);
  });
}

interface Answer {
  status: number;
  type: string | null;
  body: unknown;
}

async function call(r: Rest, method: string, path: string, body?: string): Promise<Answer> {
  const res = await fetch(r.base + path, {
    method: method.toUpperCase(),
    ...(body === undefined ? {} : { body, headers: { 'Content-Type': 'application/json' } }),
  });
  const type = res.headers.get('content-type');
  if (type?.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, type, body: null };
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text for the messages
  }
  return { status: res.status, type, body: parsed };
}

const errorCode = (body: unknown): string | undefined =>
  (body as { error?: { code?: string } } | null)?.error?.code;

describe('OpenAPI document from a running server', () => {
  test('is a valid OpenAPI 3.1 document whose paths are served and whose GET schemas match', { timeout: 30_000 }, async () => {
    // The opt-in X-GM-EXT-1 too, so its routes are checked as well.
    const r = await startRest({ plugins: ['all', 'X-GM-EXT-1'] });
    let imap: RawClient | null = null;
    try {
      // Something in every listing: a message, a logged-in session, a script rule.
      r.server.control.addMessage('INBOX', { raw: 'Subject: openapi\r\n\r\nbody\r\n', flags: ['\\Seen'] });
      r.server.control.createMailbox({ path: 'Archive/2026' });
      r.server.script.add({ on: 'command', command: 'CHECK', tag: 'never-sent', send: '$TAG NO never\r\n' });
      imap = await RawClient.connect(r.imapPort);
      await imap.line();
      assert.match(tagged(await imap.command('LOGIN testuser testpass')), /^T1 OK/);
      assert.match(tagged(await imap.command('SELECT INBOX')), /^T2 OK/);

      const res = await fetch(`${r.base}/v1/openapi.json`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const doc = (await res.json()) as OpenApiDoc;

      // 1. Valid by an independent OpenAPI validator (which may modify its input: give it a copy).
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
      assert.ok(result.valid, `OpenAPI validation errors:\n${JSON.stringify(result.errors, null, 2)}`);
      assert.match(validator.version, /^3\.1/);
      assert.match(doc.openapi, /^3\.1\.\d+$/);

      // 2. The bearer security scheme, referenced by the document's security requirement.
      const schemes = doc.components.securitySchemes ?? {};
      const bearer = Object.entries(schemes).filter(([, s]) => s.type === 'http' && String(s.scheme).toLowerCase() === 'bearer');
      assert.equal(bearer.length, 1, JSON.stringify(schemes));
      const bearerName = bearer[0]![0];
      assert.ok(doc.security?.some((req) => bearerName in req), `security does not use ${bearerName}: ${JSON.stringify(doc.security)}`);

      // Component schemas compile (strict mode catches unknown keywords and bad refs).
      const ajv = ajvFor(doc);
      for (const name of Object.keys(doc.components.schemas)) assert.ok(ajv.getSchema(`${COMPONENTS_ID}#/$defs/${name}`), name);

      // Control: a path that is not in the document is 404 NOTFOUND.
      const unknown = await call(r, 'get', '/v1/no-such-endpoint');
      assert.equal(unknown.status, 404);
      assert.equal(errorCode(unknown.body), 'NOTFOUND');

      let gets = 0;
      let others = 0;
      for (const [path, ops] of Object.entries(doc.paths)) {
        assert.match(path, /^\/v1\//);
        for (const [method, op] of Object.entries(ops)) {
          assert.ok((METHODS as readonly string[]).includes(method), `${path}: ${method}`);
          const what = `${method.toUpperCase()} ${path}`;
          // Every {param} of the path is a declared, required path parameter.
          const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name).sort();
          const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort();
          assert.deepEqual(declared, inPath, `${what}: path parameters`);
          assert.ok((op.parameters ?? []).filter((p) => p.in === 'path').every((p) => p.required === true), `${what}: path parameters must be required`);
          const success = Object.keys(op.responses).filter((s) => /^2\d\d$/.test(s));
          assert.equal(success.length, 1, `${what}: one success status`);

          if (method === 'get') {
            gets++;
            for (const missing of [false, true]) {
              if (missing && !path.includes('{')) continue;
              // The long poll answers once an event matches: since=0 takes the first one of the backlog.
              const target = fill(path, missing) + (path === '/v1/events/wait' ? '?since=0' : '');
              const answer = await call(r, method, target);
              assert.notEqual(errorCode(answer.body), 'NOTFOUND', `${what} (${target}) is not served: ${JSON.stringify(answer.body)}`);
              const declaredResponse = op.responses[String(answer.status)];
              assert.ok(declaredResponse, `${what} (${target}): status ${answer.status} is not declared: ${JSON.stringify(answer.body)}`);
              if (answer.status >= 400) {
                assert.equal(answer.status, 404, `${what} (${target}): ${JSON.stringify(answer.body)}`);
                assert.equal(errorCode(answer.body), 'NONEXISTENT', `${what} (${target})`);
              } else {
                assert.equal(answer.status, Number(success[0]), `${what} (${target})`);
              }
              const content = declaredResponse.content ?? {};
              if (answer.type?.startsWith('text/event-stream')) {
                assert.ok(content['text/event-stream'], `${what}: the stream is declared as text/event-stream`);
                continue;
              }
              assert.match(answer.type ?? '', /^application\/json/, `${what} (${target})`);
              const schema = content['application/json']?.schema;
              assert.ok(schema, `${what}: no application/json schema for ${answer.status}`);
              check(ajv, schema, answer.body, `${what} (${target}) ${answer.status}`);
            }
          } else {
            // No side effects (POST /v1/shutdown is in the table): a body that
            // is JSON but not an object is refused with 400 INVALID once the
            // route has matched; an unknown route would be 404 NOTFOUND first.
            others++;
            const target = fill(path, false);
            const answer = await call(r, method, target, '"probe"');
            assert.notEqual(errorCode(answer.body), 'NOTFOUND', `${what} is not served: ${JSON.stringify(answer.body)}`);
            assert.notEqual(errorCode(answer.body), 'METHOD', `${what} is not served: ${JSON.stringify(answer.body)}`);
            assert.equal(answer.status, 400, `${what}: ${JSON.stringify(answer.body)}`);
            assert.equal(errorCode(answer.body), 'INVALID');
            const schema = op.responses['400']?.content?.['application/json']?.schema;
            assert.ok(schema, `${what}: 400 is not declared`);
            check(ajv, schema, answer.body, `${what} 400`);
            assert.ok(op.requestBody?.content['application/json'], `${what}: takes a JSON body`);
          }
        }
      }
      assert.ok(gets >= 10, `only ${gets} GET operations`);
      assert.ok(others >= 20, `only ${others} other operations`);
      // The probes changed nothing and the server still runs.
      assert.equal(r.server.control.listMessages('INBOX').length, 1);
      assert.ok(r.server.address() !== null);

      // A few writes, successful and refused, answer what their schemas say.
      const writes: [string, string, string, unknown, number][] = [
        ['post', '/v1/mailboxes', '/v1/mailboxes', { path: 'Written' }, 201],
        ['post', '/v1/mailboxes', '/v1/mailboxes', { path: 'Written' }, 409],
        ['post', '/v1/mailboxes/{path}/messages', '/v1/mailboxes/INBOX/messages', { raw: 'Subject: w\r\n\r\nw\r\n', flags: ['\\Flagged'] }, 201],
        ['post', '/v1/mailboxes/{path}/messages/flags', '/v1/mailboxes/INBOX/messages/flags', { uids: [1, 2], flags: ['$Done'], mode: 'add' }, 200],
        ['post', '/v1/mailboxes/{path}/messages/copy', '/v1/mailboxes/INBOX/messages/copy', { uids: [2], target: 'Written' }, 200],
        ['post', '/v1/mailboxes/{path}/uidvalidity', '/v1/mailboxes/Written/uidvalidity', { uids: 'renumber' }, 200],
        ['post', '/v1/script/rules', '/v1/script/rules', [{ on: 'command', command: 'CHECK', tag: 'never-sent-either', send: '$TAG NO x\r\n' }], 201],
        ['put', '/v1/users/{name}', '/v1/users/nobody', { password: 'x' }, 404],
      ];
      for (const [method, template, target, body, status] of writes) {
        const what = `${method.toUpperCase()} ${target}`;
        const answer = await call(r, method, target, JSON.stringify(body));
        assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
        const schema = doc.paths[template]?.[method]?.responses[String(status)]?.content?.['application/json']?.schema;
        assert.ok(schema, `${what}: ${status} is not declared`);
        check(ajv, schema, answer.body, `${what} ${status}`);
      }
    } finally {
      imap?.close();
      await r.server.stop();
    }
  });

  test('the declared schemas reject a body of the wrong shape (the check has teeth)', async () => {
    const r = await startRest();
    try {
      const doc = (await (await fetch(`${r.base}/v1/openapi.json`)).json()) as OpenApiDoc;
      const ajv = ajvFor(doc);
      const schema = doc.paths['/v1/mailboxes']?.get?.responses['200']?.content?.['application/json']?.schema;
      assert.ok(schema);
      const validate = ajv.compile(rewriteRefs(schema, `${COMPONENTS_ID}#/$defs/`) as JsonObject);
      const real = await (await fetch(`${r.base}/v1/mailboxes`)).json();
      assert.ok(validate(real), JSON.stringify(validate.errors));
      assert.ok(!validate([{ path: 42 }]), 'a number where MailboxInfo.path is a string must fail');
      assert.ok(!validate({ path: 'INBOX' }), 'an object where an array is declared must fail');
    } finally {
      await r.server.stop();
    }
  });
});

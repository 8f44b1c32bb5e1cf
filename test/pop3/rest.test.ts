/**
 * POP3 over the REST API: the health answer with the POP3 listener and its
 * connections, GET /v1/sessions with POP3 sessions (checked against the
 * OpenAPI schema), DELETE and inject of a POP3 session, its events.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Ajv2020 from 'ajv/dist/2020.js';
import { createServer } from '../../src/index.js';
import { loggedIn } from './pop3-test.js';

test('REST: health names the POP3 listener; /v1/sessions lists a POP3 session that matches the Session schema; DELETE and inject act on it', { timeout: 20_000 }, async () => {
  const server = createServer({ port: 0, rest: { port: 0 }, pop3: { port: 0, stls: true } });
  const { rest, pop3 } = await server.start();
  const base = `http://127.0.0.1:${rest!.port}`;
  try {
    const c = await loggedIn(pop3!.port);
    const health = (await (await fetch(`${base}/v1/health`)).json()) as { pop3: unknown; connections: { pop3: { open: number; max: number } } };
    assert.deepEqual(health.pop3, { host: '127.0.0.1', port: pop3!.port, secure: false, stls: true });
    assert.equal(health.connections.pop3.open, 1);
    assert.ok(health.connections.pop3.max >= 1);
    const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { components: { schemas: Record<string, object> } };
    const ajv = new Ajv2020.default({ allErrors: true, strict: false });
    ajv.addSchema({ ...doc.components.schemas.Session, $id: 'session' });
    const sessions = (await (await fetch(`${base}/v1/sessions`)).json()) as { session: number; protocol: string; state: string }[];
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0]!.protocol, 'pop3');
    assert.equal(sessions[0]!.state, 'Transaction');
    assert.ok(ajv.validate('session', sessions[0]), JSON.stringify(ajv.errors));
    const id = sessions[0]!.session;
    const json = { 'content-type': 'application/json' };
    const injected = await fetch(`${base}/v1/sessions/${id}/inject`, { method: 'POST', headers: json, body: JSON.stringify({ data: '+OK from REST\r\n' }) });
    assert.equal(injected.status, 200);
    assert.equal(await c.line(), '+OK from REST');
    const gone = await fetch(`${base}/v1/sessions/${id}`, { method: 'DELETE', headers: json, body: JSON.stringify({ text: 'Bye from REST' }) });
    assert.equal(gone.status, 200);
    assert.equal(await c.line(), '-ERR Bye from REST');
    await c.closed();
    assert.deepEqual(await (await fetch(`${base}/v1/sessions`)).json(), []);
  } finally {
    await server.stop();
  }
});

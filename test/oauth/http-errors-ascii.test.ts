/**
 * RFC 6749 section 5.2: error_description holds only %x20-21 / %x23-5B /
 * %x5D-7E. A parameter name with a quote, a backslash and a non-ASCII
 * character, repeated so the server names it in its refusal, must come back
 * within that set.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createServer } from '../../src/index.js';

test('error_description stays within the characters RFC 6749 section 5.2 allows', async () => {
  const server = createServer({ port: 0, rest: { port: 0 } });
  const { rest } = await server.start();
  try {
    const name = 'x"\\é';
    const body = `${encodeURIComponent(name)}=1&${encodeURIComponent(name)}=2&grant_type=client_credentials`;
    const res = await fetch(`http://127.0.0.1:${rest!.port}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body });
    const answer = (await res.json()) as { error: string; error_description: string };
    assert.equal(answer.error, 'invalid_request');
    assert.match(answer.error_description, /more than once/);
    assert.match(answer.error_description, /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/, answer.error_description);
    const revoke = await fetch(`http://127.0.0.1:${rest!.port}/oauth/revoke`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: '' });
    const r = (await revoke.json()) as { error_description: string };
    assert.match(r.error_description, /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/, r.error_description);
  } finally {
    await server.stop();
  }
});

/**
 * APPENDLIMIT (RFC 7889) over real sockets: the capability, the STATUS item,
 * APPEND refused before the literal is read, REST `checks: true` → 413, and
 * `pluginOptions.APPENDLIMIT` validation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, ServiceError } from '../../src/index.js';
import { RawClient } from '../helpers/raw-client.js';
import { rawSession, startServer } from '../helpers/server.js';
import { request, startRest } from '../rest/helpers.js';

const message = (size: number): string => {
  const head = 'Subject: x\r\n\r\n';
  return head + 'a'.repeat(Math.max(0, size - head.length));
};

test('RFC 7889 §3: APPENDLIMIT=<n> in CAPABILITY (before and after login) and the STATUS item', async () => {
  const { server, port } = await startServer({ plugins: ['APPENDLIMIT'], pluginOptions: { APPENDLIMIT: { limit: 257890 } } });
  try {
    const c = await RawClient.connect(port);
    assert.match(await c.line(), /\[CAPABILITY IMAP4rev1 APPENDLIMIT=257890\]/);
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 APPENDLIMIT=257890', 'T1 OK Capability completed']);
    await c.command('LOGIN testuser testpass');
    assert.deepEqual(await c.command('STATUS INBOX (MESSAGES APPENDLIMIT)'), [
      '* STATUS "INBOX" (MESSAGES 0 APPENDLIMIT 257890)',
      'T3 OK Status completed',
    ]);
    c.close();
  } finally {
    await server.stop();
  }
});

test('APPEND over the limit is NO [TOOBIG] before the literal is read; at the limit it is stored', async () => {
  const { server, port } = await startServer({ plugins: ['APPENDLIMIT', 'UIDPLUS'], pluginOptions: { APPENDLIMIT: { limit: 100 } } });
  try {
    const c = await rawSession(port);
    // Synchronizing literal: no continuation, the tagged NO comes at once.
    c.write('A1 APPEND INBOX {101}\r\n');
    assert.match(await c.line(), /^A1 NO \[TOOBIG\] /);
    // Non-synchronizing literal: its bytes are skipped, then NO.
    c.write(`A2 APPEND INBOX {101+}\r\n${message(101)}\r\n`);
    assert.match(await c.line(), /^A2 NO \[TOOBIG\] /);
    c.write('A3 APPEND INBOX {100}\r\n');
    assert.match(await c.line(), /^\+ /);
    c.write(`${message(100)}\r\n`);
    assert.match(await c.line(), /^A3 OK \[APPENDUID \d+ 1\] /);
    assert.equal(server.control.listMessages('INBOX').length, 1);
    // The session goes on normally.
    assert.deepEqual(await c.command('NOOP'), ['T2 OK NOOP completed']);
    // A changed limit applies to the next APPEND and shows in CAPABILITY.
    server.extension('APPENDLIMIT')!.setLimit(200);
    assert.equal(server.extension('APPENDLIMIT')!.limit, 200);
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 UIDPLUS APPENDLIMIT=200', 'T3 OK Capability completed']);
    c.write('A4 APPEND INBOX {150}\r\n');
    assert.match(await c.line(), /^\+ /);
    c.write(`${message(150)}\r\n`);
    assert.match(await c.line(), /^A4 OK /);
    assert.throws(() => server.extension('APPENDLIMIT')!.setLimit(0), (e: unknown) => e instanceof ServiceError && e.code === 'INVALID');
    c.close();
  } finally {
    await server.stop();
  }
});

test('default limit is maxLiteral', () => {
  const server = createServer({ plugins: ['APPENDLIMIT'], maxLiteral: 5000 });
  assert.equal(server.extension('APPENDLIMIT')!.limit, 5000);
});

test('REST: POST messages with checks: true over the limit is 413 TOOBIG; without checks it is added', async () => {
  const { server, restPort } = await startRest({ plugins: ['APPENDLIMIT'], pluginOptions: { APPENDLIMIT: { limit: 50 } } });
  try {
    const refused = await request(restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw: message(51), checks: true } });
    assert.equal(refused.status, 413);
    assert.equal(refused.json.error.code, 'TOOBIG');
    const small = await request(restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw: message(50), checks: true } });
    assert.equal(small.status, 201);
    const unchecked = await request(restPort, 'POST', '/v1/mailboxes/INBOX/messages', { json: { raw: message(51) } });
    assert.equal(unchecked.status, 201);
    assert.throws(
      () => server.control.addMessage('INBOX', { raw: message(60), checks: true }),
      (e: unknown) => e instanceof ServiceError && e.code === 'TOOBIG',
    );
  } finally {
    await server.stop();
  }
});

test('pluginOptions: typos, wrong types, unknown and unloaded plugins are construction errors', () => {
  const fails = (options: Parameters<typeof createServer>[0], message: RegExp): void => {
    assert.throws(() => createServer(options), (e: unknown) => e instanceof ServiceError && e.code === 'INVALID' && message.test(e.message));
  };
  fails({ plugins: ['APPENDLIMIT'], pluginOptions: { APPENDLIMIT: { limt: 5 } } }, /^pluginOptions\.APPENDLIMIT\.limt: unknown key; did you mean "limit"\?$/m);
  fails({ plugins: ['APPENDLIMIT'], pluginOptions: { APPENDLIMIT: { limit: 'big' } } }, /^pluginOptions\.APPENDLIMIT\.limit: expected an integer, got "big"$/m);
  fails({ plugins: ['APPENDLIMIT'], pluginOptions: { APPENDLIMIT: { limit: 0 } } }, /pluginOptions\.APPENDLIMIT\.limit: expected an integer >= 1/);
  fails({ plugins: ['APPENDLIMIT'], pluginOptions: { APPENDLIMIT: { other: 5 } } }, /pluginOptions\.APPENDLIMIT\.other: unknown key/);
  fails({ plugins: ['APPENDLIMIT'], pluginOptions: { APPENDLIMT: { limit: 5 } } }, /pluginOptions\.APPENDLIMT: unknown plugin; did you mean "APPENDLIMIT"\?/);
  fails({ plugins: ['IDLE'], pluginOptions: { APPENDLIMIT: { limit: 5 } } }, /pluginOptions\.APPENDLIMIT: the APPENDLIMIT plugin is not loaded/);
  fails({ plugins: ['IDLE'], pluginOptions: { IDLE: { x: 1 } } }, /pluginOptions\.IDLE: the IDLE plugin takes no options/);
  fails({ plugins: 'all', pluginOptions: [] as never }, /pluginOptions: expected an object/);
  fails({ plugins: 'all', pluginOption: {} } as never, /pluginOption: unknown key; did you mean "pluginOptions"\?/);
  // Names are matched in any case, and an entry for a loaded plugin is fine.
  assert.equal(createServer({ plugins: 'all', pluginOptions: { appendlimit: { limit: 9 } } }).extension('APPENDLIMIT')!.limit, 9);
});

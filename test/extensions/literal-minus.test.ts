/**
 * LITERAL- (RFC 7888) over real sockets: the capability, non-synchronizing
 * literals up to 4096 octets accepted, larger ones refused with a tagged
 * `BAD [TOOBIG]` whose bytes are dropped (the connection goes on),
 * synchronizing literals unaffected, and LITERAL+ winning when both are
 * loaded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rawSession, startServer } from '../helpers/server.js';
import { RawClient } from '../helpers/raw-client.js';

const message = (size: number): string => {
  const head = 'Subject: x\r\n\r\n';
  return head + 'a'.repeat(size - head.length);
};

test('RFC 7888 §4: LITERAL- in CAPABILITY before and after login', async () => {
  const { server, port } = await startServer({ plugins: ['LITERAL-'] });
  try {
    const c = await RawClient.connect(port);
    assert.equal(await c.line(), '* OK [CAPABILITY IMAP4rev1 LITERAL-] Rookery ready');
    await c.command('LOGIN testuser testpass');
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 LITERAL-', 'T2 OK Capability completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 7888 §4: {4096+} is accepted, {4097+} is BAD [TOOBIG] and its bytes are dropped; {4097} gets a continuation', async () => {
  const { server, port } = await startServer({ plugins: ['LITERAL-'] });
  try {
    const c = await rawSession(port);
    // The RFC's APPEND shape, at the limit.
    c.write(`A001 APPEND INBOX {4096+}\r\n${message(4096)}\r\n`);
    assert.match(await c.line(), /^A001 OK /);
    // One octet over: tagged BAD with TOOBIG; the literal's bytes are not read as commands.
    c.write(`A002 APPEND INBOX {4097+}\r\n${message(4097)}\r\n`);
    const refused = await c.line();
    assert.match(refused, /^A002 BAD \[TOOBIG\] /);
    assert.deepEqual(await c.command('NOOP'), ['T2 OK NOOP completed']);
    // A literal inside the bytes that are dropped changes nothing either.
    const commands = 'A004 NOOP\r\n'.repeat(500);
    c.write(`A003 LOGIN {${commands.length}+}\r\n${commands}\r\n`);
    assert.match(await c.line(), /^A003 BAD \[TOOBIG\] /);
    assert.deepEqual(await c.command('NOOP'), ['T3 OK NOOP completed']);
    // A synchronizing literal of any size (within maxLiteral) works as always.
    c.write('A005 APPEND INBOX {4097}\r\n');
    assert.match(await c.line(), /^\+ /);
    c.write(`${message(4097)}\r\n`);
    assert.match(await c.line(), /^A005 OK /);
    assert.deepEqual(
      server.control.listMessages('INBOX').map((m) => m.size),
      [4096, 4097],
    );
    c.close();
  } finally {
    await server.stop();
  }
});

test('LITERAL+ and LITERAL- together: LITERAL+ wins (advertised alone, no 4096 limit)', async () => {
  const { server, port } = await startServer({ plugins: ['LITERAL-', 'LITERAL+'] });
  try {
    const c = await rawSession(port);
    assert.deepEqual(await c.command('CAPABILITY'), ['* CAPABILITY IMAP4rev1 LITERAL+', 'T2 OK Capability completed']);
    c.write(`A1 APPEND INBOX {5000+}\r\n${message(5000)}\r\n`);
    assert.match(await c.line(), /^A1 OK /);
    c.close();
  } finally {
    await server.stop();
  }
});

/**
 * Issue 18, session side: what a broken or hostile IMAP client may cost.
 * Limits before login, connection caps, timers, a refused line inside
 * IDLE/AUTHENTICATE, one rule for TOOBIG, and output that a client does not
 * read (measured as the RSS of a server in a child process).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { afterEach, describe, test } from 'node:test';
import type { Server } from '../../src/index.js';
import { RawClient } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';
import { startChildServer } from './child-server.js';

let server: Server | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

async function start(options: Parameters<typeof startServer>[0]): Promise<number> {
  const started = await startServer(options);
  server = started.server;
  return started.port;
}

describe('before login', () => {
  test('many literals in one command add up: over maxCommandBeforeLogin is NO [TOOBIG], and the session goes on', async () => {
    const port = await start({ maxCommandBeforeLogin: 4096, maxLiteralBeforeLogin: 2048 });
    const c = await rawSession(port, false);
    const chunk = 'x'.repeat(2000);
    // Non-synchronizing literals: the bytes arrive whether or not the server wants them.
    c.write(`A1 LOGIN {2000+}\r\n${chunk} {2000+}\r\n${chunk} {2000+}\r\n${chunk}\r\n`);
    assert.equal(await c.line(), 'A1 NO [TOOBIG] Command too large before login (limit 4096 octets)');
    assert.match((await c.command('LOGIN testuser testpass')).join('\n'), /^T1 OK \[CAPABILITY IMAP4rev1[^\]]*\] Logged in$/);
    c.close();
  });

  test('loginTimeout: a connection that does not log in gets BYE and is closed; one that did stays', async () => {
    const port = await start({ loginTimeout: 150 });
    const waiting = await rawSession(port, false);
    const loggedIn = await rawSession(port, true);
    assert.equal(await waiting.line(), '* BYE No login within 0.15 seconds');
    await waiting.closedByServer();
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await loggedIn.command('NOOP'), ['T2 OK NOOP completed']);
    loggedIn.close();
  });

  test('maxUnauthenticated: one more connection gets BYE [UNAVAILABLE]; a login frees a place', async () => {
    const port = await start({ maxUnauthenticated: 2 });
    const a = await rawSession(port, false);
    const b = await rawSession(port, false);
    const refused = await RawClient.connect(port);
    assert.equal(await refused.line(), '* BYE [UNAVAILABLE] Too many connections waiting to log in (limit 2)');
    await refused.closedByServer();
    await a.command('LOGIN testuser testpass');
    const c = await rawSession(port, true);
    assert.deepEqual(await c.command('NOOP'), ['T2 OK NOOP completed']);
    for (const x of [a, b, c]) x.close();
  });
});

describe('connection cap and autologout', () => {
  test('maxConnections: one more gets BYE [UNAVAILABLE]; a close frees a place', async () => {
    const port = await start({ maxConnections: 2 });
    const a = await rawSession(port);
    const b = await rawSession(port);
    const refused = await RawClient.connect(port);
    assert.equal(await refused.line(), '* BYE [UNAVAILABLE] Too many connections (limit 2)');
    await refused.closedByServer();
    a.close();
    await new Promise((r) => setTimeout(r, 50));
    const c = await rawSession(port);
    assert.deepEqual(await c.command('NOOP'), ['T2 OK NOOP completed']);
    b.close();
    c.close();
  });

  test('idleTimeout: a logged-in session silent that long gets BYE (RFC 3501 §5.4)', async () => {
    const port = await start({ idleTimeout: 200 });
    const c = await rawSession(port);
    assert.match(await c.line(), /^\* BYE Autologout/);
    await c.closedByServer();
  });

  test('idleTimeout counts from the last traffic: commands keep a session in, and BYE comes no sooner than the timeout after the last', async () => {
    const port = await start({ idleTimeout: 300 });
    const c = await rawSession(port);
    // Twice the timeout in all, never silent for more than a third of it.
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, 100));
      assert.match((await c.command('NOOP')).at(-1)!, /^\S+ OK NOOP/);
    }
    const silentFrom = Date.now();
    assert.match(await c.line(3000), /^\* BYE Autologout/);
    // RFC 3501 §5.4: at least the timeout of inactivity (a timer may fire a millisecond early by the wall clock).
    assert.ok(Date.now() - silentFrom >= 295, `BYE after ${Date.now() - silentFrom} ms of silence`);
    await c.closedByServer();
  });
});

describe('a refused line inside a command ends that command (RFC 3501 §6.2.2, §7.1.3)', () => {
  test('IDLE: an over-long line gets the tagged BAD and the next command runs as a command', async () => {
    const port = await start({ plugins: 'all', maxLineLength: 1000 });
    const c = await rawSession(port);
    await c.command('SELECT INBOX');
    c.write('I1 IDLE\r\n');
    assert.equal(await c.line(), '+ idling');
    c.write(`${'x'.repeat(2000)}\r\nT9 NOOP\r\n`);
    assert.equal(await c.line(), 'I1 BAD Line too long');
    assert.equal(await c.line(), 'T9 OK NOOP completed');
    c.close();
  });

  test('AUTHENTICATE: an over-long response gets the tagged BAD; the next line is a command, not SASL data', async () => {
    const port = await start({ plugins: 'all', maxLineLength: 1000 });
    const c = await rawSession(port, false);
    c.write('A1 AUTHENTICATE PLAIN\r\n');
    assert.equal(await c.line(), '+ ');
    c.write(`${'A'.repeat(3000)}\r\nA2 LOGIN testuser testpass\r\n`);
    assert.equal(await c.line(), 'A1 BAD Line too long');
    assert.match(await c.line(), /^A2 OK /);
    c.close();
  });
});

describe('TOOBIG', () => {
  test('one rule: a literal over maxLiteral and a command over the framing limit are both NO [TOOBIG]', async () => {
    const port = await start({ maxLiteral: 1000 });
    const c = await rawSession(port);
    c.write('A1 APPEND INBOX {2000}\r\n');
    assert.equal(await c.line(), 'A1 NO [TOOBIG] Literal too big (limit 1000 octets)');
    c.write('A2 APPEND INBOX {300000000}\r\n');
    assert.match(await c.line(), /^A2 NO \[TOOBIG\] /);
    c.close();
  });
});


describe('a client that never reads', () => {
  test('1,000 pipelined FETCHes of a 1 MB message: the server stops reading and its RSS grows by under 64 MB', async () => {
    const child = await startChildServer({}, 1, 1024 * 1024);
    try {
      const before = await child.rss();
      const socket = net.connect(child.port, '127.0.0.1');
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.pause(); // never read
      let commands = 'a LOGIN testuser testpass\r\nb SELECT INBOX\r\n';
      for (let i = 0; i < 1000; i++) commands += `f${i} UID FETCH 1 BODY.PEEK[]\r\n`;
      socket.write(commands);
      await new Promise((r) => setTimeout(r, 1500));
      const after = await child.rss();
      socket.destroy();
      const grown = (after - before) / 1024 / 1024;
      assert.ok(grown < 64, `RSS grew by ${grown.toFixed(1)} MB`);
    } finally {
      child.stop();
    }
  });

  test('one FETCH of 200 messages of 1 MB each: bodies wait for the client, RSS grows by under 64 MB', async () => {
    const child = await startChildServer({}, 200, 1024 * 1024);
    try {
      const before = await child.rss();
      const socket = net.connect(child.port, '127.0.0.1');
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.pause();
      socket.write('a LOGIN testuser testpass\r\nb SELECT INBOX\r\nf FETCH 1:* BODY.PEEK[]\r\n');
      await new Promise((r) => setTimeout(r, 1500));
      const after = await child.rss();
      const grown = (after - before) / 1024 / 1024;
      // Reading resumes the FETCH where it waited: all 200 bodies arrive, then the tagged OK.
      let received = 0;
      let tail = '';
      const done = new Promise<void>((resolve) => {
        socket.on('data', (d: Buffer) => {
          received += d.length;
          tail = (tail + d.toString('latin1')).slice(-64);
          if (tail.includes('f OK Fetch completed')) resolve();
        });
      });
      socket.resume();
      await done;
      socket.destroy();
      assert.ok(received > 200 * 1024 * 1024, `received ${received} bytes`);
      assert.ok(grown < 64, `RSS grew by ${grown.toFixed(1)} MB while the client did not read`);
    } finally {
      child.stop();
    }
  });
});

describe('autologout timer across logins', () => {
  test('20 rounds of LOGIN and UNAUTHENTICATE add no listener per login (no MaxListenersExceededWarning), and autologout still works', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const port = await start({ plugins: 'all', idleTimeout: 300 });
      const c = await rawSession(port, false);
      for (let i = 0; i < 20; i++) {
        assert.match((await c.command('LOGIN testuser testpass')).at(-1)!, /OK/);
        assert.match((await c.command('UNAUTHENTICATE')).at(-1)!, /OK/);
      }
      await c.command('LOGIN testuser testpass');
      assert.match(await c.line(2000), /^\* BYE Autologout/);
      await c.closedByServer();
      assert.deepEqual(warnings.filter((w) => w === 'MaxListenersExceededWarning'), []);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

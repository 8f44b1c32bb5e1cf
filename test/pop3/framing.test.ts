/**
 * RFC 1939 §3's multi-line framing and the session's limits, byte for
 * byte over a raw socket: byte-stuffing, the CRLF before the dot line, the
 * sizes LIST reports against the octets RETR sends, over-long lines,
 * unknown commands and commands in the wrong state (the session goes on).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loggedIn, startPop3, WireClient } from './pop3-test.js';

test('RETR byte-stuffs lines that start with a dot, and LIST sizes are the octets before stuffing (RFC 1939 §3, §5)', async () => {
  const raw = 'Subject: dots\r\n\r\n.leading dot\r\n..two dots\r\nmiddle . dot\r\n.\r\nlast\r\n';
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: [raw] } } });
  try {
    const c = await loggedIn(pop3);
    assert.equal(await c.command('LIST 1'), `+OK 1 ${Buffer.byteLength(raw)}`);
    assert.equal(await c.command('RETR 1'), `+OK ${Buffer.byteLength(raw)} octets`);
    const body = await c.multi();
    assert.equal(body.toString('latin1'), 'Subject: dots\r\n\r\n..leading dot\r\n...two dots\r\nmiddle . dot\r\n..\r\nlast\r\n.\r\n');
    // Unstuffed, without the terminating line: exactly the octets LIST announced.
    const unstuffed = body.subarray(0, body.length - 3).toString('latin1').replace(/^\./gm, '');
    assert.equal(Buffer.byteLength(unstuffed), Buffer.byteLength(raw));
    c.close();
  } finally {
    await server.stop();
  }
});

test('a message without a final CRLF gets one before the dot line; bare LF line ends go out as CRLF and count so in LIST', async () => {
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: ['Subject: x\n\nno end', 'Subject: y\r\n\r\n.'] } } });
  try {
    const c = await loggedIn(pop3);
    assert.equal(await c.command('LIST'), '+OK 2 messages (35 octets)');
    assert.equal((await c.multi()).toString('latin1'), '1 20\r\n2 15\r\n.\r\n');
    assert.equal(await c.command('RETR 1'), '+OK 20 octets');
    assert.equal((await c.multi()).toString('latin1'), 'Subject: x\r\n\r\nno end\r\n.\r\n');
    assert.equal(await c.command('RETR 2'), '+OK 15 octets');
    assert.equal((await c.multi()).toString('latin1'), 'Subject: y\r\n\r\n..\r\n.\r\n');
    c.close();
  } finally {
    await server.stop();
  }
});

test('TOP n 0 sends the header and the blank line; an empty maildrop lists only the dot line; STAT is "+OK nn mm"', async () => {
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: ['A: 1\r\nB: 2\r\n\r\nbody\r\nmore\r\n'] } } });
  try {
    const c = await loggedIn(pop3);
    assert.equal(await c.command('TOP 1 0'), '+OK Top of message follows');
    assert.equal((await c.multi()).toString('latin1'), 'A: 1\r\nB: 2\r\n\r\n.\r\n');
    assert.equal(await c.command('TOP 1 1'), '+OK Top of message follows');
    assert.equal((await c.multi()).toString('latin1'), 'A: 1\r\nB: 2\r\n\r\nbody\r\n.\r\n');
    assert.equal(await c.command('TOP 1 99'), '+OK Top of message follows');
    assert.equal((await c.multi()).toString('latin1'), 'A: 1\r\nB: 2\r\n\r\nbody\r\nmore\r\n.\r\n');
    assert.equal(await c.command('DELE 1'), '+OK Message 1 deleted');
    assert.equal(await c.command('STAT'), '+OK 0 0');
    assert.equal(await c.command('LIST'), '+OK 0 messages (0 octets)');
    assert.equal((await c.multi()).toString('latin1'), '.\r\n');
    // RFC 1939 §5: a message marked deleted may not be named.
    assert.match((await c.command('RETR 1'))!, /^-ERR /);
    assert.match((await c.command('LIST 1'))!, /^-ERR /);
    assert.match((await c.command('DELE 1'))!, /^-ERR /);
    assert.match((await c.command('LIST 2'))!, /^-ERR /);
    assert.match((await c.command('RETR x'))!, /^-ERR /);
    c.close();
  } finally {
    await server.stop();
  }
});

test('unknown commands, wrong states, empty and over-long lines get -ERR and the session goes on', async () => {
  const { server, pop3 } = await startPop3({}, { maxLineLength: 300 });
  try {
    const c = await WireClient.connect(pop3);
    assert.match((await c.line())!, /^\+OK /);
    assert.match((await c.command('STAT'))!, /^-ERR .*Authorization/);
    assert.match((await c.command('PASS x'))!, /^-ERR /, 'PASS without USER');
    assert.match((await c.command('FROB'))!, /^-ERR Unknown command FROB/);
    assert.match((await c.command(''))!, /^-ERR /);
    assert.match((await c.command(`USER ${'x'.repeat(400)}`))!, /^-ERR Line too long \(limit 300 octets/);
    // A long line that arrives in pieces is dropped as it comes, and the next command is read.
    c.send(`NOOP ${'y'.repeat(200)}`);
    c.send(`${'y'.repeat(200)}\r\nCAPA\r\n`);
    assert.match((await c.line())!, /^-ERR Line too long/);
    assert.equal(await c.line(), '+OK Capability list follows');
    await c.multi();
    assert.equal(await c.command('user testuser'), '+OK Send PASS', 'keywords are case-insensitive (RFC 1939 §3)');
    assert.match((await c.command('PASS testpass'))!, /^\+OK /);
    assert.match((await c.command('USER testuser'))!, /^-ERR .*Transaction/);
    assert.equal(await c.command('NOOP'), '+OK');
    assert.equal(await c.command('QUIT'), '+OK Bye, 0 messages deleted, 0 left');
    await c.closed();
  } finally {
    await server.stop();
  }
});

test('pipelined commands are answered in order; a client that pipelines RETRs and reads nothing costs bounded output', { timeout: 30_000 }, async () => {
  const big = `Subject: big\r\n\r\n${'0123456789abcdef'.repeat(64 * 1024)}\r\n`; // 1 MiB
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: Array.from({ length: 20 }, () => big) } } });
  try {
    const c = await loggedIn(pop3);
    c.send('STAT\r\nLIST 1\r\nUIDL 1\r\nNOOP\r\n');
    assert.match((await c.line())!, /^\+OK 20 /);
    assert.match((await c.line())!, /^\+OK 1 /);
    assert.match((await c.line())!, /^\+OK 1 /);
    assert.equal(await c.line(), '+OK');
    // Twenty RETRs at once, nothing read: the server stops reading commands while its output waits.
    const retrs: string[] = [];
    server.on('command', (e) => {
      if (e.command === 'RETR') retrs.push(e.tag);
    });
    c.socket.pause();
    c.send(Array.from({ length: 20 }, (_, i) => `RETR ${i + 1}\r\n`).join(''));
    await new Promise((r) => setTimeout(r, 800));
    const ran = retrs.length;
    assert.ok(ran >= 1 && ran < 10, `only the RETRs whose output fits the high-water mark ran (${ran} of 20)`);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(retrs.length, ran, 'no further command runs while the client reads nothing');
    c.socket.resume();
    let got = 0;
    for (let i = 0; i < 20; i++) {
      assert.match((await c.line(10_000))!, /^\+OK \d+ octets$/);
      await c.multi(10_000);
      got++;
    }
    assert.equal(got, 20);
    c.close();
  } finally {
    await server.stop();
  }
});

/**
 * curl (pop3:// and pop3s://) and the npm client node-pop3 against the
 * POP3 listener; each checks the store and the IMAP view afterwards.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import Pop3Command from 'node-pop3';
import { mail, rawSession } from '../helpers/server.js';
import { startPop3 } from './pop3-test.js';

function curl(args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '--max-time', '10', ...args], { encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ stdout, stderr, code: error ? ((error as { code?: number }).code ?? 1) : 0 });
    });
  });
}

test('curl pop3:// lists, retrieves and deletes (DELE then QUIT): the store and an IMAP session see it gone', { timeout: 30_000 }, async () => {
  const { server, imap, pop3 } = await startPop3();
  server.control.addMessage('INBOX', { raw: mail('first') });
  server.control.addMessage('INBOX', { raw: mail('second', 'Body two') });
  try {
    const list = await curl(['-u', 'testuser:testpass', `pop3://127.0.0.1:${pop3}/`]);
    assert.equal(list.code, 0, list.stderr);
    const sizes = server.control.listMessages('INBOX').map((m) => m.size);
    assert.equal(list.stdout, `1 ${sizes[0]}\r\n2 ${sizes[1]}\r\n`);
    const retr = await curl(['-u', 'testuser:testpass', `pop3://127.0.0.1:${pop3}/2`]);
    assert.equal(retr.code, 0, retr.stderr);
    assert.equal(retr.stdout, mail('second', 'Body two'));
    const dele = await curl(['-u', 'testuser:testpass', '-X', 'DELE', '-I', `pop3://127.0.0.1:${pop3}/1`]);
    assert.equal(dele.code, 0, dele.stderr);
    assert.deepEqual(server.control.listMessages('INBOX').map((m) => m.uid), [2]);
    const c = await rawSession(imap);
    const selected = await c.command('SELECT INBOX');
    assert.ok(selected.includes('* 1 EXISTS'), selected.join('\n'));
    c.close();
    const wrong = await curl(['-u', 'testuser:nope', `pop3://127.0.0.1:${pop3}/`]);
    assert.notEqual(wrong.code, 0, 'a wrong password fails');
  } finally {
    await server.stop();
  }
});

test('curl pop3s:// on the implicit-TLS port, and pop3:// with --ssl-reqd through STLS', { timeout: 30_000 }, async () => {
  const tlsServer = await startPop3({}, { secure: true });
  tlsServer.server.control.addMessage('INBOX', { raw: mail('secret') });
  try {
    const r = await curl(['--insecure', '-u', 'testuser:testpass', `pop3s://127.0.0.1:${tlsServer.pop3}/1`]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, mail('secret'));
    assert.equal(tlsServer.server.control.listMessages('INBOX').length, 1, 'RETR deletes nothing');
  } finally {
    await tlsServer.server.stop();
  }
  const stls = await startPop3({}, { stls: true });
  stls.server.control.addMessage('INBOX', { raw: mail('upgraded') });
  const secure: boolean[] = [];
  stls.server.on('session', (e) => {
    if (e.type === 'login') secure.push(e.session.secure);
  });
  try {
    const r = await curl(['--insecure', '--ssl-reqd', '-u', 'testuser:testpass', `pop3://127.0.0.1:${stls.pop3}/1`]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, mail('upgraded'));
    assert.deepEqual(secure, [true], 'curl logged in after STLS');
  } finally {
    await stls.server.stop();
  }
});

test('node-pop3: STAT, LIST, UIDL, TOP, RETR, DELE, QUIT; the deleted message is gone from the store', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await startPop3();
  server.control.addMessage('INBOX', { raw: mail('one') });
  server.control.addMessage('INBOX', { raw: mail('two', '.dotted\r\nline') });
  const client = new Pop3Command({ user: 'testuser', password: 'testpass', host: '127.0.0.1', port: pop3 });
  try {
    const sizes = server.control.listMessages('INBOX').map((m) => m.size);
    assert.equal(await client.STAT(), `2 ${sizes[0]! + sizes[1]!}`);
    assert.deepEqual(await client.LIST(), [['1', String(sizes[0])], ['2', String(sizes[1])]]);
    const uidl = (await client.UIDL()) as string[][];
    assert.equal(uidl.length, 2);
    assert.match(uidl[0]![1]!, /^[0-9A-F]{16}$/);
    const top = await client.TOP(2, 0);
    assert.match(top, /Subject: two\r\n/);
    assert.ok(!top.includes('.dotted'));
    const body = await client.RETR(2);
    // node-pop3 0.11.0 hands back the body as framed: it leaves the byte-stuffing for the caller to undo.
    assert.ok(body.endsWith('\r\n\r\n..dotted\r\nline'), JSON.stringify(body));
    await client.DELE(1);
    await client.QUIT();
    assert.deepEqual(server.control.listMessages('INBOX').map((m) => m.uid), [2]);
  } finally {
    await server.stop();
  }
});

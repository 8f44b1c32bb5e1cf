/**
 * Python's poplib against the POP3 listener over real sockets (RFC 1939):
 * each test checks the store, and the IMAP view, afterwards.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ImapFlow } from 'imapflow';
import { mail } from '../helpers/server.js';
import { python, startPop3 } from './pop3-test.js';

const connect = (port: number): string => `import poplib, json, sys\np = poplib.POP3('127.0.0.1', ${port}, timeout=10)\n`;

test('poplib USER/PASS, STAT, LIST, RETR, DELE, QUIT: the marked message is expunged at QUIT, once, and an IDLE imapflow client sees the EXPUNGE', { timeout: 30_000 }, async () => {
  const { server, imap, pop3 } = await startPop3();
  for (let i = 1; i <= 3; i++) server.control.addMessage('INBOX', { raw: mail(`m${i}`) });
  const expunges: unknown[] = [];
  server.on('expunge', (e) => expunges.push(e));
  const client = new ImapFlow({ host: '127.0.0.1', port: imap, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
  try {
    await client.connect();
    await client.mailboxOpen('INBOX');
    const seen = new Promise<number>((resolve) => client.on('expunge', (d: { seq: number }) => resolve(d.seq)));
    void client.idle().catch(() => undefined);
    const sizes = server.control.listMessages('INBOX').map((m) => m.size);
    const out = await python(`${connect(pop3)}
p.user('testuser'); p.pass_('testpass')
stat = p.stat()
listing = p.list()
msg = p.retr(2)
dele = p.dele(2)
quit = p.quit()
print(json.dumps({'stat': stat, 'list': [l.decode() for l in listing[1]], 'size': listing[1][1].decode().split()[1], 'octets': msg[2], 'lines': [l.decode() for l in msg[1]], 'dele': dele.decode(), 'quit': quit.decode()}))
`);
    const r = JSON.parse(out) as { stat: [number, number]; list: string[]; size: string; octets: number; lines: string[]; dele: string; quit: string };
    assert.deepEqual(r.stat, [3, sizes.reduce((a, b) => a + b, 0)]);
    assert.deepEqual(r.list, sizes.map((s, i) => `${i + 1} ${s}`));
    // poplib's octet count is what RETR sent (lines + CRLF each): the size LIST announced.
    assert.equal(r.octets, Number(r.size));
    assert.equal(r.lines.find((l) => l.startsWith('Subject:')), 'Subject: m2');
    assert.match(r.dele, /^\+OK/);
    assert.match(r.quit, /^\+OK/);
    assert.equal(await seen, 2, 'the IDLE client hears EXPUNGE 2');
    assert.deepEqual(server.control.listMessages('INBOX').map((m) => m.uid), [1, 3]);
    const pop3Session = server.control.sessions().length === 1 ? 2 : -1;
    // One store change, one event; its origin is the POP3 session (number 2: the IMAP client is 1).
    assert.deepEqual(expunges, [{ path: 'INBOX', uids: [2], origin: pop3Session }]);
  } finally {
    await client.logout().catch(() => undefined);
    await server.stop();
  }
});

test('a connection that drops without QUIT deletes nothing (RFC 1939 §6: no UPDATE state)', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await startPop3();
  server.control.addMessage('INBOX', { raw: mail('keep') });
  const since = server.lastEventId();
  try {
    await python(`${connect(pop3)}
p.user('testuser'); p.pass_('testpass')
p.dele(1)
p.sock.close()
`);
    const closed = await server.waitFor('session', (e) => e.type === 'close' && e.session.protocol === 'pop3', { since });
    assert.equal(closed.data.session.state, 'Logout');
    assert.equal(server.control.listMessages('INBOX').length, 1);
  } finally {
    await server.stop();
  }
});

test('poplib RSET unmarks, TOP sends the header, the blank line and n body lines, UIDL is stable across sessions and changes with UIDVALIDITY', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await startPop3();
  server.control.addMessage('INBOX', { raw: 'Subject: a\r\nX-Two: b\r\n\r\nline 1\r\nline 2\r\nline 3\r\n' });
  server.control.addMessage('INBOX', { raw: mail('second') });
  const script = `${connect(pop3)}
p.user('testuser'); p.pass_('testpass')
p.dele(1)
stat1 = p.stat()
rset = p.rset().decode()
stat2 = p.stat()
top = p.top(1, 2)
uidl = [l.decode() for l in p.uidl()[1]]
one = p.uidl(2).decode()
p.quit()
print(json.dumps({'stat1': stat1, 'rset': rset, 'stat2': stat2, 'top': [l.decode() for l in top[1]], 'uidl': uidl, 'one': one}))
`;
  try {
    const first = JSON.parse(await python(script)) as { stat1: number[]; rset: string; stat2: number[]; top: string[]; uidl: string[]; one: string };
    assert.equal(first.stat1[0], 1, 'a marked message is not counted by STAT');
    assert.match(first.rset, /^\+OK/);
    assert.equal(first.stat2[0], 2);
    assert.deepEqual(first.top, ['Subject: a', 'X-Two: b', '', 'line 1', 'line 2']);
    const { uidvalidity } = server.control.getMailbox('INBOX');
    const hex = (n: number): string => n.toString(16).toUpperCase().padStart(8, '0');
    assert.deepEqual(first.uidl, [`1 ${hex(1)}${hex(uidvalidity)}`, `2 ${hex(2)}${hex(uidvalidity)}`]);
    assert.equal(first.one, `+OK 2 ${hex(2)}${hex(uidvalidity)}`);
    assert.equal(server.control.listMessages('INBOX').length, 2, 'RSET then QUIT deletes nothing');
    const again = JSON.parse(await python(script)) as { uidl: string[] };
    assert.deepEqual(again.uidl, first.uidl, 'the same ids in the next session');
    server.control.resetUidValidity('INBOX', {});
    const after = JSON.parse(await python(script)) as { uidl: string[] };
    const now = server.control.getMailbox('INBOX').uidvalidity;
    assert.notEqual(now, uidvalidity);
    assert.deepEqual(after.uidl, [`1 ${hex(1)}${hex(now)}`, `2 ${hex(2)}${hex(now)}`]);
  } finally {
    await server.stop();
  }
});

test('poplib APOP: the MD5 of the greeting timestamp and the password logs in; a wrong digest gets -ERR [AUTH]', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await startPop3();
  try {
    const out = await python(`${connect(pop3)}
welcome = p.getwelcome().decode()
try:
    p.apop('testuser', 'wrong')
    bad = 'no error'
except poplib.error_proto as e:
    bad = e.args[0].decode()
good = p.apop('testuser', 'testpass').decode()
stat = p.stat()
p.quit()
print(json.dumps({'welcome': welcome, 'bad': bad, 'good': good, 'stat': stat}))
`);
    const r = JSON.parse(out) as { welcome: string; bad: string; good: string; stat: number[] };
    // RFC 1939 §7: the timestamp is a msg-id, <process-ID.clock@hostname>.
    assert.match(r.welcome, /^\+OK .* <\d+\.\d+\.\d+@[A-Za-z0-9.-]+>$/);
    assert.match(r.bad, /^-ERR \[AUTH\] /);
    assert.match(r.good, /^\+OK/);
    assert.deepEqual(r.stat, [0, 0]);
  } finally {
    await server.stop();
  }
});

test('POP3 sessions are in the sessions listing with protocol pop3 and the POP3 states; session events name the protocol', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await startPop3();
  const events: { type: string; protocol: string; state: string }[] = [];
  server.on('session', (e) => events.push({ type: e.type, protocol: e.session.protocol, state: e.session.state }));
  const since = server.lastEventId();
  try {
    const run = python(`${connect(pop3)}
print(p.getwelcome().decode())
p.user('testuser'); p.pass_('testpass')
import time; time.sleep(0.5)
p.quit()
`);
    await server.waitFor('session', (e) => e.type === 'login', { since });
    const listed = server.control.sessions();
    assert.equal(listed.length, 1);
    assert.equal(listed[0]!.protocol, 'pop3');
    assert.equal(listed[0]!.state, 'Transaction');
    assert.equal(listed[0]!.user, 'testuser');
    assert.equal(listed[0]!.mailbox, 'INBOX');
    assert.match(await run, /^\+OK/);
    await server.waitFor('session', (e) => e.type === 'close', { since });
    assert.deepEqual(events, [
      { type: 'open', protocol: 'pop3', state: 'Authorization' },
      { type: 'login', protocol: 'pop3', state: 'Transaction' },
      { type: 'logout', protocol: 'pop3', state: 'Update' },
      { type: 'close', protocol: 'pop3', state: 'Logout' },
    ]);
  } finally {
    await server.stop();
  }
});

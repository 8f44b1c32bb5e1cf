/**
 * Script rules `on: "pop3"` and the POP3 faults (issue 33 item 5), the
 * listener's refusals ([IN-USE], [LOGIN-DELAY]), EXPIRE 0, changes made by
 * others while a session is open, and the control API's disconnect and
 * inject of POP3 sessions.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loggedIn, startPop3, WireClient } from './pop3-test.js';

const dotted = 'Subject: d\r\n\r\n.starts with a dot\r\nend\r\n';

test('pop3Fault no-stuffing, no-dot and double-dot change exactly the framing of RETR', async () => {
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: [dotted, dotted, dotted] } } });
  try {
    server.script.add({ on: 'pop3', command: 'RETR', nth: 1, pop3Fault: 'no-stuffing' });
    server.script.add({ on: 'pop3', command: 'RETR', nth: 1, pop3Fault: 'double-dot' }); // the first RETR this rule is asked about: the second
    const c = await loggedIn(pop3);
    assert.equal(await c.command('RETR 1'), `+OK ${dotted.length} octets`);
    assert.equal((await c.multi()).toString(), 'Subject: d\r\n\r\n.starts with a dot\r\nend\r\n.\r\n');
    assert.equal(await c.command('RETR 2'), `+OK ${dotted.length} octets`);
    assert.equal((await c.multi()).toString(), 'Subject: d\r\n\r\n..starts with a dot\r\nend\r\n.\r\n');
    assert.equal(await c.line(), '.', 'the second terminating line');
    server.script.clear();
    server.script.add({ on: 'pop3', command: 'RETR', pop3Fault: 'no-dot' });
    c.send('RETR 3\r\nNOOP\r\n');
    assert.equal(await c.line(), `+OK ${dotted.length} octets`);
    // No terminating line: the NOOP's answer follows the body directly.
    assert.equal((await c.bytes(dotted.length + 1 + 5)).toString(), 'Subject: d\r\n\r\n..starts with a dot\r\nend\r\n+OK\r\n');
    c.close();
  } finally {
    await server.stop();
  }
});

test('pop3Fault lf-size: LIST and STAT count LF line ends while RETR sends CRLF', async () => {
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: ['A: 1\r\n\r\nb\r\n'] } } });
  try {
    server.script.add({ on: 'pop3', command: ['LIST', 'STAT'], pop3Fault: 'lf-size' });
    const c = await loggedIn(pop3);
    assert.equal(await c.command('STAT'), '+OK 1 8');
    assert.equal(await c.command('LIST 1'), '+OK 1 8');
    assert.equal(await c.command('RETR 1'), '+OK 11 octets');
    assert.equal((await c.multi()).length, 11 + 3);
    c.close();
  } finally {
    await server.stop();
  }
});

test('pop3Fault uidl-repeat and uidl-change: the ids repeat within a session, or change between sessions', async () => {
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: ['A: 1\r\n\r\n', 'A: 2\r\n\r\n'] } } });
  try {
    const rule = server.script.add({ on: 'pop3', command: 'UIDL', pop3Fault: 'uidl-repeat' });
    const c = await loggedIn(pop3);
    assert.equal(await c.command('UIDL'), '+OK Unique-ID listing follows');
    const [one, two] = (await c.multi()).toString().split('\r\n');
    assert.equal(one!.split(' ')[1], two!.split(' ')[1]);
    rule.remove();
    server.script.add({ on: 'pop3', command: 'UIDL', pop3Fault: 'uidl-change' });
    assert.match((await c.command('UIDL 1'))!, /^\+OK 1 \S+$/);
    const first = (await c.command('UIDL 1'))!;
    c.close();
    const d = await loggedIn(pop3);
    assert.notEqual(await d.command('UIDL 1'), first);
    d.close();
  } finally {
    await server.stop();
  }
});

test('command rules: send answers instead (no command event), drop+close ends the connection after RETR without +OK, delay and chunk shape a response; greeting and response stages', async () => {
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: [dotted] } } });
  try {
    server.script.add({ on: 'pop3', stage: 'greeting', send: '+OK scripted greeting' });
    server.script.add({ on: 'pop3', command: 'PASS', times: 1, send: '-ERR [IN-USE] Mailbox locked' });
    server.script.add({ on: 'pop3', stage: 'response', match: '^\\+OK 1 ', delay: 50, chunk: 3 });
    server.script.add({ on: 'pop3', command: 'RETR', drop: true, close: true });
    const commands: string[] = [];
    server.on('command', (e) => commands.push(`${e.tag} ${e.command} ${e.status}`));
    const c = await WireClient.connect(pop3);
    assert.equal(await c.line(), '+OK scripted greeting');
    await c.command('USER testuser');
    assert.equal(await c.command('PASS testpass'), '-ERR [IN-USE] Mailbox locked');
    await c.command('USER testuser');
    assert.match((await c.command('PASS testpass'))!, /^\+OK /);
    const t0 = Date.now();
    assert.equal(await c.command('STAT'), `+OK 1 ${dotted.length}`);
    assert.ok(Date.now() - t0 >= 40, 'the response rule delayed STAT');
    c.send('RETR 1\r\n');
    await c.closed();
    assert.equal(c.received.toString().endsWith(`+OK 1 ${dotted.length}\r\n`), true, 'nothing after STAT: no +OK for RETR');
    // PASS answered by the rule and the RETR the rule dropped make no command event.
    assert.deepEqual(commands, ['1 USER OK', '3 USER OK', '4 PASS OK', '5 STAT OK']);
    assert.equal(server.control.listMessages('INBOX').length, 1);
  } finally {
    await server.stop();
  }
});

test('pop3.exclusive refuses a second session of the user with -ERR [IN-USE]; pop3.loginDelay with -ERR [LOGIN-DELAY]; both are advertised or off by default', async () => {
  const { server, pop3 } = await startPop3({}, { exclusive: true });
  try {
    const first = await loggedIn(pop3);
    const second = await WireClient.connect(pop3);
    await second.line();
    await second.command('USER testuser');
    assert.equal(await second.command('PASS testpass'), '-ERR [IN-USE] Mailbox is locked by another POP3 session');
    assert.equal(await first.command('QUIT'), '+OK Bye, 0 messages deleted, 0 left');
    await first.closed();
    await second.command('USER testuser');
    assert.match((await second.command('PASS testpass'))!, /^\+OK /, 'free again once the first has gone');
    second.close();
  } finally {
    await server.stop();
  }
  let clock = 1_000_000;
  const delayed = await startPop3({ now: () => clock }, { loginDelay: 60 });
  try {
    const a = await loggedIn(delayed.pop3);
    assert.equal(await a.command('CAPA'), '+OK Capability list follows');
    assert.match((await a.multi()).toString(), /\r\nLOGIN-DELAY 60\r\n/);
    a.close();
    const b = await WireClient.connect(delayed.pop3);
    await b.line();
    await b.command('USER testuser');
    assert.equal(await b.command('PASS testpass'), '-ERR [LOGIN-DELAY] Logins are allowed only every 60 seconds');
    clock += 60_000;
    await b.command('USER testuser');
    assert.match((await b.command('PASS testpass'))!, /^\+OK /);
    b.close();
  } finally {
    await delayed.server.stop();
  }
});

test('EXPIRE 0: retrieved messages are deleted at QUIT without DELE (RFC 2449 §6.7); CAPA says EXPIRE 0', async () => {
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: ['A: 1\r\n\r\n', 'A: 2\r\n\r\n'] } } }, { expire: 0 });
  try {
    const c = await loggedIn(pop3);
    await c.command('CAPA');
    assert.match((await c.multi()).toString(), /\r\nEXPIRE 0\r\n/);
    await c.command('TOP 1 0');
    await c.multi();
    await c.command('RETR 2');
    await c.multi();
    assert.equal(await c.command('QUIT'), '+OK Bye, 1 messages deleted, 1 left');
    assert.deepEqual(server.control.listMessages('INBOX').map((m) => m.uid), [1], 'TOP is not a retrieval');
  } finally {
    await server.stop();
  }
});

test('a message expunged by the control API while the session is open keeps its number and size; RETR answers -ERR; QUIT removes only what is still there', async () => {
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: ['A: 1\r\n\r\n', 'A: 2\r\n\r\n', 'A: 3\r\n\r\n'] } } });
  try {
    const c = await loggedIn(pop3);
    server.control.expungeMessages('INBOX', { uids: [2] });
    server.control.addMessage('INBOX', { raw: 'A: 4\r\n\r\n' });
    assert.equal(await c.command('STAT'), '+OK 3 24', 'the maildrop is the one of login: 3 messages');
    assert.match((await c.command('RETR 2'))!, /^-ERR Message 2 was removed/);
    assert.equal(await c.command('DELE 2'), '+OK Message 2 deleted');
    assert.equal(await c.command('DELE 3'), '+OK Message 3 deleted');
    assert.equal(await c.command('QUIT'), '+OK Bye, 1 messages deleted, 2 left');
    assert.deepEqual(server.control.listMessages('INBOX').map((m) => m.uid), [1, 4]);
  } finally {
    await server.stop();
  }
});

test('control disconnect sends -ERR with the text and closes (nothing deleted); reset resets; inject writes verbatim', async () => {
  const { server, pop3 } = await startPop3({ storage: { INBOX: { messages: ['A: 1\r\n\r\n'] } } });
  try {
    const c = await loggedIn(pop3);
    await c.command('DELE 1');
    const id = server.control.sessions()[0]!.session;
    server.control.inject(id, '+OK injected\r\n');
    assert.equal(await c.line(), '+OK injected');
    server.control.disconnect(id, { text: 'Go away' });
    assert.equal(await c.line(), '-ERR Go away');
    await c.closed();
    assert.equal(server.control.listMessages('INBOX').length, 1);
    const d = await loggedIn(pop3);
    const id2 = server.control.sessions()[0]!.session;
    server.control.disconnect(id2, { reset: true });
    await d.closed();
    assert.equal(d.received.toString().includes('-ERR'), false);
  } finally {
    await server.stop();
  }
});

test('rules for on: pop3 are checked: unknown commands, IMAP-only fields and faults outside command rules are refused', async () => {
  const { server } = await startPop3();
  try {
    assert.throws(() => server.script.add({ on: 'pop3', command: 'RTER' }), /command: for on: pop3 one of .*did you mean "RETR"/);
    assert.throws(() => server.script.add({ on: 'pop3', command: 'RETR', mutate: [] }), /mutate: not meaningful for on: pop3/);
    assert.throws(() => server.script.add({ on: 'pop3', stage: 'response', pop3Fault: 'no-dot' }), /pop3Fault: only for stage: command/);
    assert.throws(() => server.script.add({ on: 'pop3', command: 'RETR', pop3Fault: 'no-dot', send: '-ERR x' }), /pop3Fault: cannot be combined/);
    assert.throws(() => server.script.add({ on: 'pop3', state: 'Selected' }), /state: for on: pop3 one of Authorization/);
    assert.throws(() => server.script.add({ on: 'command', stage: 'command' }), /stage: only for on: pop3/);
    assert.throws(() => server.script.add({ on: 'command', state: 'Transaction' }), /state: a POP3 state/);
    assert.equal(server.script.add({ on: 'pop3', command: ['auth plain', 'USER'], chance: 0.5, seedScope: 'session' }).id > 0, true);
  } finally {
    await server.stop();
  }
});

test('the POP3 defects of the library (rookery --defect): pop3-no-dot-stuffing ends a message at its lone "." line, pop3-uidl-reused repeats ids', async () => {
  const { server, pop3 } = await startPop3({ defects: ['pop3-no-dot-stuffing', 'pop3-uidl-reused'], storage: { INBOX: { messages: ['A: 1\r\n\r\nbefore\r\n.\r\nafter\r\n', 'A: 2\r\n\r\n'] } } });
  try {
    const c = await loggedIn(pop3);
    assert.equal(await c.command('RETR 1'), '+OK 26 octets');
    // What a client reads as the whole message: up to the unstuffed lone dot.
    assert.equal((await c.multi()).toString(), 'A: 1\r\n\r\nbefore\r\n.\r\n');
    assert.equal(await c.line(), 'after');
    assert.equal(await c.line(), '.');
    assert.equal(await c.command('UIDL'), '+OK Unique-ID listing follows');
    const ids = (await c.multi()).toString().split('\r\n').slice(0, 2).map((l) => l.split(' ')[1]);
    assert.equal(ids[0], ids[1]);
    c.close();
  } finally {
    await server.stop();
  }
});

test('per-user EXPIRE and LOGIN-DELAY (RFC 2449 §6.5, §6.7): the least value with USER before login, the user\'s own after it, and enforced', async () => {
  const users = { testuser: { password: 'testpass' }, alice: { password: 'alicepass' } };
  const { server, pop3 } = await startPop3({ users, storage: { INBOX: { messages: ['A: 1\r\n\r\n'] } } }, { expire: 30, expireUsers: { alice: 0 }, loginDelay: 0, loginDelayUsers: { alice: 600 } });
  try {
    const c = await WireClient.connect(pop3);
    await c.line();
    await c.command('CAPA');
    const before = (await c.multi()).toString();
    assert.match(before, /\r\nEXPIRE 0 USER\r\n/);
    assert.match(before, /\r\nLOGIN-DELAY 0 USER\r\n/);
    await c.command('USER testuser');
    await c.command('PASS testpass');
    await c.command('CAPA');
    const after = (await c.multi()).toString();
    assert.match(after, /\r\nEXPIRE 30\r\n/);
    assert.doesNotMatch(after, /LOGIN-DELAY|USER\r\n.*EXPIRE/);
    await c.command('RETR 1');
    await c.multi();
    assert.match((await c.command('QUIT'))!, /^\+OK /);
    assert.equal(server.control.listMessages('INBOX').length, 1, 'EXPIRE 30: a retrieved message stays');
    const a = await loggedIn(pop3, 'alice', 'alicepass');
    await a.command('CAPA');
    const alice = (await a.multi()).toString();
    assert.match(alice, /\r\nEXPIRE 0\r\n/);
    assert.match(alice, /\r\nLOGIN-DELAY 600\r\n/);
    a.close();
    const again = await WireClient.connect(pop3);
    await again.line();
    await again.command('USER alice');
    assert.match((await again.command('PASS alicepass'))!, /^-ERR \[LOGIN-DELAY\] .*600 seconds/);
    again.close();
  } finally {
    await server.stop();
  }
});

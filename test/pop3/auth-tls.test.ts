/**
 * SASL (RFC 5034), STLS (RFC 2595) and implicit TLS with Python's poplib,
 * against the same users and tokens as IMAP.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { python, startPop3, WireClient } from './pop3-test.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

test('poplib AUTH PLAIN, LOGIN, XOAUTH2 and OAUTHBEARER with and without an initial response; "*" aborts; a bad token gets the JSON challenge then -ERR [AUTH]', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await startPop3();
  try {
    const out = await python(`import poplib, json, base64
b = lambda s: base64.b64encode(s.encode()).decode()
def session():
    p = poplib.POP3('127.0.0.1', ${pop3}, timeout=10)
    return p
r = {}
p = session(); r['plain-ir'] = p._shortcmd('AUTH PLAIN ' + b('\\0testuser\\0testpass')).decode(); r['plain-stat'] = p.stat(); p.quit()
p = session(); r['plain-cont'] = p._shortcmd('AUTH PLAIN').decode(); r['plain-ok'] = p._shortcmd(b('\\0testuser\\0testpass')).decode(); p.quit()
p = session(); r['login-1'] = p._shortcmd('AUTH LOGIN').decode(); r['login-2'] = p._shortcmd(b('testuser')).decode(); r['login-3'] = p._shortcmd(b('testpass')).decode(); p.quit()
p = session(); r['xoauth2'] = p._shortcmd('AUTH XOAUTH2 ' + b('user=testuser\\x01auth=Bearer testtoken\\x01\\x01')).decode(); p.quit()
p = session(); r['oauthbearer'] = p._shortcmd('AUTH OAUTHBEARER ' + b('n,a=testuser,\\x01host=localhost\\x01port=110\\x01auth=Bearer testtoken\\x01\\x01')).decode(); p.quit()
p = session(); r['abort-1'] = p._shortcmd('AUTH PLAIN').decode()
try:
    p._shortcmd('*'); r['abort'] = 'no error'
except poplib.error_proto as e:
    r['abort'] = e.args[0].decode()
try:
    p._shortcmd('AUTH PLAIN ' + b('\\0testuser\\0wrong')); r['wrong'] = 'no error'
except poplib.error_proto as e:
    r['wrong'] = e.args[0].decode()
r['bad-token'] = p._shortcmd('AUTH XOAUTH2 ' + b('user=testuser\\x01auth=Bearer nope\\x01\\x01')).decode()
try:
    p._shortcmd(''); r['bad-token-end'] = 'no error'
except poplib.error_proto as e:
    r['bad-token-end'] = e.args[0].decode()
r['list'] = [l.decode() for l in p._longcmd('AUTH')[1]]
p.quit()
print(json.dumps(r))
`);
    const r = JSON.parse(out) as Record<string, string>;
    assert.match(r['plain-ir']!, /^\+OK Logged in/);
    assert.deepEqual(r['plain-stat'], [0, 0]);
    assert.equal(r['plain-cont'], '+ ', 'RFC 5034 §4: an empty challenge is "+ "');
    assert.match(r['plain-ok']!, /^\+OK Logged in/);
    assert.equal(r['login-1'], `+ ${b64('Username:')}`);
    assert.equal(r['login-2'], `+ ${b64('Password:')}`);
    assert.match(r['login-3']!, /^\+OK Logged in/);
    assert.match(r.xoauth2!, /^\+OK Logged in/);
    assert.match(r.oauthbearer!, /^\+OK Logged in/);
    assert.equal(r['abort-1'], '+ ');
    assert.match(r.abort!, /^-ERR /);
    assert.match(r.wrong!, /^-ERR \[AUTH\] /, 'RFC 3206: wrong credentials carry [AUTH]');
    assert.ok(r['bad-token']!.startsWith('+ '));
    assert.deepEqual(JSON.parse(Buffer.from(r['bad-token']!.slice(2), 'base64').toString()), { status: '401', schemes: 'Bearer', scope: 'https://mail.google.com/' });
    assert.match(r['bad-token-end']!, /^-ERR \[AUTH\] /);
    assert.deepEqual(r.list, ['PLAIN', 'LOGIN', 'XOAUTH2', 'OAUTHBEARER']);
  } finally {
    await server.stop();
  }
});

test('poplib STLS: CAPA lists STLS before and not after; the session is secure; plain text sent behind STLS is dropped (RFC 2595 §4)', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await startPop3({}, { stls: true });
  try {
    const out = await python(`import poplib, json, ssl
p = poplib.POP3('127.0.0.1', ${pop3}, timeout=10)
before = sorted(p.capa().keys())
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
p.stls(ctx)
after = sorted(p.capa().keys())
p.user('testuser'); p.pass_('testpass')
print(json.dumps({'before': before, 'after': after, 'stat': p.stat()}))
p.quit()
`);
    const r = JSON.parse(out) as { before: string[]; after: string[]; stat: number[] };
    assert.ok(r.before.includes('STLS'));
    assert.ok(!r.after.includes('STLS'));
    assert.deepEqual(r.stat, [0, 0]);
    // The injection RFC 2595 warns about: a command sent in the same packet as STLS never runs.
    const c = await WireClient.connect(pop3);
    await c.line();
    c.send('STLS\r\nUSER injected\r\n');
    assert.equal(await c.line(), '+OK Begin TLS negotiation');
    await c.startTls();
    assert.match((await c.command('PASS testpass'))!, /^-ERR /, 'the USER sent in plain text was dropped');
    assert.equal(server.control.sessions()[0]!.secure, true);
    assert.match((await c.command('STLS'))!, /^-ERR /, 'no second STLS');
    c.close();
  } finally {
    await server.stop();
  }
});

test('poplib POP3_SSL on an implicit-TLS port (pop3.secure) with the test certificate', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await startPop3({}, { secure: true });
  server.control.addMessage('INBOX', { raw: 'Subject: tls\r\n\r\nover TLS\r\n' });
  try {
    const out = await python(`import poplib, json, ssl
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
p = poplib.POP3_SSL('127.0.0.1', ${pop3}, context=ctx, timeout=10)
caps = sorted(p.capa().keys())
p.user('testuser'); p.pass_('testpass')
msg = [l.decode() for l in p.retr(1)[1]]
p.quit()
print(json.dumps({'caps': caps, 'msg': msg}))
`);
    const r = JSON.parse(out) as { caps: string[]; msg: string[] };
    assert.ok(!r.caps.includes('STLS'));
    assert.deepEqual(r.msg, ['Subject: tls', '', 'over TLS']);
  } finally {
    await server.stop();
  }
});

/**
 * ACL with a real client: Python's stdlib imaplib (setacl, getacl,
 * deleteacl, myrights, and LISTRIGHTS through _simple_command), two users on
 * one server. testuser owns what it creates; alice cannot see, select or
 * append to it until granted; negative rights and `anyone` behave as RFC
 * 4314 §2 says.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { createServer } from '../../src/index.js';

const PYTHON = process.env.PYTHON ?? 'python3';
const available = spawnSync(PYTHON, ['--version']).status === 0;
const skipReason = !available && !process.env.CI ? `${PYTHON} not installed` : false;

// The client script: two imaplib connections; every step's (type, data) goes into one JSON object.
const SCRIPT = String.raw`
import imaplib, json, re, sys
host, port = sys.argv[1], int(sys.argv[2])
imaplib.Commands.setdefault('LISTRIGHTS', ('AUTH', 'SELECTED'))
out = {}
def dec(v):
    if isinstance(v, bytes): return v.decode('utf-8', 'replace')
    if isinstance(v, (list, tuple)): return [dec(x) for x in v]
    return v
def step(name, fn):
    try:
        out[name] = dec(list(fn()))
    except imaplib.IMAP4.readonly as e:
        out[name] = ['READ-ONLY', str(e)]
    except imaplib.IMAP4.error as e:
        out[name] = ['ERROR', str(e)]
def listrights(c, box, who):
    typ, dat = c._simple_command('LISTRIGHTS', box, who)
    return c._untagged_response(typ, dat, 'LISTRIGHTS')
def imapclient_getacl(data):
    # As IMAPClient's getacl(): its response lexer keeps a quoted string's quotes in the token, and
    # getacl() pairs the tokens after the mailbox name as they are (so "testuser" would stay quoted).
    tokens = re.findall(rb'"(?:[^"\\]|\\.)*"|[^\s()]+', data)[1:]
    return [[tokens[i].decode(), tokens[i + 1].decode()] for i in range(0, len(tokens), 2)]
def names(c):
    typ, dat = c.list()
    return typ, [d.decode().rsplit(' ', 1)[-1].strip('"') for d in dat if d]

t = imaplib.IMAP4(host, port)
a = imaplib.IMAP4(host, port)
t.login('testuser', 'testpass')
a.login('alice', 'alicepass')
out['caps'] = list(a.capabilities)

step('t_create', lambda: t.create('Private'))
step('t_getacl', lambda: t.getacl('Private'))
step('t_myrights', lambda: t.myrights('Private'))
step('t_append', lambda: t.append('Private', None, None, b'Subject: hi\r\n\r\nbody\r\n'))

# alice before any grant: the mailbox does not exist for her.
step('a_list0', lambda: names(a))
step('a_select0', lambda: a.select('Private'))
step('a_append0', lambda: a.append('Private', None, None, b'Subject: x\r\n\r\nx\r\n'))
step('a_myrights0', lambda: a.myrights('Private'))
step('a_getacl0', lambda: a.getacl('Private'))

# lr: listed, read-only, still no APPEND, no GETACL.
step('t_setacl_lr', lambda: t.setacl('Private', 'alice', 'lr'))
step('a_list1', lambda: names(a))
step('a_select1', lambda: a.select('Private'))
step('a_examine1', lambda: a.select('Private', readonly=True))
step('a_fetch1', lambda: a.fetch('1', '(BODY.PEEK[HEADER.FIELDS (SUBJECT)])'))
step('a_append1', lambda: a.append('Private', None, None, b'Subject: x\r\n\r\nx\r\n'))
step('a_getacl1', lambda: a.getacl('Private'))

# +i: APPEND works and SELECT is read-write.
step('t_setacl_i', lambda: t.setacl('Private', 'alice', '+i'))
step('a_append2', lambda: a.append('Private', None, None, b'Subject: from alice\r\n\r\nx\r\n'))
step('a_select2', lambda: a.select('Private'))
step('a_myrights2', lambda: a.myrights('Private'))

# Negative rights: anyone lr, -alice r: alice keeps l and i but loses r.
step('t_setacl_anyone', lambda: t.setacl('Private', 'anyone', 'lr'))
step('t_setacl_neg', lambda: t.setacl('Private', '-alice', 'r'))
step('a_myrights3', lambda: a.myrights('Private'))
step('a_select3', lambda: a.select('Private'))
step('t_getacl3', lambda: t.getacl('Private'))
step('t_listrights', lambda: listrights(t, 'Private', 'alice'))
out['t_getacl3_pairs'] = imapclient_getacl(t.getacl('Private')[1][0])

# DELETEACL: the negative entry goes, r comes back; then alice's own entry and anyone's go.
step('t_deleteacl_neg', lambda: t.deleteacl('Private', '-alice'))
step('a_select4', lambda: a.select('Private'))
step('a_close4', lambda: a.close())
step('t_deleteacl_alice', lambda: t.deleteacl('Private', 'alice'))
step('t_deleteacl_anyone', lambda: t.deleteacl('Private', 'anyone'))
step('a_list5', lambda: names(a))
step('a_select5', lambda: a.select('Private'))
step('t_getacl5', lambda: t.getacl('Private'))

# alice may not administer what she cannot see, nor create below it.
step('a_setacl5', lambda: a.setacl('Private', 'alice', 'lrswipkxtea'))
step('a_create5', lambda: a.create('Private/Mine'))
t.logout()
a.logout()
print(json.dumps(out))
`;

test('Python imaplib: ACL across two users', { skip: skipReason, timeout: 30_000 }, async () => {
  const server = createServer({
    plugins: ['ACL'],
    port: 0,
    users: { testuser: { password: 'testpass' }, alice: { password: 'alicepass' } },
  });
  const events: string[] = [];
  server.on('acl', (e) => events.push(e.path));
  try {
    const { imap } = await server.start();
    const child = spawn(PYTHON, ['-c', SCRIPT, imap.host, String(imap.port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, `imaplib script failed:\n${stderr}\n${stdout}`);
    const r = JSON.parse(stdout.trim().split('\n').at(-1)!);

    assert.ok(r.caps.includes('ACL') && r.caps.includes('RIGHTS=TEXK'), JSON.stringify(r.caps));
    assert.equal(r.t_create[0], 'OK');
    assert.deepEqual(r.t_getacl, ['OK', ['"Private" testuser lrswipkxtecda']]);
    assert.deepEqual(r.t_myrights, ['OK', ['"Private" lrswipkxtecda']]);
    assert.equal(r.t_append[0], 'OK');

    // Not granted: alice does not see the mailbox at all.
    assert.deepEqual(r.a_list0, ['OK', ['INBOX']]);
    assert.equal(r.a_select0[0], 'NO');
    assert.match(r.a_select0[1][0], /^\[NONEXISTENT\]/);
    assert.equal(r.a_append0[0], 'NO');
    assert.match(r.a_append0[1][0], /^\[TRYCREATE\]/);
    assert.equal(r.a_myrights0[0], 'NO');
    assert.match(r.a_myrights0[1][0], /^\[NONEXISTENT\]/);
    assert.match(r.a_getacl0[1][0], /^\[NONEXISTENT\]/);

    // lr.
    assert.equal(r.t_setacl_lr[0], 'OK');
    assert.deepEqual(r.a_list1, ['OK', ['INBOX', 'Private']]);
    assert.equal(r.a_select1[0], 'READ-ONLY', 'imaplib refuses a SELECT answered READ-ONLY');
    assert.deepEqual(r.a_examine1, ['OK', ['1']], 'EXAMINE works');
    assert.equal(r.a_fetch1[0], 'OK');
    assert.match(JSON.stringify(r.a_fetch1[1]), /Subject: hi/);
    assert.equal(r.a_append1[0], 'NO');
    assert.match(r.a_append1[1][0], /^\[NOPERM\]/);
    assert.match(r.a_getacl1[1][0], /^\[NOPERM\]/);

    // +i.
    assert.equal(r.a_append2[0], 'OK');
    assert.deepEqual(r.a_select2, ['OK', ['2']]);
    assert.deepEqual(r.a_myrights2, ['OK', ['"Private" lri']]);

    // Negative rights.
    assert.deepEqual(r.a_myrights3, ['OK', ['"Private" li']]);
    assert.equal(r.a_select3[0], 'NO');
    assert.match(r.a_select3[1][0], /^\[NOPERM\]/);
    assert.deepEqual(r.t_getacl3, ['OK', ['"Private" testuser lrswipkxtecda alice lri anyone lr -alice r']]);
    assert.deepEqual(r.t_listrights, ['OK', ['"Private" alice "" l r s w i p k x t e c d a']]);
    // What IMAPClient's getacl() returns: the raw tokens after the mailbox, in pairs, quotes kept.
    assert.deepEqual(r.t_getacl3_pairs, [['testuser', 'lrswipkxtecda'], ['alice', 'lri'], ['anyone', 'lr'], ['-alice', 'r']]);

    // DELETEACL.
    assert.equal(r.t_deleteacl_neg[0], 'OK');
    assert.equal(r.a_select4[0], 'OK');
    assert.equal(r.a_close4[0], 'OK');
    assert.deepEqual(r.a_list5, ['OK', ['INBOX']]);
    assert.match(r.a_select5[1][0], /^\[NONEXISTENT\]/);
    assert.deepEqual(r.t_getacl5, ['OK', ['"Private" testuser lrswipkxtecda']]);
    assert.match(r.a_setacl5[1][0], /^\[NONEXISTENT\]/);
    assert.equal(r.a_create5[0], 'NO');
    assert.match(r.a_create5[1][0], /^\[NOPERM\]/);

    // One acl event per change: the CREATE, four SETACLs, three DELETEACLs.
    assert.deepEqual(events, Array(8).fill('Private'));
    assert.deepEqual(server.extension('ACL')!.getAcl('Private'), { testuser: 'lrswipkxtea' });
  } finally {
    await server.stop();
  }
});

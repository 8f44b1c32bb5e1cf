/**
 * CATENATE (RFC 4469) over real sockets: the RFC's Appendix A examples
 * (a forwarded draft built from URL parts and TEXT literals, each
 * synchronizing literal with its continuation; the BADURL failure), URL
 * forms of RFC 5092 (absolute, absolute-path, percent-encoded UTF-8 names,
 * SECTION, PARTIAL), every BADURL case, TOOBIG, access, several CATENATE
 * messages in one MULTIAPPEND, and syntax errors answered with BAD.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { RawClient } from '../helpers/raw-client.js';
import { mail, rawSession, startServer } from '../helpers/server.js';

const BOUNDARY = '------------030308070208000400050907';
const DRAFT_HEADER =
  'From: Bob <bob@example.com>\r\n' +
  'To: Alice <alice@example.com>\r\n' +
  'Subject: Fwd: meeting\r\n' +
  'MIME-Version: 1.0\r\n' +
  `Content-Type: multipart/mixed; boundary="${BOUNDARY}"\r\n` +
  '\r\n';
const PART1_MIME = 'Content-Type: text/plain; charset=us-ascii\r\nContent-Transfer-Encoding: 7bit\r\n\r\n';
const PART1_BODY = 'See the message below.';
const DRAFT =
  DRAFT_HEADER +
  `--${BOUNDARY}\r\n` +
  PART1_MIME +
  PART1_BODY +
  `\r\n--${BOUNDARY}\r\n` +
  'Content-Type: text/plain\r\n\r\n' +
  'An old attachment\r\n' +
  `--${BOUNDARY}--\r\n`;
const FORWARDED = mail('meeting', 'Shall we meet at 3:30?');
const DELIM = `\r\n--${BOUNDARY}\r\n`;
const CLOSE = `\r\n--${BOUNDARY}--\r\n`;

async function setup(plugins: string[] | 'all' = ['CATENATE', 'UIDPLUS'], options: Record<string, unknown> = {}) {
  const started = await startServer({ plugins, ...options });
  const { server } = started;
  server.control.createMailbox('Drafts');
  server.control.addMessage('Drafts', { raw: DRAFT });
  server.control.addMessage('Drafts', { raw: FORWARDED });
  server.control.resetUidValidity('Drafts', { uidvalidity: 385759045 });
  return started;
}

/** Sends a command whose synchronizing literals each wait for their continuation; returns the response lines. */
async function withLiterals(c: RawClient, tag: string, pieces: string[]): Promise<string[]> {
  // pieces: text up to and including a `{n}` marker, then the literal with what follows up to the next marker, ...
  for (let i = 0; i < pieces.length; i++) {
    const last = i === pieces.length - 1;
    c.write(pieces[i]! + '\r\n');
    if (last) break;
    const line = await c.line();
    if (!line.startsWith('+ ')) return [line];
  }
  return c.until(tag);
}

const stored = (server: { control: { listMessages(p: string, o: { raw: boolean }): { raw?: string }[] } }, path: string): string[] =>
  server.control.listMessages(path, { raw: true }).map((m) => Buffer.from(m.raw!, 'base64').toString('latin1'));

test('capabilities: CATENATE; URL-PARTIAL (RFC 5550) is a plugin of its own that loads CATENATE', async () => {
  for (const [plugins, caps] of [
    [['CATENATE'], 'CATENATE'],
    [['URL-PARTIAL'], 'CATENATE URL-PARTIAL'],
  ] as const) {
    const { server, port } = await startServer({ plugins: [...plugins] });
    try {
      const c = await rawSession(port);
      assert.deepEqual((await c.command('CAPABILITY'))[0], `* CAPABILITY IMAP4rev1 ${caps}`);
      c.close();
    } finally {
      await server.stop();
    }
  }
});

test('RFC 4469 Appendix A: a forward built from URL parts and TEXT literals, a continuation per literal', async () => {
  const { server, port } = await setup();
  try {
    const c = await rawSession(port);
    await c.command('EXAMINE Drafts');
    const base = '/Drafts;UIDVALIDITY=385759045/;UID=';
    const lines = await withLiterals(c, 'A003', [
      `A003 APPEND Drafts (\\Seen \\Draft $MDNSent) CATENATE (URL "${base}1/;section=HEADER" TEXT {${DELIM.length}}`,
      `${DELIM} URL "${base}1/;section=1.MIME" URL "${base}1/;section=1" TEXT {${DELIM.length}}`,
      `${DELIM} URL "${base}2" TEXT {${CLOSE.length}}`,
      `${CLOSE})`,
    ]);
    assert.equal(lines.at(-1), 'A003 OK [APPENDUID 385759045 3] Append completed');
    // The appending session has Drafts selected: it hears of the new keyword and message itself.
    assert.ok(lines.includes('* 3 EXISTS'), lines.join('\n'));
    const all = stored(server, 'Drafts');
    assert.equal(all[2], DRAFT_HEADER + DELIM + PART1_MIME + PART1_BODY + DELIM + FORWARDED + CLOSE);
    const [info] = server.control.listMessages('Drafts', { uids: [3] });
    assert.deepEqual(info!.flags, ['\\Seen', '\\Draft', '$MDNSent']);
    // Reading through a URL is a peek: the sources keep their flags.
    assert.deepEqual(server.control.listMessages('Drafts').slice(0, 2).map((m) => m.flags), [[], []]);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 4469 Appendix A: a URL of a message that is gone is NO [BADURL url], nothing appended', async () => {
  const { server, port } = await setup();
  try {
    const c = await rawSession(port);
    const v = server.control.getMailbox('INBOX').uidvalidity;
    const bad = `/INBOX;UIDVALIDITY=${v}/;UID=113330/;section=1.5.9`;
    const lines = await withLiterals(c, 'A003', [
      `A003 APPEND Drafts (\\Seen \\Draft $MDNSent) CATENATE (URL "/Drafts;UIDVALIDITY=385759045/;UID=1/;section=HEADER" TEXT {${DELIM.length}}`,
      `${DELIM} URL "${bad}" TEXT {${CLOSE.length}}`,
      `${CLOSE})`,
    ]);
    assert.match(lines.at(-1)!, new RegExp(`^A003 NO \\[BADURL ${bad.replace(/[.;/]/g, '\\$&')}\\] `));
    assert.equal(stored(server, 'Drafts').length, 2);
    assert.deepEqual(await c.command('NOOP'), ['T2 OK NOOP completed']);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 5092 URL forms: absolute imap:// of this user, absolute and relative paths, percent-encoded UTF-8 names, SECTION with field lists, PARTIAL', async () => {
  const { server, port } = await setup(['CATENATE', 'LITERAL+']);
  try {
    // "Entwürfe" is Entw&APw-rfe in modified UTF-7 and Entw%C3%BCrfe in a URL.
    server.control.createMailbox('Entw&APw-rfe');
    server.control.addMessage('Entw&APw-rfe', { raw: FORWARDED });
    const v = server.control.getMailbox('Entw&APw-rfe').uidvalidity;
    const c = await rawSession(port);
    const cases: [string, string][] = [
      [`imap://testuser@localhost:143/Drafts;UIDVALIDITY=385759045/;UID=2`, FORWARDED],
      [`IMAP://testuser;AUTH=*@127.0.0.1/Drafts/;uid=2`, FORWARDED],
      [`imap://localhost/Drafts/;UID=2/;PARTIAL=0.4`, 'From'],
      [`/Entw%C3%BCrfe;UIDVALIDITY=${v}/;UID=1/;SECTION=TEXT`, 'Shall we meet at 3:30?\r\n'],
      [`/Entw&APw-rfe/;UID=1/;SECTION=HEADER.FIELDS%20(Subject)`, 'Subject: meeting\r\n\r\n'],
      [`/Drafts/;UID=1/;SECTION=2/;PARTIAL=3`, 'old attachment'],
      [`/Drafts/;UID=1/;SECTION=1/;PARTIAL=100.5`, ''],
      // A relative-path reference is resolved against imap://testuser@server/ (RFC 4469 §3).
      [`Drafts;UIDVALIDITY=385759045/;UID=2/;SECTION=HEADER.FIELDS%20(Subject)`, 'Subject: meeting\r\n\r\n'],
      [`/drafts/;UID=1/;SECTION=1.MIME`, ''],
      [`/Drafts;UIDVALIDITY=385759045/;UID=1/;SECTION=1;URLAUTH=anonymous:internal:91354a473744909de610943775f92038`, PART1_BODY],
    ];
    let n = 0;
    for (const [url, expected] of cases) {
      n++;
      const lines = await withLiterals(c, `U${n}`, [`U${n} APPEND INBOX CATENATE (TEXT {1+}\r\n< URL ${JSON.stringify(url)} TEXT {1+}\r\n>)`]);
      if (url.startsWith('/drafts')) {
        // Mailbox names other than INBOX are case-sensitive.
        assert.match(lines.at(-1)!, /^U\d+ NO \[BADURL \/drafts\/;UID=1\/;SECTION=1\.MIME\] /, url);
        continue;
      }
      assert.match(lines.at(-1)!, /^U\d+ OK /, url);
      assert.equal(stored(server, 'INBOX').at(-1), `<${expected}>`, url);
    }
    c.close();
  } finally {
    await server.stop();
  }
});

test('BADURL: every URL that does not resolve, with the URL echoed; the session goes on', async () => {
  const { server, port } = await setup(['CATENATE', 'LITERAL+'], { users: { testuser: { password: 'testpass' }, alice: { password: 'pw' } } });
  try {
    const c = await rawSession(port);
    const urls = [
      ';UID=1', // relative to the base imap://testuser@server/: no mailbox
      '../Drafts/;UID=1',
      '/Drafts;UIDVALIDITY=1/;UID=1', // another UIDVALIDITY
      '/Drafts', // a mailbox, not a message
      '/Drafts?SUBJECT%20x', // a message list
      '/Drafts/;UID=9', // no such message
      '/Nope/;UID=1', // no such mailbox
      '/Drafts/;UID=1/;SECTION=7', // no such part
      '/Drafts/;UID=1/;SECTION=1.2.3',
      '/Drafts/;UID=1/;SECTION=BOGUS',
      '/Drafts/;UID=1/;PARTIAL=1.0',
      '/Drafts;UID=1', // the / before ;UID is missing
      '/Drafts/;UID=0',
      '/Drafts/;UID=1/;SECTION=1/;FOO=2',
      '/Dr%ZZafts/;UID=1',
      '/Dr%FFafts/;UID=1', // not UTF-8
      'imap://alice@localhost/Drafts/;UID=1', // another user
      'imap:///Drafts/;UID=1',
      'http://example.com/Drafts/;UID=1',
      '/Drafts/;UID=1#frag',
    ];
    let n = 0;
    for (const url of urls) {
      n++;
      const lines = await c.command(`APPEND INBOX CATENATE (URL ${JSON.stringify(url)})`);
      const tagged = lines.at(-1)!;
      const code = /^T\d+ NO \[BADURL ([^\]]+)\] /.exec(tagged);
      assert.ok(code, `${url}: ${tagged}`);
      assert.equal(code[1], url.replace(/ /g, '%20'), url);
    }
    // A URL that cannot be echoed as it is gets its bad characters percent-encoded.
    const odd = await c.command('APPEND INBOX CATENATE (URL "/Drafts/;UID=1]x")');
    assert.match(odd.at(-1)!, /^T\d+ NO \[BADURL \/Drafts\/;UID=1%5Dx\] /);
    assert.match((await c.command('APPEND INBOX CATENATE (URL "")')).at(-1)!, /^T\d+ NO (?!\[)/);
    assert.equal(server.control.listMessages('INBOX').length, 0);
    assert.deepEqual((await c.command('NOOP')).at(-1), `T${urls.length + 4} OK NOOP completed`);
    c.close();
  } finally {
    await server.stop();
  }
});

test('ACL: a URL into a mailbox the user may not read is BADURL (the rights FETCH needs)', async () => {
  const { server, port } = await setup(['CATENATE', 'ACL']);
  try {
    server.control.createMailbox('Secret');
    server.control.addMessage('Secret', { raw: FORWARDED });
    server.extension('ACL')!.setAcl('Secret', 'anyone', 'l');
    server.control.createMailbox('Hidden');
    server.control.addMessage('Hidden', { raw: FORWARDED });
    server.extension('ACL')!.setAcl('Hidden', 'anyone', '');
    const c = await rawSession(port);
    assert.match((await c.command('APPEND INBOX CATENATE (URL "/Secret/;UID=1")')).at(-1)!, /NO \[BADURL \/Secret\/;UID=1\] /);
    assert.match((await c.command('APPEND INBOX CATENATE (URL "/Hidden/;UID=1")')).at(-1)!, /NO \[BADURL \/Hidden\/;UID=1\] No such mailbox/);
    server.extension('ACL')!.setAcl('Secret', 'anyone', 'lr');
    assert.match((await c.command('APPEND INBOX CATENATE (URL "/Secret/;UID=1")')).at(-1)!, /OK/);
    c.close();
  } finally {
    await server.stop();
  }
});

test('RFC 4469 TOOBIG: a result larger than the server accepts is NO [TOOBIG]; APPENDLIMIT counts the whole message', async () => {
  const big = mail('big', 'x'.repeat(3000));
  {
    const { server, port } = await setup(['CATENATE'], { maxLiteral: 4000 });
    try {
      server.control.addMessage('INBOX', { raw: big });
      const c = await rawSession(port);
      assert.match((await c.command('APPEND INBOX CATENATE (URL "/INBOX/;UID=1")')).at(-1)!, /OK/);
      const twice = await c.command('APPEND INBOX CATENATE (URL "/INBOX/;UID=1" URL "/INBOX/;UID=1")');
      assert.match(twice.at(-1)!, /^T\d+ NO \[TOOBIG\] /);
      assert.equal(server.control.listMessages('INBOX').length, 2);
      c.close();
    } finally {
      await server.stop();
    }
  }
  {
    const { server, port } = await setup(['CATENATE', 'APPENDLIMIT'], { pluginOptions: { APPENDLIMIT: { limit: 5000 } } });
    try {
      server.control.addMessage('INBOX', { raw: big });
      const c = await rawSession(port);
      const twice = await c.command('APPEND INBOX CATENATE (URL "/INBOX/;UID=1" URL "/INBOX/;UID=1")');
      assert.match(twice.at(-1)!, /^T\d+ NO \[TOOBIG\] /);
      assert.equal(server.control.listMessages('INBOX').length, 1);
      c.close();
    } finally {
      await server.stop();
    }
  }
});

test('with MULTIAPPEND: several CATENATE messages in one APPEND, all or none', async () => {
  const { server, port } = await setup(['CATENATE', 'MULTIAPPEND', 'UIDPLUS', 'LITERAL+']);
  try {
    const other = await rawSession(port);
    await other.command('SELECT INBOX');
    const c = await rawSession(port);
    const plain = mail('plain');
    const ok = await withLiterals(c, 'M1', [
      `M1 APPEND INBOX CATENATE (URL "/Drafts/;UID=2") (\\Seen) {${plain.length}+}\r\n${plain} CATENATE (TEXT {3+}\r\nabc URL "/Drafts/;UID=1/;SECTION=1")`,
    ]);
    const v = server.control.getMailbox('INBOX').uidvalidity;
    assert.deepEqual(ok, [`M1 OK [APPENDUID ${v} 1:3] Append completed`]);
    assert.deepEqual(stored(server, 'INBOX'), [FORWARDED, plain, `abc${PART1_BODY}`]);
    assert.deepEqual((await other.command('NOOP')).filter((l) => l.includes('EXISTS')), ['* 3 EXISTS']);
    // The third message's URL fails: none of the three is stored, the other session hears nothing.
    const bad = await withLiterals(c, 'M2', [
      `M2 APPEND INBOX CATENATE (URL "/Drafts/;UID=2") {${plain.length}+}\r\n${plain} CATENATE (URL "/Drafts/;UID=99")`,
    ]);
    assert.match(bad.at(-1)!, /^M2 NO \[BADURL \/Drafts\/;UID=99\] /);
    assert.equal(server.control.listMessages('INBOX').length, 3);
    assert.deepEqual(await other.command('NOOP'), ['T4 OK NOOP completed']);
    c.close();
    other.close();
  } finally {
    await server.stop();
  }
});

test('RFC 4469 §5 grammar: malformed CATENATE lists are BAD; without the extension CATENATE is BAD', async () => {
  {
    const { server, port } = await setup(['CATENATE']);
    try {
      const c = await rawSession(port);
      for (const data of ['CATENATE ()', 'CATENATE (TEXT "abc")', 'CATENATE (FOO "x")', 'CATENATE (URL)', 'CATENATE (URL ("/Drafts/;UID=1"))', 'CATENATE "/Drafts/;UID=1"', 'CATENATE', 'CATENATE (URL "/Drafts/;UID=1"']) {
        assert.match((await c.command(`APPEND INBOX ${data}`)).at(-1)!, /^T\d+ BAD /, data);
      }
      // Without MULTIAPPEND a second message is BAD.
      assert.match((await c.command('APPEND INBOX CATENATE (URL "/Drafts/;UID=1") CATENATE (URL "/Drafts/;UID=1")')).at(-1)!, /^T\d+ BAD /);
      assert.equal(server.control.listMessages('INBOX').length, 0);
      c.close();
    } finally {
      await server.stop();
    }
  }
  {
    const { server, port } = await setup(['UIDPLUS']);
    try {
      const c = await rawSession(port);
      assert.match((await c.command('APPEND INBOX CATENATE (URL "/Drafts/;UID=1")')).at(-1)!, /^T\d+ BAD /);
      c.close();
    } finally {
      await server.stop();
    }
  }
});

const PYTHON = process.env.PYTHON ?? 'python3';
const pythonMissing = spawnSync(PYTHON, ['--version']).status !== 0 && !process.env.CI ? `${PYTHON} not installed` : false;

// imaplib has no CATENATE: its literal callback (a bound method, called at each
// continuation) sends the TEXT literal and the rest of the list.
const IMAPLIB_CATENATE = `
import imaplib, sys
M = imaplib.IMAP4(sys.argv[1], int(sys.argv[2]))
M.login('testuser', 'testpass')
assert 'CATENATE' in M.capabilities, M.capabilities
text = sys.argv[3].encode()
class Rest:
    def send(self, _continuation):
        return text + b' URL "/Drafts;UIDVALIDITY=385759045/;UID=1/;SECTION=1")'
M.literal = Rest().send
typ, data = M._simple_command('APPEND', 'INBOX', '(\\\\Flagged)', 'CATENATE', '(URL', '"/Drafts/;UID=2/;SECTION=HEADER"', 'TEXT', '{%d}' % len(text))
print(typ, M.untagged_responses['APPENDUID'][0].decode())
M.logout()
`;

test('Python imaplib sends a CATENATE APPEND through its literal callback', { skip: pythonMissing, timeout: 20_000 }, async () => {
  const { server, port } = await setup('all');
  try {
    const child = spawn(PYTHON, ['-c', IMAPLIB_CATENATE, '127.0.0.1', String(port), 'Forwarded:\r\n']);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, err);
    assert.equal(out.trim(), `OK ${server.control.getMailbox('INBOX').uidvalidity} 1`);
    const header = FORWARDED.slice(0, FORWARDED.indexOf('\r\n\r\n') + 4);
    assert.deepEqual(stored(server, 'INBOX'), [`${header}Forwarded:\r\n${PART1_BODY}`]);
    assert.deepEqual(server.control.listMessages('INBOX')[0]!.flags, ['\\Flagged']);
  } finally {
    await server.stop();
  }
});

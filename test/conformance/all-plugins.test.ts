/**
 * Every plugin loaded at once (`plugins: ["all", "X-GM-EXT-1"]`, STARTTLS
 * on): each capability the server advertises, before and after login, is
 * exercised by one probe taken from its RFC's own command syntax, on a
 * fresh connection to the one server. The test fails when a capability is
 * advertised that no probe covers (nothing goes unchecked), when a probe's
 * capability is not advertised (nothing is skipped for a missing
 * capability), and when any probe's exchange does not go as its RFC says.
 * Extensions loaded together must not break each other: this is where
 * that shows.
 */
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { after, before, test } from 'node:test';
import type { Server } from '../../src/index.js';
import { RawClient } from '../helpers/raw-client.js';
import { mail, startServer } from '../helpers/server.js';

const TEXT_PART = 'Content-Type: text/plain\r\n\r\nhello part\r\n';
const MULTI =
  'From: a@example.com\r\nSubject: multi\r\nMessage-ID: <multi@example.com>\r\nMIME-Version: 1.0\r\n' +
  `Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\n${TEXT_PART}--b\r\nContent-Type: application/octet-stream\r\n` +
  'Content-Transfer-Encoding: base64\r\n\r\nAAEC\r\n--b--\r\n';

let server: Server;
let port: number;

before(async () => {
  ({ server, port } = await startServer({
    plugins: ['all', 'X-GM-EXT-1'],
    starttls: true,
    users: { testuser: { password: 'testpass', xoauth2: { accessToken: 'good-token' } }, other: { password: 'otherpass' } },
    storage: {
      INBOX: { messages: [{ raw: mail('first') }, { raw: MULTI }, { raw: mail('Re: first', 'reply', 'In-Reply-To: <first@example.com>\r\n') }] },
      '': { separator: '/', folders: { Archive: { folders: { '2026': {} } } } },
    },
  }));
});
after(async () => {
  await server.stop();
});

type Stage = 'greeting' | 'login' | 'select';

interface Probe {
  /** The capability token this probe covers (several tokens may share a probe). */
  covers: readonly string[];
  stage: Stage;
  run(c: RawClient): Promise<void>;
}

const b64 = (s: string): string => Buffer.from(s, 'latin1').toString('base64');

async function session(stage: Stage): Promise<RawClient> {
  const c = await RawClient.connect(port);
  await c.line();
  if (stage !== 'greeting') ok(await c.command('LOGIN testuser testpass'));
  if (stage === 'select') ok(await c.command('SELECT INBOX'));
  return c;
}

/** The tagged line is OK; returns the lines joined for matching. */
function ok(lines: string[]): string {
  const text = lines.join('\n');
  assert.match(lines[lines.length - 1]!, /^\S+ OK/, text);
  return text;
}

async function okMatch(c: RawClient, command: string, pattern: RegExp): Promise<string> {
  const text = ok(await c.command(command));
  assert.match(text, pattern, `${command}\n${text}`);
  return text;
}

const probes: Probe[] = [
  { covers: ['IMAP4rev1'], stage: 'login', run: async (c) => void (await okMatch(c, 'EXAMINE INBOX', /\* 3 EXISTS/)) },
  { covers: ['IMAP4rev2'], stage: 'login', run: async (c) => void (await okMatch(c, 'ENABLE IMAP4rev2', /\* ENABLED IMAP4REV2/i)) },
  {
    covers: ['IDLE'],
    stage: 'select',
    run: async (c) => {
      c.write('I1 IDLE\r\n');
      assert.match(await c.line(), /^\+ /);
      c.write('DONE\r\n');
      ok(await c.until('I1'));
    },
  },
  { covers: ['NAMESPACE'], stage: 'login', run: async (c) => void (await okMatch(c, 'NAMESPACE', /^\* NAMESPACE \(\(/m)) },
  { covers: ['UIDPLUS'], stage: 'login', run: async (c) => void (await okMatch(c, 'APPEND Archive {5+}\r\nhello', /OK \[APPENDUID \d+ \d+\]/)) },
  {
    covers: ['MOVE'],
    stage: 'login',
    run: async (c) => {
      ok(await c.command('APPEND Archive/2026 {9+}\r\nmove me\r\n'));
      ok(await c.command('SELECT Archive/2026'));
      await okMatch(c, 'MOVE 1 Archive', /\* OK \[COPYUID \d+ \d+ \d+\][\s\S]*\* 1 EXPUNGE/);
    },
  },
  { covers: ['UNSELECT'], stage: 'select', run: async (c) => void (await okMatch(c, 'UNSELECT', /OK/)) },
  { covers: ['ENABLE', 'CONDSTORE'], stage: 'login', run: async (c) => void (await okMatch(c, 'ENABLE CONDSTORE', /\* ENABLED CONDSTORE/)) },
  { covers: ['ID'], stage: 'greeting', run: async (c) => void (await okMatch(c, 'ID ("name" "probe")', /^\* ID \(/m)) },
  // LITERAL- is not advertised beside LITERAL+ (RFC 7888 §4: LITERAL+ includes it).
  { covers: ['LITERAL+'], stage: 'greeting', run: async (c) => void (await okMatch(c, 'LOGIN {8+}\r\ntestuser {8+}\r\ntestpass', /OK/)) },
  { covers: ['SASL-IR', 'AUTH=PLAIN'], stage: 'greeting', run: async (c) => void (await okMatch(c, `AUTHENTICATE PLAIN ${b64('\0testuser\0testpass')}`, /OK/)) },
  {
    covers: ['AUTH=XOAUTH2'],
    stage: 'greeting',
    run: async (c) => void (await okMatch(c, `AUTHENTICATE XOAUTH2 ${b64('user=testuser\x01auth=Bearer good-token\x01\x01')}`, /OK/)),
  },
  {
    covers: ['AUTH=OAUTHBEARER'],
    stage: 'greeting',
    run: async (c) => void (await okMatch(c, `AUTHENTICATE OAUTHBEARER ${b64('n,a=testuser,\x01auth=Bearer good-token\x01\x01')}`, /OK/)),
  },
  {
    covers: ['STARTTLS'],
    stage: 'greeting',
    run: async (c) => {
      ok(await c.command('STARTTLS'));
      // The same connection, now under TLS (the built-in test certificate): CAPABILITY no longer offers STARTTLS.
      const secure = tls.connect({ socket: c.socket, rejectUnauthorized: false });
      const answer = await new Promise<string>((resolve, reject) => {
        let text = '';
        secure.on('data', (d: Buffer) => {
          text += d.toString('latin1');
          if (/\r\nS1 /.test(text) || text.startsWith('S1 ')) resolve(text);
        });
        secure.once('error', reject);
        secure.write('S1 CAPABILITY\r\n');
      });
      assert.match(answer, /^\* CAPABILITY /m);
      assert.doesNotMatch(answer, / STARTTLS/);
      assert.match(answer, /S1 OK/);
      secure.destroy();
    },
  },
  { covers: ['CHILDREN'], stage: 'login', run: async (c) => void (await okMatch(c, 'LIST "" Archive', /\* LIST \(\\HasChildren\) "\/" "?Archive"?\r?$/m)) },
  {
    covers: ['SPECIAL-USE', 'CREATE-SPECIAL-USE'],
    stage: 'login',
    run: async (c) => {
      ok(await c.command('CREATE Probe-Drafts (USE (\\Drafts))'));
      await okMatch(c, 'LIST (SPECIAL-USE) "" "*"', /\* LIST \([^)]*\\Drafts[^)]*\) "\/" "?Probe-Drafts"?$/m);
    },
  },
  { covers: ['APPENDLIMIT'], stage: 'login', run: async (c) => void (await okMatch(c, 'STATUS INBOX (APPENDLIMIT)', /\* STATUS "?INBOX"? \(APPENDLIMIT \d+\)/)) },
  {
    covers: ['MULTIAPPEND'],
    stage: 'login',
    run: async (c) => void (await okMatch(c, 'APPEND Archive {3+}\r\none {3+}\r\ntwo', /OK \[APPENDUID \d+ \d+:\d+\]/)),
  },
  {
    covers: ['CATENATE', 'URL-PARTIAL'],
    stage: 'login',
    run: async (c) => {
      const url = '/INBOX/;UID=2/;SECTION=1/;PARTIAL=0.5'; // RFC 5092 §7: ;PARTIAL= is a segment of its own
      await okMatch(c, `APPEND Archive CATENATE (TEXT {9+}\r\nSubject:  URL "${url}")`, /OK \[APPENDUID/);
    },
  },
  {
    covers: ['URLAUTH', 'URLAUTH=BINARY'],
    stage: 'login',
    run: async (c) => {
      const gen = await okMatch(c, 'GENURLAUTH "imap://testuser@localhost/INBOX/;UID=2/;SECTION=2;URLAUTH=user+testuser" INTERNAL', /\* GENURLAUTH "/);
      const url = /\* GENURLAUTH "([^"]+)"/.exec(gen)![1]!;
      // The base64 part "AAEC" is the bytes 0, 1, 2: a NUL, so a literal8.
      await okMatch(c, `URLFETCH ("${url}" BINARY)`, /\(BINARY ~\{3\}\r\n\x00\x01\x02\)/);
    },
  },
  {
    // METADATA includes METADATA-SERVER and is advertised alone (RFC 5464 §1).
    covers: ['METADATA'],
    stage: 'login',
    run: async (c) => {
      ok(await c.command('SETMETADATA INBOX (/private/comment "probe")'));
      await okMatch(c, 'GETMETADATA INBOX /private/comment', /\* METADATA "?INBOX"? \(\/private\/comment "probe"\)/);
      ok(await c.command('SETMETADATA "" (/private/comment "server")'));
      await okMatch(c, 'GETMETADATA "" /private/comment', /\* METADATA "" \(\/private\/comment "server"\)/);
    },
  },
  {
    covers: ['ACL', 'RIGHTS=texk'],
    stage: 'login',
    run: async (c) => {
      ok(await c.command('SETACL Archive other lr'));
      await okMatch(c, 'GETACL Archive', /\* ACL "?Archive"? .*"?other"? lr/);
      await okMatch(c, 'MYRIGHTS INBOX', /\* MYRIGHTS "?INBOX"? "?[a-z]+/);
    },
  },
  { covers: ['LIST-MYRIGHTS'], stage: 'login', run: async (c) => void (await okMatch(c, 'LIST "" INBOX RETURN (MYRIGHTS)', /\* MYRIGHTS "?INBOX"? /)) },
  {
    covers: ['QUOTA', 'QUOTA=RES-STORAGE', 'QUOTA=RES-MESSAGE', 'QUOTA=RES-MAILBOX', 'QUOTASET'],
    stage: 'login',
    run: async (c) => {
      const root = await okMatch(c, 'GETQUOTAROOT INBOX', /\* QUOTAROOT "?INBOX"?/);
      const name = /\* QUOTAROOT "?INBOX"? (\S+)/.exec(root)?.[1] ?? '""';
      ok(await c.command(`SETQUOTA ${name} (STORAGE 100000 MESSAGE 1000 MAILBOX 100)`));
      await okMatch(c, `GETQUOTA ${name}`, /\* QUOTA \S+ \(STORAGE \d+ 100000 MESSAGE \d+ 1000 MAILBOX \d+ 100\)/);
    },
  },
  {
    covers: ['QRESYNC'],
    stage: 'login',
    run: async (c) => {
      ok(await c.command('ENABLE QRESYNC'));
      const status = await okMatch(c, 'STATUS INBOX (UIDVALIDITY HIGHESTMODSEQ)', /HIGHESTMODSEQ \d+/);
      const uidvalidity = /UIDVALIDITY (\d+)/.exec(status)![1]!;
      await okMatch(c, `SELECT INBOX (QRESYNC (${uidvalidity} 1))`, /OK \[HIGHESTMODSEQ \d+\]/);
    },
  },
  {
    covers: ['COMPRESS=DEFLATE'],
    stage: 'login',
    run: async (c) => void (await okMatch(c, 'COMPRESS DEFLATE', /OK/)),
  },
  { covers: ['STATUS=SIZE'], stage: 'login', run: async (c) => void (await okMatch(c, 'STATUS INBOX (SIZE)', /\* STATUS "?INBOX"? \(SIZE \d+\)/)) },
  { covers: ['LIST-STATUS'], stage: 'login', run: async (c) => void (await okMatch(c, 'LIST "" INBOX RETURN (STATUS (MESSAGES))', /\* STATUS "?INBOX"? \(MESSAGES 3\)/)) },
  { covers: ['ESEARCH'], stage: 'select', run: async (c) => void (await okMatch(c, 'SEARCH RETURN (MIN MAX COUNT) ALL', /\* ESEARCH \(TAG "T\d+"\) MIN 1 MAX 3 COUNT 3/)) },
  {
    covers: ['SEARCHRES'],
    stage: 'select',
    run: async (c) => {
      ok(await c.command('SEARCH RETURN (SAVE) SUBJECT multi'));
      await okMatch(c, 'FETCH $ (UID)', /^\* 2 FETCH \(UID 2\)$/m);
    },
  },
  { covers: ['SORT'], stage: 'select', run: async (c) => void (await okMatch(c, 'SORT (SUBJECT) UTF-8 ALL', /^\* SORT 1 3 2$/m)) },
  { covers: ['SORT=DISPLAY'], stage: 'select', run: async (c) => void (await okMatch(c, 'SORT (DISPLAYFROM) UTF-8 ALL', /^\* SORT( \d){3}$/m)) },
  { covers: ['ESORT'], stage: 'select', run: async (c) => void (await okMatch(c, 'SORT RETURN (COUNT) (ARRIVAL) UTF-8 ALL', /\* ESEARCH \(TAG "T\d+"\) COUNT 3/)) },
  { covers: ['THREAD=ORDEREDSUBJECT'], stage: 'select', run: async (c) => void (await okMatch(c, 'THREAD ORDEREDSUBJECT UTF-8 ALL', /^\* THREAD \(1 3\)\(2\)$/m)) },
  { covers: ['THREAD=REFERENCES'], stage: 'select', run: async (c) => void (await okMatch(c, 'THREAD REFERENCES UTF-8 ALL', /^\* THREAD \(1 3\)\(2\)$/m)) },
  { covers: ['I18NLEVEL=1'], stage: 'select', run: async (c) => void (await okMatch(c, 'SEARCH CHARSET UTF-8 SUBJECT {6+}\r\nＭＵ', /^\* SEARCH 2$/m)) },
  { covers: ['WITHIN'], stage: 'select', run: async (c) => void (await okMatch(c, 'SEARCH YOUNGER 2000000000', /^\* SEARCH 1 2 3$/m)) },
  { covers: ['PARTIAL'], stage: 'select', run: async (c) => void (await okMatch(c, 'SEARCH RETURN (PARTIAL 1:2) ALL', /\* ESEARCH \(TAG "T\d+"\) PARTIAL \(1:2 1:2\)/)) },
  {
    covers: ['CONTEXT=SEARCH', 'CONTEXT=SORT'],
    stage: 'select',
    run: async (c) => {
      await okMatch(c, 'SEARCH RETURN (UPDATE COUNT) SUBJECT first', /\* ESEARCH \(TAG "T\d+"\) COUNT 2/);
      await okMatch(c, 'SORT RETURN (UPDATE) (SUBJECT) UTF-8 ALL', /OK/);
      // The two commands above were T3 and T4 (LOGIN and SELECT came first).
      await okMatch(c, 'CANCELUPDATE "T3" "T4"', /OK/);
    },
  },
  {
    covers: ['UNAUTHENTICATE'],
    stage: 'login',
    run: async (c) => {
      ok(await c.command('UNAUTHENTICATE'));
      ok(await c.command('LOGIN other otherpass'));
    },
  },
  { covers: ['BINARY'], stage: 'select', run: async (c) => void (await okMatch(c, 'FETCH 2 (BINARY.PEEK[2] BINARY.SIZE[2])', /BINARY\[2\] ~\{3\}\r\n\x00\x01\x02 BINARY\.SIZE\[2\] 3/)) },
  { covers: ['PREVIEW'], stage: 'select', run: async (c) => void (await okMatch(c, 'FETCH 2 (PREVIEW)', /PREVIEW "hello part"/)) },
  {
    covers: ['OBJECTID'],
    stage: 'select',
    run: async (c) => {
      await okMatch(c, 'FETCH 1 (EMAILID THREADID)', /EMAILID \(\S+\) THREADID \(\S+\)/);
      await okMatch(c, 'STATUS Archive (MAILBOXID)', /MAILBOXID \(\S+\)/);
    },
  },
  { covers: ['SAVEDATE'], stage: 'select', run: async (c) => void (await okMatch(c, 'FETCH 1 (SAVEDATE)', /SAVEDATE "\d{2}-[A-Z][a-z]{2}-\d{4} /)) },
  { covers: ['UTF8=ACCEPT'], stage: 'login', run: async (c) => void (await okMatch(c, 'ENABLE UTF8=ACCEPT', /\* ENABLED UTF8=ACCEPT/)) },
  {
    covers: ['NOTIFY'],
    stage: 'select',
    run: async (c) => {
      ok(await c.command('NOTIFY SET (selected (MessageNew (UID) MessageExpunge)) (subtree Archive (MessageNew MessageExpunge))'));
      ok(await c.command('NOTIFY NONE'));
    },
  },
  { covers: ['LIST-EXTENDED'], stage: 'login', run: async (c) => void (await okMatch(c, 'LIST (SUBSCRIBED RECURSIVEMATCH) "" "*" RETURN (CHILDREN)', /OK/)) },
  {
    covers: ['X-GM-EXT-1'],
    stage: 'select',
    run: async (c) => {
      ok(await c.command('STORE 1 +X-GM-LABELS (probe)'));
      await okMatch(c, 'FETCH 1 (X-GM-MSGID X-GM-THRID X-GM-LABELS)', /X-GM-MSGID \d+ X-GM-THRID \d+ X-GM-LABELS \([^)]*probe/);
      await okMatch(c, 'SEARCH X-GM-RAW "subject:multi"', /^\* SEARCH 2$/m);
    },
  },
];

/** The capability tokens a session sees at a stage (the name before `=` kept whole: `AUTH=PLAIN`). */
async function advertised(stage: 'greeting' | 'login'): Promise<string[]> {
  const c = await session(stage);
  try {
    const line = (await c.command('CAPABILITY')).find((l) => l.startsWith('* CAPABILITY '))!;
    return line.slice('* CAPABILITY '.length).split(' ');
  } finally {
    c.close();
  }
}

/** `APPENDLIMIT=67108864` is covered as `APPENDLIMIT`: its value is the server's limit, not a name. */
const tokenName = (token: string): string => (/^APPENDLIMIT=/i.test(token) ? 'APPENDLIMIT' : token);

test('every advertised capability has a probe, and every probe is for an advertised capability', async () => {
  const offered = new Set([...(await advertised('greeting')), ...(await advertised('login'))].map(tokenName));
  const covered = new Set(probes.flatMap((p) => p.covers));
  const unchecked = [...offered].filter((t) => !covered.has(t));
  const skipped = [...covered].filter((t) => !offered.has(t));
  assert.deepEqual(unchecked, [], `advertised but not probed: ${unchecked.join(' ')}`);
  assert.deepEqual(skipped, [], `probed but not advertised (would be skipped): ${skipped.join(' ')}`);
});

for (const probe of probes) {
  test(`${probe.covers.join(', ')}: the RFC's exchange works with every plugin loaded`, async () => {
    const c = await session(probe.stage);
    try {
      await probe.run(c);
    } finally {
      c.close();
    }
  });
}

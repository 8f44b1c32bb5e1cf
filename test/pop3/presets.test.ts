/**
 * Issue 33 item 7, the POP3 behaviour of the provider presets, over real
 * sockets with Python's poplib: each test shows the behaviour the preset's
 * cited source describes (docs/pop3-presets.md), and checks the store and
 * the IMAP view afterwards.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { afterEach, describe, test } from 'node:test';
import { createServer, presets, type Server } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { PYTHON } from '../helpers/python.js';
import { mail } from '../helpers/server.js';

let server: Server | null = null;

afterEach(async () => {
  await server?.stop();
  server = null;
});

const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T12:00:00Z');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An RFC 3501 date-time (UTC) for `ms`. */
function imapDate(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

/** A server with the preset, a POP3 listener, and messages of the given ages in days (oldest first). */
async function start(options: ServerOptions, ages: number[] = [1, 2, 3]): Promise<number> {
  server = createServer({ port: 0, now: () => NOW, ...options, pop3: { ...options.pop3, port: 0 } });
  const started = await server.start();
  for (const [i, age] of ages.entries()) server.control.addMessage('INBOX', { raw: mail(`m${i + 1}`), internaldate: imapDate(NOW - age * DAY) });
  return started.pop3!.port;
}

/** Runs a poplib script (PORT in the environment); its stdout parsed as JSON. */
function poplib(port: number, script: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-c', `import json, os, poplib\np = poplib.POP3('127.0.0.1', int(os.environ['PORT']))\n${script}`], {
      env: { ...process.env, PORT: String(port) },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`poplib exited ${code}: ${err}`));
      else resolve(JSON.parse(out));
    });
  });
}

/** Subjects of the maildrop poplib sees for `user`, after RETR of `retrieve` (message numbers) and QUIT. */
function session(port: number, user: string, retrieve: number[] = [], dele: number[] = []): Promise<string[]> {
  return poplib(
    port,
    `
p.user(${JSON.stringify(user)}); p.pass_('testpass')
n = p.stat()[0]
subjects = [next(l.decode()[9:] for l in p.top(i, 0)[1] if l.startswith(b'Subject: ')) for i in range(1, n + 1)]
for i in ${JSON.stringify(retrieve)}: p.retr(i)
for i in ${JSON.stringify(dele)}: p.dele(i)
p.quit()
print(json.dumps(subjects))
`,
  ) as Promise<string[]>;
}

/** Subjects of the INBOX messages as the store holds them (the IMAP view). */
const inbox = (): string[] =>
  server!.control.listMessages('INBOX').map((m) => /Subject: (\S+)/.exec(Buffer.from(server!.control.getMessage('INBOX', m.uid).raw ?? '', 'base64').toString())![1]!);

describe('POP3 presets (poplib)', () => {
  test("gmail: Gpop's greeting without an APOP timestamp, EXPIRE 0 in CAPA", async () => {
    const port = await start({ preset: 'gmail' });
    const out = (await poplib(port, `print(json.dumps([p.getwelcome().decode(), p.capa().get('EXPIRE')]))`)) as [string, string[]];
    assert.equal(out[0], '+OK Gpop ready for requests from 127.0.0.1 q5pf21484907pbh.7');
    assert.deepEqual(out[1], ['0']);
  });

  test('gmail: recent:testuser logs in testuser and lists the last 30 days, retrieved elsewhere or not', async () => {
    const port = await start({ preset: 'gmail' }, [40, 20, 1]);
    assert.deepEqual(await session(port, 'recent:testuser'), ['m2', 'm3'], 'm1 is 40 days old');
    assert.deepEqual(await session(port, 'Recent:testuser'), ['m2', 'm3'], 'the prefix in any case');
    assert.deepEqual(await session(port, 'testuser'), ['m1', 'm2', 'm3'], 'normal mode: every message not popped yet');
  });

  test('gmail: a message RETR sent in a session that ended with QUIT is popped: normal mode leaves it out, recent mode not', async () => {
    const port = await start({ preset: 'gmail' });
    assert.deepEqual(await session(port, 'testuser', [1]), ['m1', 'm2', 'm3']);
    assert.deepEqual(await session(port, 'testuser'), ['m2', 'm3'], 'm1 was popped');
    assert.deepEqual(await session(port, 'recent:testuser'), ['m1', 'm2', 'm3']);
    assert.deepEqual(inbox(), ['m1', 'm2', 'm3'], "keep Gmail's copy in the Inbox (the default)");
  });

  test('gmail: a session that drops without QUIT pops nothing', async () => {
    const port = await start({ preset: 'gmail' });
    await poplib(port, `p.user('testuser'); p.pass_('testpass'); p.retr(1); p.sock.close(); print('[]')`);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await session(port, 'testuser'), ['m1', 'm2', 'm3']);
  });

  test('gmail: deleteAction keep: DELE+QUIT leaves the message in INBOX (IMAP sees it)', async () => {
    const port = await start({ preset: 'gmail' });
    await session(port, 'testuser', [], [1]);
    assert.deepEqual(inbox(), ['m1', 'm2', 'm3']);
  });

  test("gmail: deleteAction read: fetched messages stay in INBOX, \\Seen (\"mark Gmail's copy as read\")", async () => {
    const port = await start({ preset: 'gmail', pop3: { behaviour: { deleteAction: 'read' } } });
    await session(port, 'testuser', [2]);
    const flags = server!.control.listMessages('INBOX').map((m) => m.flags.includes('\\Seen'));
    assert.deepEqual(flags, [false, true, false]);
  });

  test("gmail: deleteAction archive: a fetched message leaves INBOX for [Gmail]/All Mail (\"archive Gmail's copy\")", async () => {
    const port = await start({ preset: 'gmail', pop3: { behaviour: { deleteAction: 'archive' } } });
    await session(port, 'testuser', [1]);
    assert.deepEqual(inbox(), ['m2', 'm3']);
    // X-GM-EXT-1's All Mail is every message of the account: m1 is still there, only out of INBOX, as Gmail archives.
    const allMail = server!.control.listMessages('[Gmail]/All Mail').map((m) => Buffer.from(server!.control.getMessage('[Gmail]/All Mail', m.uid).raw ?? '', 'base64').toString());
    assert.ok(allMail.some((raw) => /Subject: m1/.test(raw)), 'm1 is in All Mail');
  });

  test('the preset keys merge with the caller\'s pop3 keys; presets set no port', () => {
    assert.equal(presets.gmail.pop3?.port, undefined);
    assert.deepEqual(presets.gmail.pop3?.behaviour?.userPrefixes, ['recent:']);
    assert.equal(presets.icloud.pop3, undefined, 'iCloud Mail has no POP3');
    assert.equal(presets.yahoo.pop3, undefined, 'no public source for Yahoo POP3 behaviour');
  });

  test("outlook: Exchange's greeting, without an APOP timestamp", async () => {
    const port = await start({ preset: 'outlook' });
    const out = (await poplib(port, `print(json.dumps(p.getwelcome().decode()))`)) as string;
    assert.equal(out, '+OK The Microsoft Exchange POP3 service is ready. [TABPAEMAQQBMAEgATwBTAFQA]');
  });

  test("dovecot: Dovecot's greeting without a timestamp; UIDL is %08Xu%08Xv of UID and UIDVALIDITY in lower-case hex", async () => {
    const port = await start({ preset: 'dovecot' });
    const out = (await poplib(port, `g = p.getwelcome().decode(); p.user('testuser'); p.pass_('testpass'); u = [l.decode() for l in p.uidl()[1]]; p.quit(); print(json.dumps([g, u]))`)) as [string, string[]];
    assert.equal(out[0], '+OK Dovecot ready.');
    const validity = server!.control.getMailbox('INBOX').uidvalidity;
    // Dovecot 2.3.19 answered `1 000000016b0f5973` for UID 1 of UIDVALIDITY 1796168051 (0x6B0F5973).
    const hex = (n: number): string => n.toString(16).padStart(8, '0');
    assert.deepEqual(out[1], server!.control.listMessages('INBOX').map((m, i) => `${i + 1} ${hex(m.uid)}${hex(validity)}`));
  });
});

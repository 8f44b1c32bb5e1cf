/**
 * Real POP3 fetchers against Rookery (issue 33, "What done means"):
 * Debian's fetchmail (with --keep and without, plain and implicit TLS)
 * and getmail6 (SimplePOP3Retriever and SimplePOP3SSLRetriever with
 * `delete = true`), each delivering through an MDA into a temporary
 * directory. Every test then checks what was delivered against what was
 * stored, the store itself, and the IMAP view: after a fetch that deletes,
 * an imapflow client in IDLE has seen one EXPUNGE per message and INBOX is
 * empty. Skipped when the fetcher is not installed.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ImapFlow } from 'imapflow';
import type { Server } from '../../src/index.js';
import { startPop3Server } from '../helpers/pop3-client.js';

const USER = 'fetch';
const PASS = 'fetchpass';

/** What the fetchers must carry unchanged: byte-stuffed lines, 8-bit text, a body long enough for several reads. */
const MESSAGES = [
  'From: a@example.com\r\nTo: fetch@example.com\r\nSubject: dots\r\nMessage-ID: <dots@example.com>\r\n\r\n.leading dot\r\n..two\r\n.\r\nend\r\n',
  'From: b@example.com\r\nTo: fetch@example.com\r\nSubject: umlauts\r\nMessage-ID: <8bit@example.com>\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nGrüße aus Köln\r\n',
  `From: c@example.com\r\nTo: fetch@example.com\r\nSubject: long\r\nMessage-ID: <long@example.com>\r\n\r\n${'0123456789abcdefghij'.repeat(3).concat('\r\n').repeat(3000)}`,
];

function which(name: string): string | null {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(path.delimiter)) {
    const p = path.join(dir, name);
    if (dir && existsSync(p)) return p;
  }
  return null;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

interface Rig {
  server: Server;
  pop3: number;
  imap: number;
  dir: string;
  /** Where the MDA writes one file per message. */
  out: string;
  stop(): Promise<void>;
}

async function rig(secure: boolean, stls = false): Promise<Rig> {
  const s = await startPop3Server({ plugins: ['IDLE'], users: { [USER]: { password: PASS } }, pop3: { secure, stls } });
  for (const raw of MESSAGES) s.server.control.addMessage('INBOX', { raw });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rookery-fetch-'));
  const out = path.join(dir, 'out');
  await mkdir(out);
  return {
    ...s,
    dir,
    out,
    stop: async () => {
      await s.server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The delivered files, each matched to the stored message it ends with:
 * the fetchers put their own trace headers in front (Received:, and for
 * getmail Return-Path: and Delivered-To:) and hand the MDA LF line endings.
 */
async function delivered(out: string): Promise<string[]> {
  const files = (await readdir(out)).sort();
  const texts = await Promise.all(files.map((f) => readFile(path.join(out, f), 'latin1')));
  const originals = MESSAGES.map((m) => Buffer.from(m, 'utf8').toString('latin1').replace(/\r\n/g, '\n'));
  return texts.map((t) => {
    const i = originals.findIndex((o) => t.endsWith(`\n${o}`));
    return i < 0 ? `unmatched: ${JSON.stringify(t.slice(0, 200))}` : `message ${i + 1}`;
  }).sort();
}

const ALL = MESSAGES.map((_, i) => `message ${i + 1}`);

/** An imapflow client in IDLE on INBOX, counting the EXPUNGEs it is told about. */
async function idler(imap: number): Promise<{ expunged: number[]; until: (n: number) => Promise<void>; close: () => Promise<void> }> {
  const client = new ImapFlow({ host: '127.0.0.1', port: imap, secure: false, auth: { user: USER, pass: PASS }, logger: false, disableAutoIdle: true });
  client.on('error', () => undefined);
  await client.connect();
  await client.mailboxOpen('INBOX');
  const expunged: number[] = [];
  let wake: (() => void) | null = null;
  client.on('expunge', (e: { seq: number }) => {
    expunged.push(e.seq);
    wake?.();
  });
  const idling = client.idle().catch(() => undefined);
  const deadline = Date.now() + 5000;
  while (!client.idling && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(client.idling, true, 'imapflow is in IDLE before the fetch');
  return {
    expunged,
    until: async (n) => {
      const end = Date.now() + 10_000;
      while (expunged.length < n && Date.now() < end) await new Promise<void>((r) => ((wake = r), setTimeout(r, 200)));
    },
    close: async () => {
      await client.logout().catch(() => client.close());
      await idling;
    },
  };
}

/** INBOX's message count as a fresh IMAP session sees it. */
async function imapCount(imap: number): Promise<number> {
  const client = new ImapFlow({ host: '127.0.0.1', port: imap, secure: false, auth: { user: USER, pass: PASS }, logger: false });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const status = await client.status('INBOX', { messages: true });
    return status === false ? -1 : (status.messages ?? -1);
  } finally {
    await client.logout().catch(() => client.close());
  }
}

const FETCHMAIL = which('fetchmail');
const GETMAIL = which('getmail');

describe('fetchmail', { skip: FETCHMAIL === null ? 'fetchmail not installed (Debian: apt-get install fetchmail)' : false }, () => {
  /** Writes a run-control file (fetchmail wants it private) and runs one poll. */
  async function fetchmail(r: Rig, options: { keep: boolean; ssl?: boolean }): Promise<{ code: number | null; out: string }> {
    const rc = path.join(r.dir, 'fetchmailrc');
    await writeFile(
      rc,
      [
        'set no bouncemail',
        // `auth password`: USER/PASS, as most installations use it; no sslcertck: the test certificate is self-signed
        `poll 127.0.0.1 with proto POP3 port ${r.pop3} auth password`,
        `  user '${USER}' there with password '${PASS}' is '${os.userInfo().username}' here`,
        `  options ${options.keep ? 'keep' : 'no keep'} ${options.ssl ? 'ssl' : ''} no sslcertck`,
        `  mda "/bin/sh -c 'cat > ${r.out}/m.$$'"`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    return run(FETCHMAIL!, ['-f', rc, '-i', path.join(r.dir, 'fetchids'), '--nodetach', '--nosyslog', '-N', '-v'], { HOME: r.dir });
  }

  test('--keep fetches every message and leaves INBOX as it was; the next poll fetches nothing new (UIDL)', { timeout: 60_000 }, async () => {
    const r = await rig(false);
    try {
      const first = await fetchmail(r, { keep: true });
      assert.equal(first.code, 0, first.out);
      assert.match(first.out, /POP3> UIDL/, 'fetchmail tracks seen messages by UIDL');
      assert.deepEqual(await delivered(r.out), ALL);
      assert.equal(r.server.control.listMessages('INBOX').length, MESSAGES.length);
      assert.equal(await imapCount(r.imap), MESSAGES.length);
      // fetchmail's exit status 1 is "no new mail": the ids it saw are the ids Rookery gives again
      const second = await fetchmail(r, { keep: true });
      assert.equal(second.code, 1, second.out);
      assert.equal((await readdir(r.out)).length, MESSAGES.length);
    } finally {
      await r.stop();
    }
  });

  test('without --keep the messages are deleted: the store is empty and an IDLE client saw every EXPUNGE', { timeout: 60_000 }, async () => {
    const r = await rig(false);
    const idle = await idler(r.imap);
    try {
      const res = await fetchmail(r, { keep: false });
      assert.equal(res.code, 0, res.out);
      assert.match(res.out, /POP3> DELE 3/);
      assert.deepEqual(await delivered(r.out), ALL);
      assert.deepEqual(r.server.control.listMessages('INBOX'), []);
      await idle.until(MESSAGES.length);
      assert.equal(idle.expunged.length, MESSAGES.length);
      assert.equal(await imapCount(r.imap), 0);
    } finally {
      await idle.close();
      await r.stop();
    }
  });

  test('upgrades with STLS when it is offered (RFC 2595) before USER/PASS, without --keep', { timeout: 60_000 }, async () => {
    const r = await rig(false, true);
    try {
      const res = await fetchmail(r, { keep: false });
      assert.equal(res.code, 0, res.out);
      const stls = res.out.indexOf('POP3> STLS');
      assert.ok(stls >= 0, res.out);
      assert.ok(stls < res.out.indexOf(`POP3> USER ${USER}`), 'the password went over TLS');
      assert.deepEqual(await delivered(r.out), ALL);
      assert.equal(await imapCount(r.imap), 0);
    } finally {
      await r.stop();
    }
  });

  test('over implicit TLS (ssl) without --keep', { timeout: 60_000 }, async () => {
    const r = await rig(true);
    try {
      const res = await fetchmail(r, { keep: false, ssl: true });
      assert.equal(res.code, 0, res.out);
      assert.deepEqual(await delivered(r.out), ALL);
      assert.equal(r.server.control.listMessages('INBOX').length, 0);
      assert.equal(await imapCount(r.imap), 0);
    } finally {
      await r.stop();
    }
  });
});

describe('getmail6', { skip: GETMAIL === null ? 'getmail6 not installed (Debian: apt-get install getmail6)' : false }, () => {
  async function getmail(r: Rig, type: 'SimplePOP3Retriever' | 'SimplePOP3SSLRetriever'): Promise<{ code: number | null; out: string }> {
    await writeFile(
      path.join(r.dir, 'getmailrc'),
      [
        '[retriever]',
        `type = ${type}`,
        'server = 127.0.0.1',
        `port = ${r.pop3}`,
        `username = ${USER}`,
        `password = ${PASS}`,
        '',
        // an external MDA: getmail's Maildir destination refuses to deliver as root, which CI runs as
        '[destination]',
        'type = MDA_external',
        'path = /bin/sh',
        `arguments = ("-c", "cat > ${r.out}/m.$$$$")`,
        'allow_root_commands = true',
        '',
        '[options]',
        'delete = true',
        'read_all = true',
        'verbose = 2',
        '',
      ].join('\n'),
    );
    return run(GETMAIL!, ['--getmaildir', r.dir, '--rcfile', 'getmailrc']);
  }

  for (const [type, secure] of [
    ['SimplePOP3Retriever', false],
    ['SimplePOP3SSLRetriever', true],
  ] as const) {
    test(`${type} with delete = true: every message delivered, the store empty, EXPUNGE seen in IDLE`, { timeout: 60_000 }, async () => {
      const r = await rig(secure);
      const idle = await idler(r.imap);
      try {
        const res = await getmail(r, type);
        assert.equal(res.code, 0, res.out);
        assert.match(res.out, new RegExp(`${MESSAGES.length} messages \\(\\d+ bytes\\) retrieved`));
        assert.equal((res.out.match(/, deleted/g) ?? []).length, MESSAGES.length, res.out);
        assert.deepEqual(await delivered(r.out), ALL);
        assert.deepEqual(r.server.control.listMessages('INBOX'), []);
        await idle.until(MESSAGES.length);
        assert.equal(idle.expunged.length, MESSAGES.length);
        assert.equal(await imapCount(r.imap), 0);
      } finally {
        await idle.close();
        await r.stop();
      }
    });
  }
});

/**
 * The corpus of the compare test, recorded from real clients: each function
 * runs one client's usual sync against a server (Rookery with transcripts
 * on, in the test), so the transcripts the server keeps are that client's
 * own traffic. Each client is skipped (its reason returned) when it is not
 * installed here; under CI (.ci/run installs them) none may be missing.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Imap from 'imap';
import { ImapFlow } from 'imapflow';

export interface Recorder {
  name: string;
  /** Why it cannot run here, or null. */
  missing: string | null;
  run(port: number): Promise<void>;
}

const USER = 'testuser';
const PASS = 'testpass';

async function imapflowSync(port: number): Promise<void> {
  const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: USER, pass: PASS }, logger: false, disableAutoIdle: true, disableCompression: true });
  await client.connect();
  await client.list();
  const lock = await client.getMailboxLock('INBOX');
  try {
    for await (const _ of client.fetch('1:*', { uid: true, flags: true, envelope: true, bodyStructure: true, size: true, internalDate: true })) void _;
    await client.fetchOne('3', { source: true, headers: ['subject', 'from'] });
    await client.download('4', '1').then(async (d) => {
      for await (const _ of d.content ?? []) void _;
    }).catch(() => undefined);
    await client.search({ seen: false });
    await client.messageFlagsAdd('1:2', ['\\Flagged', '$Label1']);
    await client.messageFlagsRemove('2', ['\\Seen']);
  } finally {
    lock.release();
  }
  await client.status('INBOX', { messages: true, unseen: true, uidNext: true });
  await client.logout();
}

function nodeImapSync(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const imap = new Imap({ user: USER, password: PASS, host: '127.0.0.1', port, tls: false, autotls: 'never' });
    imap.once('error', reject);
    imap.once('ready', () => {
      imap.openBox('INBOX', false, (err) => {
        if (err) return reject(err);
        const f = imap.seq.fetch('1:10', { bodies: ['HEADER.FIELDS (FROM TO SUBJECT DATE)', 'TEXT'], struct: true });
        f.on('message', (msg) => msg.on('body', (stream) => stream.resume()));
        f.once('error', reject);
        f.once('end', () => {
          imap.search(['UNSEEN', ['SINCE', 'Jan 1, 2020']], (e) => {
            if (e) return reject(e);
            imap.addFlags('3', '\\Seen', (e2) => {
              if (e2) return reject(e2);
              imap.end();
            });
          });
        });
      });
    });
    imap.once('end', () => resolve());
    imap.connect();
  });
}

const PY = `
import imaplib, sys
c = imaplib.IMAP4('127.0.0.1', int(sys.argv[1]))
c.login('${USER}', '${PASS}')
c.list()
c.select('INBOX')
c.search(None, 'ALL')
c.uid('SEARCH', None, 'FLAGGED')
c.fetch('1:5', '(FLAGS RFC822.SIZE BODYSTRUCTURE)')
c.fetch('2', '(BODY.PEEK[HEADER] BODY.PEEK[1])')
c.store('4', '+FLAGS', '(\\\\Answered)')
c.uid('FETCH', '1:*', '(UID FLAGS)')
c.close()
c.logout()
`;

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 20_000, env, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${cmd} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolve();
    });
  });
}

function python(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.PYTHON ?? 'python3', ['-c', PY, String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`imaplib: ${err}`))));
  });
}

async function curl(port: number): Promise<void> {
  const base = `imap://127.0.0.1:${port}`;
  const auth = ['-sS', '--max-time', '10', '-u', `${USER}:${PASS}`, '-o', '/dev/null'];
  await run('curl', [...auth, `${base}/`]);
  await run('curl', [...auth, `${base}/INBOX;UID=1`]);
  await run('curl', [...auth, `${base}/INBOX?SUBJECT%20the`]);
}

async function mbsync(port: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rookery-compare-mbsync-'));
  try {
    const version = spawnSync('mbsync', ['--version'], { encoding: 'utf8' }).stdout ?? '';
    const m = /(\d+)\.(\d+)/.exec(version);
    const tls = m && (Number(m[1]) > 1 || (Number(m[1]) === 1 && Number(m[2]) >= 5)) ? 'TLSType' : 'SSLType';
    await mkdir(join(dir, 'mail'));
    const config = join(dir, 'mbsyncrc');
    await writeFile(
      config,
      [
        'IMAPAccount a', 'Host 127.0.0.1', `Port ${port}`, `User ${USER}`, `Pass ${PASS}`, `${tls} None`, 'AuthMechs LOGIN', '',
        'IMAPStore far', 'Account a', '',
        'MaildirStore near', `Path ${dir}/mail/`, `Inbox ${dir}/mail/INBOX`, '',
        'Channel c', 'Far :far:INBOX', 'Near :near:INBOX', 'Create Near', 'Sync Pull', 'SyncState *', '',
      ].join('\n'),
    );
    await run('mbsync', ['-c', config, '-a'], { ...process.env, HOME: dir });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const has = (cmd: string, args: string[]): boolean => spawnSync(cmd, args).status === 0;

/** Every recorder, in the order the corpus is recorded and replayed. */
export function recorders(): Recorder[] {
  const need = (ok: boolean, what: string): string | null => (ok ? null : `${what} not installed`);
  return [
    { name: 'imapflow', missing: null, run: imapflowSync },
    { name: 'node-imap', missing: null, run: nodeImapSync },
    { name: 'imaplib', missing: need(has(process.env.PYTHON ?? 'python3', ['--version']), 'python3'), run: python },
    { name: 'curl', missing: need(has('curl', ['--version']), 'curl'), run: curl },
    { name: 'mbsync', missing: need(has('mbsync', ['--version']), 'mbsync (isync)'), run: mbsync },
  ];
}

/**
 * The report card's fixed scenario (docs/client-report-card.md): each real
 * client logs in, lists, selects, fetches, stores, appends, idles, moves and
 * logs out against a server with `clientCheck: "report"`, optionally with
 * capabilities hidden; what the checker reported is the result. A client
 * that cannot do a step (curl has no IDLE, mbsync neither IDLE nor MOVE)
 * does the rest. Importing this module does nothing.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Imap from 'imap';
import { ImapFlow } from 'imapflow';
import { createServer, type Server } from '../../src/index.js';
import type { ClientFinding } from '../../src/client-check/findings.js';
import { mail } from '../helpers/server.js';

export const CLIENTS = ['imapflow', 'node-imap', 'imaplib', 'curl', 'mbsync'] as const;
export type ScenarioClient = (typeof CLIENTS)[number];

/** The capability sets of the card: everything offered; MOVE, LITERAL+ and IDLE hidden; LITERAL+ alone hidden. */
export const HIDDEN_SETS: readonly (readonly string[])[] = [[], ['MOVE', 'LITERAL+', 'IDLE'], ['LITERAL+']];

export interface ScenarioResult {
  client: ScenarioClient;
  version: string;
  hidden: readonly string[];
  findings: ClientFinding[];
  /** The commands the client sent, in order (from the server's command events): what the scenario covered. */
  commands: string[];
  /** Distinct rule ids, sorted. */
  rules: string[];
}

const PYTHON = process.env.PYTHON ?? 'python3';
const SCRIPT = fileURLToPath(new URL('../../../test/client-check/fixtures/imaplib_scenario.py', import.meta.url));
const require = createRequire(import.meta.url);
const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The client's version, or null when it is not installed. */
export function clientVersion(client: ScenarioClient): string | null {
  switch (client) {
    case 'imapflow':
      return `imapflow ${(require('imapflow/package.json') as { version: string }).version}`;
    case 'node-imap':
      return `imap (node-imap) ${(require('imap/package.json') as { version: string }).version}`;
    case 'imaplib': {
      const r = spawnSync(PYTHON, ['--version'], { encoding: 'utf8' });
      return r.status === 0 ? `Python imaplib (${(r.stdout || r.stderr).trim()})` : null;
    }
    case 'curl': {
      const r = spawnSync('curl', ['--version'], { encoding: 'utf8' });
      return r.status === 0 ? r.stdout.split('\n')[0]!.split(' ').slice(0, 2).join(' ') : null;
    }
    case 'mbsync': {
      const r = spawnSync('mbsync', ['--version'], { encoding: 'utf8' });
      return r.status === 0 ? r.stdout.trim() : null;
    }
  }
}

/** Runs one client through the scenario on a fresh server. */
export async function runScenario(client: ScenarioClient, hidden: readonly string[]): Promise<ScenarioResult> {
  const server = createServer({
    port: 0,
    plugins: 'all',
    clientCheck: 'report',
    capabilities: { hide: [...hidden] },
    storage: { INBOX: { messages: [mail('one'), mail('two'), mail('three')] }, '': { folders: { Archive: {} } } },
  });
  const { imap } = await server.start();
  const commands: string[] = [];
  server.on('command', (e) => commands.push(e.command));
  try {
    await DRIVERS[client](imap.port, server, hidden);
    // Let the close of the last connection reach the server.
    await delay(100);
    const findings = server.control.clientFindings();
    return { client, version: clientVersion(client) ?? '', hidden, findings, commands, rules: [...new Set(findings.map((f) => f.rule))].sort() };
  } finally {
    await server.stop();
  }
}

type Driver = (port: number, server: Server, hidden: readonly string[]) => Promise<void>;

const RAW = 'From: a@example.com\r\nTo: b@example.com\r\nSubject: appended\r\n\r\nbody\r\n';

const DRIVERS: Record<ScenarioClient, Driver> = {
  async imapflow(port) {
    const c = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
    await c.connect();
    await c.list();
    const lock = await c.getMailboxLock('INBOX');
    try {
      for await (const m of c.fetch('1:*', { flags: true, envelope: true })) void m;
      await c.messageFlagsAdd('1', ['\\Seen']);
      await c.append('INBOX', RAW, ['\\Seen']);
      const idling = c.idle();
      await delay(150);
      await c.messageMove('1', 'Archive');
      await idling;
    } finally {
      lock.release();
    }
    await c.logout();
  },

  async 'node-imap'(port) {
    const imap = new Imap({ host: '127.0.0.1', port, tls: false, user: 'testuser', password: 'testpass', keepalive: { interval: 50, idleInterval: 100, forceNoop: false } });
    const call = <T>(fn: (cb: (err: Error | null, value?: T) => void) => void): Promise<T | undefined> =>
      new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));
    await new Promise<void>((resolve, reject) => {
      imap.once('ready', () => resolve());
      imap.once('error', reject);
      imap.connect();
    });
    await call((cb) => imap.getBoxes(cb));
    await call((cb) => imap.openBox('INBOX', false, cb));
    await new Promise<void>((resolve, reject) => {
      const f = imap.seq.fetch('1:*', { bodies: 'HEADER.FIELDS (SUBJECT)', struct: false });
      f.on('message', (msg) => msg.on('body', (stream) => stream.resume()));
      f.once('error', reject);
      f.once('end', () => resolve());
    });
    await call((cb) => imap.seq.addFlags('1', '\\Seen', cb));
    await call((cb) => imap.append(RAW, { mailbox: 'INBOX', flags: ['\\Seen'] }, cb));
    // node-imap IDLEs by itself between commands when the server offers IDLE (keepalive).
    await delay(300);
    // The type declarations (test/clients/imap.d.ts) leave seq.move out; node-imap has it.
    const seq = imap.seq as unknown as { move(source: string, box: string, cb: (err: Error | null) => void): void };
    await call((cb) => seq.move('1', 'Archive', cb));
    await new Promise<void>((resolve) => {
      imap.once('end', () => resolve());
      imap.end();
    });
  },

  async imaplib(port) {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(PYTHON, [SCRIPT, '127.0.0.1', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`imaplib scenario failed (${code}): ${out}`))));
    });
  },

  async curl(port, _server, hidden) {
    const base = `imap://127.0.0.1:${port}`;
    const curl = (args: string[]): Promise<string> =>
      new Promise((resolve, reject) => {
        execFile('curl', ['-sS', '--max-time', '10', '-u', 'testuser:testpass', ...args], { encoding: 'latin1', timeout: 15_000 }, (error, stdout, stderr) =>
          error ? reject(new Error(`curl ${args.join(' ')}: ${error.message}\n${stderr}`)) : resolve(stdout),
        );
      });
    const dir = await mkdtemp(join(tmpdir(), 'rookery-card-curl-'));
    try {
      await curl([`${base}/`]);
      await curl([`${base}/INBOX`, '-X', 'FETCH 1:* (FLAGS)']);
      await curl([`${base}/INBOX;UID=1`]);
      await curl([`${base}/INBOX`, '-X', 'STORE 1 +FLAGS (\\Seen)']);
      const file = join(dir, 'msg.eml');
      await writeFile(file, RAW);
      await curl([`${base}/INBOX`, '-T', file]);
      // curl cannot IDLE; a script that moves without MOVE copies, marks and expunges.
      if (hidden.includes('MOVE')) {
        await curl([`${base}/INBOX`, '-X', 'COPY 1 Archive']);
        await curl([`${base}/INBOX`, '-X', 'STORE 1 +FLAGS (\\Deleted)']);
        await curl([`${base}/INBOX`, '-X', 'EXPUNGE']);
      } else {
        await curl([`${base}/INBOX`, '-X', 'MOVE 1 Archive']);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },

  async mbsync(port, server) {
    const dir = await mkdtemp(join(tmpdir(), 'rookery-card-mbsync-'));
    try {
      const maildir = join(dir, 'mail');
      await mkdir(maildir);
      const config = join(dir, 'mbsyncrc');
      await writeFile(
        config,
        [
          'IMAPAccount rookery', 'Host 127.0.0.1', `Port ${port}`, 'User testuser', 'Pass testpass', 'SSLType None', 'AuthMechs LOGIN', '',
          'IMAPStore rookery-far', 'Account rookery', '',
          'MaildirStore rookery-near', `Path ${maildir}/`, `Inbox ${maildir}/INBOX`, 'SubFolders Verbatim', '',
          'Channel rookery', 'Far :rookery-far:', 'Near :rookery-near:', 'Patterns *', 'Create Near', 'Sync Pull Push', 'SyncState *', '',
        ].join('\n'),
      );
      const run = (): Promise<void> =>
        new Promise((resolve, reject) => {
          execFile('mbsync', ['-c', config, '-a'], { encoding: 'utf8', timeout: 15_000, env: { ...process.env, HOME: dir } }, (error, stdout, stderr) =>
            error ? reject(new Error(`mbsync: ${error.message}\n${stdout}\n${stderr}`)) : resolve(),
          );
        });
      // Pull (login, list, select, fetch), then a new server message and a second sync.
      await run();
      server.control.addMessage('INBOX', { raw: mail('four') });
      await run();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};

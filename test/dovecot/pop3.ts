/**
 * A throwaway Dovecot that speaks POP3 (Debian's dovecot-pop3d), for the
 * POP3 differential test and the POP3 bench: like dovecot.ts, everything
 * under one temporary directory, loopback only, static passdb and userdb
 * (any user name, password `pass`), stopped with SIGTERM.
 *
 * It also listens for IMAP: the maildrop is filled with IMAP APPEND, which
 * stores the octets as given and numbers the messages in append order, so
 * POP3 message n is the n-th message given (a Maildir written by hand gets
 * whatever order the directory listing has). Rookery gets the same octets
 * through the control API, in the same order.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Server } from '../../src/index.js';
import { findDovecot } from './dovecot.js';
import { DiffSession } from './session.js';

export { findDovecot };

/** Whether this Dovecot has the POP3 protocol (the binary comes with dovecot-core, pop3 with dovecot-pop3d). */
export function hasPop3(bin: string | null = findDovecot()): boolean {
  if (bin === null) return false;
  for (const dir of ['/usr/lib/dovecot', '/usr/libexec/dovecot', '/usr/local/libexec/dovecot', path.join(path.dirname(bin), '../lib/dovecot')]) {
    if (existsSync(path.join(dir, 'pop3'))) return true;
  }
  return false;
}

export interface DovecotPop3 {
  pop3: number;
  imap: number;
  version: string;
  dir: string;
  /** Appends each message to `user`'s INBOX over IMAP, in order, byte for byte. */
  load(user: string, messages: readonly Buffer[]): Promise<void>;
  stop(): Promise<void>;
}

export interface DovecotPop3Options {
  /** Extra lines for dovecot.conf (pop3_* settings). */
  extra?: string[];
  /** Every user's password (default `pass`). */
  password?: string;
}

function account(name: string): { name: string; uid: number; gid: number } | null {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === name && f.length >= 4) return { name, uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    /* no passwd file */
  }
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once the port greets with `+OK` (POP3) or `* OK` (IMAP). */
async function waitGreeting(port: number, child: ChildProcess, deadline: number): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dovecot exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      const done = (v: boolean): void => {
        socket.destroy();
        resolve(v);
      };
      socket.setTimeout(1000, () => done(false));
      socket.on('data', (d: Buffer) => done(/^(\+OK|\* OK)/.test(d.toString('latin1'))));
      socket.on('error', () => done(false));
      socket.on('close', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error('dovecot did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts a throwaway Dovecot with POP3 and IMAP.
 * @returns the running server, or null when Dovecot or its POP3 is not installed
 */
export async function startDovecotPop3(options: DovecotPop3Options = {}): Promise<DovecotPop3 | null> {
  const bin = findDovecot();
  if (bin === null || !hasPop3(bin)) return null;
  const version = await new Promise<string>((resolve) => {
    const p = spawn(bin, ['--version']);
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('close', () => resolve(out.trim()));
    p.on('error', () => resolve('unknown'));
  });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rookery-dovecot-pop3-'));
  const home = path.join(dir, 'home');
  await mkdir(path.join(dir, 'run'));
  await mkdir(path.join(dir, 'state'));
  await mkdir(home);
  // Dovecot refuses to run mail processes as root (see dovecot.ts).
  const root = process.getuid?.() === 0;
  const me = os.userInfo();
  const mailUser = root ? (account('dovecot') ?? { name: 'nobody', uid: 65534, gid: 65534 }) : { name: me.username, uid: me.uid, gid: me.gid };
  const login = root ? (account('dovenull') !== null ? 'dovenull' : mailUser.name) : me.username;
  if (root) {
    await chmod(dir, 0o755);
    await chown(home, mailUser.uid, mailUser.gid);
  }
  const pop3 = await freePort();
  const imap = await freePort();
  const conf = path.join(dir, 'dovecot.conf');
  await writeFile(
    conf,
    [
      `base_dir = ${dir}/run`,
      `state_dir = ${dir}/state`,
      `log_path = ${dir}/dovecot.log`,
      `instance_name = rookery-pop3-${pop3}`,
      'listen = 127.0.0.1',
      'protocols = imap pop3',
      'ssl = no',
      'disable_plaintext_auth = no',
      'auth_mechanisms = plain login',
      `default_internal_user = ${mailUser.name}`,
      `default_login_user = ${login}`,
      `first_valid_uid = ${Math.min(mailUser.uid, 500)}`,
      `first_valid_gid = ${Math.min(mailUser.gid, 500)}`,
      `mail_location = maildir:${home}/%u/Maildir`,
      // many bench sessions from one address at once
      'mail_max_userip_connections = 1000',
      'passdb {',
      '  driver = static',
      `  args = password=${options.password ?? 'pass'}`,
      '}',
      'userdb {',
      '  driver = static',
      `  args = uid=${mailUser.uid} gid=${mailUser.gid} home=${home}/%u`,
      '}',
      'service anvil {',
      '  chroot =',
      '}',
      'service imap-login {',
      '  chroot =',
      '  inet_listener imap {',
      `    port = ${imap}`,
      '  }',
      '}',
      'service pop3-login {',
      '  chroot =',
      '  inet_listener pop3 {',
      `    port = ${pop3}`,
      '  }',
      '  inet_listener pop3s {',
      '    port = 0',
      '  }',
      '}',
      ...(options.extra ?? []),
      ...(root
        ? []
        : [
            ['stats', 'stats-writer'],
            ['imap-hibernate', 'imap-hibernate'],
            ['dict', 'dict'],
            ['dict-async', 'dict-async'],
          ].flatMap(([service, socket]) => [`service ${service} {`, `  unix_listener ${socket} {`, '    group =', '  }', '}'])),
      '',
    ].join('\n'),
  );
  const child = spawn(bin, ['-F', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const onExit = (): void => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', onExit);
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    process.removeListener('exit', onExit);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 10_000;
    await waitGreeting(pop3, child, deadline);
    await waitGreeting(imap, child, deadline);
  } catch (e) {
    let log = '';
    try {
      log = readFileSync(path.join(dir, 'dovecot.log'), 'utf8');
    } catch {
      /* no log */
    }
    await stop();
    throw new Error(`${(e as Error).message}\n${stderr}\n${log}`);
  }
  const load = async (user: string, messages: readonly Buffer[]): Promise<void> => {
    const s = await DiffSession.open(imap, user, options.password ?? 'pass');
    try {
      for (const m of messages) await s.append('INBOX', m);
    } finally {
      s.close();
    }
  };
  return { pop3, imap, version, dir, load, stop };
}

/** Puts the same octets, in the same order, into a Rookery user's INBOX. */
export function loadRookery(server: Server, messages: readonly Buffer[]): void {
  for (const raw of messages) server.control.addMessage('INBOX', { raw });
}

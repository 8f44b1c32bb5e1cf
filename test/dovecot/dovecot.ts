/**
 * A throwaway Dovecot for differential tests: its own configuration, base
 * directory, log and maildir under a temporary directory, listening on a
 * free loopback port, one user (`u` / `pass`, any name works: passdb and
 * userdb are static). Started as a child process (`dovecot -F`) and
 * stopped with SIGTERM; nothing outside the temporary directory is used.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { RawClient } from '../helpers/raw-client.js';

/** Where Debian (and most distributions) install the binary. */
const CANDIDATES = ['/usr/sbin/dovecot', '/usr/local/sbin/dovecot', '/usr/bin/dovecot'];

/** Path of the dovecot binary (ROOKERY_DOVECOT when set), or null when it is not installed. */
export function findDovecot(): string | null {
  const chosen = process.env.ROOKERY_DOVECOT;
  if (chosen !== undefined && chosen !== '') return existsSync(chosen) ? chosen : null;
  for (const c of CANDIDATES) if (existsSync(c)) return c;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, 'dovecot'))) return path.join(dir, 'dovecot');
  }
  return null;
}

interface Account {
  name: string;
  uid: number;
  gid: number;
}

/** A line of /etc/passwd by user name. */
export function passwdEntry(name: string): Account | null {
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

/** A free loopback port (listened on and closed again). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once a connection to the port gets Dovecot's "ready" greeting (IMAP `* OK ... ready.`, POP3 `+OK ... ready.`). */
async function waitReady(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dovecot exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      let text = '';
      const done = (v: boolean): void => {
        socket.destroy();
        resolve(v);
      };
      socket.setTimeout(1000, () => done(false));
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        if (/ready\./.test(text)) done(true);
      });
      socket.on('error', () => done(false));
      socket.on('close', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error('dovecot did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface Dovecot {
  /** The IMAP port. */
  port: number;
  /** The POP3 port, when started with `pop3: true`. */
  pop3: number | null;
  /** `dovecot --version`. */
  version: string;
  /** Directory holding the configuration and the log (removed by stop()). */
  dir: string;
  stop(): Promise<void>;
}

export interface DovecotOptions {
  /** Also serve POP3 (Debian's dovecot-pop3d): `pop3` of the result is its port. */
  pop3?: boolean;
  /** Every user's password (default `pass`). */
  password?: string;
  /** Extra lines for dovecot.conf (pop3_* settings, limits). */
  extra?: string[];
}

/** Whether this Dovecot has the POP3 protocol (the binary comes with dovecot-core, pop3 with dovecot-pop3d). */
export function hasPop3(bin: string | null = findDovecot()): boolean {
  if (bin === null) return false;
  for (const dir of ['/usr/lib/dovecot', '/usr/libexec/dovecot', '/usr/local/libexec/dovecot', path.join(path.dirname(bin), '../lib/dovecot')]) {
    if (existsSync(path.join(dir, 'pop3'))) return true;
  }
  return false;
}

/**
 * Starts a throwaway Dovecot (IMAP, and POP3 with `pop3: true`).
 * @returns the running server, or null when Dovecot (or its POP3, when asked for) is not installed
 */
export async function startDovecot(options: DovecotOptions = {}): Promise<Dovecot | null> {
  const bin = findDovecot();
  if (bin === null || (options.pop3 === true && !hasPop3(bin))) return null;
  const version = await new Promise<string>((resolve) => {
    const p = spawn(bin, ['--version']);
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('close', () => resolve(out.trim()));
    p.on('error', () => resolve('unknown'));
  });

  const dir = await mkdtemp(path.join(os.tmpdir(), 'rookery-dovecot-'));
  const home = path.join(dir, 'home');
  await mkdir(path.join(dir, 'run'));
  await mkdir(path.join(dir, 'state'));
  await mkdir(home);

  // Dovecot refuses to run mail processes as root; as root, mail belongs to
  // the `dovecot` system user the package creates.
  const root = process.getuid?.() === 0;
  let mailUser: Account;
  let internal: string;
  let login: string;
  if (root) {
    mailUser = passwdEntry('dovecot') ?? { name: 'nobody', uid: 65534, gid: 65534 };
    internal = mailUser.name;
    login = passwdEntry('dovenull') !== null ? 'dovenull' : mailUser.name;
    await chmod(dir, 0o755);
    await chown(home, mailUser.uid, mailUser.gid);
  } else {
    const me = os.userInfo();
    mailUser = { name: me.username, uid: me.uid, gid: me.gid };
    internal = me.username;
    login = me.username;
  }

  const port = await freePort();
  const pop3 = options.pop3 === true ? await freePort() : null;
  const conf = path.join(dir, 'dovecot.conf');
  await writeFile(
    conf,
    [
      `base_dir = ${dir}/run`,
      `state_dir = ${dir}/state`,
      `log_path = ${dir}/dovecot.log`,
      `instance_name = rookery-diff-${port}`,
      'listen = 127.0.0.1',
      pop3 === null ? 'protocols = imap' : 'protocols = imap pop3',
      'ssl = no',
      'disable_plaintext_auth = no',
      pop3 === null ? 'auth_mechanisms = plain' : 'auth_mechanisms = plain login',
      `default_internal_user = ${internal}`,
      `default_login_user = ${login}`,
      `first_valid_uid = ${Math.min(mailUser.uid, 500)}`,
      `first_valid_gid = ${Math.min(mailUser.gid, 500)}`,
      `mail_location = maildir:${home}/%u/Maildir`,
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
      `    port = ${port}`,
      '  }',
      '}',
      ...(pop3 === null
        ? []
        : ['service pop3-login {', '  chroot =', '  inet_listener pop3 {', `    port = ${pop3}`, '  }', '  inet_listener pop3s {', '    port = 0', '  }', '}']),
      ...(options.extra ?? []),
      // not root: sockets the default config gives to the dovecot group stay ours
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
  // never leave a Dovecot behind, even when the test process dies
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
    await waitReady(port, child, 10_000);
    if (pop3 !== null) await waitReady(pop3, child, 10_000);
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
  return { port, pop3, version, dir, stop };
}

/** A raw IMAP connection to `port` (Rookery or Dovecot alike), greeted and logged in as `user`. */
export async function loggedIn(port: number, user: string, password: string): Promise<RawClient> {
  const c = await RawClient.connect(port);
  await c.line();
  c.write(`L1 LOGIN ${user} ${password}\r\n`);
  await c.until('L1', 20_000);
  return c;
}

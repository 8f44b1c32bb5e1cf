/**
 * IMAP throughput bench: N concurrent raw-socket clients run a realistic mix for a
 * fixed time against Rookery and, when installed, a throwaway Dovecot.
 *
 * Options: `--clients=N` / BENCH_CLIENTS (default 8), `--seconds=S` / BENCH_SECONDS (default 5),
 * `--seed=M` / BENCH_SEED (messages in INBOX at start, default 200),
 * `--client-check=off|report|strict|compare` / BENCH_CLIENT_CHECK (the client checker's mode, default
 * the server's default, report; `compare` runs off and report back to back for `--rounds=R` / BENCH_ROUNDS rounds, default 4, and prints the cost).
 * `--transcripts`: Rookery runs with transcripts off and on, alternately (`--rounds=R` rounds each,
 * default 3, the best rate of each kept: the machine is shared), and prints the cost of recording in
 * commands/s (target <= 15%) and in CPU per command; `--transcripts=off` / `=on`: one run so.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createServer } from '../src/index.js';
import { SessionChecker } from '../src/client-check/session-checker.js';
import { RawClient, fmt, messageOfSize, table, positiveOption } from './client.js';

export const DOVECOT = '/usr/sbin/dovecot';

export interface Target {
  host: string;
  port: number;
}

export interface Result {
  commands: number;
  errors: number;
  seconds: number;
  byCommand: Map<string, number>;
}

/** One client's loop until `deadline`; counts every tagged reply. */
async function clientLoop(t: Target, seed: number, id: number, deadline: number, res: Result): Promise<void> {
  let rnd = (id + 1) * 2654435761;
  const rand = (n: number): number => {
    rnd = (rnd * 1103515245 + 12345) >>> 0;
    return (rnd >>> 8) % n;
  };
  const bodies = [messageOfSize(id, 600), messageOfSize(id + 1000, 2048), messageOfSize(id + 2000, 6000)];
  const own: number[] = [];
  let c: RawClient | null = null;

  const cmd = async (name: string, text: string, literal?: string): Promise<string> => {
    const r = await c!.command(text, literal);
    res.commands++;
    res.byCommand.set(name, (res.byCommand.get(name) ?? 0) + 1);
    if (!r.status.startsWith('OK')) {
      res.errors++;
      if (res.errors <= 5) console.error(`  [client ${id}] ${text.slice(0, 50)} -> ${r.status}`);
    }
    return r.status;
  };
  const login = async (): Promise<void> => {
    c = await RawClient.connect(t.host, t.port);
    c.keepLines = false;
    await cmd('LOGIN', 'LOGIN testuser testpass');
  };

  await login();
  for (let it = 0; Date.now() < deadline; it++) {
    await cmd('SELECT', 'SELECT INBOX');
    await cmd('FETCH', 'FETCH 1:* (FLAGS)');
    await cmd('UID FETCH', `UID FETCH ${1 + rand(seed)} (BODY.PEEK[])`);
    await cmd('SEARCH', 'SEARCH UNSEEN');
    await cmd('STORE', `STORE ${1 + rand(seed)} ${rand(2) ? '+' : '-'}FLAGS (\\Seen)`);
    const status = await cmd('APPEND', 'APPEND INBOX (\\Seen)', bodies[it % bodies.length]!);
    const m = /APPENDUID \d+ (\d+)/.exec(status);
    if (m) own.push(Number(m[1]));
    if (it % 4 === 3 && own.length) {
      await cmd('UID STORE', `UID STORE ${own.join(',')} +FLAGS.SILENT (\\Deleted)`);
      own.length = 0;
      await cmd('EXPUNGE', 'EXPUNGE');
    }
    if (it % 10 === 9) {
      await cmd('LOGOUT', 'LOGOUT');
      c!.close();
      await login();
    }
  }
  await cmd('LOGOUT', 'LOGOUT').catch(() => undefined);
  (c as RawClient | null)?.close();
}

export async function drive(t: Target, clients: number, seconds: number, seed: number): Promise<Result> {
  const res: Result = { commands: 0, errors: 0, seconds: 0, byCommand: new Map() };
  // short warm-up
  {
    const w: Result = { commands: 0, errors: 0, seconds: 0, byCommand: new Map() };
    const wd = Date.now() + 500;
    await Promise.all(Array.from({ length: clients }, (_, i) => clientLoop(t, seed, 100 + i, wd, w)));
  }
  const start = process.hrtime.bigint();
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(Array.from({ length: clients }, (_, i) => clientLoop(t, seed, i, deadline, res)));
  res.seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return res;
}

export function seedMessages(n: number): string[] {
  return Array.from({ length: n }, (_, i) => messageOfSize(i, [800, 2000, 4000, 12000][i % 4]!));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dovecot exited with code ${child.exitCode}`);
    const ok = await new Promise<boolean>((r) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => {
        s.destroy();
        r(true);
      });
      s.on('error', () => r(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error('dovecot did not open its port');
    await new Promise((r) => setTimeout(r, 100));
  }
}

function userExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Starts a throwaway Dovecot in a temp dir; returns its address and a stop function. */
export async function startDovecot(): Promise<{ target: Target; stop: () => Promise<void>; version: string }> {
  const version = execFileSync(DOVECOT, ['--version'], { encoding: 'utf8' }).trim();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-bench-dovecot-'));
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const root = process.getuid?.() === 0;
  const me = os.userInfo();
  const internal = root ? (userExists('dovecot') ? 'dovecot' : 'nobody') : me.username;
  const login = root ? (userExists('dovenull') ? 'dovenull' : 'nobody') : me.username;
  // Dovecot refuses mail access as uid 0, so a root run delivers mail as nobody.
  const mailUid = root ? Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim()) : me.uid;
  const mailGid = root ? Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim()) : me.gid;
  for (const d of ['run', 'state', 'mail', 'home']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  if (root) {
    fs.chownSync(path.join(dir, 'mail'), mailUid, mailGid);
    fs.chownSync(path.join(dir, 'home'), mailUid, mailGid);
  }
  fs.writeFileSync(path.join(dir, 'passwd'), 'testuser:{PLAIN}testpass::::::\n');
  const v24 = /^2\.4|^[3-9]\./.test(version);
  const conf = v24
    ? `dovecot_config_version = ${version.split(' ')[0]}
dovecot_storage_version = ${version.split(' ')[0]}
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
auth_allow_cleartext = yes
auth_mechanisms = plain login
default_internal_user = ${internal}
default_internal_group = ${root ? internal : os.userInfo().username}
default_login_user = ${login}
first_valid_uid = ${Math.min(mailUid, 1)}
mail_driver = maildir
mail_path = ${dir}/mail/%{user}
mail_home = ${dir}/home/%{user}
mail_uid = ${mailUid}
mail_gid = ${mailGid}
passdb passwd-file {
  passwd_file_path = ${dir}/passwd
}
userdb static {
  fields {
    uid = ${mailUid}
    gid = ${mailGid}
    home = ${dir}/home/%{user}
  }
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
`
    : `base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = ${internal}
default_login_user = ${login}
first_valid_uid = ${Math.min(mailUid, 1)}
mail_location = maildir:${dir}/mail/%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/passwd
}
userdb {
  driver = static
  args = uid=${mailUid} gid=${mailGid} home=${dir}/home/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
service imap-login {
  chroot =
}
`;
  const confPath = path.join(dir, 'dovecot.conf');
  fs.writeFileSync(confPath, conf);
  const child = spawn(DOVECOT, ['-F', '-c', confPath], { stdio: ['ignore', 'inherit', 'inherit'] });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(port, child, 10_000);
  } catch (e) {
    const log = fs.existsSync(path.join(dir, 'dovecot.log')) ? fs.readFileSync(path.join(dir, 'dovecot.log'), 'utf8') : '';
    await stop();
    throw new Error(`${(e as Error).message}\n${log.split('\n').slice(-15).join('\n')}`);
  }
  return { target: { host: '127.0.0.1', port }, stop, version };
}

function summary(label: string, r: Result): string[] {
  return [label, Math.round(r.commands / r.seconds).toLocaleString('en-US'), String(r.commands), String(r.errors)];
}

export async function run(args: string[] = []): Promise<void> {
  const clients = positiveOption(args, 'clients', 8, 'BENCH_CLIENTS');
  const seconds = positiveOption(args, 'seconds', 5, 'BENCH_SECONDS');
  const seed = positiveOption(args, 'seed', 200, 'BENCH_SEED');
  const rows: string[][] = [['server', 'commands/s', 'commands', 'errors']];

  const checkArg = args.find((x) => x.startsWith('--client-check='))?.slice('--client-check='.length) ?? process.env.BENCH_CLIENT_CHECK;
  if (checkArg !== undefined && !['off', 'report', 'strict', 'compare'].includes(checkArg)) throw new Error(`bad --client-check / BENCH_CLIENT_CHECK: ${checkArg}`);
  const transcriptArg = args.find((a) => a === '--transcripts' || a.startsWith('--transcripts='));
  const transcriptMode = transcriptArg === undefined ? undefined : transcriptArg === '--transcripts' ? 'compare' : transcriptArg.slice('--transcripts='.length);
  if (transcriptMode !== undefined && !['compare', 'on', 'off'].includes(transcriptMode)) throw new Error(`bad --transcripts=${transcriptMode} (on, off, or no value to compare)`);
  const runRookery = async (
    mode: 'off' | 'report' | 'strict' | undefined,
    transcript: boolean | undefined = transcriptMode === 'on' ? true : transcriptMode === 'off' ? false : undefined,
  ): Promise<{ result: Result; findings: number; cpuPerCommand: number }> => {
    const server = createServer({
      storage: { INBOX: { messages: seedMessages(seed) }, '': {} },
      plugins: 'all',
      port: 0,
      ...(mode ? { clientCheck: mode } : {}),
      ...(transcript === undefined ? {} : { transcript }),
    });
    const { imap } = await server.start();
    // CPU time of this process (server and clients) per command: less at the mercy of other load than the rate.
    const cpu = process.cpuUsage();
    const result = await drive({ host: imap.host, port: imap.port }, clients, seconds, seed);
    const used = process.cpuUsage(cpu);
    const findings = server.control.clientFindings().length;
    await server.stop();
    return { result, findings, cpuPerCommand: (used.user + used.system) / Math.max(1, result.commands) };
  };
  let rook: Result;
  if (transcriptMode === 'compare') {
    const rounds = positiveOption(args, 'rounds', 3, 'BENCH_ROUNDS');
    const rate = (r: Result): number => r.commands / r.seconds;
    const runs = { off: [] as { result: Result; cpuPerCommand: number }[], on: [] as { result: Result; cpuPerCommand: number }[] };
    for (let round = 0; round < rounds; round++) {
      runs.off.push(await runRookery(undefined, false));
      runs.on.push(await runRookery(undefined, true));
    }
    const best = (xs: { result: Result }[]): Result => xs.map((x) => x.result).reduce((a, b) => (rate(b) > rate(a) ? b : a));
    const off = best(runs.off);
    const on = best(runs.on);
    rows.push(summary('rookery, transcripts off', off));
    rows.push(summary('rookery, transcripts on', on));
    table(`imap, transcripts off vs on (${clients} clients, ${seconds} s per run, ${seed} seed msgs, loopback)`, rows);
    const pct = (1 - rate(on) / rate(off)) * 100;
    // CPU per command is steadier than the rate on a shared machine: both are printed.
    const cpuOff = Math.min(...runs.off.map((r) => r.cpuPerCommand));
    const cpuOn = Math.min(...runs.on.map((r) => r.cpuPerCommand));
    console.log(`every run, commands/s: off ${runs.off.map((r) => Math.round(rate(r.result))).join(', ')}; on ${runs.on.map((r) => Math.round(rate(r.result))).join(', ')}`);
    console.log(`CPU per command (server and clients): off ${fmt(cpuOff, 1)} us, on ${fmt(cpuOn, 1)} us: ${fmt((cpuOn / cpuOff - 1) * 100)}% (lowest of ${rounds} runs each)`);
    console.log(`transcripts cost: ${fmt(pct)}% of commands/s (best of ${rounds} runs each; target <= 15%) ${pct <= 15 ? 'PASS' : 'MISS'}`);
    return;
  }
  if (checkArg === 'compare') {
    // The machine's load drifts between runs: each round runs off and report back to back (in
    // alternating order), and the cost is the median of the rounds' ratios.
    const rounds = positiveOption(args, 'rounds', 4, 'BENCH_ROUNDS');
    const rate = (r: Result): number => r.commands / r.seconds;
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    let findings = 0;
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['off', 'report'] as const) : (['report', 'off'] as const);
      const rates = new Map<string, number>();
      const cpus = new Map<string, number>();
      for (const mode of order) {
        const r = await runRookery(mode);
        rates.set(mode, rate(r.result));
        cpus.set(mode, r.cpuPerCommand);
        rows.push(summary(`rookery clientCheck ${mode} #${round + 1}`, r.result));
        if (mode === 'report') findings += r.findings;
      }
      ratios.push(rates.get('report')! / rates.get('off')!);
      cpuRatios.push(cpus.get('report')! / cpus.get('off')!);
    }
    const medianOf = (xs: number[]): number => {
      const v = [...xs].sort((x, y) => x - y);
      return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
    };
    const cost = 1 - medianOf(ratios);
    const cpuCost = medianOf(cpuRatios) - 1;
    // The checker's own time, measured inside it: every method of SessionChecker timed in one more
    // report run. Short calls are rarely preempted, so this holds up under load where rates do not.
    const proto = SessionChecker.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
    const names = Object.getOwnPropertyNames(SessionChecker.prototype).filter((n) => n !== 'constructor' && typeof proto[n] === 'function');
    const originals = new Map(names.map((n) => [n, proto[n]!]));
    let inside = 0n;
    let depth = 0;
    for (const n of names) {
      const original = originals.get(n)!;
      proto[n] = function (this: unknown, ...a: unknown[]): unknown {
        if (depth++ > 0) {
          try {
            return original.apply(this, a);
          } finally {
            depth--;
          }
        }
        const t = process.hrtime.bigint();
        try {
          return original.apply(this, a);
        } finally {
          inside += process.hrtime.bigint() - t;
          depth--;
        }
      };
    }
    // Both sides in wall time of the event loop: under load a descheduled process stretches both alike.
    const elu = performance.eventLoopUtilization();
    const timed = await runRookery('report');
    const busyMs = performance.eventLoopUtilization(elu).active;
    for (const [n, f] of originals) proto[n] = f;
    const checkerUs = Number(inside) / 1000 / timed.result.commands;
    const busyUs = (busyMs * 1000) / timed.result.commands;
    table(`imap client checker (${clients} clients, ${seconds} s per run, ${seed} seed msgs, loopback)`, rows);
    console.log(`report/off per round: rate ${ratios.map((r) => fmt(r)).join(', ')}; CPU per command ${cpuRatios.map((r) => fmt(r)).join(', ')}`);
    console.log(`client checker CPU cost per command (median): ${(cpuCost * 100).toFixed(1)}%`);
    console.log(`client checker's own time: ${checkerUs.toFixed(2)} µs per command, ${((checkerUs / busyUs) * 100).toFixed(1)}% of the event loop's busy time (${busyUs.toFixed(1)} µs per command, server and bench clients)`);
    console.log(`client checker cost (report vs off, median of ${rounds} rounds): ${(cost * 100).toFixed(1)}% (target < 10%) ${cost < 0.1 ? 'PASS' : 'MISS'}; findings in report runs: ${findings}`);
    return;
  } else {
    const r = await runRookery(checkArg as 'off' | 'report' | 'strict' | undefined);
    rook = r.result;
    rows.push(summary(checkArg ? `rookery (clientCheck ${checkArg})` : 'rookery', rook));
  }

  let note: string;
  if (fs.existsSync(DOVECOT)) {
    try {
      const dv = await startDovecot();
      try {
        const c = await RawClient.connect(dv.target.host, dv.target.port);
        await c.ok('LOGIN testuser testpass');
        for (const m of seedMessages(seed)) await c.ok('APPEND INBOX', m);
        await c.ok('LOGOUT').catch(() => undefined);
        c.close();
        const dov = await drive(dv.target, clients, seconds, seed);
        rows.push(summary(`dovecot ${dv.version}`, dov));
        const ratio = rook.commands / rook.seconds / (dov.commands / dov.seconds);
        note = `ratio rookery/dovecot: ${fmt(ratio)}x (target >= 3x) ${ratio >= 3 ? 'PASS' : 'MISS'}`;
      } finally {
        await dv.stop();
      }
    } catch (e) {
      note = `dovecot run failed: ${(e as Error).message}`;
    }
  } else {
    note = `dovecot-imapd is not installed (${DOVECOT} missing); no comparison (target rookery >= 3x dovecot)`;
  }
  table(`imap (${clients} clients, ${seconds} s, ${seed} seed msgs, loopback)`, rows);
  console.log(`mix on rookery: ${[...rook.byCommand].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log(note);
}

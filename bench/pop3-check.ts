/**
 * The POP3 client checker's cost (issue 33 item 6): its own time per
 * command, measured by driving one session's checker with a typical
 * client's commands (the figure that holds on a loaded machine), and
 * commands per second of a real session with `clientCheck` off and
 * `report`, back to back for a few rounds.
 *
 * `node build/bench/run.js pop3-check [--commands=N] [--rounds=R]`.
 */
import { performance } from 'node:perf_hooks';
import { ClientFindingLog } from '../src/client-check/findings.js';
import { CLIENT_RULES } from '../src/client-check/rules.js';
import { Pop3SessionChecker } from '../src/client-check/pop3/checker.js';
import { createServer } from '../src/index.js';
import type { Pop3CommandSeen } from '../src/pop3/checker-hook.js';
import { Pop3Client } from '../test/helpers/pop3-client.js';
import { fmt, messageOfSize, table } from './client.js';

function opt(args: string[], name: string, def: number): number {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  const n = a ? Number(a.slice(name.length + 3)) : def;
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`bad --${name}`);
  return n;
}

/** What a fetcher sends after login, over and over. */
const MIX = ['STAT', 'LIST 1', 'UIDL 1', 'TOP 1 0', 'RETR 1', 'NOOP'];

/** Microseconds of checker time per command, over `n` commands of one session. */
function checkerTime(n: number): number {
  const log = new ClientFindingLog('report', new Set(CLIENT_RULES.filter((r) => r.byDefault).map((r) => r.id)), () => 0, () => undefined);
  const checker = new Pop3SessionChecker(log, 1);
  checker.greeting('+OK Rookery POP3 server ready <1.2.3@host>');
  checker.capa({ session: 1, state: 'transaction', lines: ['TOP', 'UIDL', 'USER', 'SASL PLAIN', 'RESP-CODES', 'PIPELINING'] });
  checker.authenticated(10);
  const seen = MIX.map((line, i): Pop3CommandSeen => ({
    session: 1, seq: i, line, verb: line.split(' ')[0]!, state: 'transaction', user: 'u', secure: false, stlsOffered: false,
    capaSeen: true, capabilities: ['TOP', 'UIDL'], pipelined: false, afterQuit: false,
  }));
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const s = seen[i % seen.length]!;
    checker.command(s);
    checker.answered(true, s.verb === 'TOP' || s.verb === 'RETR');
  }
  const us = ((performance.now() - start) * 1000) / n;
  if (log.list().length > 0) throw new Error('the bench mix made findings');
  return us;
}

/** Commands per second of one session sending the mix one at a time. */
async function sessionRate(mode: 'off' | 'report', n: number): Promise<number> {
  const server = createServer({ port: 0, clientCheck: mode, users: { u: { password: 'pass' } }, pop3: { port: 0 } });
  const { pop3 } = await server.start();
  server.control.addMessage('INBOX', { raw: messageOfSize(1, 4096) });
  try {
    const c = await Pop3Client.connect(pop3!.port);
    await c.multi('CAPA');
    await c.command('USER u');
    await c.command('PASS pass');
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      const line = MIX[i % MIX.length]!;
      if (line === 'TOP 1 0' || line === 'RETR 1') await c.multi(line);
      else await c.command(line);
    }
    const rate = n / ((performance.now() - start) / 1000);
    await c.command('QUIT');
    return rate;
  } finally {
    await server.stop();
  }
}

export async function run(args: string[]): Promise<void> {
  const commands = opt(args, 'commands', 6000);
  const rounds = opt(args, 'rounds', 3);
  const rows: string[][] = [];
  rows.push(['checker alone', `${fmt(checkerTime(200_000), 2)} µs/command`, '200000 commands of the mix']);
  for (let r = 1; r <= rounds; r++) {
    for (const mode of ['off', 'report'] as const) rows.push([`session, clientCheck ${mode} #${r}`, `${fmt(await sessionRate(mode, commands), 0)} commands/s`, `${commands} commands, one at a time`]);
  }
  table('POP3 client checker (figure, what)', rows);
}

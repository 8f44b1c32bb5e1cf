/**
 * Fuzz bench: the IMAP fuzzer of test/fuzz/ for a long run (10^6 inputs by
 * default; `--inputs N` or FUZZ_INPUTS, `--seed N` or FUZZ_SEED,
 * `--connections N`, `--batch N` inputs per write and probe). Prints inputs/s and every finding with the input
 * that led to it. `--protocol pop3` fuzzes the POP3 listener instead (test/fuzz/pop3-driver.ts; 10^5 inputs by default),
 * `--protocol smtp` the SMTP intake (test/fuzz/smtp-driver.ts; 2·10^4 inputs by default).
 */
import { runFuzz } from '../test/fuzz/driver.js';
import { runPop3Fuzz } from '../test/fuzz/pop3-driver.js';
import { runSmtpFuzz } from '../test/fuzz/smtp-driver.js';
import { fmt, table } from './client.js';

function option(args: string[], name: string, env: string, fallback: number): number {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  const raw = i < 0 ? process.env[env] : args[i]!.includes('=') ? args[i]!.split('=')[1] : args[i + 1];
  const n = Number(raw ?? fallback);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name}: not a number: ${raw}`);
  return n;
}

/** A progress line every five seconds. */
function progress(): (done: number) => void {
  let last = Date.now();
  return (done) => {
    if (Date.now() - last < 5000) return;
    last = Date.now();
    process.stdout.write(`  ${done.toLocaleString('en-US')} inputs...\n`);
  };
}

function printFindings(findings: readonly { kind: string; count: number; message: string; input?: string | undefined }[]): void {
  for (const f of findings) {
    console.log(`\n[${f.kind}] x${f.count}: ${f.message}`);
    if (f.input) console.log(`  input: ${JSON.stringify(f.input)}`);
  }
}

export async function run(args: string[] = []): Promise<void> {
  const p = args.findIndex((a) => a === '--protocol' || a.startsWith('--protocol='));
  const protocol = p < 0 ? 'imap' : args[p]!.includes('=') ? args[p]!.split('=')[1] : args[p + 1];
  if (protocol === 'pop3') return runPop3(args);
  if (protocol === 'smtp') return runSmtp(args);
  if (protocol !== 'imap') throw new Error(`--protocol: imap, pop3 or smtp, not ${protocol}`);
  const inputs = option(args, 'inputs', 'FUZZ_INPUTS', 1_000_000);
  const seed = option(args, 'seed', 'FUZZ_SEED', Date.now() % 1_000_000);
  const connections = option(args, 'connections', 'FUZZ_CONNECTIONS', 6);
  const batch = option(args, 'batch', 'FUZZ_BATCH', 24);
  console.log(`\nfuzz: ${inputs.toLocaleString('en-US')} inputs, seed ${seed}, ${connections} connections, ${batch} inputs per batch`);
  const report = await runFuzz({
    seed,
    inputs,
    connections,
    batch,
    onProgress: progress(),
  });
  const seconds = report.durationMs / 1000;
  table('fuzz', [
    ['inputs', report.inputs.toLocaleString('en-US')],
    ['inputs/s', fmt(report.inputs / seconds, 0)],
    ['time', `${fmt(seconds, 1)} s`],
    ['bytes sent', `${(report.bytesSent / 2 ** 20).toFixed(0)} MiB`],
    ['responses checked', report.responses.toLocaleString('en-US')],
    ['inputs per state', `not authenticated ${report.states.notAuthenticated}, authenticated ${report.states.authenticated}, selected ${report.states.selected}`],
    ['tagged OK / NO / BAD', ['OK', 'NO', 'BAD'].map((s) => report.statuses[s] ?? 0).join(' / ')],
    ['batches / reconnects', `${report.batches} / ${report.reconnects} (closed by server ${report.closedByServer}, literal too large to fill ${report.refills})`],
    ['probe timeouts the framer could not rule on', `${report.ambiguousTimeouts} (a literal announced where the server may read no literal: in the data of a synchronizing literal it may have refused, or on a line after IDLE or AUTHENTICATE)`],
    ['findings', String(report.findings.length)],
  ]);
  printFindings(report.findings);
}

async function runPop3(args: string[]): Promise<void> {
  const inputs = option(args, 'inputs', 'FUZZ_INPUTS', 100_000);
  const seed = option(args, 'seed', 'FUZZ_SEED', Date.now() % 1_000_000);
  const connections = option(args, 'connections', 'FUZZ_CONNECTIONS', 6);
  console.log(`\nfuzz pop3: ${inputs.toLocaleString('en-US')} inputs, seed ${seed}, ${connections} connections`);
  const report = await runPop3Fuzz({
    seed,
    inputs,
    connections,
    onProgress: progress(),
  });
  const seconds = report.durationMs / 1000;
  table('fuzz pop3', [
    ['inputs', report.inputs.toLocaleString('en-US')],
    ['inputs/s', fmt(report.inputs / seconds, 0)],
    ['time', `${fmt(seconds, 1)} s`],
    ['sessions / batches', `${report.sessions} / ${report.batches}`],
    ['inputs per state', Object.entries(report.states).map(([s, n]) => `${s} ${n}`).join(', ')],
    ['+OK / -ERR / "+ "', `${report.answers.ok} / ${report.answers.err} / ${report.answers.continuation}`],
    ['QUIT / STLS upgrades', `${report.quits} / ${report.upgrades}`],
    ['findings', String(report.findings.length)],
  ]);
  printFindings(report.findings);
}

async function runSmtp(args: string[]): Promise<void> {
  const inputs = option(args, 'inputs', 'FUZZ_INPUTS', 20_000);
  const seed = option(args, 'seed', 'FUZZ_SEED', Date.now() % 1_000_000);
  const connections = option(args, 'connections', 'FUZZ_CONNECTIONS', 4);
  console.log(`\nfuzz smtp: ${inputs.toLocaleString('en-US')} inputs, seed ${seed}, ${connections} servers`);
  const report = await runSmtpFuzz({
    seed,
    inputs,
    connections,
    onProgress: progress(),
  });
  const seconds = report.durationMs / 1000;
  table('fuzz smtp', [
    ['inputs', report.inputs.toLocaleString('en-US')],
    ['inputs/s', fmt(report.inputs / seconds, 0)],
    ['time', `${fmt(seconds, 1)} s`],
    ['sessions', String(report.sessions)],
    ['replies OK / NO / BAD', `${report.replies.ok} / ${report.replies.no} / ${report.replies.bad}`],
    ['message bodies / SASL answers', `${report.bodies} / ${report.sasl}`],
    ['findings', String(report.findings.length)],
  ]);
  printFindings(report.findings);
}

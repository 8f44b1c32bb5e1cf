/**
 * `rookery compare <transcript>... --reference host:port [...]`: exit 0 when
 * the target (Rookery, started here unless --target) answers the recorded
 * commands as the reference does after normalization and the allow-list,
 * 1 when something differs, 2 when the compare could not run.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { hostPort } from '../transcript/record-cli.js';
import { parseTranscripts } from '../transcript/text.js';
import type { Transcript } from '../transcript/transcript.js';
import { parseAllowList, type AllowRule } from './allow.js';
import { compareServers, formatReport, type CompareSide } from './compare.js';
import type { Credentials } from './drive.js';
import type { FillMessage } from './fill.js';
import { NORMALIZATIONS, NORMALIZATION_NAMES, type Normalization } from './normalize.js';

const HELP = `Usage: rookery compare <transcript>... --reference host:port [options]

Replays the client half of recorded sessions (rookery record, or Rookery's
transcripts) against a real server and against Rookery, and prints every
response that differs after normalization (docs/compare.md). Exit code: 0 no
difference, 1 differences, 2 the compare could not run.

  --reference host:port       the real server
  --reference-login user:pw   its credentials (LOGIN / AUTHENTICATE PLAIN are sent with them)
  --target host:port          the server under test (default: a Rookery started here, from --config)
  --target-login user:pw      its credentials (default testuser:testpass for the Rookery started here)
  --config FILE               options of the Rookery started here (JSON, as rookery --config)
  --allow FILE                allow-list of known differences (COMMAND REGEX per line)
  --keep NAME                 turn a normalization off (repeatable): ${NORMALIZATION_NAMES.join(', ')}
  --fill PATH                 APPEND these messages to INBOX on both servers first (mbox, Maildir, .eml dir)
  --fill-generate JSON        ... or generated ones, e.g. '{"seed":7,"count":100,"profile":"malformed"}' (repeatable: appended in turn)
  --names ref,target          how the report names the servers (default reference,rookery)
  --timeout MS                longest silence while a command is open (default 10000)
  --normalizations            list the normalizations and exit`;

function credentials(value: string | undefined, flag: string): Credentials | undefined {
  if (value === undefined) return undefined;
  const colon = value.indexOf(':');
  if (colon <= 0) throw new UsageError(`${flag}: expected user:password, got ${JSON.stringify(value)}`);
  return { user: value.slice(0, colon), password: value.slice(colon + 1) };
}

class UsageError extends Error {}

async function fillMessages(path: string | undefined, generate: string[] | undefined): Promise<FillMessage[] | null> {
  if (path !== undefined && generate !== undefined) throw new UsageError('give --fill or --fill-generate, not both');
  if (path !== undefined) {
    const { importMessages } = await import('../fixtures/import.js');
    return importMessages(path).map((m) => ({ raw: m.raw, flags: m.flags, internaldate: m.internaldate }));
  }
  if (generate !== undefined) {
    const { generateMailbox } = await import('../generator/generate.js');
    const out: FillMessage[] = [];
    // Each --fill-generate adds its messages after the previous one's, so one mailbox can mix profiles.
    for (const g of generate) {
      let options: unknown;
      try {
        options = JSON.parse(g.trimStart().startsWith('{') ? g : readFileSync(g, 'utf8'));
      } catch (err) {
        throw new UsageError(`--fill-generate: not JSON: ${(err as Error).message}`);
      }
      for (const m of generateMailbox(options as never).messages) out.push({ raw: m.raw, flags: m.flags, internaldate: m.internaldate, label: m.case ?? m.body ?? 'message' });
    }
    return out;
  }
  return null;
}

export async function runCompare(argv: string[]): Promise<number> {
  let stopTarget: (() => Promise<void>) | null = null;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        reference: { type: 'string' },
        'reference-login': { type: 'string' },
        target: { type: 'string' },
        'target-login': { type: 'string' },
        config: { type: 'string' },
        allow: { type: 'string' },
        keep: { type: 'string', multiple: true },
        fill: { type: 'string' },
        'fill-generate': { type: 'string', multiple: true },
        names: { type: 'string' },
        timeout: { type: 'string' },
        normalizations: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
    if (values.help) {
      console.log(HELP);
      return 0;
    }
    if (values.normalizations) {
      for (const n of NORMALIZATIONS) console.log(`${n.name.padEnd(18)} ${n.what}`);
      return 0;
    }
    if (positionals.length === 0) throw new UsageError('name at least one transcript file (see rookery compare --help)');
    if (!values.reference) throw new UsageError('--reference host:port is required (see rookery compare --help)');
    const keep = values.keep ?? [];
    for (const k of keep) if (!NORMALIZATION_NAMES.includes(k as Normalization)) throw new UsageError(`--keep: no normalization ${JSON.stringify(k)}; there are ${NORMALIZATION_NAMES.join(', ')}`);
    const timeout = values.timeout === undefined ? 10_000 : Number(values.timeout);
    if (!Number.isInteger(timeout) || timeout <= 0) throw new UsageError(`--timeout: expected milliseconds, got ${JSON.stringify(values.timeout)}`);
    const [refName, tgtName] = (values.names ?? 'reference,rookery').split(',');

    const transcripts: Transcript[] = [];
    for (const file of positionals) transcripts.push(...parseTranscripts(readFileSync(file, 'utf8')));
    let allow: AllowRule[] = [];
    if (values.allow) allow = parseAllowList(readFileSync(values.allow, 'utf8'), values.allow);
    const fill = await fillMessages(values.fill, values['fill-generate']);

    const reference: CompareSide = { ...hostPort(values.reference, null, '--reference'), name: refName || 'reference' };
    const refLogin = credentials(values['reference-login'], '--reference-login');
    if (refLogin) reference.login = refLogin;
    let target: CompareSide;
    if (values.target) {
      target = { ...hostPort(values.target, null, '--target'), name: tgtName || 'target' };
    } else {
      const { createServer } = await import('../server.js');
      const config = values.config ? (JSON.parse(readFileSync(values.config, 'utf8')) as Record<string, unknown>) : {};
      const server = createServer({ ...config, port: 0, host: '127.0.0.1' });
      const { imap } = await server.start();
      stopTarget = () => server.stop();
      target = { host: '127.0.0.1', port: imap.port, name: tgtName || 'rookery', login: { user: 'testuser', password: 'testpass' } };
    }
    const tgtLogin = credentials(values['target-login'], '--target-login');
    if (tgtLogin) target.login = tgtLogin;

    const report = await compareServers({
      transcripts,
      reference,
      target,
      allow,
      keep: keep as Normalization[],
      ...(fill ? { fill: { messages: fill } } : {}),
      timeoutMs: timeout,
    });
    process.stdout.write(formatReport(report, allow));
    return report.differences.length > 0 ? 1 : 0;
  } catch (err) {
    console.error(`rookery compare: ${(err as Error).message}`);
    return 2;
  } finally {
    await stopTarget?.();
  }
}

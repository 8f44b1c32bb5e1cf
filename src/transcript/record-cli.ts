/**
 * `rookery record --upstream host:port [--protocol imap|pop3] [--listen [host:]port]
 * [--out file] [--keep-credentials]`: runs the recording proxy until SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startRecorder } from './record.js';

const HELP = `Usage: rookery record --upstream host:port [--protocol imap|pop3] [--listen [host:]port] [--out file] [--keep-credentials]

Proxies IMAP (or, with --protocol pop3, POP3) clients to the server at --upstream and writes each connection's
traffic as a transcript (docs/debugging.md) when it closes: appended to --out,
or printed to stdout. Credentials show as *** unless --keep-credentials.
Replay a recording with: rookery replay <file>.
The proxy keeps the traffic readable: it takes STARTTLS and COMPRESS out of
the server's capabilities and refuses them itself (plain IMAP upstream only);
for POP3 it does the same with STLS. Replay a POP3 recording on the POP3
listener: rookery replay <file> --pop3-port N.

  --upstream host:port   the real server (required)
  --protocol imap|pop3   what the real server speaks (default imap)
  --listen [host:]port   where clients connect (default 127.0.0.1:1144; 0 picks a free port)
  --out file             file the transcripts are appended to
  --keep-credentials     record passwords and SASL data as sent`;

/** `host:port`, `[v6]:port`, or `port` alone (host `fallback`). */
export function hostPort(text: string, fallback: string | null, flag: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text) ?? (fallback !== null ? /^()()(\d{1,5})$/.exec(text) : null);
  const port = m ? Number(m[3]) : NaN;
  const host = m ? (m[1] ?? m[2] ?? '') || fallback : null;
  if (!m || !host || port > 65535) throw new Error(`${flag}: expected ${fallback !== null ? '[host:]port' : 'host:port'}, got ${JSON.stringify(text)}`);
  return { host, port };
}

export async function runRecord(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      upstream: { type: 'string' },
      protocol: { type: 'string' },
      listen: { type: 'string' },
      out: { type: 'string' },
      'keep-credentials': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (positionals.length) throw new Error(`record: unexpected argument ${JSON.stringify(positionals[0])} (see rookery record --help)`);
  if (!values.upstream) throw new Error('record: --upstream host:port is required (see rookery record --help)');
  const upstream = hostPort(values.upstream, null, '--upstream');
  const protocol = values.protocol ?? 'imap';
  if (protocol !== 'imap' && protocol !== 'pop3') throw new Error(`record: --protocol: expected imap or pop3, got ${JSON.stringify(protocol)}`);
  const listen = hostPort(values.listen ?? '1144', '127.0.0.1', '--listen');
  const recorder = await startRecorder({
    upstream,
    protocol,
    listen,
    ...(values.out ? { out: values.out } : {}),
    keepCredentials: values['keep-credentials'] ?? false,
    onSession: (t) => {
      if (values.out) console.error(`rookery record: session ${t.session} closed, appended to ${values.out}`);
      else process.stdout.write(t.text());
    },
  });
  const say = values.out ? console.log : console.error;
  say(`rookery record: listening on ${recorder.address.host}:${recorder.address.port}, recording ${upstream.host}:${upstream.port}${values.out ? ` to ${values.out}` : ''}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await recorder.close();
  return 0;
}

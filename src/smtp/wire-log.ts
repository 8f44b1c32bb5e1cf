/**
 * The `debug` wire log for SMTP: smtp-server's bunyan-style log calls
 * turned into `SMTP <id> C: <line>` / `SMTP <id> S: <line>`, like the IMAP
 * `S<n> C:` lines. smtp-server already hides AUTH arguments and AUTH
 * continuation lines (`/* secured *\/`) and logs DATA as its size only.
 */
import { format } from 'node:util';

type LogCall = (entry: { tnx?: unknown; cid?: unknown }, message: string, ...args: unknown[]) => void;

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

/** Which log entries are wire traffic; connection chatter and the rest stay out. */
const WIRE = new Set(['command', 'send', 'data']);

export function smtpWireLog(sink: (line: string) => void): Record<(typeof LEVELS)[number], LogCall> {
  const call: LogCall = (entry, message, ...args) => {
    if (!WIRE.has(String(entry.tnx))) return;
    const [first = '', ...more] = format(message, ...args).split(/\r?\n/);
    const who = first.slice(0, 3);
    // A multi-line reply becomes one log line per reply line, each marked as the server's.
    sink(`SMTP ${String(entry.cid)} ${first}`);
    for (const line of more) sink(`SMTP ${String(entry.cid)} ${who}${line}`);
  };
  return Object.fromEntries(LEVELS.map((level) => [level, call])) as Record<(typeof LEVELS)[number], LogCall>;
}

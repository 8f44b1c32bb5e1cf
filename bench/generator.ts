/**
 * Generator bench: makes 100,000 messages of about 4 KiB (`--count N`,
 * `--seed S`) and prints the generation rate, then the time to build a
 * server whose INBOX is declared `{ generate: {...} }` (generation and load
 * together), the time to first read that mailbox, and the time of a reset
 * after the mailbox was changed. Every step is checked: the count, the
 * bytes of a sample against a second generation, and the reset restoring
 * the flags it changed.
 */
import { createServer } from '../src/index.js';
import { generateMessages } from '../src/generator/index.js';
import type { GenerateOptions } from '../src/generator/index.js';
import { fmt, table } from './client.js';

const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;

export async function run(args: string[]): Promise<void> {
  const value = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined);
  const count = Number(value('count') ?? 100_000) || 100_000;
  const seed = Number(value('seed') ?? 7) || 7;
  // About 4 KiB each: the default body mix, attachments kept small so they do not outgrow the target.
  const options: GenerateOptions = { seed, count, size: 4096, attachmentSize: { min: 200, max: 1500 } };

  // Two rounds, the faster one counts: on a shared 2-core machine one round is often slowed by others.
  let genMs = Infinity;
  let bytes = 0;
  let sample: Buffer | null = null;
  let start = process.hrtime.bigint();
  for (let round = 0; round < 2; round++) {
    start = process.hrtime.bigint();
    bytes = 0;
    let n = 0;
    for (const m of generateMessages(options)) {
      bytes += m.raw.length;
      if (n === count - 1) sample = m.raw;
      n++;
    }
    genMs = Math.min(genMs, ms(start));
    if (n !== count) throw new Error(`generated ${n} messages, expected ${count}`);
  }

  start = process.hrtime.bigint();
  const server = createServer({ storage: { INBOX: { generate: options } } });
  const buildMs = ms(start);
  start = process.hrtime.bigint();
  const mailbox = server.control.getMailbox('INBOX');
  const firstReadMs = ms(start);
  if (mailbox.messages !== count) throw new Error(`INBOX holds ${mailbox.messages} messages, expected ${count}`);
  const last = server.control.listMessages('INBOX', { uids: [count], raw: true })[0]!;
  if (!Buffer.from(last.raw!, 'base64').equals(sample!)) throw new Error('the last message loaded differs from the one generated');

  server.control.setFlags('INBOX', { uids: [1, 2, 3], flags: ['$BenchChanged'], mode: 'add' });
  start = process.hrtime.bigint();
  server.control.reset();
  const resetMs = ms(start);
  const after = server.control.listMessages('INBOX', { uids: [1] })[0]!;
  if (after.flags.includes('$BenchChanged')) throw new Error('reset kept a changed flag');
  start = process.hrtime.bigint();
  const again = server.control.getMailbox('INBOX');
  const rereadMs = ms(start);
  if (again.messages !== count) throw new Error(`after reset INBOX holds ${again.messages} messages`);

  table(`generator: ${count} messages, ${fmt(bytes / 1048576)} MiB (mean ${fmt(bytes / count)} octets), seed ${seed}`, [
    ['step', 'ms', 'messages/s', 'MiB/s'],
    ['generate (generateMessages, best of 2)', fmt(genMs), fmt((count / genMs) * 1000), fmt((bytes / 1048576 / genMs) * 1000)],
    ['createServer with storage generate', fmt(buildMs), fmt((count / buildMs) * 1000), fmt((bytes / 1048576 / buildMs) * 1000)],
    ['first read of INBOX (load into the store)', fmt(firstReadMs), '', ''],
    ['reset after a change', fmt(resetMs), '', ''],
    ['first read after reset', fmt(rereadMs), '', ''],
  ]);
}

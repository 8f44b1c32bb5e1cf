/**
 * `rookery generate`: a generated mailbox written as mbox (streamed, to a
 * file or stdout), a Maildir, or the storage option's JSON shape (streamed).
 */
import { createWriteStream } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { writeMaildir } from '../fixtures/maildir.js';
import { writeMbox } from '../fixtures/mbox.js';
import { formatInternalDate } from '../store/internal-date.js';
import { checkGenerateOptions, messagesOf, type GeneratedMessage } from './generate.js';
import { MALFORMED_CASES } from './malformed.js';
import type { GenerateOptions } from './options.js';

const HELP = `Usage: rookery generate [--seed N] [--count N] [--profile realistic|malformed] [--case NAME ...]
                        [--size N|MIN-MAX] [--options FILE|JSON] [--format mbox|maildir|json] [--out PATH]
       rookery generate --list-cases

Makes a mailbox of mail from a seed: the same seed and options give the same
bytes on every machine (docs/generator.md).

  --seed N           the seed, 0..4294967295 (default 1)
  --count N          messages (default 100)
  --profile P        realistic (default) or malformed (named breakage cases in turn)
  --case NAME        malformed profile: only this case (repeatable; --list-cases names them)
  --size N|MIN-MAX   octets each message has at least (default 600-12000)
  --options FILE     a JSON file (or inline JSON) with any generator option; flags win over it
  --format F         mbox (default; to stdout without --out), maildir (needs --out), or json
                     (the storage option's shape, {"INBOX": {"messages": [...]}}; stdout without --out)
  --out PATH         the file (mbox, json) or the Maildir directory to write
  --list-cases       print every malformed case with what it breaks, and exit`;

function numberFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`generate: ${flag} expects a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

function sizeFlag(value: string | undefined): GenerateOptions['size'] {
  if (value === undefined) return undefined;
  const m = /^(\d+)(?:-(\d+))?$/.exec(value);
  if (!m) throw new Error(`generate: --size expects N or MIN-MAX in octets, got ${JSON.stringify(value)}`);
  return m[2] === undefined ? Number(m[1]) : { min: Number(m[1]), max: Number(m[2]) };
}

function optionsFlag(value: string | undefined): Record<string, unknown> {
  if (value === undefined) return {};
  const text = value.trimStart().startsWith('{') ? value : readFileSync(value, 'utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`generate: --options is not JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('generate: --options must hold a JSON object');
  return parsed as Record<string, unknown>;
}

/** Writes with backpressure: a slow reader of stdout holds the generator back instead of filling the memory. */
async function put(out: Writable, data: Buffer | string): Promise<void> {
  // once() rejects on 'error': the stream's own error handler decides what an error means.
  if (!out.write(data)) await Promise.race([once(out, 'drain'), once(out, 'close')]).catch(() => undefined);
}

function jsonMessage(m: GeneratedMessage): string {
  const utf8 = isUtf8(m.raw);
  return JSON.stringify({
    raw: m.raw.toString(utf8 ? 'utf8' : 'base64'),
    ...(utf8 ? {} : { encoding: 'base64' }),
    flags: m.flags,
    internaldate: formatInternalDate(m.internaldate),
  });
}

export async function runGenerate(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      seed: { type: 'string' },
      count: { type: 'string' },
      profile: { type: 'string' },
      case: { type: 'string', multiple: true },
      size: { type: 'string' },
      options: { type: 'string' },
      format: { type: 'string' },
      out: { type: 'string' },
      'list-cases': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (values['list-cases']) {
    for (const c of MALFORMED_CASES) console.log(`${c.name.padEnd(38)} ${c.what} (${c.ref})`);
    return 0;
  }
  if (positionals.length) throw new Error(`generate: unexpected argument ${JSON.stringify(positionals[0])} (see rookery generate --help)`);
  const format = values.format ?? 'mbox';
  if (format !== 'mbox' && format !== 'maildir' && format !== 'json') throw new Error(`generate: --format must be mbox, maildir or json, got ${JSON.stringify(format)}`);
  if (format === 'maildir' && values.out === undefined) throw new Error('generate: --format maildir needs --out <directory>');

  const options: Record<string, unknown> = { ...optionsFlag(values.options) };
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) options[key] = value;
  };
  set('seed', numberFlag(values.seed, '--seed'));
  set('count', numberFlag(values.count, '--count'));
  set('profile', values.profile);
  set('cases', values.case);
  set('size', sizeFlag(values.size));
  const opts = checkGenerateOptions(options as GenerateOptions, 'generate');

  if (format === 'maildir') {
    const all: { raw: Buffer; ms: number; flags: string[]; uid: number }[] = [];
    let uid = 0;
    for (const m of messagesOf(opts)) all.push({ raw: m.raw, ms: m.internaldate.ms, flags: m.flags, uid: ++uid });
    writeMaildir(values.out!, all);
    console.error(`rookery generate: wrote ${all.length} messages to the Maildir ${values.out}`);
    return 0;
  }
  const out: Writable = values.out === undefined ? process.stdout : createWriteStream(values.out);
  // A reader that stops early (`| head`) ends the run quietly, as other Unix tools do.
  let closed = false;
  out.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    closed = true;
  });
  let n = 0;
  if (format === 'json') await put(out, '{"INBOX":{"messages":[\n');
  for (const m of messagesOf(opts)) {
    if (closed) return 0;
    if (format === 'mbox') await put(out, writeMbox([{ raw: m.raw, ms: m.internaldate.ms }]));
    else await put(out, `${n > 0 ? ',\n' : ''}${jsonMessage(m)}`);
    n++;
  }
  if (format === 'json') await put(out, '\n]}}\n');
  if (out !== process.stdout) {
    out.end();
    await once(out, 'finish');
    console.error(`rookery generate: wrote ${n} messages to ${values.out} (${format})`);
  }
  return 0;
}

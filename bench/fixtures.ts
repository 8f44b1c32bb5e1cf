/**
 * Fixtures bench: import and export of mail files at scale. Writes an mbox
 * of N messages (`--count N`, default 20,000; ~2 KB each, some with body
 * lines that need mboxrd quoting), a Maildir and a directory of .eml files
 * holding the same messages, then times building a server that imports
 * each (the storage option's `import`) and writing the store back out as
 * mbox and Maildir. Every import is checked (count and the bytes of a
 * sample), so a fast wrong answer does not pass.
 */
import { writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportStorage } from '../src/fixtures/export.js';
import { writeMaildir } from '../src/fixtures/maildir.js';
import { writeMbox } from '../src/fixtures/mbox.js';
import { createServer } from '../src/index.js';
import { fmt, table } from './client.js';

function message(i: number): Buffer {
  const quoted = i % 10 === 0 ? 'From the archive, a body line mbox must quote\r\n>From one already quoted\r\n' : '';
  return Buffer.from(
    `From: Sender ${i % 300} <s${i % 300}@example.com>\r\nTo: team@example.com\r\nSubject: Fixture ${i}\r\n` +
      `Date: ${new Date(Date.UTC(2025, 0, 1) + i * 60_000).toUTCString().replace('GMT', '+0000')}\r\nMessage-ID: <f${i}@example.com>\r\n\r\n` +
      quoted + `${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(30)}\r\n`,
  );
}

export async function run(args: string[]): Promise<void> {
  const countArg = args.find((a) => a.startsWith('--count='))?.slice(8) ?? args[args.indexOf('--count') + 1];
  const count = Number(args.includes('--count') || countArg ? countArg : 20_000) || 20_000;
  const dir = await mkdtemp(join(tmpdir(), 'rookery-bench-fixtures-'));
  try {
    const messages = Array.from({ length: count }, (_, i) => ({ raw: message(i), ms: Date.UTC(2025, 0, 1) + i * 60_000, flags: i % 3 ? ['\\Seen'] : [], uid: i + 1 }));
    const bytes = messages.reduce((n, m) => n + m.raw.length, 0);
    await writeFile(join(dir, 'in.mbox'), writeMbox(messages));
    writeMaildir(join(dir, 'Maildir'), messages);
    await mkdir(join(dir, 'eml'));
    for (const m of messages) writeFileSync(join(dir, 'eml', `${m.uid}.eml`), m.raw);

    const rows: string[][] = [];
    let storage = null as ReturnType<ReturnType<typeof createServer>['control']['snapshot']> | null;
    for (const [kind, path] of [['mbox', 'in.mbox'], ['Maildir', 'Maildir'], ['.eml directory', 'eml']] as const) {
      const start = process.hrtime.bigint();
      const server = createServer({ storage: { INBOX: { import: join(dir, path) } } });
      const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
      const listed = server.control.listMessages('INBOX', { uids: [count], raw: true });
      if (server.control.getMailbox('INBOX').messages !== count) throw new Error(`${kind}: ${server.control.getMailbox('INBOX').messages} messages, expected ${count}`);
      if (!Buffer.from(listed[0]!.raw!, 'base64').equals(messages[count - 1]!.raw)) throw new Error(`${kind}: the last message's bytes differ`);
      rows.push([`import ${kind}`, fmt(elapsed), fmt((count / elapsed) * 1000), fmt((bytes / 1048576 / elapsed) * 1000)]);
      storage = server.control.snapshot();
    }
    for (const format of ['mbox', 'maildir'] as const) {
      const out = join(dir, `out-${format}`);
      const start = process.hrtime.bigint();
      exportStorage(storage!, { format, out });
      const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
      rows.push([`export ${format}`, fmt(elapsed), fmt((count / elapsed) * 1000), fmt((bytes / 1048576 / elapsed) * 1000)]);
    }
    table(`fixtures: ${count} messages, ${fmt(bytes / 1048576)} MiB`, [['step', 'ms', 'messages/s', 'MiB/s'], ...rows]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

#!/usr/bin/env node
/**
 * The `rookery` command. This first version starts the IMAP listener with
 * a demo store (`--demo`) or the defaults; the full option set (config
 * file, environment variables, REST) is the CLI issue's work.
 */
import { parseArgs } from 'node:util';
import { createServer } from './server.js';
import type { ServerOptions } from './options/types.js';
import { demoOptions } from './demo.js';

const USAGE = `Usage: rookery [--port N] [--host ADDR] [--plugin NAME]... [--demo]

  --port N        IMAP port (default 1143; 0 picks a free one)
  --host ADDR     address to listen on (default 127.0.0.1)
  --plugin NAME   load an extension (repeatable or comma list; "all")
  --demo          start with demo users, mailboxes and messages
  --help          this text
  --version       print the version`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      plugin: { type: 'string', multiple: true },
      demo: { type: 'boolean' },
      help: { type: 'boolean' },
      version: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values.version) {
    console.log('5.0.0');
    return;
  }
  const options: ServerOptions = values.demo ? demoOptions() : {};
  options.port = values.port === undefined ? 1143 : Number(values.port);
  if (values.host) options.host = values.host;
  if (values.plugin) {
    const names = values.plugin.flatMap((p) => p.split(',')).map((p) => p.trim()).filter(Boolean);
    options.plugins = names.some((n) => n.toLowerCase() === 'all') ? 'all' : names;
  }
  const server = createServer(options);
  const { imap } = await server.start();
  console.log(`rookery: IMAP listening on ${imap.host}:${imap.port}`);
  if (values.demo) {
    console.log(`rookery: try  curl -u testuser:testpass imap://${imap.host}:${imap.port}/INBOX -X 'FETCH 1:* (FLAGS ENVELOPE)'`);
  }
  let signals = 0;
  const onSignal = (): void => {
    signals++;
    if (signals > 1) process.exit(1);
    void server.shutdown(true).then(() => process.exit(0));
    // A graceful stop waits for clients; tell the person how to force it.
    console.log('rookery: stopping when the last client has gone (signal again to force)');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

main().catch((err: unknown) => {
  console.error(`rookery: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

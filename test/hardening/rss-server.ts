/**
 * A Rookery server in its own process, for tests that measure what a client
 * costs the server in memory. argv[2]: JSON `{ options, messages, size }`.
 * Prints the IMAP port, then answers each `rss` line on stdin with the
 * process's resident set size in bytes (after a garbage collection when
 * node runs with --expose-gc), a `heap` line with the live heap after it;
 * a `churn n` line first creates and deletes a mailbox n times.
 */
import { createInterface } from 'node:readline';
import { createServer } from '../../src/index.js';

// The test runner also runs every file under build/test with no arguments: then there is nothing to do.
if (process.argv[2] === undefined) process.exit(0);
const { options, messages, size } = JSON.parse(process.argv[2]) as { options: object; messages: number; size: number };
const body = 'x'.repeat(76) + '\r\n';
const raw = `Subject: big\r\n\r\n${body.repeat(Math.ceil(size / body.length))}`;
const server = createServer({ ...options, port: 0 });
for (let i = 0; i < messages; i++) server.control.addMessage('INBOX', { raw });
const { imap } = await server.start();
process.stdout.write(`${imap.port}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  void (async () => {
    // `churn n`: n creations and deletions of one mailbox first (a stream of MailboxName events for NOTIFY
    // sessions), in runs that let sessions try to send between them; the store ends as it began.
    const churn = /^churn (\d+)$/.exec(line);
    if (churn) {
      for (let i = 0; i < Number(churn[1]); i++) {
        server.control.createMailbox('Churn', { subscribed: false });
        server.control.deleteMailbox('Churn');
        if (i % 500 === 499) await new Promise((r) => setImmediate(r));
      }
    }
    (globalThis as { gc?: () => void }).gc?.();
    // `heap` answers the live JS heap after the collection: what is retained, without the pages V8 keeps.
    process.stdout.write(`${line === 'heap' ? process.memoryUsage().heapUsed : process.memoryUsage.rss()}\n`);
  })();
});

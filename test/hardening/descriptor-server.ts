/**
 * A Rookery server with IMAP and REST in its own process, for the
 * descriptor tests: they start it under a lowered descriptor limit
 * (`ulimit -n`). argv[2]: JSON server options. Prints one JSON line with the
 * ports, then runs until its stdin closes.
 */
import { createServer } from '../../src/index.js';

// The test runner also runs every file under build/test with no arguments: then there is nothing to do.
if (process.argv[2] === undefined) process.exit(0);
const options = JSON.parse(process.argv[2]) as object;
const server = createServer({ port: 0, rest: { port: 0 }, ...options });
const { imap, rest } = await server.start();
process.stdout.write(`${JSON.stringify({ imap: imap.port, rest: rest!.port })}\n`);
process.stdin.resume();
process.stdin.once('end', () => void server.stop().then(() => process.exit(0)));

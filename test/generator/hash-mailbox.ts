/**
 * Run as a process of its own by generator.test.ts: prints the SHA-256 of a
 * generated mailbox (bytes, flags, internal dates) and its message count,
 * so two processes can be compared. Arguments: seed count profile.
 */
import { createHash } from 'node:crypto';
import { generateMessages } from '../../src/generator/index.js';

const [seed, count, profile] = process.argv.slice(2);
// The test runner also loads every file under test/: without arguments this is not a run.
if (seed !== undefined) hashMailbox();

function hashMailbox(): void {
const hash = createHash('sha256');
let n = 0;
for (const m of generateMessages({ seed: Number(seed), count: Number(count), profile: profile === 'malformed' ? 'malformed' : 'realistic' })) {
  hash.update(m.raw).update(m.flags.join(' ')).update(String(m.internaldate.ms));
  n++;
}
process.stdout.write(`${hash.digest('hex')} ${n}\n`);
}

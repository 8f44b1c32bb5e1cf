/**
 * Python IMAPClient's live `test_fetch` with CONDSTORE on, redone with the
 * stdlib's imaplib (test/clients/fixtures/imaplib_condstore.py): the answer
 * to `UID FETCH n (RFC822 FLAGS INTERNALDATE ENVELOPE)` holds exactly the
 * asked items plus MODSEQ, because fetching RFC822 set \Seen (RFC 7162 §3.1:
 * UID and MODSEQ in every untagged FETCH "caused by ... a FETCH/UID FETCH
 * that implicitly set the \Seen flag"), and a CHANGEDSINCE from that MODSEQ
 * finds nothing the client was not told of.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { mail, startServer } from '../helpers/server.js';

const SCRIPT = fileURLToPath(new URL('../../../test/clients/fixtures/imaplib_condstore.py', import.meta.url));
const PYTHON = process.env.PYTHON ?? 'python3';
const available = spawnSync(PYTHON, ['--version']).status === 0;
const skipReason = !available && !process.env.CI ? `${PYTHON} not installed` : false;

test('Python imaplib: IMAPClient test_fetch with CONDSTORE (RFC822 sets \\Seen; MODSEQ comes with it)', { skip: skipReason, timeout: 30_000 }, async () => {
  const { server, port } = await startServer({ plugins: ['CONDSTORE', 'ENABLE'] });
  try {
    server.control.addMessage('INBOX', { raw: mail('one') });
    server.control.addMessage('INBOX', { raw: mail('two') });
    const atSelect = server.store.get('INBOX')!.highestModseq;
    const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT, '127.0.0.1', String(port)], { timeout: 25_000 });
    const r = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    assert.equal(r.select, 'OK');
    assert.deepEqual(r.highestmodseq, [String(atSelect)]);
    assert.equal(r.fetch, 'OK');
    assert.deepEqual([...(r.names as string[])].sort(), ['ENVELOPE', 'FLAGS', 'INTERNALDATE', 'MODSEQ', 'RFC822', 'UID']);
    assert.deepEqual(r.changed, []);
    assert.deepEqual(server.control.listMessages('INBOX', { uids: [1] })[0]!.flags, ['\\Seen']);
  } finally {
    await server.stop();
  }
});

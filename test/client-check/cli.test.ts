/** Issue 21: `rookery --client-check --hide-capability --client-report junit:<file>` written when the server stops. */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { tagged } from '../helpers/raw-client.js';
import { exited, startCli } from '../helpers/cli.js';
import { rawSession } from '../helpers/server.js';

test('--client-report junit:<file> writes one test case per rule and session at stop', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rookery-client-report-'));
  try {
    const file = join(dir, 'client.xml');
    const { child, port } = await startCli(['--port', '0', '--plugin', 'all', '--client-check', 'report', '--hide-capability', 'MOVE,IDLE', '--client-report', `junit:${file}`]);
    const c = await rawSession(port);
    const caps = await c.command('CAPABILITY');
    assert.doesNotMatch(caps.join('\n'), /\b(MOVE|IDLE)\b/);
    assert.match(tagged(await c.command('IDLE')), /BAD Unknown command IDLE/);
    await c.command('LOGOUT');
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0);
    const xml = await readFile(file, 'utf8');
    assert.match(xml, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="rookery client check" tests="\d+" failures="1">/);
    assert.match(xml, /<testcase classname="rookery.client.session-1" name="capability-not-advertised">\n\s+<failure type="error" message="capability-not-advertised \(RFC 3501 §6\.1\.1/);
    assert.match(xml, /<testcase classname="rookery.client.session-1" name="tag-reuse"><\/testcase>/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('--client-report with a bad value fails at start with the forms', async () => {
  const { spawnSync } = await import('node:child_process');
  const { CLI } = await import('../helpers/cli.js');
  const r = spawnSync(process.execPath, [CLI, '--port', '0', '--client-report', 'xml:out'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--client-report: expected junit:<file>, json:<file>, text or text:<file>/);
});

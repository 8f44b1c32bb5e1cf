/**
 * Issue 14 from the command line: the timer, throttling and bandwidth flags,
 * and transport-fault rules from a --script file.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { exited, startCli } from '../helpers/cli.js';
import { RawClient } from '../helpers/raw-client.js';

test('rookery --max-connections-per-user --autologout --script with a transport rule', { timeout: 30_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rookery-faults-'));
  const script = join(dir, 'rules.json');
  await writeFile(script, JSON.stringify([{ on: 'command', command: 'NOOP', halfClose: true }]));
  const { child, port } = await startCli(['--port', '0', '--max-connections-per-user', '1', '--autologout', '1500', '--bandwidth', '1000000', '--script', script]);
  try {
    const a = await RawClient.connect(port);
    await a.line();
    assert.match((await a.command('LOGIN testuser testpass')).at(-1)!, /^\S+ OK/);
    const b = await RawClient.connect(port);
    await b.line();
    assert.match((await b.command('LOGIN testuser testpass')).at(-1)!, /^\S+ NO \[ALERT\] Too many simultaneous connections\. \(Failure\)$/);
    // The rule from the file: NOOP is answered, then the server's FIN.
    assert.match((await b.command('NOOP')).at(-1)!, /^\S+ OK/);
    await b.closedByServer();
    // --autologout: the idle session is told BYE.
    assert.equal(await a.line(3000), '* BYE Autologout; idle for too long');
    a.close();
    b.close();
  } finally {
    child.kill('SIGTERM');
    await exited(child);
    await rm(dir, { recursive: true, force: true });
  }
});

test('rookery --bandwidth with a bad value names the flag', async () => {
  const { spawnSync } = await import('node:child_process');
  const { CLI } = await import('../helpers/cli.js');
  const r = spawnSync(process.execPath, [CLI, '--bandwidth', 'fast'], { encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--bandwidth: expected a whole number/);
});

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

test('rookery --config with faults, rateLimits and byeAt; a bad one names the option path', { timeout: 30_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rookery-faults-'));
  const config = join(dir, 'rookery.json');
  await writeFile(
    config,
    JSON.stringify({
      starttls: true,
      faults: { stripStartTls: true },
      rateLimits: [{ commands: ['LIST', 'STATUS'], max: 1, per: 60000, style: 'yahoo' }],
      now: Date.UTC(2030, 0, 1),
      byeAt: { at: '2030-01-01T00:00:00Z', text: 'Maintenance' },
    }),
  );
  const { child, port } = await startCli(['--port', '0', '--config', config]);
  try {
    const c = await RawClient.connect(port);
    const greeting = await c.line();
    assert.doesNotMatch(greeting, /STARTTLS/);
    // byeAt is the clock's own time: due at once.
    assert.equal(await c.line(), '* BYE Maintenance');
    c.close();
  } finally {
    child.kill('SIGTERM');
    await exited(child);
  }
  await writeFile(config, JSON.stringify({ rateLimits: [{ commands: ['fetch'], max: 0, per: 1000 }] }));
  const { spawnSync } = await import('node:child_process');
  const { CLI } = await import('../helpers/cli.js');
  const r = spawnSync(process.execPath, [CLI, '--port', '0', '--config', config], { encoding: 'utf8', timeout: 10_000 });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /rateLimits\[0\]\.max: expected an integer from 1 to/);
  await rm(dir, { recursive: true, force: true });
});

test('rookery --bandwidth with a bad value names the flag', async () => {
  const { spawnSync } = await import('node:child_process');
  const { CLI } = await import('../helpers/cli.js');
  const r = spawnSync(process.execPath, [CLI, '--bandwidth', 'fast'], { encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--bandwidth: expected a whole number/);
});

test('rookery --rest-max-connections, the REST timeouts and body budget, --max-store-bytes and --max-messages (issue 31); env and config too', { timeout: 30_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rookery-limits-'));
  const config = join(dir, 'rookery.json');
  await writeFile(config, JSON.stringify({ rest: { bodyTimeout: 4000 }, maxStoreBytes: 999_999 }));
  const { child, output } = await startCli(
    ['--port', '0', '--rest-port', '0', '--config', config, '--rest-max-connections', '12', '--rest-request-timeout', '9000', '--rest-headers-timeout', '8000', '--max-messages', '5'],
    { ROOKERY_REST_MAX_BODY_BYTES_IN_FLIGHT: '777777' },
  );
  try {
    const restPort = await new Promise<number>((resolve) => {
      const look = (): void => {
        const m = /REST API listening on http:\/\/[^:]+:(\d+)/.exec(output());
        if (m) resolve(Number(m[1]));
        else setTimeout(look, 20);
      };
      look();
    });
    const health = (await (await fetch(`http://127.0.0.1:${restPort}/v1/health`)).json()) as { limits: Record<string, unknown> };
    assert.deepEqual(health.limits.rest, {
      maxEventStreams: 100,
      maxStreamBuffer: 1048576,
      maxConnections: 12,
      headersTimeout: 8000,
      requestTimeout: 9000,
      bodyTimeout: 4000,
      maxBodyBytesInFlight: 777777,
    });
    assert.equal(health.limits.maxMessages, 5);
    assert.equal(health.limits.maxStoreBytes, 999_999);
  } finally {
    child.kill('SIGTERM');
    await exited(child);
    await rm(dir, { recursive: true, force: true });
  }
});

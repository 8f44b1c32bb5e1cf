/** pluginOptions from the config file and `--plugin-option` on the command line. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, startCli } from '../helpers/cli.js';
import { RawClient } from '../helpers/raw-client.js';

async function capabilities(args: string[]): Promise<string> {
  const { child, port } = await startCli(['--port', '0', ...args]);
  try {
    const c = await RawClient.connect(port);
    const greeting = await c.line();
    c.close();
    return greeting;
  } finally {
    child.kill('SIGTERM');
  }
}

test('--plugin-option APPENDLIMIT.limit=1000 beats the config file; typos fail start-up with the hint', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rookery-plugin-options-'));
  const config = join(dir, 'rookery.json');
  writeFileSync(config, JSON.stringify({ plugins: ['APPENDLIMIT'], pluginOptions: { APPENDLIMIT: { limit: 500 } } }));
  assert.match(await capabilities(['--config', config]), / APPENDLIMIT=500[ \]]/);
  assert.match(await capabilities(['--config', config, '--plugin-option', 'APPENDLIMIT.limit=1000']), / APPENDLIMIT=1000[ \]]/);
  assert.match(await capabilities(['--plugin', 'APPENDLIMIT', '--plugin-option', 'APPENDLIMIT.limit=2000']), / APPENDLIMIT=2000[ \]]/);

  const typo = spawnSync(process.execPath, [CLI, '--port', '0', '--plugin', 'APPENDLIMIT', '--plugin-option', 'APPENDLIMIT.limt=5'], { encoding: 'utf8', timeout: 10000 });
  assert.equal(typo.status, 1);
  assert.match(typo.stderr, /pluginOptions\.APPENDLIMIT\.limt: unknown key; did you mean "limit"\?/);
  const text = spawnSync(process.execPath, [CLI, '--port', '0', '--plugin', 'APPENDLIMIT', '--plugin-option', 'APPENDLIMIT.limit=big'], { encoding: 'utf8', timeout: 10000 });
  assert.equal(text.status, 1);
  assert.match(text.stderr, /pluginOptions\.APPENDLIMIT\.limit: expected an integer, got "big"/);
  const shape = spawnSync(process.execPath, [CLI, '--port', '0', '--plugin-option', 'APPENDLIMIT'], { encoding: 'utf8', timeout: 10000 });
  assert.equal(shape.status, 1);
  assert.match(shape.stderr, /--plugin-option: expected PLUGIN\.key=value/);
});

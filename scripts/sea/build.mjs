/**
 * Builds the single executable: `npm run build:sea` (after `npm run build`)
 * writes dist-sea/rookery-<platform>-<arch>, a copy of the `node` running
 * this script with the bundled command (./bundle.mjs) injected as a Node
 * single-executable application (Node 20's `--experimental-sea-config` and
 * postject). It runs with no Node and no node_modules on the machine.
 *
 *   node scripts/sea/build.mjs [--from dist] [--out dist-sea]
 *
 * `--from` is the compiled src/ to bundle (the tests pass build/src). Only
 * Linux is built here: macOS and Windows executables must be signed after
 * injection (docs/languages.md says what Node supports). The same sources
 * and the same `node` give the same bytes (the test checks it).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';
import { ROOT, bundle } from './bundle.mjs';

/** The fuse postject flips in the node binary (Node's documented value). */
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/**
 * Node's preparation blob for `dir`/rookery.cjs, written to `dir`/sea-prep.blob: the script and V8's code cache of
 * it, so the executable skips compiling the bundle at start (about 20 ms
 * here). V8's cache differs from run to run unless the random seed is fixed;
 * `--random-seed` is left out of the flag hash a cache is checked against
 * (a process without it accepts the cache), so fixing it costs nothing at
 * run time and makes the same bundle give the same blob.
 */
export function prepareBlob({ dir }) {
  // Names relative to `dir`: the blob records the script's name, and a path would make it differ by folder.
  const config = path.join(dir, 'sea-config.json');
  writeFileSync(config, `${JSON.stringify({ main: 'rookery.cjs', output: 'sea-prep.blob', disableExperimentalSEAWarning: true, useCodeCache: true }, null, 2)}\n`);
  // Node says where it wrote the blob (on stderr); shown only on failure, like postject's noise.
  const prepared = spawnSync(process.execPath, ['--random-seed=1', '--experimental-sea-config', 'sea-config.json'], { cwd: dir, encoding: 'utf8' });
  if (prepared.status !== 0) throw new Error(`node --experimental-sea-config failed (${prepared.status}): ${prepared.stderr}`);
  return path.join(dir, 'sea-prep.blob');
}

/** Builds into `out` (rookery.cjs, sea-prep.blob, the executable); returns their paths and the executable's size. */
export async function buildSea({ from = path.join(ROOT, 'dist'), out = path.join(ROOT, 'dist-sea') } = {}) {
  if (process.platform !== 'linux') {
    throw new Error(`the single executable is built on Linux only (this is ${process.platform}): see docs/languages.md`);
  }
  // A node linked to a shared libnode (some distributions' packages) has the fuse in the library, not
  // in the binary, and a copy of it would not run alone: say so instead of making a broken file.
  if (!readFileSync(process.execPath).includes(FUSE)) {
    throw new Error(`${process.execPath} cannot become a single executable (no ${FUSE}): build with Node's own binary from nodejs.org`);
  }
  out = path.resolve(out);
  mkdirSync(out, { recursive: true });
  const script = path.join(out, 'rookery.cjs');
  const exe = path.join(out, `rookery-${process.platform}-${process.arch}`);
  await bundle({ from, outfile: script });
  const blob = prepareBlob({ dir: out });
  rmSync(exe, { force: true });
  copyFileSync(process.execPath, exe);
  chmodSync(exe, 0o755);
  // postject's own command, in a child: its ELF library prints a warning per note section of
  // node ("Can't find string offset for section name '.note.100'"), harmless and shown only on failure.
  const postject = createRequire(import.meta.url).resolve('postject/dist/cli.js');
  const injected = spawnSync(process.execPath, [postject, exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', FUSE], { encoding: 'utf8' });
  if (injected.status !== 0) throw new Error(`postject failed (${injected.status}): ${injected.stderr}${injected.stdout}`);
  return { exe, script, blob, size: statSync(exe).size };
}

if (process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  const { values } = parseArgs({ options: { from: { type: 'string' }, out: { type: 'string' } } });
  const { exe, size } = await buildSea({ ...(values.from ? { from: values.from } : {}), ...(values.out ? { out: values.out } : {}) });
  console.log(`${path.relative(process.cwd(), exe)} (${(size / 2 ** 20).toFixed(1)} MiB)`);
}

/**
 * Builds the `rookery` command as npm installs it (package.json `bin`):
 * dist/command/bundle.cjs is the command bundled into one script (the same
 * bundle the single executable carries, ../sea/bundle.mjs), bundle.cache
 * V8's code cache of it, and rookery.cjs the launcher that runs the bundle
 * from that cache. Loading some 200 compiled modules one by one was most of
 * the command's start (issue 37: 191 ms against a bare node:http process's
 * 77 ms); one script compiled from its cache starts in about 1.3x the bare
 * process. The in-process API (`import { createServer } from 'rookery'`)
 * stays the module graph of dist/, loaded lazily as before.
 *
 *   node scripts/command/build.mjs [--from dist] [--out dist/command]
 *
 * A cache made by another Node version is refused by V8 and the launcher
 * compiles the script instead: slower to start, never wrong.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';
import { ROOT, bundle } from '../sea/bundle.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Writes the bundle, its code cache and the launcher into `out`; returns their paths. */
export async function buildCommand({ from = path.join(ROOT, 'dist'), out = path.join(ROOT, 'dist', 'command') } = {}) {
  out = path.resolve(out);
  mkdirSync(out, { recursive: true });
  const script = path.join(out, 'bundle.cjs');
  await bundle({ from, outfile: script, build: 'package' });
  // The launcher compiles exactly this text (the CommonJS wrapper around the bundle): V8 takes a cache only for the same source.
  const compiled = new vm.Script(Module.wrap(readFileSync(script, 'utf8')), { filename: script });
  const cache = path.join(out, 'bundle.cache');
  writeFileSync(cache, compiled.createCachedData());
  const launcher = path.join(out, 'rookery.cjs');
  copyFileSync(path.join(here, 'launcher.cjs'), launcher);
  chmodSync(launcher, 0o755);
  return { launcher, script, cache };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { from: { type: 'string' }, out: { type: 'string' } } });
  await buildCommand({ ...(values.from ? { from: values.from } : {}), ...(values.out ? { out: values.out } : {}) });
}

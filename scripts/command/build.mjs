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
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
  await bundle({ from, outfile: script, build: 'package', compact: true });
  // The launcher reads the script as latin1 (decoding UTF-8 was a tenth of the start): the same text only when it is ASCII.
  const bytes = readFileSync(script);
  const wide = bytes.findIndex((b) => b > 0x7f);
  if (wide >= 0) throw new Error(`${script}: a byte above 0x7f at offset ${wide}; the launcher reads the bundle as latin1`);
  // The launcher compiles exactly this text (the CommonJS wrapper around the bundle): V8 takes a cache only for the same source.
  const compiled = new vm.Script(Module.wrap(bytes.toString('latin1')), { filename: script });
  const cache = path.join(out, 'bundle.cache');
  writeFileSync(cache, compiled.createCachedData());
  warmCache(script, cache);
  const launcher = path.join(out, 'rookery.cjs');
  copyFileSync(path.join(here, 'launcher.cjs'), launcher);
  chmodSync(launcher, 0o755);
  return { launcher, script, cache };
}

/**
 * Remakes the cache after a start of the command (in a child process, to
 * the ready line, with ports 0): a cache made before running holds only
 * the top level, and every function the start runs was then compiled at
 * each start; made after, it holds them too. When the warm start fails the
 * cold cache written before stays: slower to start, never wrong.
 */
function warmCache(script, cache) {
  const code = `
    const fs = require('node:fs'), vm = require('node:vm'), path = require('node:path'), { wrap } = require('node:module');
    const [file, out] = process.argv.slice(1);
    const compiled = new vm.Script(wrap(fs.readFileSync(file, 'latin1')), { filename: file, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
    process.stdout.write = (chunk) => {
      if (String(chunk).includes('"ready":true')) {
        fs.writeFileSync(out, compiled.createCachedData());
        process.exit(0);
      }
      return true;
    };
    process.argv = [process.argv[0], file, '--port', '0', '--rest-port', '0', '--ready-json'];
    const bundle = { exports: {}, filename: file, id: file, loaded: false, children: [], paths: [] };
    compiled.runInThisContext().call(bundle.exports, bundle.exports, require, bundle, file, path.dirname(file));
  `;
  const warm = `${cache}.warm`;
  const r = spawnSync(process.execPath, ['-e', code, script, warm], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000, cwd: path.dirname(script) });
  if (r.status === 0 && existsSync(warm)) renameSync(warm, cache);
  else {
    rmSync(warm, { force: true });
    process.emitWarning(`rookery command build: the warm code cache was not made (${r.error?.message ?? `exit ${r.status}: ${String(r.stderr).slice(0, 200)}`}); the cold one is kept`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { from: { type: 'string' }, out: { type: 'string' } } });
  await buildCommand({ ...(values.from ? { from: values.from } : {}), ...(values.out ? { out: values.out } : {}) });
}

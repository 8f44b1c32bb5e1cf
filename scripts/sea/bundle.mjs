/**
 * Bundles the `rookery` command (compiled src/, with every built-in
 * extension, the presets, the optional peer smtp-server and the dashboard's
 * files) into one CommonJS script that needs no node_modules and no other
 * file: the script a single executable carries (./build.mjs).
 *
 * The sources load some modules on first use through `createRequire`
 * (src/util/load-on-use.ts, src/extensions/builtins.ts), which a bundler
 * cannot follow; the few lines that do so are rewritten here into plain
 * `require` calls that esbuild bundles and still runs lazily. Each rewrite
 * names how often it must match, so a change to those lines fails the build
 * instead of shipping a bundle that cannot find an extension.
 */
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '..', '..');

/** Rewrites by compiled file (relative to the compiled src/): [pattern, replacement, matches]. */
const REWRITES = new Map([
  ['extensions/builtins.js', [
    // A folder's module by its catalog row: a template require, which esbuild bundles as every ./*/index.js.
    [/createRequire\(import\.meta\.url\)/g, 'require', 1],
    [/requireHere\(`\.\/\$\{row\.folder\}\/index\.js`\)/g, 'require(`./${row.folder}/index.js`)', 1],
  ]],
  ['presets/index.js', [[/loadOnUse\(import\.meta\.url, '(\.\/[a-z]+\.js)'\)/g, "(() => require('$1'))", 5]]],
  ['options/storage.js', [[/loadOnUse\(import\.meta\.url, '(\.\.\/(?:fixtures\/import|generator\/storage)\.js)'\)/g, "(() => require('$1'))", 2]]],
  ['tls/node-tls.js', [[/loadOnUse\(import\.meta\.url, '(node:tls)'\)/g, "(() => require('$1'))", 1]]],
  ['util/node-crypto.js', [[/loadOnUse\(import\.meta\.url, '(node:crypto)'\)/g, "(() => require('$1'))", 1]]],
]);

/**
 * Files whose `import.meta.url` is never read in the bundle: the dashboard
 * looks for its files on disk only when none were handed over
 * (scripts/sea/entry.mjs hands them over). Any other use fails the build.
 */
const IMPORT_META_ALLOWED = new Set(['dashboard/assets.js']);

/**
 * Bundles `from` (the compiled src/: dist/ or build/src/) into `outfile`;
 * returns esbuild's result. `build` names what `--version` calls it when it
 * is not a single executable (default `bundle`; the npm command: `package`).
 * `compact`: no comments or layout, and ASCII only (esbuild escapes the
 * rest): the command's launcher reads the script as latin1, which is the
 * same text only for ASCII, and a third fewer bytes to read and hash.
 */
export async function bundle({ from = path.join(ROOT, 'dist'), outfile, build: kind, compact = false }) {
  from = path.resolve(from);
  const staticDir = path.join(ROOT, 'src', 'dashboard', 'static');
  const { dashboardFileNames } = await import(pathToFileURL(path.join(from, 'dashboard', 'assets.js')).href);
  const seen = new Map();
  const plugin = {
    name: 'rookery-sea',
    setup(b) {
      b.onResolve({ filter: /^rookery-sea:dashboard-files$/ }, () => ({ path: 'dashboard-files', namespace: 'rookery-sea' }));
      b.onLoad({ filter: /.*/, namespace: 'rookery-sea' }, () => {
        const pairs = dashboardFileNames().map((name) => [name, readFileSync(path.join(staticDir, name), 'utf8')]);
        return { contents: `export default new Map(${JSON.stringify(pairs)});`, loader: 'js' };
      });
      b.onLoad({ filter: /\.js$/ }, (a) => {
        const rel = path.relative(from, a.path).split(path.sep).join('/');
        const rules = rel.startsWith('..') ? undefined : REWRITES.get(rel);
        if (!rules) return undefined;
        let text = readFileSync(a.path, 'utf8');
        for (const [pattern, replacement, count] of rules) {
          const n = (text.match(pattern) ?? []).length;
          if (n !== count) throw new Error(`${rel}: ${pattern} matched ${n} times, not ${count}: update scripts/sea/bundle.mjs`);
          text = text.replace(pattern, replacement);
        }
        seen.set(rel, true);
        return { contents: text, loader: 'js' };
      });
    },
  };
  const result = await build({
    entryPoints: [path.join(here, 'run.mjs')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    plugins: [plugin],
    alias: { 'rookery-dist': from },
    ...(kind ? { define: { ROOKERY_BUILD: JSON.stringify(kind) } } : {}),
    // No source maps, no banner with a date or a path: the same sources give the same bytes.
    sourcemap: false,
    legalComments: 'none',
    ...(compact ? { minifyWhitespace: true, charset: 'ascii' } : {}),
    logLevel: 'silent',
    metafile: true,
    absWorkingDir: ROOT,
  });
  for (const rel of REWRITES.keys()) if (!seen.has(rel)) throw new Error(`${rel} was not in the bundle: update scripts/sea/bundle.mjs`);
  const bad = result.warnings.filter((w) => !(w.id === 'empty-import-meta' && IMPORT_META_ALLOWED.has(path.relative(from, path.resolve(ROOT, w.location?.file ?? '')).split(path.sep).join('/'))));
  if (bad.length) throw new Error(`esbuild: ${bad.map((w) => `${w.location?.file ?? ''}:${w.location?.line ?? ''} ${w.text}`).join('; ')}`);
  return result;
}

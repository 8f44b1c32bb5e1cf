/**
 * The single executable for tests that drive it from another language
 * (Python, Go, Java): built once per test run from the compiled sources the
 * run uses (build/src) and shared by every test process. The first caller
 * builds under a lock directory (mkdir is atomic); the others wait for its
 * stamp. A new compile of build/src (newer files) makes the next run build
 * again. test/sea/sea.test.ts builds its own copy on purpose: it checks the
 * build itself.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BUILT_SRC = path.join(ROOT, 'build', 'src');
const SHARED = path.join(ROOT, 'build', 'sea-shared');
const LOCK = `${SHARED}.lock`;
/** A lock older than this is a build that died: taken over. */
const STALE_LOCK_MS = 180_000;

/** Newest modification time under build/src: what the stamp is checked against. */
function sourcesStamp(): string {
  let newest = 0;
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  walk(BUILT_SRC);
  return `${process.version} ${newest}`;
}

function current(stamp: string): string | null {
  const file = path.join(SHARED, 'stamp');
  const exe = path.join(SHARED, 'out', `rookery-${process.platform}-${process.arch}`);
  return existsSync(file) && readFileSync(file, 'utf8') === stamp && existsSync(exe) ? exe : null;
}

/** The path of the shared single executable, built first when build/src changed. Linux only. */
export async function seaExecutable(): Promise<string> {
  const stamp = sourcesStamp();
  const started = Date.now();
  for (;;) {
    const ready = current(stamp);
    if (ready) return ready;
    try {
      mkdirSync(LOCK);
    } catch {
      const age = Date.now() - statSync(LOCK, { throwIfNoEntry: false })!.mtimeMs;
      if (Number.isNaN(age) || age > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() - started > 2 * STALE_LOCK_MS) throw new Error('seaExecutable: gave up waiting for another process to build the single executable');
      await new Promise((resolve) => setTimeout(resolve, 250));
      continue;
    }
    try {
      if (current(stamp)) continue;
      rmSync(SHARED, { recursive: true, force: true });
      mkdirSync(SHARED, { recursive: true });
      const { buildSea } = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'sea', 'build.mjs')).href)) as {
        buildSea(o: { from: string; out: string }): Promise<{ exe: string }>;
      };
      await buildSea({ from: BUILT_SRC, out: path.join(SHARED, 'out') });
      writeFileSync(path.join(SHARED, 'stamp'), stamp);
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
}

/** An environment for the executable without what Node would read before the command starts (NODE_OPTIONS, NODE_PATH). */
export function seaEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('NODE_')) env[k] = v;
  return { ...env, ...extra };
}

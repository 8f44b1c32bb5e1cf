/**
 * A module only some servers use, read when first needed instead of with
 * the server: the `rookery` command's start-up time is mostly loading
 * modules (bench/README.md). `createServer` is synchronous, so the module is
 * loaded with require of the ES module (Node ^20.19 and >=22.12, the
 * package's engines). Only for modules of plain functions and data: under a
 * test runner with its own module loader the required copy is a second one,
 * so nothing of it may be checked by identity (classes, symbols, WeakMaps).
 */
import { createRequire } from 'node:module';

/** `load()` returns the module at `specifier` (relative to `from`, an `import.meta.url`), loading it on the first call. */
export function loadOnUse<T>(from: string, specifier: string): () => T {
  let module: T | null = null;
  return () => (module ??= createRequire(from)(specifier) as T);
}

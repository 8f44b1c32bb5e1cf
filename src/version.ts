/** The package version, shown by `--version`, the ready line, `GET /v1/health` and IMAP ID. */
export const VERSION = '5.0.0';

/**
 * How this copy of Rookery was built: `package` is the npm package's
 * command (dist/command/rookery.cjs, the one-file bundle of dist/, or
 * `node dist/cli.js`); `bundle` is the one-file script of scripts/sea/ run
 * by Node; `single executable` is that script inside a copy of the `node`
 * binary (docs/languages.md). Only `--version` shows it: a bug report then
 * says which one it is about.
 */
export type BuildKind = 'package' | 'bundle' | 'single executable';

let build: BuildKind = 'package';

/** Called once by a bundle's entry (scripts/sea/entry.mjs) before the command runs. */
export function provideBuild(kind: BuildKind): void {
  build = kind;
}

/** What `rookery --version` prints: `rookery 5.0.0 (single executable, node 20.20.2, linux-x64)`. */
export function versionLine(): string {
  return `rookery ${VERSION} (${build}, node ${process.versions.node}, ${process.platform}-${process.arch})`;
}

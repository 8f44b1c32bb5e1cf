/** The package version, shown by `--version`, the ready line, `GET /v1/health` and IMAP ID. */
export const VERSION = '5.0.0';

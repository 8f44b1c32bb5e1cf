#!/usr/bin/env node
/**
 * The `rookery` command: start a server from flags, environment variables
 * (`ROOKERY_<OPTION>`) and a JSON config file, in that order of precedence,
 * print where it listens, and exit when it stops.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import type { ExportFormat, ExportWritten } from './fixtures/export.js';
import type { ServerOptions, Storage } from './options/types.js';
import { suggestKey } from './options/typos.js';
import { createServer } from './server.js';
import { TEST_CERTIFICATE } from './tls/test-certificate.js';
import { TEST_CA } from './tls/test-ca.js';
import type { AttackName } from './tls/attacks/catalog.js';
import type { ProfileName } from './tls/profile-names.js';
import { VERSION, versionLine } from './version.js';
import type { ClientReportTarget } from './client-check/report.js';
// What only some invocations use (the demo, fixture files, export, record,
// the client report) is imported where it is used: start-up reads fewer modules.


/** Flags, their value type and help text. Environment names derive from them. */
const FLAGS = {
  port: { type: 'string', help: 'IMAP port (default 1143, 1993 with --secure; 0 picks a free one)' },
  host: { type: 'string', help: 'IMAP address (default 127.0.0.1)' },
  secure: { type: 'boolean', help: 'implicit TLS on the IMAP port (built-in test certificate unless --tls-key/--tls-cert)' },
  starttls: { type: 'boolean', help: 'offer STARTTLS on the plain IMAP port' },
  'login-disabled': { type: 'boolean', help: 'advertise LOGINDISABLED: no login before TLS (turns on --starttls)' },
  'tls-key': { type: 'string', help: 'PEM file with the TLS private key' },
  'tls-cert': { type: 'string', help: 'PEM file with the TLS certificate (chain)' },
  'print-certificate': { type: 'boolean', help: 'print the built-in test certificate (PEM) for clients to trust, and exit' },
  'print-ca': { type: 'boolean', help: 'print the test CA (PEM) that signs the TLS profiles\' certificates, and exit (docs/tls.md)' },
  'tls-profile': { type: 'string', help: 'certificate profile of every TLS listener: valid, expired, not-yet-valid, wrong-host, self-signed, unknown-ca, missing-intermediate, weak-signature, weak-key' },
  attack: { type: 'string', multiple: true, help: 'STARTTLS attack every plain-text IMAP, POP3 and SMTP session meets (repeatable; docs/tls.md lists them), e.g. starttls-buffering' },
  storage: { type: 'string', help: 'JSON file with the storage option' },
  'user-mailboxes': { type: 'boolean', help: 'each user has their own mailbox tree; storage is {users: {name: tree}, shared} (docs/user-mailboxes.md)' },
  import: {
    type: 'string',
    multiple: true,
    help: 'MAILBOX=PATH: messages from a directory of .eml files, an mbox file or a Maildir (repeatable; docs/fixtures.md)',
  },
  preset: { type: 'string', help: 'provider quirk preset: gmail, outlook, yahoo, icloud or dovecot; other options win over it (docs/presets.md)' },
  config: { type: 'string', help: 'JSON file with any options, e.g. {"plugins":"all","rest":{"port":8080}}' },
  plugin: { type: 'string', multiple: true, help: 'extension to load (repeatable or comma list) instead of the default set; "all": every built-in but the opt-in X-GM-EXT-1; "none": the bare IMAP4rev1 core' },
  'plugin-option': {
    type: 'string',
    multiple: true,
    help: 'a plugin option, PLUGIN.key=value (repeatable; value is JSON or else text), e.g. APPENDLIMIT.limit=1000',
  },
  script: { type: 'string', help: 'JSON file with script rules' },
  'script-seed': { type: 'string', help: 'seed of the script rules\u2019 PRNG' },
  defect: { type: 'string', multiple: true, help: 'a real server defect to reproduce, by name (repeatable; docs/script-rules.md lists them)' },
  'rest-port': { type: 'string', help: 'port of the REST API (off without it)' },
  'rest-host': { type: 'string', help: 'address of the REST API (default 127.0.0.1)' },
  'rest-token': { type: 'string', help: 'bearer token every REST request must send' },
  'rest-max-connections': { type: 'string', help: 'most REST connections at once, half-sent requests included; more get 503 (default 1000)' },
  'rest-headers-timeout': { type: 'string', help: 'ms a REST client has to send the request headers, then 408 (default 20000)' },
  'rest-request-timeout': { type: 'string', help: 'ms a REST client has to send a whole request, 0 for no limit, then 408 (default 30000)' },
  'rest-body-timeout': { type: 'string', help: 'ms a REST request body may go without a byte, 0 for no limit, then 408 (default 10000)' },
  'rest-max-body-bytes-in-flight': { type: 'string', help: 'octets of REST request bodies held at once, all requests together (default 134217728)' },
  'smtp-port': { type: 'string', help: 'port of the SMTP intake (off without it; needs the package smtp-server)' },
  'smtp-host': { type: 'string', help: 'address of the SMTP intake (default 127.0.0.1)' },
  'smtp-secure': { type: 'boolean', help: 'implicit TLS on the SMTP port (as on 465)' },
  'smtp-starttls': { type: 'boolean', help: 'offer STARTTLS on the SMTP port' },
  'smtp-auth': { type: 'boolean', help: 'require SMTP AUTH (PLAIN, LOGIN, XOAUTH2) with the IMAP users' },
  'smtp-catch-all': { type: 'boolean', help: 'accept mail for any recipient, not only for user names' },
  'pop3-port': { type: 'string', help: 'port of the POP3 listener (off without it)' },
  'pop3-host': { type: 'string', help: 'address of the POP3 listener (default 127.0.0.1)' },
  'pop3-secure': { type: 'boolean', help: 'implicit TLS on the POP3 port (as on 995)' },
  'pop3-stls': { type: 'boolean', help: 'offer STLS on the POP3 port (RFC 2595)' },
  'max-connections': { type: 'string', help: 'most IMAP connections at once; more get * BYE (default 5000)' },
  'max-unauthenticated': { type: 'string', help: 'most connections not logged in yet (default 1000)' },
  'login-timeout': { type: 'string', help: 'ms a connection has to log in, 0 for no limit (default 60000)' },
  'idle-timeout': { type: 'string', help: 'ms of silence before autologout, 0 for never (default 1800000)' },
  'shutdown-timeout': { type: 'string', help: 'ms a graceful stop waits for running commands (default 10000)' },
  'max-line-length': { type: 'string', help: 'longest command line in bytes (default 65536)' },
  'max-literal': { type: 'string', help: 'largest literal after login in bytes (default 67108864)' },
  'max-literal-before-login': { type: 'string', help: 'largest literal before login (default 65536)' },
  'max-command-before-login': { type: 'string', help: 'largest command before login, literals included (default 131072)' },
  'max-output-buffer': { type: 'string', help: 'unread output in bytes after which a client is cut off (default 134217728)' },
  'max-store-bytes': { type: 'string', help: 'most octets of mail the store holds, all users together; more is refused as over quota (default: no limit)' },
  'max-messages': { type: 'string', help: 'most messages the store holds, all users together; more are refused as over quota (default: no limit)' },
  'client-check': { type: 'string', help: 'client checker: off, report (default) or strict (BAD [CLIENTBUG] for an offending command)' },
  'client-report': { type: 'string', help: 'at stop, write the client findings: junit:<file>, json:<file>, text (stderr) or text:<file>' },
  'hide-capability': { type: 'string', multiple: true, help: 'capability no session is offered (repeatable or comma list), e.g. MOVE,LITERAL+,IDLE' },
  // Issue 14: server-clock timers, throttling, transport faults (docs/faults-and-timers.md).
  autologout: { type: 'string', help: 'ms without client input before * BYE on the server clock, in every state (0: off; per state in --config)' },
  'max-idle': { type: 'string', help: 'longest IDLE in ms on the server clock, then * BYE (0: no limit)' },
  'max-connections-per-user': { type: 'string', help: 'logged-in sessions per user; one more gets Gmail\u2019s NO [ALERT] Too many simultaneous connections (other styles in --config)' },
  bandwidth: { type: 'string', help: 'bytes per second each session\u2019s output may use (the faults.bandwidth option)' },
  demo: { type: 'boolean', help: 'start with demo users, mailboxes and messages' },
  debug: { type: 'boolean', help: 'log every IMAP line in and out to stderr (credentials redacted)' },
  transcripts: { type: 'string', help: 'on or off: keep each session\u2019s transcript (default on; GET /v1/sessions/{n}/transcript)' },
  'transcript-dir': { type: 'string', help: 'write each closed session\u2019s transcript to a file in this directory' },
  'ready-json': { type: 'boolean', help: 'print one JSON line with every listener\u2019s address once all listen (the ready signal)' },
  help: { type: 'boolean', help: 'this text' },
  version: { type: 'boolean', help: 'print the version' },
} as const;

type FlagName = keyof typeof FLAGS;

/** Numeric flags that set the option of the same name. */
const LIMIT_FLAGS = [
  ['max-connections', 'maxConnections'],
  ['max-unauthenticated', 'maxUnauthenticated'],
  ['login-timeout', 'loginTimeout'],
  ['idle-timeout', 'idleTimeout'],
  ['shutdown-timeout', 'shutdownTimeout'],
  ['max-line-length', 'maxLineLength'],
  ['max-literal', 'maxLiteral'],
  ['max-literal-before-login', 'maxLiteralBeforeLogin'],
  ['max-command-before-login', 'maxCommandBeforeLogin'],
  ['max-output-buffer', 'maxOutputBuffer'],
  ['max-store-bytes', 'maxStoreBytes'],
  ['max-messages', 'maxMessages'],
  ['autologout', 'autologout'],
  ['max-idle', 'maxIdle'],
  ['max-connections-per-user', 'maxConnectionsPerUser'],
] as const satisfies readonly (readonly [FlagName, keyof ServerOptions])[];
/** Numeric flags that set a key of the `rest` option. */
const REST_LIMIT_FLAGS = [
  ['rest-max-connections', 'maxConnections'],
  ['rest-headers-timeout', 'headersTimeout'],
  ['rest-request-timeout', 'requestTimeout'],
  ['rest-body-timeout', 'bodyTimeout'],
  ['rest-max-body-bytes-in-flight', 'maxBodyBytesInFlight'],
] as const satisfies readonly (readonly [FlagName, keyof NonNullable<ServerOptions['rest']>])[];
type FlagValues = Partial<Record<FlagName, string | boolean | string[]>>;

const SAMPLE_CONFIG = `{
  "port": 1143,
  "plugins": "all",
  "users": { "testuser": { "password": "testpass" } },
  "storage": { "INBOX": { "messages": ["Subject: hello\\r\\n\\r\\nWorld\\r\\n"] } },
  "rest": { "port": 8025 }
}`;

function usage(): string {
  const lines = Object.entries(FLAGS).map(([name, f]) => `  --${name.padEnd(26)} ${f.help}`);
  return [
    'Usage: rookery [options]',
    '       rookery replay <transcript> [options]   serve a recorded transcript back (docs/debugging.md)',
    '       rookery record --upstream host:port ...  record a real server (rookery record --help)',
    '       rookery export --format json|mbox|maildir [--out PATH] [--mailbox NAME] [--url REST-URL | options]',
    '       rookery generate [--seed N] [--count N] [--profile realistic|malformed] ...  a seeded mailbox (docs/generator.md)',
    '       rookery compare <transcript> --reference host:port [--target host:port] ...  a real server vs Rookery (docs/compare.md)',
    '       rookery health [--url REST-URL | --rest-port PORT] [--rest-token T]  exit 0 when a server answers GET /v1/health',
    '',
    ...lines,
    '',
    'Every option is also an environment variable ROOKERY_<NAME> (ROOKERY_REST_PORT, ...).',
    'Precedence: flag > environment > config file.',
    '',
    'A config file (--config rookery.json) holds any server option, for example:',
    SAMPLE_CONFIG,
    '',
    'Examples: examples/fixtures.json (--storage) and examples/rookery.json (--config) in the package.',
  ].join('\n');
}

class CliError extends Error {}

function envName(flag: string): string {
  return `ROOKERY_${flag.toUpperCase().replace(/-/g, '_')}`;
}

/** `ROOKERY_*` variables that name no flag: each would silently do nothing. */
function unknownEnvironment(env: NodeJS.ProcessEnv): string[] {
  const known = new Set(Object.keys(FLAGS).map(envName));
  const names = Object.keys(FLAGS).map(envName);
  return Object.keys(env)
    .filter((k) => k.startsWith('ROOKERY_') && !known.has(k))
    .map((k) => {
      const hint = suggestKey(k, names);
      return `environment variable ${k} is not a rookery setting and is ignored${hint ? `; did you mean ${hint}?` : ''}`;
    });
}

/** Flag values, with environment variables filling what flags leave out. */
function readFlags(argv: string[], env: NodeJS.ProcessEnv, subcommand?: { name: string; flags: readonly string[] }): FlagValues {
  const known = Object.keys(FLAGS);
  // A subcommand's own flags are taken out before; they still count for did-you-mean.
  const hints = subcommand ? [...known, ...subcommand.flags] : known;
  const help = subcommand ? `rookery ${subcommand.name} --help` : '--help';
  for (const arg of argv) {
    const m = /^--([^=]+)/.exec(arg);
    if (m && !known.includes(m[1]!)) {
      const hint = suggestKey(m[1]!, hints);
      throw new CliError(`unknown option --${m[1]}${hint ? `; did you mean --${hint}?` : ''} (see ${help})`);
    }
  }
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof FLAGS; strict: true; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: true });
  } catch (err) {
    // Node's own text names the problem but not our flags' forms.
    const m = /'(--[\w-]+)/.exec((err as Error).message);
    const flag = m?.[1];
    if (flag && (err as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      throw new CliError(`${flag} needs a value, e.g. ${flag} 1143; a value that starts with "-" must be written ${flag}=<value>`);
    }
    throw new CliError(`${(err as Error).message.split('\n')[0]} (see --help)`);
  }
  const { values, positionals } = parsed;
  if (positionals.length) throw new CliError(`unexpected argument ${JSON.stringify(positionals[0])} (see --help)`);
  const out: FlagValues = { ...(values as FlagValues) };
  for (const [name, f] of Object.entries(FLAGS) as [FlagName, (typeof FLAGS)[FlagName]][]) {
    const value = env[envName(name)];
    if (out[name] !== undefined || value === undefined || value === '') continue;
    if (f.type === 'boolean') out[name] = !['0', 'false', 'no'].includes(value.toLowerCase());
    else out[name] = 'multiple' in f ? value.split(',') : value;
  }
  return out;
}

function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${what} ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${what} ${file} is not valid JSON: ${(err as Error).message}`);
  }
}

function port(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new CliError(`--${flag}: expected a port number 0-65535, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * `--plugin-option PLUGIN.key=value` (repeatable; `a.b=1` nests): merged
 * over the config file's pluginOptions. The value is read as JSON when it
 * is JSON (`1000`, `true`, `{"x":1}`), else taken as text. Keys are set as
 * own properties, so `__proto__` is an ordinary (and invalid) key.
 */
function pluginOptions(base: ServerOptions['pluginOptions'], items: readonly string[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, value] of Object.entries(base ?? {})) {
    if (typeof value === 'object' && value !== null) setOwn(out, name, structuredClone(value));
    else setOwn(out, name, value as never);
  }
  for (const item of items) {
    const dot = item.indexOf('.');
    const eq = item.indexOf('=', dot + 1);
    if (dot <= 0 || eq <= dot + 1) throw new CliError(`--plugin-option: expected PLUGIN.key=value (e.g. APPENDLIMIT.limit=1000), got ${JSON.stringify(item)}`);
    const plugin = item.slice(0, dot);
    const keys = item.slice(dot + 1, eq).split('.');
    const text = item.slice(eq + 1);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
    let target: Record<string, unknown> = Object.hasOwn(out, plugin) && isObject(out[plugin]) ? out[plugin]! : {};
    setOwn(out, plugin, target);
    keys.forEach((key, i) => {
      if (key === '') throw new CliError(`--plugin-option: empty key in ${JSON.stringify(item)}`);
      if (i === keys.length - 1) setOwn(target, key, value);
      else {
        const next = Object.hasOwn(target, key) && isObject(target[key]) ? (target[key] as Record<string, unknown>) : {};
        setOwn(target, key, next);
        target = next;
      }
    });
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The demo's options. With a preset the demo brings only its users and
 * INBOX messages: its plugins ("all") and folders would replace the
 * provider's plugins and mix another layout into the provider's.
 */
async function demoFor(withPreset: boolean): Promise<ServerOptions> {
  const demo = (await import('./demo.js')).demoOptions();
  if (!withPreset) return demo;
  return { users: demo.users, storage: { INBOX: (demo.storage as Storage | undefined)?.INBOX ?? {} } };
}

/** Builds server options from flags (already merged with the environment) over a config file. */
async function buildOptions(flags: FlagValues): Promise<ServerOptions> {
  let config: ServerOptions = {};
  if (typeof flags.config === 'string') {
    const read = readJson(flags.config, 'config file');
    if (typeof read !== 'object' || read === null || Array.isArray(read)) throw new CliError(`config file ${flags.config} must hold a JSON object`);
    config = read as ServerOptions;
    (await import('./fixtures/cli-import.js')).rebaseImports(config.storage, dirname(flags.config), Boolean(flags['user-mailboxes'] || config.userMailboxes));
  }
  let options: ServerOptions = { ...(flags.demo ? await demoFor(typeof flags.preset === 'string' || config.preset !== undefined) : {}), ...config };
  // Checked (with a did-you-mean) by the options, like every other value.
  if (typeof flags.preset === 'string') options.preset = flags.preset as ServerOptions['preset'];
  if (flags.secure) options.secure = true;
  if (flags.starttls) options.starttls = true;
  if (flags['login-disabled']) options.loginDisabled = true;
  if (flags['user-mailboxes']) options.userMailboxes = true;
  // The demo's mailboxes are one tree; with per-user trees every demo user gets a copy of it.
  if (flags.demo && options.userMailboxes === true && config.storage === undefined && options.storage !== undefined) {
    const tree = options.storage as Storage;
    options.storage = { users: Object.fromEntries(Object.keys(options.users ?? {}).map((name) => [name, tree])) };
  }
  if (typeof flags['tls-key'] === 'string' || typeof flags['tls-cert'] === 'string') {
    const key = flags['tls-key'];
    const cert = flags['tls-cert'];
    if (typeof key !== 'string' || typeof cert !== 'string') throw new CliError('--tls-key and --tls-cert go together');
    options.tls = { ...options.tls, key, cert };
  }
  // Checked by the options, with the list of profiles and attacks on a wrong name.
  if (typeof flags['tls-profile'] === 'string') options.tls = { ...options.tls, profile: flags['tls-profile'] as ProfileName };
  const attacks = flags.attack;
  if (Array.isArray(attacks)) options.attacks = attacks.flatMap((a) => String(a).split(',')).filter((a) => a !== '') as AttackName[];
  options.port = typeof flags.port === 'string' ? port(flags.port, 'port') : (options.port ?? (options.secure ? 1993 : 1143));
  if (typeof flags.host === 'string') options.host = flags.host;
  if (typeof flags.storage === 'string') {
    options.storage = readJson(flags.storage, 'storage file') as ServerOptions['storage'];
    (await import('./fixtures/cli-import.js')).rebaseImports(options.storage, dirname(flags.storage), Boolean(flags['user-mailboxes'] || options.userMailboxes));
  }
  if (Array.isArray(flags.import)) {
    if (options.userMailboxes) {
      throw new CliError('--import fills the one-tree storage; with user mailboxes give "import" in a user\'s tree of the storage file (docs/fixtures.md)');
    }
    const { applyImports } = await import('./fixtures/cli-import.js');
    try {
      options.storage = applyImports(options.storage as Storage | undefined, flags.import);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
  }
  if (Array.isArray(flags.plugin)) {
    const names = flags.plugin.flatMap((p) => p.split(',')).map((p) => p.trim()).filter(Boolean);
    // `all` next to other names keeps them: an opt-in plugin (X-GM-EXT-1) is named besides "all".
    // `none` is the bare IMAP4rev1 core, as `plugins: []` is in the options.
    if (names.length === 1 && names[0]!.toLowerCase() === 'none') options.plugins = [];
    else options.plugins = names.length === 1 && names[0]!.toLowerCase() === 'all' ? 'all' : names;
  }
  if (Array.isArray(flags['plugin-option'])) options.pluginOptions = pluginOptions(options.pluginOptions, flags['plugin-option']);
  if (typeof flags.script === 'string') options.script = flags.script;
  if (Array.isArray(flags.defect)) options.defects = [...(Array.isArray(options.defects) ? options.defects : []), ...flags.defect];
  if (typeof flags['client-check'] === 'string') options.clientCheck = flags['client-check'] as ServerOptions['clientCheck'];
  if (Array.isArray(flags['hide-capability'])) {
    options.capabilities = { hide: flags['hide-capability'].flatMap((c) => c.split(',')).map((c) => c.trim()).filter(Boolean) };
  }
  if (typeof flags['script-seed'] === 'string') {
    const seed = Number(flags['script-seed']);
    if (!Number.isInteger(seed)) throw new CliError(`--script-seed: expected an integer, got ${JSON.stringify(flags['script-seed'])}`);
    options.scriptSeed = seed;
  }
  for (const [flag, key] of LIMIT_FLAGS) {
    const value = flags[flag];
    if (typeof value !== 'string') continue;
    const n = Number(value);
    if (value.trim() === '' || !Number.isSafeInteger(n) || n < 0) throw new CliError(`--${flag}: expected a whole number, got ${JSON.stringify(value)}`);
    options[key] = n;
  }
  if (typeof flags.bandwidth === 'string') {
    const n = Number(flags.bandwidth);
    if (flags.bandwidth.trim() === '' || !Number.isSafeInteger(n) || n < 0) throw new CliError(`--bandwidth: expected a whole number, got ${JSON.stringify(flags.bandwidth)}`);
    options.faults = { ...(options.faults ?? {}), bandwidth: n };
  }
  const rest = { ...(options.rest ?? {}) };
  if (typeof flags['rest-port'] === 'string') rest.port = port(flags['rest-port'], 'rest-port');
  if (typeof flags['rest-host'] === 'string') rest.host = flags['rest-host'];
  if (typeof flags['rest-token'] === 'string') rest.token = flags['rest-token'];
  for (const [flag, key] of REST_LIMIT_FLAGS) {
    const value = flags[flag];
    if (typeof value !== 'string') continue;
    const n = Number(value);
    if (value.trim() === '' || !Number.isSafeInteger(n) || n < 0) throw new CliError(`--${flag}: expected a whole number, got ${JSON.stringify(value)}`);
    rest[key] = n;
  }
  if (Object.keys(rest).length) options.rest = rest;
  const smtpFlags: NonNullable<ServerOptions['smtp']> = {};
  if (typeof flags['smtp-port'] === 'string') smtpFlags.port = port(flags['smtp-port'], 'smtp-port');
  if (typeof flags['smtp-host'] === 'string') smtpFlags.host = flags['smtp-host'];
  if (flags['smtp-secure']) smtpFlags.secure = true;
  if (flags['smtp-starttls']) smtpFlags.starttls = true;
  if (flags['smtp-auth']) smtpFlags.auth = true;
  if (flags['smtp-catch-all']) smtpFlags.catchAll = true;
  // A config file's smtp that is not an object stays as it is, so the options report it as such.
  if (Object.keys(smtpFlags).length) options.smtp = { ...(isObject(options.smtp) ? options.smtp : {}), ...smtpFlags };
  const pop3Flags: NonNullable<ServerOptions['pop3']> = {};
  if (typeof flags['pop3-port'] === 'string') pop3Flags.port = port(flags['pop3-port'], 'pop3-port');
  if (typeof flags['pop3-host'] === 'string') pop3Flags.host = flags['pop3-host'];
  if (flags['pop3-secure']) pop3Flags.secure = true;
  if (flags['pop3-stls']) pop3Flags.stls = true;
  if (Object.keys(pop3Flags).length) options.pop3 = { ...(isObject(options.pop3) ? options.pop3 : {}), ...pop3Flags };
  if (flags.debug) options.debug = true;
  if (typeof flags.transcripts === 'string' || typeof flags['transcript-dir'] === 'string') {
    const given = options.transcript;
    const transcript = typeof given === 'object' && given !== null ? { ...given } : typeof given === 'boolean' ? { enabled: given } : {};
    if (typeof flags.transcripts === 'string') {
      const v = flags.transcripts.toLowerCase();
      if (!['on', 'off', 'true', 'false'].includes(v)) throw new CliError(`--transcripts: expected on or off, got ${JSON.stringify(flags.transcripts)}`);
      transcript.enabled = v === 'on' || v === 'true';
    }
    if (typeof flags['transcript-dir'] === 'string') transcript.dir = flags['transcript-dir'];
    options.transcript = transcript;
  }
  return options;
}

/** Settings that would silently do nothing with these options. */
function ineffective(options: ServerOptions): string[] {
  const warnings: string[] = [];
  const rest = options.rest as { port?: unknown; host?: unknown; token?: unknown } | undefined;
  if (rest && rest.port === undefined && (rest.token !== undefined || rest.host !== undefined)) {
    warnings.push('a REST token or host is set but no REST port (--rest-port): the REST API stays off');
  } else if (rest && typeof rest === 'object' && rest.port === undefined && Object.keys(rest).length > 0) {
    warnings.push('REST limits are set but no REST port (--rest-port): the REST API stays off');
  }
  const smtp = options.smtp as Record<string, unknown> | undefined;
  if (smtp && typeof smtp === 'object' && smtp.port === undefined && Object.keys(smtp).length > 0) {
    warnings.push('SMTP settings are set but no SMTP port (--smtp-port): SMTP intake stays off');
  }
  const pop3 = options.pop3 as Record<string, unknown> | undefined;
  if (pop3 && typeof pop3 === 'object' && pop3.port === undefined && Object.keys(pop3).length > 0) {
    warnings.push('POP3 settings are set but no POP3 port (--pop3-port): POP3 stays off');
  }
  return warnings;
}

const EXPORT_USAGE = `Usage: rookery export --format json|mbox|maildir [--out PATH] [--mailbox NAME] [--url URL [--rest-token T]] [options]

Writes a snapshot of the mail out: from a running server (--url, its REST address such as
http://127.0.0.1:8025/v1) or else from the options given as to the server itself
(--config, --storage, --import, --demo, ...), without listening anywhere.
  --format json      the storage option's shape (--storage loads it back); stdout without --out
  --format mbox      one mboxrd file per mailbox under --out (DIR/Work/Sub.mbox); with --mailbox
                     --out is the file (stdout without --out)
  --format maildir   one Maildir per mailbox under --out (DIR/INBOX, DIR/Work/Sub); with --mailbox
                     --out is the Maildir
See docs/fixtures.md.`;

/** The export command's own flags, taken out of argv; the rest are server flags. */
const EXPORT_FLAGS = ['format', 'out', 'mailbox', 'url'] as const;

function exportFlags(argv: string[], flags: readonly string[] = EXPORT_FLAGS, command = 'export'): { own: Map<string, string>; rest: string[] } {
  const names = new Set<string>(flags);
  const own = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([\w-]+)(?:=(.*))?$/s.exec(argv[i]!);
    if (!m || !names.has(m[1]!)) {
      rest.push(argv[i]!);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new CliError(`--${m[1]} needs a value (see rookery ${command} --help)`);
    own.set(m[1]!, value);
  }
  return { own, rest };
}

async function snapshotOverRest(url: string, token: string | undefined): Promise<Storage> {
  const base = url.replace(/\/+$/, '');
  const target = `${base.endsWith('/v1') ? base : `${base}/v1`}/snapshot`;
  let response: Response;
  try {
    response = await fetch(target, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  } catch (err) {
    throw new CliError(`cannot reach ${target}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok) throw new CliError(`GET ${target} answered ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as Storage;
}

async function runExport(argv: string[]): Promise<number> {
  if (argv.includes('--help')) {
    console.log(EXPORT_USAGE);
    return 0;
  }
  const { own, rest } = exportFlags(argv);
  const flags = readFlags(rest, process.env, { name: 'export', flags: EXPORT_FLAGS });
  const { EXPORT_FORMATS, exportStorage } = await import('./fixtures/export.js');
  const format = own.get('format');
  if (!format || !EXPORT_FORMATS.includes(format as ExportFormat)) {
    throw new CliError(`export: --format must be json, mbox or maildir${format ? `, got ${JSON.stringify(format)}` : ''} (see rookery export --help)`);
  }
  let storage: Storage;
  const url = own.get('url');
  if (url !== undefined) {
    const token = typeof flags['rest-token'] === 'string' ? flags['rest-token'] : undefined;
    storage = await snapshotOverRest(url, token);
  } else {
    // Built, never started: the snapshot is the options' storage, resolved (imports read) as a server would.
    const server = createServer(await buildOptions(flags));
    storage = server.control.snapshot();
  }
  let out: Buffer | null;
  const written: ExportWritten[] = [];
  try {
    out = exportStorage(storage, { format: format as ExportFormat, out: own.get('out'), mailbox: own.get('mailbox'), onWrite: (w) => written.push(w) });
  } catch (err) {
    throw new CliError(`export: ${(err as Error).message}`);
  }
  if (out) await new Promise<void>((resolve, reject) => process.stdout.write(out, (err) => (err ? reject(err) : resolve())));
  // Say what was written: a file export is otherwise silent. The data itself owns stdout when it went there.
  const say = out ? console.error : console.log;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (out) say(`rookery export: wrote ${format} to stdout (${plural(out.length, 'byte')})`);
  for (const w of written) say(`rookery export: wrote ${w.path} (${w.mailbox === null ? 'every mailbox' : JSON.stringify(w.mailbox)}, ${plural(w.messages, 'message')})`);
  if (!out) say(`rookery export: ${plural(written.length, format === 'maildir' ? 'Maildir' : 'file')}, ${plural(written.reduce((n, w) => n + w.messages, 0), 'message')}`);
  return 0;
}

const HEALTH_USAGE = `Usage: rookery health [--url REST-URL | --rest-port PORT [--rest-host HOST]] [--rest-token TOKEN] [--timeout MS]

Asks a running server GET /v1/health and exits 0 when it answers (one line on stdout), 1 when it does not
(the reason on stderr): a container's HEALTHCHECK, or a script waiting for a server. The port, host and token
come from the flags or, as for the server, from ROOKERY_REST_PORT, ROOKERY_REST_HOST and ROOKERY_REST_TOKEN;
a host of 0.0.0.0 or :: is asked on loopback. --url is the REST address (http://127.0.0.1:8025/v1).
--timeout: ms to wait for the answer (default 5000). See docs/container.md.`;

/** The health command's own flags, taken out of argv; the rest are server flags (the REST ones are read). */
const HEALTH_FLAGS = ['url', 'timeout'] as const;

async function runHealth(argv: string[]): Promise<number> {
  if (argv.includes('--help')) {
    console.log(HEALTH_USAGE);
    return 0;
  }
  const { own, rest } = exportFlags(argv, HEALTH_FLAGS, 'health');
  const flags = readFlags(rest, process.env, { name: 'health', flags: HEALTH_FLAGS });
  const { healthUrl, probeHealth } = await import('./health-probe.js');
  let url = own.get('url');
  if (url === undefined) {
    if (typeof flags['rest-port'] !== 'string') throw new CliError('health: give --url, or --rest-port (or ROOKERY_REST_PORT) of the server (see rookery health --help)');
    url = healthUrl(typeof flags['rest-host'] === 'string' ? flags['rest-host'] : undefined, port(flags['rest-port'], 'rest-port'));
  }
  const timeoutText = own.get('timeout') ?? '5000';
  const timeoutMs = Number(timeoutText);
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new CliError(`health: --timeout: expected a whole number of ms above 0, got ${JSON.stringify(timeoutText)}`);
  const result = await probeHealth({ url, token: typeof flags['rest-token'] === 'string' ? flags['rest-token'] : null, timeoutMs });
  if (!result.ok) {
    console.error(`rookery health: ${result.reason}`);
    return 1;
  }
  console.log(`rookery health: ok, rookery ${result.version} at ${url}`);
  return 0;
}

async function main(): Promise<number> {
  let argv = process.argv.slice(2);
  if (argv[0] === 'export') return runExport(argv.slice(1));
  if (argv[0] === 'health') return runHealth(argv.slice(1));
  if (argv[0] === 'record') return (await import('./transcript/record-cli.js')).runRecord(argv.slice(1));
  if (argv[0] === 'generate') return (await import('./generator/cli.js')).runGenerate(argv.slice(1));
  if (argv[0] === 'compare') return (await import('./compare/cli.js')).runCompare(argv.slice(1));
  let replay: string | null = null;
  if (argv[0] === 'replay') {
    replay = argv[1] ?? null;
    if (replay === null || replay.startsWith('-')) throw new CliError('replay: name the transcript file: rookery replay <file> [options]');
    argv = argv.slice(2);
  }
  const flags = readFlags(argv, process.env);
  if (flags.help) {
    console.log(usage());
    return 0;
  }
  if (flags.version) {
    console.log(versionLine());
    return 0;
  }
  if (flags['print-certificate']) {
    process.stdout.write(TEST_CERTIFICATE);
    return 0;
  }
  if (flags['print-ca']) {
    process.stdout.write(TEST_CA);
    return 0;
  }
  const options = await buildOptions(flags);
  let reportTarget: ClientReportTarget | null = null;
  const report = typeof flags['client-report'] === 'string' ? await import('./client-check/report.js') : null;
  if (report && typeof flags['client-report'] === 'string') {
    try {
      reportTarget = report.parseClientReportTarget(flags['client-report']);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
  }
  if (replay !== null) {
    if (typeof flags.script === 'string') throw new CliError('replay: --script cannot go with a replay (a replay runs no script rules)');
    options.script = { replay };
  }
  for (const warning of [...unknownEnvironment(process.env), ...ineffective(options)]) console.error(`rookery: warning: ${warning}`);
  const server = createServer(options);
  const { imap, rest, smtp, pop3 } = await server.start();
  const restUrl = rest ? `http://${rest.host.includes(':') ? `[${rest.host}]` : rest.host}:${rest.port}/v1` : null;
  // With --ready-json stdout carries only that JSON line; the prose goes to stderr.
  const say = flags['ready-json'] ? console.error : console.log;
  if (flags['ready-json']) {
    // The ready signal: one line of JSON, every listener listening (documented as the contract).
    console.log(JSON.stringify({ ready: true, version: VERSION, imap: { ...imap, secure: server.options.secure }, rest: rest ? { ...rest, url: restUrl } : null, smtp: smtp ? { ...smtp, secure: server.options.smtp!.secure } : null, pop3: pop3 ? { ...pop3, secure: server.options.pop3!.secure, stls: server.options.pop3!.stls } : null }));
  }
  say(`rookery ${VERSION}: IMAP listening on ${imap.host}:${imap.port}${server.options.secure ? ' (implicit TLS)' : ''}`);
  say(restUrl ? `rookery: REST API listening on ${restUrl}` : 'rookery: REST API off (--rest-port to turn it on)');
  if (restUrl) say(`rookery: dashboard at ${restUrl.slice(0, -'v1'.length)}${server.options.rest?.token ? ' (asks for the REST token)' : ''}`);
  if (smtp) say(`rookery: SMTP listening on ${smtp.host}:${smtp.port}${server.options.smtp!.secure ? ' (implicit TLS)' : ''}`);
  if (pop3) say(`rookery: POP3 listening on ${pop3.host}:${pop3.port}${server.options.pop3!.secure ? ' (implicit TLS)' : server.options.pop3!.stls ? ' (STLS offered)' : ''}`);
  say(`rookery: users: ${[...server.options.users.keys()].join(', ') || '(none)'}`);
  if (server.options.replay) say(`rookery: replaying ${replay ?? 'script.replay'} (${server.options.replay.length} recorded session${server.options.replay.length === 1 ? '' : 's'}, one per connection in turn)`);
  if (flags.demo) {
    say(`rookery: demo users testuser/testpass and alice/alicepass; try`);
    say(`  curl -u testuser:testpass imap://${imap.host}:${imap.port}/INBOX -X 'FETCH 1:* (FLAGS ENVELOPE)'`);
    if (rest) say(`  curl http://${rest.host}:${rest.port}/v1/mailboxes`);
  }
  let signals = 0;
  const onSignal = (): void => {
    signals++;
    if (signals > 1) {
      // Forced: every client gets BYE and is closed; the process ends even if something still hangs.
      say('rookery: forced stop');
      void server.shutdown(false);
      setTimeout(() => process.exit(1), 1000).unref();
      return;
    }
    const seconds = server.options.shutdownTimeout / 1000;
    say(`rookery: stopping; clients get BYE and have ${seconds} s to finish (signal again to force)`);
    void server.shutdown(true);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  await server.stopped;
  if (report && reportTarget) {
    const text = report.renderClientReport(server.clientReport(), reportTarget.format);
    if (reportTarget.file === null) process.stderr.write(text);
    else writeFileSync(reportTarget.file, text);
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    console.error(`rookery: ${message.split('\n').join('; ')}`);
    process.exit(1);
  },
);

/**
 * `rookery/testing`: one call in a node:test or vitest file gives each test
 * a started server on free ports, client settings for imapflow, and a
 * reset between tests.
 *
 * ```ts
 * import { test } from 'node:test';          // or: from 'vitest'
 * import { ImapFlow } from 'imapflow';
 * import { useRookery } from 'rookery/testing';
 *
 * const rookery = useRookery({ plugins: 'all' });
 * test('sees a delivery', async () => {
 *   rookery.control.addMessage('INBOX', { raw: 'Subject: hi\r\n\r\nhello\r\n' });
 *   const client = new ImapFlow(rookery.imapflow());
 *   await client.connect();
 *   // ...
 * });
 * ```
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_MARK_TEXT, type ControlApi } from '../control/control.js';
import type { ServerOptions } from '../options/types.js';
import { createServer, type ListenAddress, type Server } from '../server.js';
// Every built-in imported with this entry, as with the package entry: under a
// test runner's own module loader (vitest inlining a linked package) a
// built-in loaded on use by require would be another copy of the core.
import '../extensions/index.js';

/** Hook registrars of a test framework (node:test, vitest, mocha and jest all have these shapes). */
export interface TestHooks {
  /** Runs once before the file's tests (node:test `before`, vitest `beforeAll`). */
  beforeAll: (fn: () => Promise<void>) => unknown;
  /** Runs once after the file's tests (node:test `after`, vitest `afterAll`). */
  afterAll: (fn: () => Promise<void>) => unknown;
  /** Runs before each test; the framework's test context is passed when it has one (for the test's name). */
  beforeEach: (fn: (context?: unknown) => Promise<void>) => unknown;
  /**
   * Runs after each test, with the framework's test context: the helper
   * marks the test's end in the event stream and, with `keepOnFailure`,
   * keeps the server of a failed test open. Optional: without it there are
   * no end marks and nothing is kept.
   */
  afterEach?: (fn: (context?: unknown) => Promise<void>) => unknown;
}

export interface UseRookeryOptions extends ServerOptions {
  /**
   * The framework's hooks. Default: vitest's when running under vitest
   * (`process.env.VITEST`), else node:test's. Pass them for another runner.
   */
  hooks?: TestHooks;
  /** Reset store, script rules and sessions before each test. Default true. */
  resetBetweenTests?: boolean;
  /**
   * Put a `mark` event in the stream as each test starts and ends (its name,
   * and on the end whether it passed), which the dashboard shows as a
   * divider. Default true.
   */
  markTests?: boolean;
  /**
   * When a test fails, leave its server running as the test left it (with
   * REST and the dashboard on, on a free port unless `rest.port` is given),
   * print its addresses, and go on with a new server; after the file's last
   * test the process stays up until it is stopped (Ctrl-C), so the state can
   * be looked at (the file's after-all hook waits until then, without a time
   * limit). Only the last failed test's server is kept. Default: on
   * when the environment variable `ROOKERY_KEEP` is `1` (or `true`), off
   * otherwise; leave it off in CI.
   */
  keepOnFailure?: boolean;
  /** Where the kept server's addresses are written (default: `process.stderr`). */
  keepLog?: (line: string) => void;
}

/** Options for `new ImapFlow(...)`: the server's address, a user's login, no logging. */
export interface ImapFlowSettings {
  host: string;
  port: number;
  secure: boolean;
  auth: { user: string; pass: string };
  logger: false;
  /** With implicit TLS: the built-in test certificate is self-signed. */
  tls?: { rejectUnauthorized: false };
}

/** What `useRookery` hands the tests; its getters work once the before-all hook has run. */
export interface RookeryFixture {
  /** The running server. */
  readonly server: Server;
  /** `server.control`: add messages, flags, users, rules, ... */
  readonly control: ControlApi;
  /** Where IMAP listens. */
  readonly imap: ListenAddress;
  /** The REST base URL (`http://127.0.0.1:<port>/v1`), or null when `rest` was not asked for. */
  readonly restUrl: string | null;
  /**
   * The server a failed test left open (`keepOnFailure`), or null. The
   * fixture's `server` is by then a new one for the tests that follow.
   */
  readonly kept: Server | null;
  /** imapflow settings for `user` (default: the first user with a password, `testuser`/`testpass` by default). */
  imapflow(user?: string): ImapFlowSettings;
  /** What runs before each test: store and users as in the options, script rules as in the options, sessions closed. */
  reset(): void;
}

/**
 * vitest's ESM entry file. vitest is ESM only (its `require` entry throws);
 * its ESM file, required (Node >= 20.19 loads ESM synchronously), is the
 * instance running the test file, so hooks can be registered at once.
 * Looked up from the project (the working directory) first.
 */
function vitestEntry(): string {
  for (const base of [join(process.cwd(), 'package.json'), fileURLToPath(import.meta.url)]) {
    let manifest: string;
    try {
      manifest = createRequire(base).resolve('vitest/package.json');
    } catch {
      continue;
    }
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: { '.'?: { import?: { default?: string } } } };
    return join(dirname(manifest), pkg.exports?.['.']?.import?.default ?? 'dist/index.js');
  }
  throw new Error('useRookery: running under vitest (VITEST is set) but the package vitest cannot be found; pass { hooks: { beforeAll, afterAll, beforeEach } }');
}

/**
 * The hooks of the runner this file runs under. `keep`: the after-all hook
 * may wait until the process is stopped, so under vitest it gets no time
 * limit (vitest's default hook timeout is 10 s).
 */
function frameworkHooks(keep: boolean): TestHooks {
  const require = createRequire(import.meta.url);
  if (process.env.VITEST) {
    type VitestHook = (fn: (context?: unknown) => Promise<void>, timeout?: number) => unknown;
    const vitest = require(vitestEntry()) as { beforeAll: VitestHook; afterAll: VitestHook; beforeEach: VitestHook; afterEach: VitestHook };
    return {
      beforeAll: vitest.beforeAll,
      afterAll: keep ? (fn) => vitest.afterAll(fn, 0) : vitest.afterAll,
      beforeEach: vitest.beforeEach,
      afterEach: vitest.afterEach,
    };
  }
  const nodeTest = require('node:test') as typeof import('node:test');
  return {
    beforeAll: nodeTest.before,
    afterAll: nodeTest.after,
    beforeEach: nodeTest.beforeEach as TestHooks['beforeEach'],
    afterEach: nodeTest.afterEach as Required<TestHooks>['afterEach'],
  };
}

// vitest's test context is a function object; node:test's a plain one.
const isObject = (v: unknown): v is Record<string, unknown> => (typeof v === 'object' && v !== null) || typeof v === 'function';

/**
 * The test's name from a hook's context: node:test passes its TestContext
 * (`name`), vitest its test context (`task.name`); other runners may pass
 * nothing.
 */
function testName(context: unknown): string | null {
  if (!isObject(context)) return null;
  const task = context.task;
  if (isObject(task) && typeof task.name === 'string') return task.name;
  return typeof context.name === 'string' ? context.name : null;
}

/** Whether the test passed, from an after-each hook's context (node:test `passed`; vitest `task.result.state`); null when unknown. */
function testOutcome(context: unknown): 'pass' | 'fail' | null {
  if (!isObject(context)) return null;
  const task = context.task;
  if (isObject(task)) {
    const result = task.result;
    if (isObject(result) && typeof result.state === 'string') return result.state === 'fail' ? 'fail' : 'pass';
    return null;
  }
  return typeof context.passed === 'boolean' ? (context.passed ? 'pass' : 'fail') : null;
}

function keepFromEnvironment(): boolean {
  const value = process.env.ROOKERY_KEEP?.trim().toLowerCase();
  return value === '1' || value === 'true' || value === 'yes';
}

function passwordOf(options: ServerOptions, user: string | undefined): { user: string; pass: string } {
  const users = options.users ?? { testuser: { password: 'testpass' } };
  const names = Object.keys(users);
  const name = user ?? names.find((n) => typeof users[n]?.password === 'string');
  if (name === undefined || !Object.hasOwn(users, name) || typeof users[name]!.password !== 'string') {
    throw new Error(`useRookery: no user ${JSON.stringify(user ?? '(with a password)')} with a password in the options; users: ${names.join(', ') || '(none)'}`);
  }
  return { user: name, pass: users[name]!.password! };
}

/**
 * Registers before-all (start on free ports), before-each (reset) and
 * after-all (stop) hooks in the calling test file and returns the fixture.
 * Call it at the top level of the file (or of a describe block).
 */
export function useRookery(options: UseRookeryOptions = {}): RookeryFixture {
  const {
    keepOnFailure = keepFromEnvironment(),
    hooks = frameworkHooks(keepOnFailure),
    resetBetweenTests = true,
    markTests = true,
    keepLog = (line: string) => void process.stderr.write(`${line}\n`),
    ...given
  } = options;
  // A kept server is only worth keeping if it can be looked at: REST (and with it the dashboard) is on.
  const serverOptions: ServerOptions = keepOnFailure && !given.rest ? { ...given, rest: {} } : given;
  let server: Server | null = null;
  let imap: ListenAddress | null = null;
  let restUrl: string | null = null;
  let kept: { server: Server; test: string; imap: ListenAddress; restUrl: string | null } | null = null;
  const running = (): Server => {
    if (!server) throw new Error('useRookery: the server starts in the before-all hook; use the fixture inside tests or hooks');
    return server;
  };
  const start = async (): Promise<void> => {
    const rest = serverOptions.rest ? { ...serverOptions.rest, port: kept === null ? serverOptions.rest.port ?? 0 : 0 } : undefined;
    const s = createServer({ ...serverOptions, port: kept === null ? serverOptions.port ?? 0 : 0, ...(rest ? { rest } : {}) });
    const addresses = await s.start();
    server = s;
    imap = addresses.imap;
    restUrl = addresses.rest ? `http://${hostForUrl(addresses.rest.host)}:${addresses.rest.port}/v1` : null;
  };
  const mark = (text: string | null, phase: 'start' | 'end', outcome: 'pass' | 'fail' | null): void => {
    if (!markTests || text === null || text === '' || !server) return;
    server.control.mark({ text: text.slice(0, MAX_MARK_TEXT), phase, outcome: phase === 'end' ? outcome : null });
  };
  const describeKept = (k: NonNullable<typeof kept>): string => {
    const dashboard = k.restUrl ? k.restUrl.replace(/\/v1$/, '/') : '(no REST listener)';
    return `rookery: test ${JSON.stringify(k.test)} failed; its server stays open as the test left it: IMAP ${hostForUrl(k.imap.host)}:${k.imap.port}, dashboard ${dashboard}, REST ${k.restUrl ?? '(none)'}`;
  };
  const fixture: RookeryFixture = {
    get server() {
      return running();
    },
    get control() {
      return running().control;
    },
    get imap() {
      running();
      return imap!;
    },
    get restUrl() {
      running();
      return restUrl;
    },
    get kept() {
      return kept?.server ?? null;
    },
    imapflow(user) {
      const s = running();
      const settings: ImapFlowSettings = { host: imap!.host, port: imap!.port, secure: s.options.secure, auth: passwordOf(serverOptions, user), logger: false };
      if (s.options.secure) settings.tls = { rejectUnauthorized: false };
      return settings;
    },
    reset() {
      const s = running();
      for (const session of s.control.sessions()) s.control.disconnect(session.session);
      s.script.clear();
      if (s.options.script.length > 0) s.script.addOptionRules(s.options.script);
      s.control.reset();
    },
  };
  hooks.beforeAll(start);
  hooks.beforeEach(async (context?: unknown) => {
    if (resetBetweenTests) fixture.reset();
    mark(testName(context), 'start', null);
  });
  hooks.afterEach?.(async (context?: unknown) => {
    const outcome = testOutcome(context);
    const name = testName(context);
    mark(name, 'end', outcome);
    if (!keepOnFailure || outcome !== 'fail' || !server) return;
    // Only the last failed test's server stays: the one kept before goes.
    const before = kept;
    kept = { server, test: name ?? '(unnamed test)', imap: imap!, restUrl };
    keepLog(describeKept(kept));
    await before?.server.stop();
    await start();
  });
  hooks.afterAll(async () => {
    const s = server;
    server = null;
    await s?.stop();
    if (!kept) return;
    keepLog(`${describeKept(kept)}. It stays up until this process is stopped (Ctrl-C).`);
    // Held here, not only by the listeners: a runner that ends its workers once the last hook is done (vitest) would stop it.
    await new Promise<never>(() => undefined);
  });
  return fixture;
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

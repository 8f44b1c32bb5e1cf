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
import type { ControlApi } from '../control/control.js';
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
  /** Runs before each test. */
  beforeEach: (fn: () => Promise<void>) => unknown;
}

export interface UseRookeryOptions extends ServerOptions {
  /**
   * The framework's hooks. Default: vitest's when running under vitest
   * (`process.env.VITEST`), else node:test's. Pass them for another runner.
   */
  hooks?: TestHooks;
  /** Reset store, script rules and sessions before each test. Default true. */
  resetBetweenTests?: boolean;
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

function frameworkHooks(): TestHooks {
  const require = createRequire(import.meta.url);
  if (process.env.VITEST) {
    const vitest = require(vitestEntry()) as { beforeAll: TestHooks['beforeAll']; afterAll: TestHooks['afterAll']; beforeEach: TestHooks['beforeEach'] };
    return { beforeAll: vitest.beforeAll, afterAll: vitest.afterAll, beforeEach: vitest.beforeEach };
  }
  const nodeTest = require('node:test') as typeof import('node:test');
  return { beforeAll: nodeTest.before, afterAll: nodeTest.after, beforeEach: nodeTest.beforeEach };
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
  const { hooks = frameworkHooks(), resetBetweenTests = true, ...serverOptions } = options;
  let server: Server | null = null;
  let imap: ListenAddress | null = null;
  let restUrl: string | null = null;
  const running = (): Server => {
    if (!server) throw new Error('useRookery: the server starts in the before-all hook; use the fixture inside tests or hooks');
    return server;
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
  hooks.beforeAll(async () => {
    const rest = serverOptions.rest ? { ...serverOptions.rest, port: serverOptions.rest.port ?? 0 } : undefined;
    server = createServer({ ...serverOptions, port: serverOptions.port ?? 0, ...(rest ? { rest } : {}) });
    const addresses = await server.start();
    imap = addresses.imap;
    restUrl = addresses.rest ? `http://${addresses.rest.host.includes(':') ? `[${addresses.rest.host}]` : addresses.rest.host}:${addresses.rest.port}/v1` : null;
  });
  if (resetBetweenTests) {
    hooks.beforeEach(async () => {
      fixture.reset();
    });
  }
  hooks.afterAll(async () => {
    const s = server;
    server = null;
    await s?.stop();
  });
  return fixture;
}

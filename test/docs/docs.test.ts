/**
 * The docs stay true. Every `docs/*.md` (whoever wrote it) is read; fenced
 * code blocks marked to run are run as a reader would run them (README.md's
 * too), and what the pages claim is checked against the server itself:
 *
 * - ```` ```js run ```` blocks run with `node` in a fresh project whose
 *   `rookery` is this build; ```` ```python run ```` blocks run with
 *   `python3` (python/rookery.py on the path, ROOKERY the built command),
 *   ```` ```python run pytest ```` blocks with `python3 -m pytest`;
 *   ```` ```sh run ```` blocks run with `bash -e` (`rookery` and
 *   `npx rookery` are the built command). A ```` ```sh server ```` block is
 *   started first and stopped after the file's blocks; the ports 1143 and
 *   8025 in a file's blocks are replaced with free ones.
 * - Every `/v1/...` path exists in the OpenAPI document (every built-in plugin loaded).
 * - ```` ```json config ```` blocks are valid server options and
 *   ```` ```json storage ```` blocks a valid storage option.
 * - In a table whose first column is headed `option`, each backticked name
 *   is an option (`rest.port` checks both levels); headed `event type`, an
 *   event type.
 * - Every `--flag` on a line that runs `rookery` is in `rookery --help` or
 *   `rookery export --help`.
 *
 * A page without any of these passes as it is.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer as netServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BUILTIN_PLUGINS, createServer, EVENT_TYPES } from '../../src/index.js';
import { EVENTS_KEYS, REST_KEYS, TOP_LEVEL_KEYS, USER_KEYS } from '../../src/options/resolve.js';
import { SMTP_KEYS } from '../../src/options/smtp.js';
import { TLS_KEYS } from '../../src/options/tls.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BUILT = fileURLToPath(new URL('../../src/', import.meta.url));
const CLI = join(BUILT, 'cli.js');

interface Block {
  lang: string;
  tags: string[];
  code: string;
  line: number;
}

/** Fenced code blocks (``` only) with their info string split into language and tags. */
function codeBlocks(markdown: string): Block[] {
  const out: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // CommonMark: a backtick fence's info string has no backtick (```` ```js run ```` in prose is inline code).
    const open = /^(\s*)```([^`]*)$/.exec(lines[i]!);
    if (!open) continue;
    const [lang = '', ...tags] = open[2]!.trim().split(/\s+/);
    const body: string[] = [];
    const start = i + 1;
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!.slice(open[1]!.length));
    out.push({ lang: lang.toLowerCase(), tags, code: body.join('\n'), line: start });
  }
  return out;
}

async function docFiles(): Promise<string[]> {
  const names = (await readdir(join(ROOT, 'docs'))).filter((n) => n.endsWith('.md')).sort();
  return [...names.map((n) => join('docs', n)), 'README.md'];
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = netServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

let project = '';
let bin = '';
let openApiPaths: RegExp[] = [];
let helpText = '';

before(async () => {
  project = await mkdtemp(join(tmpdir(), 'rookery-docs-'));
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'docs-reader', private: true, type: 'module' }));
  const pkg = join(project, 'node_modules', 'rookery');
  await mkdir(pkg, { recursive: true });
  await copyFile(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  await symlink(BUILT, join(pkg, 'dist'));
  await symlink(join(ROOT, 'python'), join(pkg, 'python'));
  for (const dep of ['imapflow', 'nodemailer', 'vitest', 'openid-client']) await symlink(join(ROOT, 'node_modules', dep), join(project, 'node_modules', dep));
  bin = join(project, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'rookery'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
  await chmod(join(bin, 'rookery'), 0o755);

  // Every built-in plugin, the opt-in ones too: the docs describe their routes as well.
  const server = createServer({ plugins: [...BUILTIN_PLUGINS], rest: { port: 0 } });
  const { rest } = await server.start();
  try {
    const doc = (await (await fetch(`http://127.0.0.1:${rest!.port}/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    openApiPaths = Object.keys(doc.paths).map(
      (p) => new RegExp(`^${p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{path\}/g, '[^?#\\s]+').replace(/\{[^}]+\}/g, '[^/?#\\s]+')}$`),
    );
  } finally {
    await server.stop();
  }
  helpText = await new Promise<string>((resolve) =>
    execFile(process.execPath, [CLI, '--help'], (_e, a) => execFile(process.execPath, [CLI, 'export', '--help'], (_e2, b) => resolve(`${a}\n${b}`))),
  );
});

after(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeout = 60_000): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const { NODE_TEST_CONTEXT: _c, ...base } = process.env;
    execFile(command, args, { cwd: project, timeout, env: { ...base, ...env }, maxBuffer: 1 << 24 }, (error, stdout, stderr) =>
      resolve({ code: error ? 1 : 0, out: `${stdout}\n${stderr}` }),
    );
  });
}

const ENV = (): NodeJS.ProcessEnv => ({
  PATH: `${bin}:${process.env.PATH ?? ''}`,
  PYTHONPATH: join(ROOT, 'python'),
  PYTHONDONTWRITEBYTECODE: '1',
  ROOKERY: `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)}`,
});

/** Starts a `sh server` block and resolves once it printed its IMAP address. */
async function startServerBlock(code: string): Promise<ChildProcess> {
  const child = spawn('bash', ['-c', `exec ${code.trim()}`], { cwd: project, env: { ...process.env, ...ENV() }, detached: true });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server block did not start: ${out}`)), 15_000);
    const check = (d: Buffer): void => {
      out += d.toString();
      if (/IMAP listening on|"ready":true/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (c) => reject(new Error(`server block exited (${c}): ${out}`)));
  });
  return child;
}

const subcommandHelps = new Map<string, Promise<string>>();

/** `rookery <sub> --help`, once per subcommand (a word that is no subcommand prints the server's help or an error: harmless). */
function subcommandHelp(sub: string): Promise<string> {
  let help = subcommandHelps.get(sub);
  if (!help) {
    help = new Promise<string>((resolve) => execFile(process.execPath, [CLI, sub, '--help'], { timeout: 10_000 }, (_e, out, err) => resolve(`${out}\n${err}`)));
    subcommandHelps.set(sub, help);
  }
  return help;
}

function knownOption(name: string): boolean {
  const [top, sub] = name.split('.');
  if (!(TOP_LEVEL_KEYS as readonly string[]).includes(top!)) return false;
  if (sub === undefined) return true;
  const subs: Record<string, readonly string[]> = { rest: REST_KEYS, events: EVENTS_KEYS, smtp: SMTP_KEYS, tls: TLS_KEYS, users: USER_KEYS };
  return subs[top!] ? subs[top!]!.includes(sub) : true;
}

/** Rows of every table whose header's first cell matches `header`: the first cell of each body row. */
function tableFirstCells(markdown: string, header: RegExp): string[] {
  const out: string[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i + 1 < lines.length; i++) {
    const head = /^\|\s*([^|]*?)\s*\|/.exec(lines[i]!);
    if (!head || !header.test(head[1]!) || !/^\|\s*:?-{3,}/.test(lines[i + 1]!)) continue;
    for (let j = i + 2; j < lines.length && lines[j]!.startsWith('|'); j++) out.push(/^\|\s*([^|]*?)\s*\|/.exec(lines[j]!)?.[1] ?? '');
  }
  return out;
}

const files = await docFiles();
// The first Python that has pytest: `python3` on PATH, else Debian's (.ci/run installs python3-pytest for it).
const pytestPython = ['python3', '/usr/bin/python3'].find((py) => spawnSync(py, ['-c', 'import pytest']).status === 0);
const pytestAvailable = pytestPython !== undefined;

for (const file of files) {
  describe(file, () => {
    // README.md's sections describe plugin routes by example (`/v1/x/{id}`): its blocks run, its prose is not checked.
    test('REST paths, options, event types and flags it names exist', { skip: file === 'README.md' ? 'README.md: runnable blocks only' : false }, async () => {
      const text = await readFile(join(ROOT, file), 'utf8');
      // A plugin route declared in an example (`path: '/v1/counter/{step}'`) is not a reference to one.
      const referenced = text.replace(/\bpath:\s*(['"`])\/v1\/[^'"`]*\1/g, '');
      const paths = new Set(referenced.match(/\/v1\/[A-Za-z0-9_{}.%/-]*[A-Za-z0-9_}%-]/g) ?? []);
      for (const path of paths) {
        // A template variable written in the doc (`{uid}`) stands for any value.
        const concrete = path.replace(/\{[^}]+\}/g, 'x');
        assert.ok(openApiPaths.some((re) => re.test(concrete)), `${file}: ${path} is not a path of the OpenAPI document`);
      }
      for (const cell of tableFirstCells(text, /^options?$/i)) {
        for (const name of cell.match(/`([^`]+)`/g) ?? []) assert.ok(knownOption(name.slice(1, -1)), `${file}: option ${name} is not an option`);
      }
      for (const cell of tableFirstCells(text, /^event types?$/i)) {
        for (const name of cell.match(/`([^`]+)`/g) ?? []) assert.ok((EVENT_TYPES as readonly string[]).includes(name.slice(1, -1)), `${file}: ${name} is not an event type`);
      }
      for (const block of codeBlocks(text)) {
        if (block.lang === 'json' && (block.tags.includes('config') || block.tags.includes('storage'))) {
          const value = JSON.parse(block.code) as Record<string, unknown>;
          assert.doesNotThrow(() => createServer(block.tags.includes('config') ? value : { storage: value }), `${file}:${block.line}: json ${block.tags.join(' ')}`);
        }
        if (!['sh', 'bash', 'shell', 'console'].includes(block.lang)) continue;
        for (const line of block.code.split('\n')) {
          // Only where the line runs the command: `rookery ...`, `npx rookery ...`, `... && rookery ...`.
          const at = /(?:^|[;&|(]\s*|\bnpx\s+|^\S+=\S*\s+)rookery(?=\s|$)/.exec(line.trim());
          if (!at) continue;
          const command = line.trim().slice(at.index);
          // `rookery record --listen ...`: a subcommand's flags are in its own --help, besides the server's.
          const sub = /rookery\s+([a-z][a-z-]*)(?=\s|$)/.exec(command)?.[1];
          const help = sub ? `${helpText}\n${await subcommandHelp(sub)}` : helpText;
          for (const flag of command.match(/(?<=\s)--[a-z][a-z0-9-]*/g) ?? []) {
            assert.ok(help.includes(`${flag} `) || help.includes(`${flag}\n`) || help.includes(`${flag}]`), `${file}:${block.line}: ${flag} is not a flag of rookery${sub ? ` ${sub}` : ''}`);
          }
        }
      }
    });

    test('its runnable blocks run', { timeout: 240_000 }, async (t) => {
      const text = await readFile(join(ROOT, file), 'utf8');
      const blocks = codeBlocks(text).filter((b) => b.tags.includes('run') || b.tags.includes('server'));
      if (blocks.length === 0) return;
      const imap = await freePort();
      const rest = await freePort();
      const fix = (code: string): string =>
        code.replace(/\b1143\b/g, String(imap)).replace(/\b8025\b/g, String(rest)).replace(/\bnpx rookery\b/g, 'rookery');
      let server: ChildProcess | null = null;
      try {
        const serverBlock = blocks.find((b) => b.tags.includes('server'));
        if (serverBlock) server = await startServerBlock(fix(serverBlock.code));
        let n = 0;
        for (const block of blocks) {
          if (!block.tags.includes('run')) continue;
          const name = `block-${file.replace(/\W/g, '_')}-${++n}`;
          const code = fix(block.code);
          let result: { code: number; out: string };
          if (block.lang === 'js' || block.lang === 'javascript') {
            await writeFile(join(project, `${name}.mjs`), code);
            result = await run(process.execPath, [`${name}.mjs`], ENV());
          } else if ((block.lang === 'python' || block.lang === 'py') && block.tags.includes('pytest') && !pytestAvailable && !process.env.CI) {
            t.diagnostic(`${file}:${block.line}: pytest is not installed; block not run`);
            continue;
          } else if ((block.lang === 'python' || block.lang === 'py') && block.tags.includes('pytest')) {
            await writeFile(join(project, `test_${name.replace(/-/g, '_')}.py`), code);
            result = await run(pytestPython ?? 'python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', `test_${name.replace(/-/g, '_')}.py`], ENV());
          } else if (block.lang === 'python' || block.lang === 'py') {
            await writeFile(join(project, `${name}.py`), code);
            result = await run('python3', [`${name}.py`], ENV());
          } else if (['sh', 'bash', 'shell'].includes(block.lang)) {
            await writeFile(join(project, `${name}.sh`), code);
            result = await run('bash', ['-e', '-o', 'pipefail', `${name}.sh`], ENV());
          } else {
            assert.fail(`${file}:${block.line}: cannot run a \`${block.lang}\` block (js, python and sh can run)`);
          }
          assert.equal(result.code, 0, `${file}:${block.line}: the ${block.lang} block failed:\n${code}\n--- output:\n${result.out}`);
        }
      } finally {
        if (server?.pid) {
          try {
            process.kill(-server.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    });
  });
}

/**
 * Issue 30: a FETCH rule written as the docs write it must act on the FETCH
 * a real client sends. Every one-line rule in the docs and the README that
 * names FETCH (`server.script.add({ ... })` lines, and JSON rules in text,
 * curl lines and blocks) is added to a fresh server; two imapflow sessions
 * then fetch with `{ uid: true }` (a `UID FETCH` on the wire; the plain
 * form for a rule that says `uid: false`) and the rule must have matched.
 */
function fetchRules(markdown: string): string[] {
  const out: string[] = [];
  for (const line of markdown.split('\n')) {
    const js = /^\s*(server\.script\.add\(.*\));\s*(\/\/.*)?$/.exec(line);
    if (js && /command: (\[[^\]]*)?'(UID )?FETCH'/.test(js[1]!)) out.push(js[1]!);
    for (const json of line.match(/\{\s*"on"\s*:[^{}]*\}/g) ?? []) if (/"command"\s*:\s*"(UID )?FETCH"/.test(json)) out.push(json);
  }
  return out;
}

test('every FETCH rule in the docs acts on the FETCH imapflow sends', { timeout: 240_000 }, async () => {
  const { ImapFlow } = await import('imapflow');
  const { defects } = await import('../../src/index.js');
  let checked = 0;
  for (const file of files) {
    const text = await readFile(join(ROOT, file), 'utf8');
    for (const source of fetchRules(text)) {
      const server = createServer({ port: 0, storage: { INBOX: { messages: ['Subject: one\r\n\r\nbody one\r\n', 'Subject: two\r\n\r\nbody two\r\n'] } } });
      const { imap } = await server.start();
      const clients: InstanceType<typeof ImapFlow>[] = [];
      try {
        const handle = (
          source.startsWith('{')
            ? server.script.add(JSON.parse(source) as never)
            : (new Function('server', 'defects', `return ${source}`) as (s: unknown, d: unknown) => unknown)(server, defects)
        ) as { rule: { uid?: boolean; chance?: number }; matched: number; hits: number };
        const uid = handle.rule.uid !== false;
        const within = <T>(p: Promise<T>): Promise<T | null> =>
          Promise.race([p.catch(() => null), new Promise<null>((resolve) => setTimeout(() => resolve(null), 1500).unref())]);
        for (let n = 0; n < 2; n++) {
          const client = new ImapFlow({ host: imap.host, port: imap.port, secure: false, auth: { user: 'testuser', pass: 'testpass' }, logger: false });
          client.on('error', () => undefined);
          clients.push(client);
          await client.connect();
          await client.mailboxOpen('INBOX');
        }
        // Session 2 fetches three times: rules with `session: 2, nth: 3` are in the docs.
        for (const client of clients) for (let i = 0; i < 3; i++) await within(client.fetchOne('2', { uid: true, flags: true, source: true }, { uid }));
        assert.ok(handle.matched >= 1, `${file}: ${source} never matched imapflow's ${uid ? 'UID FETCH' : 'FETCH'}`);
        if (handle.rule.chance === undefined) assert.ok(handle.hits >= 1, `${file}: ${source} matched but never acted`);
        checked++;
      } finally {
        for (const client of clients) client.close();
        await server.stop();
      }
    }
  }
  assert.ok(checked >= 10, `${checked} FETCH rules found in the docs`);
});

/**
 * Issue 30: every POST carries `Content-Type: application/json`, even one
 * without a body (the spec), so every curl command in the docs that POSTs
 * or sends data says so; a reader who copies one gets no 415.
 */
test('every curl command that POSTs or sends a body carries Content-Type: application/json', async () => {
  let checked = 0;
  for (const file of files) {
    const lines = (await readFile(join(ROOT, file), 'utf8')).split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/(^|[\s;&|(`$])curl\s/.test(lines[i]!)) continue;
      let command = lines[i]!;
      const at = i + 1;
      while (/\\\s*$/.test(command) && i + 1 < lines.length) command = `${command.replace(/\\\s*$/, ' ')}${lines[++i]!.trim()}`;
      // IMAP URLs (curl speaks IMAP too) send IMAP commands with -X, not HTTP methods.
      if (/\bimaps?:\/\//.test(command)) continue;
      // The OAuth endpoints take form bodies, as RFC 6749 §3.2 has them (docs/oauth.md), not the REST API's JSON.
      if (/\/oauth\/(?:token|revoke|introspect|device_authorization|device|authorize)\b/.test(command)) continue;
      const sends = /-X\s*['"]?(POST|PUT|DELETE)\b|\s(-d|--data\S*)\s/.exec(command);
      if (!sends) continue;
      const method = sends[1] ?? 'POST';
      if (method !== 'POST' && !/\s(-d|--data\S*)\s/.test(command)) continue;
      assert.match(command, /-H\s*['"]content-type:\s*application\/json['"]/i, `${file}:${at}: a curl ${method} without -H 'Content-Type: application/json': ${command.trim()}`);
      checked++;
    }
  }
  assert.ok(checked >= 3, `${checked} curl commands checked`);
});

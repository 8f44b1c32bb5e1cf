/**
 * Issue 19: Rookery as a new user gets it. The packed tarball is installed
 * into a fresh project (it has no runtime dependencies, so no registry is
 * needed), and that project runs a node:test file (import and require), a
 * strict TypeScript check under ESM and under CommonJS settings without
 * esModuleInterop, and a Python standard-library script driving the
 * installed `rookery` command.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
let project = '';

before(async () => {
  project = await mkdtemp(path.join(os.tmpdir(), 'rookery-newcomer-'));
  const env = { ...process.env, npm_config_loglevel: 'error', npm_config_audit: 'false', npm_config_fund: 'false' };
  // `npm pack` runs prepare, so the tarball holds a fresh dist/.
  await exec('npm', ['pack', '--pack-destination', project], { cwd: root, env, maxBuffer: 1 << 24 });
  const tarball = (await readdir(project)).find((f) => f.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack made a tarball');
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'newcomer', private: true, type: 'module' }));
  await exec('npm', ['install', '--offline', path.join(project, tarball)], { cwd: project, env });
});

after(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

/** A bulleted list of backticked paths under a heading of RELEASING.md (`` `src/` but `src/x/` `` reads as `src/ but src/x/`). */
function releasingList(text: string, heading: string): string[] {
  const at = text.indexOf(`## ${heading}\n`);
  assert.ok(at >= 0, `RELEASING.md has a section "${heading}"`);
  const section = text.slice(at).split(/\n## /)[0]!;
  return [...section.matchAll(/^- (`.+)$/gm)].map((m) => m[1]!.replace(/`/g, '').trim());
}

test('the tarball holds what RELEASING.md says a publish must contain, and nothing it must not', async () => {
  const releasing = await readFile(path.join(root, 'RELEASING.md'), 'utf8');
  const tarball = (await readdir(project)).find((f) => f.endsWith('.tgz'))!;
  // The tarball itself, as npm publish would send it (every entry is under package/).
  const { stdout } = await exec('tar', ['-tzf', path.join(project, tarball)], { maxBuffer: 1 << 24 });
  const files = stdout.split('\n').filter((f) => f && !f.endsWith('/')).map((f) => f.replace(/^package\//, ''));
  const docs = (await readdir(path.join(root, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  const must = releasingList(releasing, 'What the tarball must contain');
  assert.ok(must.length > 10, 'the list of what a publish must contain was read');
  for (const f of [...must, ...docs]) assert.ok(files.includes(f), `${f} is in the tarball`);

  const mustNot = releasingList(releasing, 'What it must not contain');
  const offending = files.filter((f) => {
    if (f.endsWith('.map')) return true;
    if (f.endsWith('.ts') && !f.endsWith('.d.ts')) return true;
    return mustNot.some((entry) => {
      const but = /^(\S+) but (\S+)$/.exec(entry);
      return but ? f.startsWith(but[1]!) && !f.startsWith(but[2]!) : f.startsWith(entry);
    });
  });
  assert.deepEqual(offending, [], 'files a publish must not contain');
});

test('the installed package serves the dashboard: its files are shipped and found from dist/', async () => {
  const file = path.join(project, 'dashboard.mjs');
  await writeFile(
    file,
    `import { createServer } from 'rookery';
const server = createServer({ port: 0, rest: { port: 0 } });
const { rest } = await server.start();
const base = 'http://127.0.0.1:' + rest.port;
const out = [];
for (const p of ['/', '/dashboard/dashboard.js', '/dashboard/mime.js', '/dashboard/dashboard.css', '/dashboard/favicon.svg']) {
  const res = await fetch(base + p);
  out.push(p + ' ' + res.status + ' ' + (await res.text()).length);
}
await server.stop();
console.log(out.join('\\n'));
`,
  );
  const { stdout } = await exec(process.execPath, [file], { cwd: project, timeout: 30_000 });
  const lines = stdout.trim().split('\n');
  assert.equal(lines.length, 5);
  for (const line of lines) assert.match(line, /^\S+ 200 [1-9]\d*$/, line);
});

test('a node:test file in the new project: import, require and package.json all work', async () => {
  const file = path.join(project, 'first.test.mjs');
  await writeFile(
    file,
    `import assert from 'node:assert/strict';
import net from 'node:net';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { createServer } from 'rookery';

test('a server starts, greets and stops', async () => {
  const server = createServer({ storage: { INBOX: { messages: ['Subject: hi\\r\\n\\r\\nhello\\r\\n'] } } });
  const { imap } = await server.start();
  const socket = net.connect(imap.port, imap.host);
  const greeting = await new Promise((resolve) => socket.once('data', (d) => resolve(d.toString())));
  assert.match(greeting, /^\\* OK /);
  socket.destroy();
  await server.stop();
  const require = createRequire(import.meta.url);
  assert.equal(typeof require('rookery').createServer, 'function');
  assert.equal(require('rookery/package.json').name, 'rookery');
});
`,
  );
  // Without the parent runner's context the child reports in its own TAP, as a user's run would.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const { stdout } = await exec(process.execPath, ['--test', file], { cwd: project, env });
  assert.match(stdout, /# pass 1/);
  assert.match(stdout, /# fail 0/);
});

async function typeCheck(settings: Record<string, unknown>, source: string, name: string): Promise<void> {
  await writeFile(path.join(project, `${name}.ts`), source);
  await writeFile(
    path.join(project, `tsconfig.${name}.json`),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [path.join(root, 'node_modules', '@types')], ...settings },
      files: [`${name}.ts`],
    }),
  );
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  await exec(process.execPath, [tsc, '-p', `tsconfig.${name}.json`], { cwd: project }).catch((err: { stdout?: string }) => {
    throw new Error(`tsc (${name}) failed:\n${err.stdout ?? String(err)}`);
  });
}

const consumer = `import { createServer, type Server } from 'rookery';
const server: Server = createServer({ plugins: 'all', users: { bob: { password: 'pw' } } });
void server.start().then(async ({ imap }) => {
  const port: number = imap.port;
  server.control.addMessage('INBOX', { raw: 'Subject: x\\r\\n\\r\\ny\\r\\n' });
  console.log(port);
  await server.stop();
});
`;

test('strict TypeScript, ESM settings (module nodenext), library types checked', async () => {
  await typeCheck({ module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022' }, consumer, 'esm');
});

test('strict TypeScript: rookery/testing is typed through the exports map', async () => {
  const source = `import { useRookery, type ImapFlowSettings, type RookeryFixture } from 'rookery/testing';
const rookery: RookeryFixture = useRookery({ plugins: 'all', rest: {}, resetBetweenTests: true });
export function settings(): ImapFlowSettings {
  const s = rookery.imapflow('testuser');
  const port: number = rookery.imap.port;
  const url: string | null = rookery.restUrl;
  rookery.control.addMessage('INBOX', { raw: 'Subject: typed\\r\\n\\r\\n.\\r\\n' });
  void port; void url;
  return s;
}
`;
  await typeCheck({ module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022' }, source, 'testing');
});

test('strict TypeScript, CommonJS settings without esModuleInterop', async () => {
  await typeCheck({ module: 'commonjs', moduleResolution: 'node10', target: 'es2022', esModuleInterop: false }, consumer, 'cjs');
});

test('a Python standard-library script drives the installed rookery command', async () => {
  const script = path.join(root, 'examples', 'python', 'rest_then_imaplib.py');
  const bin = path.join(project, 'node_modules', '.bin', 'rookery');
  const { stdout } = await exec('python3', [script], { cwd: project, env: { ...process.env, ROOKERY: bin }, timeout: 30_000 });
  assert.match(stdout, /Hello from REST/);
  // The command npm installs is the bundle of scripts/command/ (issue 37), and says it is the package's.
  const version = await exec(bin, ['--version'], { cwd: project });
  assert.match(version.stdout, /^rookery \S+ \(package, node /);
});

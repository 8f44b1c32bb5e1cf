/**
 * Issue 32 item 5: container/Dockerfile is built nowhere here (no container
 * runtime or registry on these machines), so this test checks it against
 * the command it packages: the pinned base, the non-root user, the file it
 * copies, its environment variables against the command's, its ports
 * against the command's defaults and the ready line of a start with the
 * image's environment, REST on all addresses only with a token, and its
 * HEALTHCHECK run against a server (GET /v1/health with the token).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { serverRoutes } from '../../src/rest/routes.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const DOCKERFILE = readFileSync(`${ROOT}container/Dockerfile`, 'utf8');

interface Instruction { keyword: string; args: string }

/** The Dockerfile's instructions: comments dropped, continuation lines joined. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = (pending + line).trim();
    pending = '';
    const m = /^(\w+)\s+(.*)$/s.exec(whole);
    assert.ok(m, `not an instruction: ${whole}`);
    out.push({ keyword: m[1]!.toUpperCase(), args: m[2]!.trim() });
  }
  return out;
}

const INSTRUCTIONS = instructions(DOCKERFILE);
const all = (keyword: string): string[] => INSTRUCTIONS.filter((i) => i.keyword === keyword).map((i) => i.args);
const one = (keyword: string): string => {
  const found = all(keyword);
  assert.equal(found.length, 1, `one ${keyword} in container/Dockerfile, found ${found.length}`);
  return found[0]!;
};
/** An exec-form (JSON array) argument list. */
const execForm = (args: string): string[] => {
  const value = JSON.parse(args) as unknown;
  assert.ok(Array.isArray(value) && value.every((v) => typeof v === 'string'), `not the exec form: ${args}`);
  return value as string[];
};

/** ENV's KEY=value pairs (the only form used here). */
function environment(): Map<string, string> {
  const env = new Map<string, string>();
  for (const args of all('ENV')) {
    for (const pair of args.split(/\s+/)) {
      const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(pair);
      assert.ok(m, `ENV ${args}: expected KEY=value pairs`);
      env.set(m[1]!, m[2]!);
    }
  }
  return env;
}

function run(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** This process's environment without any ROOKERY_ setting of its own. */
function cleanEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('ROOKERY_')) env[k] = v;
  return env;
}

const HELP = run(['--help'], cleanEnvironment()).stdout;
/** `ROOKERY_<FLAG>` of every flag in `rookery --help`, as the command derives them. */
const ENV_NAMES = new Set([...HELP.matchAll(/^ {2}--([a-z][a-z0-9-]*)/gm)].map((m) => `ROOKERY_${m[1]!.toUpperCase().replace(/-/g, '_')}`));

interface Ready { imap: { host: string; port: number; secure: boolean }; rest: { host: string; port: number; url: string }; smtp: { host: string; port: number } | null; pop3: { host: string; port: number; secure: boolean } | null }

/** Starts the image's ENTRYPOINT (the compiled command for `rookery`) with `env`; resolves with its ready line. */
function start(argv: string[], env: Record<string, string>, prefix: string[] = []): Promise<{ ready: Ready; stop: () => Promise<void> }> {
  const command = prefix.length ? prefix[0]! : process.execPath;
  const args = prefix.length ? [...prefix.slice(1), process.execPath, CLI, ...argv] : [CLI, ...argv];
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      const ready = JSON.parse(out.slice(0, nl)) as Ready;
      resolve({
        ready,
        stop: () => new Promise<void>((done) => {
          if (child.exitCode !== null) return done();
          child.once('close', () => done());
          child.kill('SIGTERM');
        }),
      });
    });
    child.once('close', (code) => reject(new Error(`the command ended (${code}) before its ready line: ${err}`)));
  });
}

test('the base is an exact release of a slim image, named by tag and optionally digest, never a moving tag', () => {
  const from = one('FROM');
  const arg = /^\$\{?(\w+)\}?$/.exec(from);
  let image = from;
  if (arg) {
    const decl = all('ARG').map((a) => /^(\w+)=(\S+)$/.exec(a)).find((m) => m?.[1] === arg[1]);
    assert.ok(decl, `FROM ${from} needs ARG ${arg[1]}=<default>`);
    image = decl[2]!;
  }
  assert.match(image, /^debian:\d+\.\d+-slim(@sha256:[0-9a-f]{64})?$/, `base image ${image}: an exact point release (debian:12.12-slim), optionally @sha256:...`);
});

test('it copies the single executable, as npm run build:sea names it, onto the PATH, and runs as a user created in the image, not root', () => {
  const copies = all('COPY');
  assert.equal(copies.length, 1, 'only the executable goes in');
  const [source, target] = copies[0]!.split(/\s+/).filter((w) => !w.startsWith('--'));
  assert.equal(source, `dist-sea/rookery-linux-x64`);
  const buildScript = readFileSync(`${ROOT}scripts/sea/build.mjs`, 'utf8');
  assert.match(buildScript, /path\.join\(ROOT, 'dist-sea'\)/, 'build:sea writes into dist-sea/');
  assert.match(buildScript, /`rookery-\$\{process\.platform\}-\$\{process\.arch\}`/, 'build:sea names the file rookery-<platform>-<arch>');
  assert.equal(target, '/usr/local/bin/rookery', 'on Debian\'s default PATH, so HEALTHCHECK and ENTRYPOINT can say "rookery"');
  const user = one('USER');
  const [uid, gid] = user.split(':');
  assert.ok(uid && !['0', 'root'].includes(uid) && gid !== '0' && gid !== 'root', `USER ${user} is root`);
  assert.ok(all('RUN').some((r) => r.includes('useradd') && r.includes(`--uid ${uid}`)), `a RUN useradd --uid ${uid} creates USER ${user}`);
  if (gid !== undefined) assert.ok(all('RUN').some((r) => r.includes('groupadd') && r.includes(`--gid ${gid}`)), `a RUN groupadd --gid ${gid} creates USER ${user}'s group`);
  // The user comes after the copy and before what runs the command.
  const at = (k: string): number => INSTRUCTIONS.findIndex((i) => i.keyword === k);
  assert.ok(at('COPY') < at('USER') && at('USER') < at('ENTRYPOINT') && at('USER') < at('HEALTHCHECK'));
});

test('every ROOKERY_ variable it sets, and the token it asks for, is an environment setting of the command', () => {
  assert.ok(ENV_NAMES.has('ROOKERY_REST_PORT') && ENV_NAMES.size > 40, `flags read from --help: ${[...ENV_NAMES].join(' ')}`);
  const env = environment();
  const names = [...env.keys(), ...[...DOCKERFILE.matchAll(/\bROOKERY_[A-Z0-9_]+/g)].map((m) => m[0])];
  for (const name of names) assert.ok(ENV_NAMES.has(name), `${name} is no setting of the command`);
  assert.ok(names.includes('ROOKERY_REST_TOKEN'));
  assert.ok(!env.has('ROOKERY_REST_TOKEN'), 'no token baked into the image');
  // The command agrees: no "is not a rookery setting" warning for any of them.
  const r = run(['--port', '0', '--rest-port', '0', '--smtp-port', '0', '--pop3-port', '0', '--print-certificate'], { ...cleanEnvironment(), ...Object.fromEntries(env) });
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /warning/, r.stderr);
});

test('EXPOSE is the ports the command listens on with the image\'s environment: IMAP\'s defaults, SMTP\'s, POP3\'s and REST\'s from ENV', () => {
  const exposed = all('EXPOSE').flatMap((a) => a.split(/\s+/)).map((p) => Number(p.replace(/\/tcp$/, '')));
  const imap = /--port\s+IMAP port \(default (\d+), (\d+) with --secure/.exec(HELP);
  assert.ok(imap, 'rookery --help names the IMAP ports');
  const env = environment();
  assert.ok(!env.has('ROOKERY_PORT'), 'IMAP keeps its default, which ROOKERY_SECURE=1 turns into the IMAPS one');
  const want = [Number(imap[1]), Number(imap[2]), Number(env.get('ROOKERY_SMTP_PORT')), Number(env.get('ROOKERY_POP3_PORT')), Number(env.get('ROOKERY_REST_PORT'))];
  assert.deepEqual([...exposed].sort(), [...want].sort());
  assert.deepEqual(want.slice(0, 2), [1143, 1993]);
  for (const p of exposed) assert.ok(p >= 1024, `port ${p}: the non-root USER cannot bind a port below 1024`);
});

/** A network namespace of its own (a user namespace maps us to root in it), so the image's fixed ports bind without a clash. */
const NETNS = ['unshare', '-rn', 'sh', '-c', 'ip link set lo up && exec "$@"', 'netns'];
const netnsWorks = spawnSync(NETNS[0]!, [...NETNS.slice(1), 'true']).status === 0;

test('with the image\'s environment and entrypoint the command listens on the exposed ports on every address, and prints the ready line', { skip: netnsWorks ? false : 'unshare -rn (a network namespace) is not available here' }, async () => {
  const env = { ...cleanEnvironment(), ...Object.fromEntries(environment()), ROOKERY_REST_TOKEN: 'image-token' };
  const entry = execForm(one('ENTRYPOINT'));
  assert.deepEqual(entry, ['rookery']);
  const plain = await start([], env, NETNS);
  try {
    assert.deepEqual([plain.ready.imap.host, plain.ready.imap.port, plain.ready.imap.secure], ['0.0.0.0', 1143, false]);
    assert.deepEqual([plain.ready.rest.host, plain.ready.rest.port], ['0.0.0.0', 8025]);
    assert.deepEqual([plain.ready.smtp?.host, plain.ready.smtp?.port], ['0.0.0.0', 2525]);
    assert.deepEqual([plain.ready.pop3?.host, plain.ready.pop3?.port, plain.ready.pop3?.secure], ['0.0.0.0', 1110, false]);
  } finally {
    await plain.stop();
  }
  const secure = await start([], { ...env, ROOKERY_SECURE: '1' }, NETNS);
  try {
    assert.deepEqual([secure.ready.imap.port, secure.ready.imap.secure], [1993, true]);
  } finally {
    await secure.stop();
  }
});

test('REST on every address is refused without ROOKERY_REST_TOKEN, with the reason', () => {
  const env = { ...cleanEnvironment(), ...Object.fromEntries(environment()), ROOKERY_PORT: '0', ROOKERY_REST_PORT: '0', ROOKERY_SMTP_PORT: '0', ROOKERY_POP3_PORT: '0' };
  const r = run([], env);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /non-loopback host 0\.0\.0\.0 needs a token/);
  assert.equal(r.stdout, '', 'no ready line');
});

test('the HEALTHCHECK command asks GET /v1/health with the token from the environment: healthy while the server runs, unhealthy without the token or the server', { timeout: 60_000 }, async () => {
  const health = /^(--\S+\s+)*CMD\s+(\[.*\])$/.exec(one('HEALTHCHECK'));
  assert.ok(health, 'HEALTHCHECK [options] CMD ["..."] (the exec form: no shell needed)');
  const argv = execForm(health[2]!);
  assert.deepEqual(argv.slice(0, 2), ['rookery', 'health']);
  assert.ok(serverRoutes.some((r) => r.method === 'GET' && r.path === '/v1/health'), 'GET /v1/health is a REST route');
  const timeout = /--timeout=(\d+)s/.exec(health[0]);
  const own = argv.indexOf('--timeout');
  assert.ok(timeout && own > 0 && Number(argv[own + 1]) < Number(timeout[1]) * 1000, 'the probe gives up before Docker\'s --timeout kills it');

  const image = { ...cleanEnvironment(), ...Object.fromEntries(environment()), ROOKERY_REST_TOKEN: 'image-token' };
  // Free ports instead of the fixed ones; the probe reads the port from the environment, as in the container.
  const server = await start([], { ...image, ROOKERY_PORT: '0', ROOKERY_REST_PORT: '0', ROOKERY_SMTP_PORT: '0', ROOKERY_POP3_PORT: '0' });
  const probeEnv = { ...image, ROOKERY_REST_PORT: String(server.ready.rest.port) };
  try {
    const ok = run(argv.slice(1), probeEnv);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`^rookery health: ok, rookery \\S+ at http://127\\.0\\.0\\.1:${server.ready.rest.port}/v1\\n$`));
    const noToken = run(argv.slice(1), { ...probeEnv, ROOKERY_REST_TOKEN: '' });
    assert.equal(noToken.status, 1);
    assert.match(noToken.stderr, /answered 401/);
    const wrong = run(argv.slice(1), { ...probeEnv, ROOKERY_REST_TOKEN: 'not-it' });
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /answered 401/);
    // --url and --rest-token as flags work as well.
    const flags = run(['health', '--url', server.ready.rest.url, '--rest-token', 'image-token'], cleanEnvironment());
    assert.equal(flags.status, 0, flags.stderr);
  } finally {
    await server.stop();
  }
  const down = run(argv.slice(1), probeEnv);
  assert.equal(down.status, 1);
  assert.match(down.stderr, /cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/health/);
  const nothing = run(['health'], cleanEnvironment());
  assert.equal(nothing.status, 1);
  assert.match(nothing.stderr, /give --url, or --rest-port/);
});

test('the single executable the image copies has the health subcommand', { skip: process.platform === 'linux' && process.arch === 'x64' ? false : 'the single executable is built on linux-x64 only', timeout: 240_000 }, async () => {
  const { seaEnvironment, seaExecutable } = await import('../helpers/sea.js');
  const exe = await seaExecutable();
  const r = spawnSync(exe, ['health', '--url', 'http://127.0.0.1:9/v1', '--timeout', '2000'], { env: seaEnvironment(), encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /^rookery health: cannot reach http:\/\/127\.0\.0\.1:9\/v1\/health: /);
});

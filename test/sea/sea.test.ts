/**
 * Issue 32 item 1: the single executable. One build per run (about 15 s:
 * the bundle, Node's blob, a 96 MiB copy of node and postject), from the
 * compiled sources this test run uses (build/src); then the executable is
 * copied alone into an empty folder and run there with a PATH that holds no
 * `node` and an environment without NODE_PATH, so nothing outside the file
 * can help it. IMAP (a raw socket), REST (fetch), SMTP (nodemailer), the
 * dashboard's files, a preset over implicit TLS and `rookery export` are
 * driven against it, and SIGTERM must end it with exit code 0.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import nodemailer from 'nodemailer';
import { TEST_CERTIFICATE } from '../../src/index.js';
import { RawClient, tagged } from '../helpers/raw-client.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BUILT_SRC = path.join(ROOT, 'build', 'src');

interface SeaScripts {
  buildSea(o: { from: string; out: string }): Promise<{ exe: string; script: string; blob: string; size: number }>;
  prepareBlob(o: { dir: string }): string;
}
interface BundleScripts {
  bundle(o: { from: string; outfile: string }): Promise<unknown>;
}

interface Ready {
  ready: true;
  version: string;
  imap: { host: string; port: number; secure: boolean };
  rest: { host: string; port: number; url: string } | null;
  smtp: { host: string; port: number; secure: boolean } | null;
}

const skip = process.platform !== 'linux' ? 'the single executable is built on Linux only' : false;

let work = '';
let exe = '';
let script = '';
let blob = '';
/** An empty folder for PATH: no `node`, no npm, nothing. */
let emptyBin = '';

before(async () => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), 'rookery-sea-'));
  const { buildSea } = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'sea', 'build.mjs')).href)) as SeaScripts;
  const built = await buildSea({ from: BUILT_SRC, out: path.join(work, 'out') });
  script = built.script;
  blob = built.blob;
  const alone = path.join(work, 'alone');
  emptyBin = path.join(work, 'bin');
  for (const dir of [alone, emptyBin]) mkdirSync(dir);
  exe = path.join(alone, 'rookery');
  copyFileSync(built.exe, exe);
  chmodSync(exe, 0o755);
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The environment the executable runs in: PATH without node, no NODE_* variables, HOME in the temp folder. */
function bareEnv(): NodeJS.ProcessEnv {
  return { PATH: emptyBin, HOME: work, LANG: 'C' };
}

function runExe(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(exe, args, { cwd: path.dirname(exe), env: bareEnv(), encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Starts the executable; resolves with the child and its ready line. */
async function start(args: string[]): Promise<{ child: ChildProcessWithoutNullStreams; ready: Ready; output: () => string }> {
  const child = spawn(exe, [...args, '--ready-json'], { cwd: path.dirname(exe), env: bareEnv() });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const ready = await new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line: ${out}${err}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(JSON.parse(out.split('\n')[0]!) as Ready);
      }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before ready: ${out}${err}`)));
  });
  return { child, ready, output: () => out + err };
}

/** Sends SIGTERM and resolves with the exit code and signal. */
function stop(child: ChildProcessWithoutNullStreams): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.kill('SIGTERM');
  });
}

test('the environment has no node: the executable cannot lean on one', { skip }, () => {
  assert.equal(existsSync(path.join(emptyBin, 'node')), false);
  assert.deepEqual(readdirSync(path.dirname(exe)), ['rookery']);
  assert.notEqual(spawnSync('sh', ['-c', 'command -v node'], { env: bareEnv() }).status, 0, 'no node on the PATH given');
});

test('--version names the version and the build; --help and --print-certificate work', { skip }, () => {
  const version = runExe(['--version']);
  assert.equal(version.status, 0, version.stderr);
  assert.equal(version.stdout.trim(), `rookery 5.0.0 (single executable, node ${process.versions.node}, linux-${process.arch})`);
  // Node's warning that single executables are experimental is turned off in the build.
  assert.equal(version.stderr, '');
  const help = runExe(['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--ready-json/);
  assert.equal(runExe(['--print-certificate']).stdout, TEST_CERTIFICATE);
});

test('--demo --ready-json: IMAP, REST, SMTP and the dashboard against the executable alone; SIGTERM ends it with 0', { skip, timeout: 60_000 }, async () => {
  const { child, ready, output } = await start(['--demo', '--port', '0', '--rest-port', '0', '--smtp-port', '0']);
  let stopped = false;
  try {
    assert.equal(ready.version, '5.0.0');
    assert.ok(ready.rest && ready.smtp);
    const v1 = ready.rest.url;

    // REST: the health route, then a message added as a delivery would add it.
    const health = (await (await fetch(`${v1}/health`)).json()) as { ok: boolean; smtp: unknown };
    assert.equal(health.ok, true);
    const raw = 'From: rest@example.com\r\nTo: testuser@example.com\r\nSubject: over REST\r\n\r\nadded by fetch\r\n';
    const added = await fetch(`${v1}/mailboxes/INBOX/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ raw }) });
    assert.equal(added.status, 201);
    const { uid } = (await added.json()) as { uid: number };

    // SMTP through the bundled optional peer smtp-server.
    const transport = nodemailer.createTransport({ host: ready.smtp.host, port: ready.smtp.port, ignoreTLS: true });
    const info = await transport.sendMail({ from: 'smtp@example.com', to: 'testuser@example.com', subject: 'over SMTP', text: 'sent by nodemailer' });
    transport.close();
    assert.match(info.response, /^250 /);

    // IMAP: the demo's plugins ("all") are loaded from inside the bundle; both messages are there.
    const imap = await RawClient.connect(ready.imap.port, ready.imap.host);
    try {
      assert.match(await imap.line(), /^\* OK/);
      const caps = await imap.command('CAPABILITY');
      for (const cap of ['IMAP4rev2', 'CONDSTORE', 'QRESYNC', 'SORT', 'THREAD=', 'METADATA', 'NOTIFY', 'COMPRESS=DEFLATE']) assert.ok(caps[0]!.includes(cap), `${cap} in ${caps[0]}`);
      assert.match(tagged(await imap.command('LOGIN testuser testpass')), /^T\d+ OK/);
      assert.match(tagged(await imap.command('SELECT INBOX')), /^T\d+ OK/);
      const fetched = (await imap.command(`UID FETCH ${uid} BODY.PEEK[HEADER.FIELDS (SUBJECT)]`)).join('\n');
      assert.match(fetched, /Subject: over REST/);
      const found = await imap.command('UID SEARCH SUBJECT "over SMTP"');
      assert.match(found[0]!, /^\* SEARCH \d+$/);
      const sorted = await imap.command('SORT (DATE) UTF-8 ALL');
      assert.match(tagged(sorted), /^T\d+ OK/);
      await imap.command('LOGOUT');
    } finally {
      imap.close();
    }

    // The dashboard's files come from inside the executable (there is no src/ next to it).
    const page = await fetch(`${v1.slice(0, -'v1'.length)}`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>Rookery dashboard<\/title>/);
    for (const file of ['dashboard.js', 'mime.js', 'dashboard.css', 'favicon.svg']) {
      const r = await fetch(`${v1.slice(0, -'v1'.length)}dashboard/${file}`);
      assert.equal(r.status, 200, file);
      assert.deepEqual(Buffer.from(await r.arrayBuffer()), readFileSync(path.join(ROOT, 'src', 'dashboard', 'static', file)), file);
    }

    // `rookery export` from the running server: a module loaded on use, over REST.
    const exported = runExe(['export', '--format', 'json', '--url', v1]);
    assert.equal(exported.status, 0, exported.stderr);
    assert.match(exported.stdout, /over SMTP/);

    const end = await stop(child);
    stopped = true;
    assert.deepEqual(end, { code: 0, signal: null }, output());
    assert.match(output(), /rookery: stopping/);
  } finally {
    if (!stopped) child.kill('SIGKILL');
  }
});

test('a preset over implicit TLS: the built-in certificate and the preset modules are in the executable', { skip, timeout: 30_000 }, async () => {
  const { child, ready } = await start(['--preset', 'gmail', '--secure', '--port', '0']);
  try {
    assert.equal(ready.imap.secure, true);
    const socket = tls.connect({ host: ready.imap.host, port: ready.imap.port, ca: TEST_CERTIFICATE, servername: 'localhost' });
    const text = await new Promise<string>((resolve, reject) => {
      let got = '';
      let asked = false;
      socket.on('data', (d: Buffer) => {
        got += d.toString('latin1');
        if (!asked && /^\* OK.*\r\n/.test(got)) {
          asked = true;
          socket.write('A1 CAPABILITY\r\n');
        }
        if (/A1 OK/.test(got)) resolve(got);
      });
      socket.once('error', reject);
    });
    socket.destroy();
    assert.match(text, /X-GM-EXT-1/);
    assert.deepEqual(await stop(child), { code: 0, signal: null });
  } finally {
    child.kill('SIGKILL');
  }
});

test('the build is reproducible: the same sources in another folder give the same bundle and the same blob (script and code cache)', { skip, timeout: 30_000 }, async () => {
  const { bundle } = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'sea', 'bundle.mjs')).href)) as BundleScripts;
  const { prepareBlob } = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'sea', 'build.mjs')).href)) as SeaScripts;
  const again = path.join(work, 'again');
  mkdirSync(again);
  await bundle({ from: BUILT_SRC, outfile: path.join(again, 'rookery.cjs') });
  assert.ok(readFileSync(path.join(again, 'rookery.cjs')).equals(readFileSync(script)), 'same bundle');
  // The executable is node with this blob injected, so the same blob makes the same executable.
  assert.ok(readFileSync(prepareBlob({ dir: again })).equals(readFileSync(blob)), 'same blob');
});

/**
 * Issue 32 item 2: the Python package. Its wheel is built offline with
 * Debian's python3-build (no isolation: Debian's setuptools), installed with
 * pip into a fresh venv (--no-index --no-deps: nothing but the wheel), and
 * pytest in that venv loads the plugin from its pytest11 entry point, with
 * no PYTHONPATH. The tests of the written file add a message over REST and
 * read it with imaplib, use the marker's settings and a fresh server, and
 * one fails on purpose after a client broke the protocol: its report must
 * carry the client checker's finding. The platform wheel carries the single
 * executable and finds it with nothing on the PATH; with ROOKERY_KEEP=1 a
 * failed test's server stays open and its line reaches the terminal without -s.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { seaEnvironment, seaExecutable } from '../helpers/sea.js';
import { interrupt, keptLine } from '../helpers/kept.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// Debian's Python, with Debian's pytest and python3-build (a pyenv shim on the PATH may be another Python).
const PYTHON = process.env.PYTHON_SYSTEM ?? '/usr/bin/python3';
const ready = spawnSync(PYTHON, ['-c', 'import pytest, build, venv, ensurepip, setuptools, wheel']).status === 0;
const skip =
  process.platform !== 'linux'
    ? 'the single executable is built on Linux only'
    : !ready && !process.env.CI
      ? `${PYTHON} lacks pytest, build, venv or setuptools (apt-get install python3-pytest python3-build python3-venv)`
      : false;

const TESTS = String.raw`
import imaplib
import os
import socket

import pytest

import rookery as rookery_module


def test_rest_in_imap_out(rookery):
    assert "PYTHONPATH" not in os.environ
    assert rookery_module.__file__.startswith(os.environ["VIRTUAL_ENV"])
    rookery.add_message("INBOX", "Subject: over rest\r\n\r\nhello\r\n")
    assert rookery.wait_until(mailbox="INBOX", messages=1) == {"mailbox": "INBOX", "messages": 1}
    imap = imaplib.IMAP4(rookery.imap_host, rookery.imap_port)
    imap.login("testuser", "testpass")
    imap.select("INBOX")
    typ, data = imap.fetch("1", "(BODY[HEADER.FIELDS (SUBJECT)])")
    assert typ == "OK" and b"Subject: over rest" in data[0][1]
    imap.logout()


def test_the_next_test_starts_empty(rookery):
    assert rookery.messages("INBOX") == []


@pytest.mark.rookery(plugins=["all"], preset="dovecot", users={"alice": "wonderland"})
def test_marker_settings(rookery):
    assert [u["name"] for u in rookery.users()] == ["alice"]
    imap = imaplib.IMAP4(rookery.imap_host, rookery.imap_port)
    imap.login("alice", "wonderland")
    assert b"MOVE" in imap.capability()[1][0]
    imap.logout()


@pytest.mark.rookery(plugins=["all"], preset="dovecot", users={"alice": "wonderland"})
def test_same_settings_same_server(rookery, rookery_fresh):
    assert [u["name"] for u in rookery.users()] == ["alice"]
    assert [u["name"] for u in rookery_fresh.users()] == ["alice"]
    assert rookery_fresh.rest_url != rookery.rest_url
    uid = rookery.add_message("INBOX", "Subject: flags\r\n\r\n.\r\n")["uid"]
    rookery.add_flags("INBOX", [uid], ["\\Flagged"])
    assert rookery.wait_until(lambda: "\\Flagged" in rookery.messages("INBOX")[0]["flags"])
    assert rookery.expunge("INBOX", [uid]) == {"uids": [uid]}


def test_fails_after_a_client_broke_the_protocol(rookery):
    rookery.add_message("INBOX", "Subject: left behind\r\n\r\n.\r\n")
    with socket.create_connection((rookery.imap_host, rookery.imap_port)) as raw:
        raw.recv(1000)
        raw.sendall(b"a1 SELECT INBOX\r\n")
        raw.recv(1000)
        raw.sendall(b"a2 LOGOUT\r\n")
        raw.recv(1000)
    assert False, "failed on purpose"


def test_runs_on_after_the_failure(rookery):
    assert rookery.messages("INBOX") == []
`;

let work = '';
let pure = '';
let exe = '';

/** A child process's output and exit code; the test fails when it takes longer than the limit. */
function run(cmd: string, args: string[], options: { cwd: string; env: Record<string, string>; timeout?: number }): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} took too long:\n${out}`));
    }, options.timeout ?? 60_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** The environment of the Python children: no NODE_* (the executable would read them), no PYTHONPATH (the venv's package must be the one). */
function pythonEnv(extra: Record<string, string> = {}): Record<string, string> {
  const { PYTHONPATH: _path, ROOKERY: _rookery, ROOKERY_BIN: _bin, ROOKERY_KEEP: _keep, ...env } = seaEnvironment();
  return { ...env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PYTHONDONTWRITEBYTECODE: '1', ...extra };
}

/** Builds a wheel from a copy of python/ (the build writes build/, dist/ and egg-info beside the sources); returns its path. */
async function buildWheel(name: string, extra: Record<string, string> = {}): Promise<string> {
  const source = join(work, name);
  await cp(join(ROOT, 'python'), source, { recursive: true, filter: (p) => !/(__pycache__|\.egg-info|[/\\](build|dist))$/.test(p) });
  const built = await run(PYTHON, ['-m', 'build', '--wheel', '--no-isolation', '.'], { cwd: source, env: pythonEnv(extra), timeout: 120_000 });
  assert.equal(built.code, 0, built.out);
  const wheels = (await readdir(join(source, 'dist'))).filter((f) => f.endsWith('.whl'));
  assert.equal(wheels.length, 1, wheels.join(', '));
  return join(source, 'dist', wheels[0]!);
}

/** A fresh venv that sees Debian's pytest, with the wheel pip-installed from the file alone; returns its python. */
async function venvWith(name: string, wheel: string): Promise<string> {
  const venv = join(work, name);
  const made = await run(PYTHON, ['-m', 'venv', '--system-site-packages', venv], { cwd: work, env: pythonEnv() });
  assert.equal(made.code, 0, made.out);
  const python = join(venv, 'bin', 'python');
  const installed = await run(python, ['-m', 'pip', 'install', '--no-index', '--no-deps', wheel], { cwd: work, env: pythonEnv() });
  assert.equal(installed.code, 0, installed.out);
  return python;
}

before(async () => {
  if (skip) return;
  work = await mkdtemp(join(tmpdir(), 'rookery-pypkg-'));
  exe = await seaExecutable();
  pure = await buildWheel('pure');
});

after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

test('the pure wheel: pytest in a fresh venv loads the plugin; REST in, imaplib out; the marker; a failed test carries its client report', { skip, timeout: 120_000 }, async () => {
  assert.match(pure, /rookery-(\d+\.\d+\.\d+)-py3-none-any\.whl$/);
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(/rookery-([\d.]+)-py3/.exec(pure)?.[1], pkg.version, 'python/pyproject.toml has the npm package\'s version');
  const python = await venvWith('venv-pure', pure);
  const project = join(work, 'project');
  await mkdir(project);
  await writeFile(join(project, 'test_mail.py'), TESTS);
  const res = await run(python, ['-m', 'pytest', '-p', 'no:cacheprovider', '-rA', '--junitxml=report.xml', 'test_mail.py'], {
    cwd: project,
    env: pythonEnv({ ROOKERY_BIN: exe, VIRTUAL_ENV: join(work, 'venv-pure') }),
  });
  assert.equal(res.code, 1, res.out);
  assert.match(res.out, /plugins: .*rookery-5\.0\.0/, res.out);
  assert.match(res.out, /1 failed, 5 passed/, res.out);
  // The client checker's finding of the failed test, as a section of its report.
  const section = /-+ rookery client report -+\n([\s\S]*?)\n(=|-{5})/.exec(res.out)?.[1] ?? '';
  assert.match(section, /^rookery IMAP 127\.0\.0\.1:\d+, REST http:\/\/127\.0\.0\.1:\d+\/v1: 1 client finding/, res.out);
  assert.match(section, /session \d+ a1 SELECT: wrong-state \[error, RFC 3501 §3, §6\]: SELECT is not valid before authentication/, res.out);
  assert.equal((res.out.match(/rookery client report/g) ?? []).length, 1, 'only the failed test has one');
  // ... and in JUnit XML, as a property of that test case.
  const xml = await readFile(join(project, 'report.xml'), 'utf8');
  assert.match(xml, /<testcase [^>]*name="test_fails_after_a_client_broke_the_protocol"[^>]*>\s*<properties><property name="rookery_client_findings" value="\[\{[^"]*wrong-state/);

  // A misspelt marker keyword is an error that names the keywords, not a server with other settings.
  await writeFile(join(project, 'test_typo.py'), 'import pytest\n\n\n@pytest.mark.rookery(plugin="all")\ndef test_typo(rookery):\n    pass\n');
  const typo = await run(python, ['-m', 'pytest', '-p', 'no:cacheprovider', 'test_typo.py'], { cwd: project, env: pythonEnv({ ROOKERY_BIN: exe }) });
  assert.notEqual(typo.code, 0, typo.out);
  assert.match(typo.out, /@pytest\.mark\.rookery: unknown keyword 'plugin'; the keywords are plugins, preset, users, options, args, smtp, fresh/, typo.out);
});

test('the platform wheel ships the single executable: found with nothing on the PATH and NODE_OPTIONS left out', { skip, timeout: 120_000 }, async () => {
  const wheel = await buildWheel('platform', { ROOKERY_WHEEL_EXECUTABLE: exe });
  assert.match(wheel, /rookery-5\.0\.0-py3-none-linux_x86_64\.whl$/);
  const python = await venvWith('venv-platform', wheel);
  const project = join(work, 'project-platform');
  await mkdir(project);
  await writeFile(
    join(project, 'test_shipped.py'),
    String.raw`
import imaplib
import os

import rookery as rookery_module


def test_the_shipped_executable(rookery):
    shipped = rookery_module.shipped_executable()
    assert shipped.startswith(os.environ["VIRTUAL_ENV"]) and shipped.endswith(os.path.join("rookery_bin", "rookery"))
    assert rookery.command == [shipped]
    rookery.add_message("INBOX", "Subject: shipped\r\n\r\n.\r\n")
    imap = imaplib.IMAP4(rookery.imap_host, rookery.imap_port)
    imap.login("testuser", "testpass")
    assert imap.select("INBOX") == ("OK", [b"1"])
    imap.logout()
`,
  );
  const venv = join(work, 'venv-platform');
  const res = await run(python, ['-m', 'pytest', '-p', 'no:cacheprovider', 'test_shipped.py'], {
    cwd: project,
    // No rookery on this PATH; a NODE_OPTIONS preload the executable cannot find would stop it if it were passed on.
    env: pythonEnv({ PATH: `${join(venv, 'bin')}:/usr/bin:/bin`, VIRTUAL_ENV: venv, NODE_OPTIONS: '--require /nonexistent/preload.js' }),
  });
  assert.equal(res.code, 0, res.out);
  assert.match(res.out, /1 passed/, res.out);
});

test('ROOKERY_KEEP=1: the failed test\'s server stays open and its line reaches the terminal without -s; Ctrl-C ends the run', { skip, timeout: 120_000 }, async () => {
  const venv = join(work, 'venv-pure');
  const project = join(work, 'project');
  const child = spawn(join(venv, 'bin', 'python'), ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'test_mail.py'], {
    cwd: project,
    // -q: the progress letters are not followed by the reporter's own line ends; the kept line must start its own
    env: pythonEnv({ ROOKERY_BIN: exe, VIRTUAL_ENV: venv, ROOKERY_KEEP: '1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: interrupt() signals all of it, as a terminal's Ctrl-C does.
    detached: true,
  });
  const { line: kept, output } = keptLine(child, 'pytest');
  try {
    const line = await kept;
    const out = output();
    // Printed when the test failed, on a line of its own (not after the progress letters), then again at the end.
    assert.match(out, /\nrookery: test "test_mail\.py::test_fails_after_a_client_broke_the_protocol" failed; its server stays open/, out);
    assert.match(out, /1 failed, 5 passed/, out);
    const rest = /REST (http:\/\/\S+\/v1)/.exec(line)?.[1];
    assert.ok(rest, line);
    const messages = (await (await fetch(`${rest}/mailboxes/INBOX/messages?raw=true`)).json()) as { raw: string }[];
    assert.deepEqual(messages.map((m) => /Subject: (.*)\r\n/.exec(Buffer.from(m.raw, 'base64').toString())?.[1]), ['left behind']);
    await interrupt(child);
    await assert.rejects(fetch(`${rest}/health`));
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

/**
 * Issue 30 item 5, the Python side: python/rookery.py marks each test's
 * start and end in the event stream, and with ROOKERY_KEEP=1 a failed
 * test's server stays open as the test left it while the others go on with
 * a new one. pytest runs a file with the fixtures docs/testing.md shows; the
 * kept server is then read over REST by this test, as a person would open
 * its dashboard.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { interrupt, keptLine, marksOf } from '../helpers/kept.js';

import { CLI, PYTHON, PYTHON_DIR, skipWithoutPytest as skip } from '../helpers/python.js';

const TESTS = String.raw`
import pytest

from rookery import Rookery


@pytest.fixture(scope="session")
def rookery_server():
    with Rookery() as server:
        yield server


@pytest.fixture
def rookery(rookery_server, request):
    rookery_server.reset()
    rookery_server.test_started(request.node.name)
    failed = request.session.testsfailed
    yield rookery_server
    rookery_server.test_finished(request.node.name, passed=request.session.testsfailed == failed)


def test_first_passes(rookery):
    rookery.add_message("INBOX", "Subject: one\r\n\r\n1\r\n")


def test_second_fails(rookery):
    rookery.add_message("INBOX", "Subject: left behind\r\n\r\n2\r\n")
    rookery.add_message("INBOX", "Subject: left behind too\r\n\r\n3\r\n")
    assert False, "the test failed on purpose"


def test_third_runs_on_a_new_server(rookery):
    assert rookery.messages("INBOX") == []
    assert rookery.kept is not None
`;

test('rookery.py with ROOKERY_KEEP=1: the failed test\'s server stays open with its mail and its marks; the next test gets a new one', { skip, timeout: 120_000 }, async () => {
  const project = await mkdtemp(join(tmpdir(), 'rookery-pykeep-'));
  const wrapper = join(project, 'rookery');
  await writeFile(wrapper, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
  await chmod(wrapper, 0o755);
  await writeFile(join(project, 'test_keep.py'), TESTS);
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  // -s: the kept server's addresses reach the terminal at once (pytest would hold them with the captured output).
  const child = spawn(PYTHON, ['-m', 'pytest', '-s', '-p', 'no:cacheprovider', 'test_keep.py'], {
    cwd: project,
    env: { ...env, ROOKERY_BIN: wrapper, ROOKERY_KEEP: '1', PYTHONPATH: PYTHON_DIR },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: interrupt() signals all of it, as a terminal's Ctrl-C does.
    detached: true,
  });
  const { line: kept, output } = keptLine(child, 'pytest', 90_000);
  try {
    const line = await kept;
    assert.match(line, /test "test_second_fails" failed/);
    const rest = /REST (http:\/\/\S+\/v1)/.exec(line)?.[1];
    assert.ok(rest, line);
    const subjects = (await (await fetch(`${rest}/mailboxes/INBOX/messages?raw=true`)).json()) as { raw: string }[];
    assert.deepEqual(subjects.map((m) => /Subject: (.*)\r\n/.exec(Buffer.from(m.raw, 'base64').toString())?.[1]), ['left behind', 'left behind too']);
    const marks = await marksOf(rest);
    assert.deepEqual(marks, [
      { text: 'test_first_passes', phase: 'start', outcome: null },
      { text: 'test_first_passes', phase: 'end', outcome: 'pass' },
      { text: 'test_second_fails', phase: 'start', outcome: null },
      { text: 'test_second_fails', phase: 'end', outcome: 'fail' },
    ]);
    // Ctrl-C ends the wait; the kept server is stopped with the run.
    await interrupt(child);
    await assert.rejects(fetch(`${rest}/health`));
    // The wait ended as a teardown does: pytest counts the third test, which ran on a new server, as passed.
    assert.match(output(), /1 failed, 2 passed/, output());
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await rm(project, { recursive: true, force: true });
  }
});

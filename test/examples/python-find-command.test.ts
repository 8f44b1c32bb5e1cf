/**
 * Issue 30: python/rookery.py finds the command wherever pytest runs. A
 * project with `node_modules/.bin/rookery` (here a wrapper around the
 * compiled command), pytest run from a folder two levels down with neither
 * ROOKERY nor ROOKERY_BIN set: the command is found in the parent's
 * node_modules, mail goes in over SMTP (`smtp_host`, `smtp_port`) and comes
 * out over IMAP. ROOKERY_BIN from an unrelated folder works too, and with
 * nothing to find the error is one sentence that says where it looked.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { CLI, PYTHON, PYTHON_DIR, skipWithoutPytest as skip } from '../helpers/python.js';

const TESTS = String.raw`
import imaplib
import os
import smtplib

import pytest

from rookery import Rookery, RookeryError


def test_found_in_a_parent_node_modules_smtp_in_imap_out():
    assert "ROOKERY" not in os.environ and "ROOKERY_BIN" not in os.environ
    with Rookery(["--smtp-port", "0"]) as server:
        assert server.command[0].endswith(os.path.join("node_modules", ".bin", "rookery"))
        with smtplib.SMTP(server.smtp_host, server.smtp_port) as smtp:
            smtp.sendmail("a@example.com", ["testuser@example.com"], b"Subject: over smtp\r\n\r\nhello\r\n")
        server.wait_for(mailbox="INBOX", messages=1)
        imap = imaplib.IMAP4(server.imap_host, server.imap_port)
        imap.login("testuser", "testpass")
        imap.select("INBOX")
        typ, data = imap.fetch("1", "(BODY[HEADER.FIELDS (SUBJECT)])")
        assert typ == "OK" and b"Subject: over smtp" in data[0][1]
        imap.logout()


def test_rookery_bin_from_anywhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ROOKERY_BIN", os.environ["WRAPPER"])
    with Rookery() as server:
        assert server.command == [os.environ["WRAPPER"]]
        assert server.imap_port > 0
        with pytest.raises(RookeryError, match=r"^SMTP intake is off"):
            server.smtp_port


def test_an_explicit_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with Rookery(command=os.environ["WRAPPER"]) as server:
        assert server.imap_port > 0
    with pytest.raises(RookeryError, match=r"is not an executable file"):
        Rookery(command=str(tmp_path / "nothing-here"))


def test_nothing_to_find_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RookeryError) as caught:
        Rookery()
    message = str(caught.value)
    assert message.startswith("rookery command not found: ROOKERY_BIN and ROOKERY are not set, there is no node_modules/.bin/rookery in ")
    assert str(tmp_path) in message and "or any parent directory" in message and "on the PATH (%s)" % tmp_path in message
    assert message.count(". ") == 0, "one sentence"
`;

test('python/rookery.py: pytest from a subfolder finds node_modules/.bin/rookery of a parent; ROOKERY_BIN; where it looked', { skip, timeout: 120_000 }, async () => {
  const project = await mkdtemp(join(tmpdir(), 'rookery-pyfind-'));
  try {
    const bin = join(project, 'node_modules', '.bin');
    await mkdir(bin, { recursive: true });
    const wrapper = join(bin, 'rookery');
    await writeFile(wrapper, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
    await chmod(wrapper, 0o755);
    const deep = join(project, 'tests', 'integration');
    await mkdir(deep, { recursive: true });
    await writeFile(join(deep, 'test_find_command.py'), TESTS);
    const { ROOKERY: _r, ROOKERY_BIN: _b, NODE_TEST_CONTEXT: _c, ...env } = process.env;
    const child = spawn(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'test_find_command.py'], {
      cwd: deep,
      env: { ...env, PYTHONPATH: PYTHON_DIR, PYTHONDONTWRITEBYTECODE: '1', WRAPPER: wrapper },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const killer = setTimeout(() => child.kill('SIGKILL'), 100_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    clearTimeout(killer);
    assert.equal(code, 0, `pytest failed (exit ${code}):\n${out}`);
    assert.match(out, /4 passed/);
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});

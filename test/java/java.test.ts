/**
 * Issue 32 item 4: the JUnit 5 extension (java/) built with Debian's javac
 * and run by the JUnit platform's console launcher against the single
 * executable: java/src/test adds a message over REST and reads it with
 * Jakarta Mail's IMAP, sends one over SMTP, and checks the reset and the
 * marks between tests. A second run keeps a failed test's server with
 * ROOKERY_KEEP=1, as the Node and Python helpers do.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { seaEnvironment, seaExecutable } from '../helpers/sea.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const OUT = path.join(ROOT, 'build', 'java');
const JARS = '/usr/share/java';
/** Debian's jars (junit5, libjakarta-mail-java): the API to compile against, the launcher to run. */
const COMPILE = ['junit-jupiter-api', 'apiguardian-api', 'opentest4j', 'junit-platform-commons', 'jakarta-mail', 'jakarta-activation'].map((j) => path.join(JARS, `${j}.jar`));
const LAUNCHER = path.join(JARS, 'junit-platform-console-standalone.jar');

const missing = [
  spawnSync('javac', ['-version']).status === 0 ? null : 'javac (default-jdk-headless)',
  ...[...COMPILE, LAUNCHER].map((jar) => (existsSync(jar) ? null : jar)),
].filter((m): m is string => m !== null);
const skip = missing.length > 0 && !process.env.CI ? `not installed: ${missing.join(', ')} (apt-get install default-jdk-headless junit5 libjakarta-mail-java)` : false;

/** A preload that does not exist: a NODE_OPTIONS that reached the executable would stop it. */
const HOSTILE_NODE_OPTIONS = '--require /nonexistent/rookery-test-preload.cjs';

function javaSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.java'))
    .map((e) => path.join(e.parentPath ?? e.path, e.name));
}

function compile(into: string, sources: string[], extraClasspath: string[] = []): void {
  rmSync(into, { recursive: true, force: true });
  mkdirSync(into, { recursive: true });
  // -path: jakarta-mail.jar's manifest names a jakarta.activation.jar Debian installs as jakarta-activation.jar
  const result = spawnSync('javac', ['-Xlint:all,-path', '-Werror', '--release', '17', '-d', into, '-cp', [...extraClasspath, ...COMPILE].join(':'), ...sources], { encoding: 'utf8' });
  assert.equal(result.status, 0, `javac failed:\n${result.stdout}\n${result.stderr}`);
}

interface Run { code: number | null; out: string }

function launch(classpath: string[], env: Record<string, string>, timeoutMs: number): { child: ReturnType<typeof spawn>; done: Promise<Run>; output: () => string } {
  const child = spawn('java', ['-jar', LAUNCHER, '-cp', [...classpath, ...COMPILE].join(':'), '--select-package', 'dev.rookery.junit', '--disable-banner', '--details=tree', '--disable-ansi-colors'], { cwd: OUT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<Run>((resolve) => child.on('close', (code) => {
    clearTimeout(timer);
    resolve({ code, out });
  }));
  return { child, done, output: () => out };
}

function count(out: string, what: string): number {
  const m = new RegExp(`\\[\\s*(\\d+) ${what}\\s*\\]`).exec(out);
  assert.ok(m, `no "${what}" in the launcher's summary:\n${out}`);
  return Number(m[1]);
}

test('the JUnit 5 extension, compiled with javac, passes its tests against the single executable (Jakarta Mail over IMAP and SMTP)', { skip, timeout: 180_000 }, async () => {
  const exe = await seaExecutable();
  const classes = path.join(OUT, 'classes');
  compile(classes, javaSources(path.join(ROOT, 'java', 'src')));
  const run = launch([classes], seaEnvironment({ ROOKERY_BIN: exe, NODE_OPTIONS: HOSTILE_NODE_OPTIONS }), 90_000);
  const { code, out } = await run.done;
  assert.equal(code, 0, out);
  assert.equal(count(out, 'tests failed'), 0, out);
  assert.equal(count(out, 'containers failed'), 0, out);
  // RookeryExtensionTest 4, JsonTest 4, FindCommandTest 3, StartTest 3, TokenTest 2, InstanceFieldTest 2: a test that went missing would not fail the run.
  assert.equal(count(out, 'tests found'), 18, out);
  assert.equal(count(out, 'tests successful'), 18, out);
});

const KEEP_TEST = String.raw`
package dev.rookery.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KeepTest {
  @RegisterExtension
  static RookeryExtension rookery = RookeryExtension.builder().build();

  @Test
  @Order(1)
  void failsOnPurpose() {
    rookery.client().addMessage("INBOX", "Subject: left behind\r\n\r\n1\r\n");
    fail("the test failed on purpose");
  }

  @Test
  @Order(2)
  void runsOnANewServer() {
    assertEquals(0, rookery.client().messages("INBOX").size());
    System.out.println("second test passed on IMAP port " + rookery.imapPort());
  }
}
`;

test('ROOKERY_KEEP=1: a failed test\'s server stays open with its mail and its marks, the next test gets a new one, and it goes when the JVM is stopped', { skip, timeout: 180_000 }, async () => {
  const exe = await seaExecutable();
  const classes = path.join(OUT, 'keep-classes');
  const source = path.join(OUT, 'keep-src', 'KeepTest.java');
  mkdirSync(path.dirname(source), { recursive: true });
  writeFileSync(source, KEEP_TEST);
  compile(classes, [...javaSources(path.join(ROOT, 'java', 'src', 'main')), source]);
  const run = launch([classes], seaEnvironment({ ROOKERY_BIN: exe, ROOKERY_KEEP: '1' }), 120_000);
  try {
    const waiting = /It stays up until this process is stopped \(Ctrl-C\)/;
    for (let i = 0; i < 600 && !waiting.test(run.output()) && run.child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
    const out = run.output();
    assert.match(out, waiting, out);
    const line = /rookery: test "failsOnPurpose\(\)" failed; its server stays open as the test left it: IMAP 127\.0\.0\.1:(\d+), dashboard (http:\S+\/), REST (http:\S+\/v1)\./.exec(out);
    assert.ok(line, out);
    const rest = line[3]!;
    // The second test ran on another server, empty, and passed.
    const second = /second test passed on IMAP port (\d+)/.exec(out);
    assert.ok(second, out);
    assert.notEqual(second[1], line[1]);
    const messages = (await (await fetch(`${rest}/mailboxes/INBOX/messages`)).json()) as unknown[];
    assert.equal(messages.length, 1);
    const start = (await (await fetch(`${rest}/events/wait?types=mark&match=phase=start,text=runsOnANewServer()&since=0&timeout=500`)).json()) as { error?: { code: string } };
    assert.equal(start.error?.code, 'TIMEOUT', 'the second test\'s start mark is not in the kept server\'s stream');
    const end = (await (await fetch(`${rest}/events/wait?types=mark&match=phase=end,outcome=fail&since=0&timeout=2000`)).json()) as { data: { text: string } };
    assert.equal(end.data.text, 'failsOnPurpose()');
    // SIGTERM to the JVM (as Ctrl-C's SIGINT would): its shutdown hook takes the kept server down with it.
    run.child.kill('SIGTERM');
    await run.done;
    let gone = false;
    for (let i = 0; i < 100 && !gone; i++) {
      gone = await fetch(`${rest}/health`).then(() => false, () => true);
      if (!gone) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(gone, 'the kept server is still up after the JVM ended');
  } finally {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  }
});

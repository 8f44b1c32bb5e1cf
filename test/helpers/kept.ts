/**
 * What the tests of a kept server (ROOKERY_KEEP=1, docs/testing.md) share
 * across languages: waiting for the helper's "stays up" line on a run's
 * output, and reading the test marks a kept server holds over REST.
 */
import type { ChildProcess } from 'node:child_process';

/** The line every helper prints once its run is over and the failed test's server stays up. */
export const STAYS_UP = 'It stays up until this process is stopped';

/**
 * Collects the child's stdout and stderr and resolves with the first line
 * holding STAYS_UP and all output so far (read `output()` later for more);
 * rejects when the child ends first or after `timeoutMs`.
 */
export function keptLine(child: ChildProcess, what: string, timeoutMs = 60_000): { line: Promise<string>; output: () => string } {
  let out = '';
  const line = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "stays up" line in ${timeoutMs / 1000} s:\n${out}`)), timeoutMs);
    const read = (chunk: Buffer): void => {
      out += chunk.toString();
      const found = out.split('\n').find((l) => l.includes(STAYS_UP));
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} ended (code ${code}) instead of keeping the server:\n${out}`));
    });
  });
  // A rejection after the line came (the run ended later, as it should once stopped) is no failure.
  line.catch(() => undefined);
  return { line, output: () => out };
}

/** Every `mark` event a server holds, oldest first, read with the long poll from the start of its backlog. */
export async function marksOf(restUrl: string): Promise<unknown[]> {
  const marks: unknown[] = [];
  let since = 0;
  for (;;) {
    const res = await fetch(`${restUrl}/events/wait?types=mark&since=${since}&timeout=200`);
    if (res.status !== 200) return marks;
    const body = (await res.json()) as { id: number; data: unknown };
    marks.push(body.data);
    since = body.id;
  }
}

/**
 * Ends a kept run as a person would (Ctrl-C) and waits for it. A terminal
 * signals the whole foreground process group, so a child spawned with
 * `detached: true` (its own group) gets the signal in all its processes:
 * a test runner's workers (vitest's forks) too, which would otherwise
 * outlive the run. What of the group is left 5 s after is killed, and the
 * result is then true (a run that did not end on the signal).
 */
export async function interrupt(child: ChildProcess, signal: NodeJS.Signals = 'SIGINT'): Promise<boolean> {
  const group = child.pid !== undefined && groupAlive(child.pid) ? child.pid : null;
  if (child.exitCode === null && child.signalCode === null) {
    if (group !== null) process.kill(-group, signal);
    else child.kill(signal);
  }
  await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));
  if (group === null) return false;
  for (let waited = 0; groupAlive(group) && waited < 5000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  if (!groupAlive(group)) return false;
  process.kill(-group, 'SIGKILL');
  return true;
}

/** True while the process group `pgid` has a process (false when there is no such group: the child did not lead one). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

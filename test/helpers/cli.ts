/**
 * The `rookery` command as tests start it: a child process of the built
 * CLI, resolved once it has printed the IMAP port.
 */
import { spawn } from 'node:child_process';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));

export type CliChild = ReturnType<typeof spawn>;

/** Commands still running: a test that failed before stopping its own must not keep the file's process alive. */
const running = new Set<CliChild>();
after(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Starts the command; resolves with the process, the IMAP port it printed and everything it printed so far. */
export async function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: CliChild; port: number; output: () => string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start-up line: ${out}`)), 10000);
    const check = (): void => {
      const m = /IMAP listening on [^:]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', () => reject(new Error(`exited early: ${out}`)));
  });
  return { child, port, output: () => out };
}

/** Resolves with the exit code once the process has exited. */
export const exited = (child: CliChild): Promise<number | null> =>
  new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

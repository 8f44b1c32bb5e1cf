/**
 * Starts test/hardening/rss-server.ts in a child process (with --expose-gc, so
 * it collects before it measures) and talks to it over its stdin/stdout: the
 * tests that measure what a client costs the server in memory use it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ChildServer {
  port: number;
  /** Sends one line (`rss`, `heap`, `churn n`) and resolves with the number it answers. */
  ask(line: string): Promise<number>;
  /** The server's resident set size after a collection, in bytes. */
  rss(): Promise<number>;
  stop(): void;
}

export async function startChildServer(options: object, messages: number, size: number): Promise<ChildServer> {
  const script = fileURLToPath(new URL('./rss-server.js', import.meta.url));
  const child = spawn(process.execPath, ['--expose-gc', script, JSON.stringify({ options, messages, size })], { stdio: ['pipe', 'pipe', 'inherit'] });
  let buffered = '';
  const waiters: ((line: string) => void)[] = [];
  child.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      waiters.shift()?.(line);
    }
  });
  const nextLine = (): Promise<string> => new Promise((r) => waiters.push(r));
  const ask = async (line: string): Promise<number> => {
    child.stdin!.write(`${line}\n`);
    return Number(await nextLine());
  };
  const port = Number(await nextLine());
  return { port, ask, rss: () => ask('rss'), stop: () => child.kill('SIGKILL') };
}

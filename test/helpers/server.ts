import { createServer, type Server, type ServerEvents } from '../../src/index.js';
import type { ServerOptions } from '../../src/options/types.js';
import { RawClient } from './raw-client.js';

/** Starts a server on a free loopback port; the test must stop it. */
export async function startServer(options: ServerOptions = {}): Promise<{ server: Server; port: number }> {
  const server = createServer({ port: 0, ...options });
  const { imap } = await server.start();
  return { server, port: imap.port };
}

/** A raw client that has read the greeting and, unless `login` is false, logged in as testuser. */
export async function rawSession(port: number, login = true): Promise<RawClient> {
  const client = await RawClient.connect(port);
  await client.line();
  if (login) {
    const lines = await client.command('LOGIN testuser testpass');
    if (!lines[lines.length - 1]!.includes('OK')) throw new Error(`login failed: ${lines.join('\n')}`);
  }
  return client;
}

/** Collects the events of one type a server emits. */
export function collect<K extends keyof ServerEvents>(server: Server, type: K): ServerEvents[K][] {
  const seen: ServerEvents[K][] = [];
  server.on(type, ((event: ServerEvents[K]) => seen.push(event)) as never);
  return seen;
}

/** A small RFC 5322 message. */
export function mail(subject: string, body = 'Hello', extra = ''): string {
  return `From: Alice <alice@example.com>\r\nTo: Bob <bob@example.com>\r\nSubject: ${subject}\r\nDate: Mon, 2 Nov 2026 10:00:00 +0000\r\nMessage-ID: <${subject.replace(/\W/g, '')}@example.com>\r\n${extra}\r\n${body}\r\n`;
}

/**
 * A server whose INBOX holds `n` small messages, already seen as \Recent by
 * a first session, so a test's flag lists are the stored flags only.
 */
export async function startWithMessages(n: number, options: ServerOptions = {}): Promise<{ server: Server; port: number }> {
  const started = await startServer(options);
  for (let i = 1; i <= n; i++) started.server.control.addMessage('INBOX', { raw: mail(`m${i}`) });
  const first = await rawSession(started.port);
  await first.command('SELECT INBOX');
  first.close();
  return started;
}

/** The MODSEQ of an INBOX message. */
export const modseqOf = (server: Server, uid: number): number => server.control.listMessages('INBOX', { uids: [uid] })[0]!.modseq;

/**
 * The few IMAP steps the differential test needs, over a RawClient, the
 * same for Rookery and Dovecot: log in, append with a synchronizing
 * literal (byte for byte), select, fetch a list of items.
 */
import { RawClient } from '../helpers/raw-client.js';
import { parseFetch, type Item } from './imap-values.js';

export class DiffSession {
  private tag = 0;

  private constructor(private readonly client: RawClient) {}

  static async open(port: number, user: string, password: string): Promise<DiffSession> {
    const client = await RawClient.connect(port);
    const s = new DiffSession(client);
    await s.ok(`LOGIN ${user} ${password}`);
    return s;
  }

  /** Runs a command; throws unless it ends in OK. */
  async ok(command: string): Promise<string[]> {
    const { lines, status } = await this.run(command);
    if (!status.startsWith('OK')) throw new Error(`${command.slice(0, 60)}: ${lines.slice(-3).join(' | ')}`);
    return lines;
  }

  /** Runs a command whatever its outcome: every line, and the tagged status without its tag. */
  async run(command: string): Promise<{ lines: string[]; status: string }> {
    const tag = `D${++this.tag}`;
    this.client.write(`${tag} ${command}\r\n`);
    const lines = await this.client.until(tag, 20_000);
    return { lines, status: lines[lines.length - 1]!.slice(tag.length + 1) };
  }

  async append(mailbox: string, raw: Buffer): Promise<void> {
    const tag = `D${++this.tag}`;
    this.client.write(`${tag} APPEND ${mailbox} {${raw.length}}\r\n`);
    const cont = await this.client.line(20_000);
    if (!cont.startsWith('+')) throw new Error(`APPEND refused: ${cont}`);
    this.client.write(Buffer.concat([raw, Buffer.from('\r\n')]));
    const lines = await this.client.until(tag, 20_000);
    if (!lines[lines.length - 1]!.startsWith(`${tag} OK`)) throw new Error(`APPEND failed: ${lines.join(' | ')}`);
  }

  /** `UID FETCH uid (items)`; returns the items of the one FETCH response, by upper-cased label. */
  async fetch(uid: number, items: string[]): Promise<Map<string, Item>> {
    const lines = await this.ok(`UID FETCH ${uid} (${items.join(' ')})`);
    const fetches = lines.filter((l) => /^\* \d+ FETCH /.test(l));
    const out = new Map<string, Item>();
    for (const line of fetches) for (const [k, v] of parseFetch(line)) out.set(k, v);
    return out;
  }

  /** Drops the connection (no LOGOUT round trip: cleanup must not wait on a stuck server). */
  close(): void {
    this.client.close();
  }
}
